"""After a dealer's action the console's buttons follow the state it led to at once, not at the
table's next periodic publication.

An accepted action publishes the table's state before it is answered (daemon.api.process), and
the push feed sends that state at once; the action's own events follow with the hub's next batch
(daemon.api.fanout). So the state usually comes BEFORE the events, and the same state is not
sent again after them. Each state message of a daemon therefore names the last journal line it
shows (`seq`): the feed's contract, checked here on an API that reads the table's publications
(as `tabled run --http` serves it), and the console's use of it, checked in real chromium.

The server here is `serve_table.py`'s (the real table runtime, every device simulated, the API
reading its publications) with the table's periodic publication an hour apart: only an action's own
publication, or a device's journaled answer, can move a console's buttons. Run as a script,
this module is that server (`server_process` starts it and waits for its port).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import in_process
import pytest
from api_support import TOKENS, auth, write_tokens
from fastapi.testclient import TestClient
from playwright.sync_api import expect, sync_playwright
from server_process import _serve
from test_console_browser import CHROMIUM, launch, sign_in, submit_form
from websockets.sync.client import ClientConnection, connect

from daemon.table.publish.publisher import SnapshotPublisher
from tests.loopback_http import http

# The periodic publication in this test's server: an hour, so it never comes during a test.
PERIODIC = 3600.0

# A dealer's way from a closed table to the dice, with a supervisor's hold in the betting:
# (role, action, payload, what that role is offered next). The cut is asked for once the
# table's shuffle machine has answered the hand shuffle; in the dealing, the shoe deals.
STEPS: tuple[tuple[str, str, dict[str, Any], str | None], ...] = (
    ("dealer", "open_table", {}, "confirm_hand_shuffle"),
    ("dealer", "confirm_hand_shuffle", {}, "confirm_cut"),
    (
        "dealer",
        "confirm_cut",
        {"by": "player", "player": "P1", "cards": 20, "one_hand": True},
        "load_shoe",
    ),
    ("dealer", "load_shoe", {}, "place_bet"),
    ("supervisor", "hold_table", {}, "clear_hold"),
    ("supervisor", "clear_hold", {}, "hold_table"),
    (
        "dealer",
        "place_bet",
        {"player": "P1", "seat": 1, "amount": 300, "units": 3, "seated": True},
        "shake_dice",
    ),
    (
        "dealer",
        "place_bet",
        {"player": "P2", "seat": 2, "amount": 100, "units": 1, "seated": True},
        "shake_dice",
    ),
    ("dealer", "shake_dice", {"player": "P1"}, None),
)
REASON = "a dispute at seat 2, settled"


@pytest.fixture
def hourly(tmp_path: Path) -> Iterator[str]:
    """The real table behind the threaded API, published only on a change (see above)."""
    tokens = write_tokens(tmp_path / "tokens.toml")
    with _serve(Path(__file__), str(tokens), str(tmp_path / "journal")) as url:
        yield url


class Feed:
    """A console's push feed (batched, as the dealer console reads it), read message by message."""

    def __init__(self, ws: ClientConnection, role: str) -> None:
        self.ws = ws
        self.ws.send(json.dumps({"token": TOKENS[role][1], "after": None, "batch": True}))
        assert self.next()["type"] == "hello"
        self.last = 0  # the last event's seq received
        self.states: list[dict[str, Any]] = []

    def next(self) -> dict[str, Any]:
        raw = self.ws.recv(timeout=30)
        assert isinstance(raw, str)
        message: dict[str, Any] = json.loads(raw)
        return message

    def until_state_shows(self, seq: int) -> dict[str, Any]:
        """Read on until a state message shows journal line `seq`; that state."""
        while True:
            message = self.next()
            if message["type"] == "events":
                for event in message["events"]:
                    assert event["seq"] == self.last + 1 or self.last == 0, (self.last, event)
                    self.last = event["seq"]
            elif message["type"] == "state":
                assert isinstance(message.get("seq"), int), "a daemon's state names its seq"
                self.states.append(message)
                if message["seq"] >= seq:
                    return message


