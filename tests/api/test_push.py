from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from api_support import TOKENS, auth
from fake_table import FakeTable
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from daemon.api.app import create_app
from daemon.api.fanout import PushClient, PushHub
from daemon.config import ApiConfig


def test_each_durable_event_is_pushed_then_the_new_state(
    client: TestClient, table: FakeTable
) -> None:
    with client.websocket_connect("/api/events") as ws:
        ws.send_json({"token": TOKENS["dealer"][1], "after": None})
        assert ws.receive_json() == {"type": "hello", "actor": "lei.dealer", "role": "dealer"}
        first = ws.receive_json()
        assert first["type"] == "state"
        assert first["state"]["phase"] == "idle"
        assert first["legal"] == ["open_round"]

        r = client.post("/api/actions/open_round", json={}, headers=auth("dealer"))
        assert r.status_code == 200

        pushed = ws.receive_json()
        assert pushed["type"] == "event"
        assert pushed["event"]["event"] == "table.open_round"
        assert pushed["event"]["actor"] == "lei.dealer"
        assert pushed["event"]["seq"] == r.json()["seq"]
        after = ws.receive_json()
        assert after["type"] == "state"
        assert after["state"]["phase"] == "betting"
        assert after["legal"] == ["place_bet", "shake_dice"]
    assert table._subscribers == []


def test_a_console_that_reconnects_gets_what_it_missed_first(
    client: TestClient, table: FakeTable
) -> None:
    for step in ("open_round", "shake_dice", "deal"):
        assert client.post(f"/api/actions/{step}", headers=auth("dealer")).status_code == 200
    with client.websocket_connect("/api/events") as ws:
        ws.send_json({"token": TOKENS["surveillance"][1], "after": 1})
        assert ws.receive_json()["type"] == "hello"
        assert ws.receive_json()["type"] == "state"
        seqs = [ws.receive_json()["event"]["seq"], ws.receive_json()["event"]["seq"]]
        assert seqs == [2, 3]
        final = ws.receive_json()
        assert final["type"] == "state"
        assert final["legal"] == []


@pytest.mark.parametrize(
    ("hello", "code", "error"),
    [
        ('{"token": "guess"}', 4401, "unauthorized"),
        ("not json", 4400, "invalid_input"),
        ('{"token": 5}', 4400, "invalid_input"),
        ('{"token": "x", "after": "3"}', 4400, "invalid_input"),
        ("[" * 30_000 + "]" * 30_000, 4400, "invalid_input"),
    ],
)
def test_a_push_connection_without_a_valid_token_is_closed(
    client: TestClient, hello: str, code: int, error: str
) -> None:
    with client.websocket_connect("/api/events") as ws:
        ws.send_text(hello)
        message = ws.receive_json()
        assert message["type"] == "error"
        assert message["error"] == error
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == code


def _hello_answer(client: TestClient, headers: dict[str, str]) -> dict[str, object]:
    with client.websocket_connect("/api/events", headers=headers) as ws:
        ws.send_json({"token": TOKENS["dealer"][1], "after": None})
        message: dict[str, object] = ws.receive_json()
        if message["type"] == "error":
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            message["code"] = closed.value.code
        return message


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "http://testserver.evil.example", "null", "http://testserver:81"],
)
def test_a_push_connection_from_another_origin_is_refused_even_with_a_token(
    client: TestClient, table: FakeTable, origin: str
) -> None:
    # A page on another site may open a WebSocket to the table PC from a dealer's browser;
    # the browser says where it came from, and only the console's own origin may push.
    answer = _hello_answer(client, {"origin": origin})
    assert answer["type"] == "error"
    assert answer["error"] == "forbidden_origin"
    assert origin in str(answer["message"])
    assert answer["code"] == 4403
    assert table._subscribers == []


# The console's own origin: a name the table answers to, on the port it serves (the scheme is
# not compared: a page cannot be served in clear and in TLS on one port).
@pytest.mark.parametrize(
    "headers", [{"origin": "http://testserver"}, {"origin": "https://TestServer:80"}, {}]
)
def test_the_consoles_own_origin_and_non_browser_clients_may_push(
    client: TestClient, headers: dict[str, str]
) -> None:
    # No Origin header: not a browser (tabled journal --follow); the token still decides.
    assert _hello_answer(client, headers)["type"] == "hello"


def test_configured_origins_may_push_too(table: FakeTable, tokens_file: Path) -> None:
    config = ApiConfig(tokens_file=tokens_file)
    app = create_app(table, config, allowed_origins=("https://pit-display.casino.example",))
    with TestClient(app) as c:
        ok = _hello_answer(c, {"origin": "https://pit-display.casino.example"})
        assert ok["type"] == "hello"
        assert _hello_answer(c, {"origin": "https://other.example"})["code"] == 4403


def test_a_withdrawn_token_loses_the_live_feed_at_the_next_event(
    client: TestClient, tokens_file: Path
) -> None:
    with client.websocket_connect("/api/events") as ws:
        ws.send_json({"token": TOKENS["surveillance"][1], "after": None})
        assert ws.receive_json()["type"] == "hello"
        assert ws.receive_json()["type"] == "state"
        # IT withdraws the token (docs/operations.md: `disabled = true`, entry kept).
        text = tokens_file.read_text()
        actor_line = f'actor = "{TOKENS["surveillance"][0]}"'
        tokens_file.write_text(text.replace(actor_line, actor_line + "\ndisabled = true"))
        assert client.post("/api/actions/open_round", headers=auth("dealer")).status_code == 200
        message = ws.receive_json()
        assert message["type"] == "error"
        assert message["error"] == "unauthorized"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4401


def test_an_event_the_hub_cannot_show_is_withheld_and_the_feed_goes_on(table: FakeTable) -> None:
    """A record whose redaction fails (a payload nested past the interpreter's recursion) is
    sent with its payload withheld; the events after it still reach every console."""

    async def main() -> list[dict[str, Any]]:
        hub = PushHub(table, flush_interval=0.001)
        client = PushClient("dealer")
        hub.join(client)
        deep: dict[str, Any] = {}
        level = deep
        for _ in range(100_000):
            level["x"] = level = {}
        table._append("api.before", "api", {})
        entry = {**table.journal[-1], "seq": 2, "event": "api.deep", "payload": deep}
        table.journal.append(entry)  # as the journal would offer it (no hash: never encoded)
        for queue in table._subscribers:
            queue.put_nowait(entry)
        table._append("api.after", "api", {})
        got: list[dict[str, Any]] = []
        while len(got) < 3:
            await asyncio.wait_for(client.wake.wait(), 30)  # a bound only
            client.wake.clear()
            for batch in client.take():
                got += [json.loads(text) for _, text in batch.items(client.audience)]
        await hub.close()
        return got

    before, deep, after = asyncio.run(main())
    assert (before["event"], after["event"]) == ("api.before", "api.after")
    assert deep["seq"] == 2 and deep["event"] == "api.deep"
    assert deep["payload"] == {} and "withheld" in deep