def test_the_state_an_action_leads_to_names_the_journal_line_it_shows(hourly: str) -> None:
    """The feed's contract on the threaded API: after each accepted action, with no periodic
    publication to come, a state message shows the action's journal line (its `seq` at least
    the action's), and it offers whoever acted their next step; a state's seq never goes back
    and never names a line not yet in the journal."""
    ws_url = hourly.replace("http://", "ws://") + "/api/events"
    with connect(ws_url, open_timeout=30) as dealer, connect(ws_url, open_timeout=30) as boss:
        feeds = {"dealer": Feed(dealer, "dealer"), "supervisor": Feed(boss, "supervisor")}
        assert feeds["dealer"].until_state_shows(0)["legal"] == ["open_table"]
        for role, action, payload, offered in STEPS:
            body: dict[str, Any] = {"payload": payload}
            if role == "supervisor":
                body["reason"] = REASON
            r = http.post(f"{hourly}/api/actions/{action}", json=body, headers=auth(role))
            assert r.status_code == 200, (action, r.text)
            for feed in feeds.values():
                shown = feed.until_state_shows(r.json()["seq"])
            shown = feeds[role].states[-1]
            # The cut is asked for once the shuffle machine has answered: the feed sends the
            # state of that answer by itself (its events make the table publish).
            while action == "confirm_hand_shuffle" and offered not in shown["legal"]:
                shown = feeds[role].until_state_shows(shown["seq"] + 1)
            if offered is not None:
                assert offered in shown["legal"], (action, shown["legal"])
        journal = http.get(hourly + "/api/journal", params={"limit": 1000}, headers=auth("admin"))
        for feed in feeds.values():
            seqs = [state["seq"] for state in feed.states]
            assert seqs == sorted(seqs)
            assert seqs[-1] <= journal.json()["events"][-1]["seq"]


def test_a_table_that_does_not_publish_names_no_seq_in_its_state(client: TestClient) -> None:
    """The tests' fake table builds its state when it is read, with a counter of reads, not a
    journal line: its state messages carry no `seq` (the console then reads the state as it is
    when sent: after the events sent before it, here the action's)."""
    with client.websocket_connect("/api/events") as ws:
        ws.send_json({"token": TOKENS["dealer"][1], "after": None, "batch": True})
        assert ws.receive_json()["type"] == "hello"
        first = ws.receive_json()
        assert first["type"] == "state" and "seq" not in first
        r = client.post("/api/actions/open_round", json={}, headers=auth("dealer"))
        assert r.status_code == 200
        events = ws.receive_json()
        assert [e["seq"] for e in events["events"]] == [r.json()["seq"]]
        after = ws.receive_json()
        assert after["type"] == "state" and "seq" not in after
        assert after["legal"] == ["place_bet", "shake_dice"]


@pytest.mark.browser
@pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
)
def test_the_buttons_follow_each_action_without_a_periodic_state(hourly: str) -> None:
    """A dealer plays from a closed table to the dice in chromium, a supervisor holds the table
    in the betting and clears the hold, each on their console. After each click, the button of
    that person's next step is enabled by the state the action led to, pushed by the table as
    it answered: no periodic state comes (an hour apart), and the pages' clocks are paused, so
    the console's own give-up timer (3 s after an action, should its state not come) cannot
    enable it."""
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            errors: list[str] = []
            pages: dict[str, Any] = {}
            for role in ("dealer", "supervisor"):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.clock.install()
                page.goto(hourly + "/")
                page.clock.pause_at(page.evaluate("Date.now()") + 1)
                sign_in(page, role)
                pages[role] = page
            expect(pages["dealer"].locator("#actions [data-action=open_table]")).to_be_enabled()
            for role, action, payload, offered in STEPS:
                page = pages[role]
                if role == "supervisor":
                    submit_form(page, action, {"__reason": REASON})
                elif payload:
                    submit_form(page, action, {k: _field(v) for k, v in payload.items()})
                else:
                    page.click(f"#actions [data-action={action}]")
                if offered is not None:
                    expect(page.locator(f"#actions [data-action={offered}]")).to_be_enabled()
            expect(pages["dealer"].locator("#phase")).to_contain_text("Dealing")
            assert errors == []
        finally:
            browser.close()


def _field(value: Any) -> str | bool:
    """A payload's value as the console's form takes it."""
    return value if isinstance(value, bool) else str(value)


class HourlyPublisher(SnapshotPublisher):
    """The table's own publisher, its periodic publication `PERIODIC` apart."""

    def __init__(self, table: Any, **options: Any) -> None:
        super().__init__(table, **(options | {"refresh": PERIODIC}))


if __name__ == "__main__":
    # This test's server: `serve_table.py`'s, its table publishing with `HourlyPublisher`.
    import serve_table

    in_process.SnapshotPublisher = HourlyPublisher  # type: ignore[misc]  # InProcess.build's
    asyncio.run(serve_table.main(sys.argv[1], sys.argv[2], None))
