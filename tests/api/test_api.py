from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import TOKENS, auth
from fake_table import FakeTable, ManualClock
from fastapi.testclient import TestClient

from daemon.api.tokens import fingerprint, token_entry


def act(client: TestClient, action: str, role: str = "dealer", **body: Any) -> Any:
    return client.post(f"/api/actions/{action}", json=body, headers=auth(role))


def play_to_betting(client: TestClient) -> None:
    assert act(client, "open_round").status_code == 200
    r = act(client, "place_bet", payload={"seat": 2, "amount": 500, "bettor": "P1"})
    assert r.status_code == 200, r.text


def events(table: FakeTable, name: str) -> list[dict[str, Any]]:
    return [e for e in table.journal if e["event"] == name]


# --- tokens and roles ---


def test_reads_need_a_valid_token_and_a_bad_one_is_journaled_without_the_token(
    client: TestClient, table: FakeTable
) -> None:
    r = client.get("/api/state")
    assert r.status_code == 401
    assert r.json()["error"] == "unauthorized"
    assert "Bearer" in r.json()["message"]
    assert r.headers["WWW-Authenticate"] == "Bearer"

    r = client.get("/api/state", headers={"Authorization": "Bearer not-a-token"})
    assert r.status_code == 401
    [failure] = events(table, "api.auth_refused")
    assert failure["actor"] == "api"
    assert failure["payload"]["fingerprints"] == {fingerprint("not-a-token"): 1}
    assert "not-a-token" not in str(failure)

    r = client.get("/api/state", headers={"Authorization": "Basic abc"})
    assert r.status_code == 401


def test_state_names_the_caller_and_only_their_legal_actions(client: TestClient) -> None:
    by_role = {role: client.get("/api/state", headers=auth(role)).json() for role in TOKENS}
    assert by_role["dealer"]["actor"] == "lei.dealer"
    assert by_role["dealer"]["legal"] == ["open_round"]
    assert by_role["dealer"]["state"]["phase"] == "idle"
    assert by_role["supervisor"]["legal"] == []
    assert by_role["surveillance"]["legal"] == []
    assert by_role["surveillance"]["role"] == "surveillance"


def test_a_whole_round_through_the_api_journals_every_actor(
    client: TestClient, table: FakeTable
) -> None:
    play_to_betting(client)
    for step in ("shake_dice", "deal", "arrangements_done", "settle"):
        r = act(client, step)
        assert r.status_code == 200, r.text
        assert r.json()["accepted"] is True
        assert r.json()["actor"] == "lei.dealer"
    state = client.get("/api/state", headers=auth("dealer")).json()["state"]
    assert state["phase"] == "settled"
    assert all(len(seat["cards"]) == 13 for seat in state["seats"])
    assert len(state["settlements"]) == 4
    steps = [e for e in table.journal if e["event"].startswith("table.")]
    assert [e["actor"] for e in steps] == ["lei.dealer"] * 6


def test_a_step_out_of_order_is_refused_with_its_violation_and_changes_nothing(
    client: TestClient, table: FakeTable
) -> None:
    play_to_betting(client)
    assert act(client, "shake_dice").status_code == 200
    before = client.get("/api/state", headers=auth("dealer")).json()["state"]

    r = act(client, "place_bet", payload={"seat": 1, "amount": 100, "bettor": "P9"})

    assert r.status_code == 409
    body = r.json()
    assert body["error"] == "violation"
    assert body["violation"]["article"] == "Art. 2(b)"
    assert body["violation"]["phase"] == "dealing"
    assert "Art. 2(b)" in body["message"]
    [violation] = events(table, "table.violation")
    assert violation["actor"] == "lei.dealer"
    assert violation["seq"] == body["violation"]["seq"]
    after = client.get("/api/state", headers=auth("dealer")).json()["state"]
    assert after["seats"] == before["seats"]
    assert after["violations"][-1]["article"] == "Art. 2(b)"


def test_surveillance_is_read_only(client: TestClient, table: FakeTable) -> None:
    r = act(client, "open_round", role="surveillance")
    assert r.status_code == 403
    assert "read-only" in r.json()["message"]
    assert table.acts == []
    assert table.phase == "idle"


def test_an_action_for_another_role_is_forbidden_and_journaled(
    client: TestClient, table: FakeTable
) -> None:
    table.inject_fault("shuffler")
    r = act(client, "clear_hold", reason="jam cleared")
    assert r.status_code == 403
    assert "supervisor" in r.json()["message"]
    assert table.acts == []
    [forbidden] = events(table, "api.forbidden")
    assert forbidden["payload"] == {"actor": "lei.dealer", "role": "dealer", "action": "clear_hold"}


def test_supervisor_actions_need_a_reason_which_is_journaled_with_the_actor(
    client: TestClient, table: FakeTable
) -> None:
    play_to_betting(client)
    table.inject_fault("shuffler", "lid open")
    assert client.get("/api/state", headers=auth("supervisor")).json()["legal"] == [
        "clear_hold",
        "void_round",
    ]

    r = act(client, "clear_hold", role="supervisor")
    assert r.status_code == 422
    assert r.json()["error"] == "reason_required"
    assert table.hold is not None

    r = act(client, "clear_hold", role="supervisor", reason="  lid closed, count 52  ")
    assert r.status_code == 200, r.text
    [cleared] = events(table, "table.clear_hold")
    assert cleared["actor"] == "wong.supervisor"
    assert cleared["payload"] == {"reason": "lid closed, count 52"}
    assert table.hold is None
    assert table.phase == "betting"


def test_a_request_without_a_token_is_refused_before_its_body_is_read(
    client: TestClient, table: FakeTable
) -> None:
    r = client.post("/api/actions/open_round", content=b"{not json")
    assert r.status_code == 401
    assert table.acts == []


@pytest.mark.parametrize(
    ("path", "content", "status", "error", "words"),
    [
        ("open_round", b"{not json", 400, "malformed_json", "not JSON"),
        # Not JSON the journal may write: NaN, Infinity, a number past a float's range.
        ("open_round", b'{"payload": {"x": NaN}}', 400, "malformed_json", "NaN is not JSON"),
        ("open_round", b'{"reason": -Infinity}', 400, "malformed_json", "-Infinity is not JSON"),
        ("open_round", b'{"payload": {"x": 1e999}}', 400, "malformed_json", "out of range"),
        ("open_round", b"[1, 2]", 422, "invalid_input", "JSON object"),
        ("open_round", b'{"reason": 5}', 422, "invalid_input", "reason"),
        ("open_round", b'{"paylod": {}}', 422, "invalid_input", "paylod"),
        ("open_round", b'{"request_id": "a b"}', 422, "invalid_input", "request_id"),
        ("no_such_step", b"{}", 404, "unknown_action", "no_such_step"),
        (
            "place_bet",
            b'{"payload": {"seat": "two", "amount": 5, "bettor": "P"}}',
            422,
            "invalid_payload",
            "payload.seat: expected an integer",
        ),
        # A well-formed value out of its declared bounds (seat 9) breaks an article: it is a
        # journaled violation (tests/api/test_violations_journaled.py), not a summary.
        (
            "place_bet",
            b'{"payload": {"seat": 2, "amount": true, "bettor": "P"}}',
            422,
            "invalid_payload",
            "payload.amount",
        ),
        (
            "place_bet",
            b'{"payload": {"seat": 2, "bettor": "P"}}',
            422,
            "invalid_payload",
            "payload.amount: required",
        ),
        (
            "place_bet",
            b'{"payload": {"seat": 2, "amount": 5, "bettor": "P", "odds": 2}}',
            422,
            "invalid_payload",
            "odds",
        ),
        ("open_round", b"{" + b" " * 70_000 + b"}", 413, "body_too_large", "65536"),
        # An action's body is smaller still: the bound of the channel to the table's process.
        ("open_round", b"{" + b" " * 17_000 + b"}", 413, "body_too_large", "16384"),
        # Within the size limit but nested past what a parser's recursion takes.
        (
            "place_bet",
            b'{"payload": {"seat": ' + b"[" * 8_000 + b"]" * 8_000 + b"}}",
            400,
            "malformed_json",
            "nested",
        ),
    ],
)
def test_bad_input_gets_a_4xx_naming_the_problem_and_changes_nothing(  # noqa: PLR0917 - one argument per column of the case table
    client: TestClient,
    table: FakeTable,
    path: str,
    content: bytes,
    status: int,
    error: str,
    words: str,
) -> None:
    act(client, "open_round")
    journal_before, acts_before = list(table.journal), list(table.acts)

    r = client.post(
        f"/api/actions/{path}",
        content=content,
        headers={**auth("dealer"), "Content-Type": "application/json"},
    )

    assert r.status_code == status, r.text
    assert r.json()["error"] == error
    assert words in r.json()["message"]
    # Nothing changed; the refusal itself is on record, in a rate-limited summary.
    refusals = [e for e in table.journal if e["event"] == "api.input_refused"]
    assert [e for e in table.journal if e not in refusals] == journal_before
    assert [e["payload"]["paths"] for e in refusals] == [{f"/api/actions/{path}": 1}]
    assert table.acts == acts_before


def test_a_streamed_body_without_a_length_is_cut_off_at_the_limit(
    client: TestClient, table: FakeTable
) -> None:
    def chunks() -> Any:
        for _ in range(20):
            yield b" " * 4096

    r = client.post("/api/actions/open_round", content=chunks(), headers=auth("dealer"))
    assert r.status_code == 413
    assert table.acts == []


def test_repeated_bad_tokens_are_rate_limited_for_every_token_and_journaled(
    client: TestClient, table: FakeTable, clock: ManualClock
) -> None:
    bad = {"Authorization": "Bearer guess"}
    for _ in range(10):
        assert client.get("/api/state", headers=bad).status_code == 401
    r = client.get("/api/state", headers=auth("dealer"))
    assert r.status_code == 429
    assert r.json()["error"] == "rate_limited"
    assert int(r.headers["Retry-After"]) > 0
    assert act(client, "open_round").status_code == 429
    assert table.acts == []
    # The first bad token is on record at once; the rest wait for the minute's summary.
    assert len(events(table, "api.auth_refused")) == 1

    clock.advance(61)
    assert client.get("/api/state", headers=auth("dealer")).status_code == 200
    assert client.get("/api/state", headers=bad).status_code == 401
    _first, summary = events(table, "api.auth_refused")
    assert summary["payload"]["by_reason"] == {"bad_token": 10, "rate_limited": 2}
    assert summary["payload"]["locked_out"] == ["testclient"]


def test_a_repeated_request_id_acts_once(client: TestClient, table: FakeTable) -> None:
    first = act(client, "open_round", request_id="tap-1")
    second = act(client, "open_round", request_id="tap-1")
    assert first.status_code == second.status_code == 200
    assert second.json()["replayed"] is True
    assert second.json()["seq"] == first.json()["seq"]
    assert len(table.acts) == 1
    assert act(client, "open_round", request_id="tap-2").status_code == 409


def test_a_request_id_reused_for_another_step_is_refused_not_replayed(
    client: TestClient, table: FakeTable
) -> None:
    # The first answer belongs to the first step: handing it back for another would tell the
    # dealer a step was taken that never was.
    assert act(client, "open_round", request_id="tap-1").status_code == 200
    r = act(client, "shake_dice", request_id="tap-1")
    assert r.status_code == 422
    assert r.json()["error"] == "request_id_reused"
    assert "open_round" in r.json()["message"]
    assert [a[0] for a in table.acts] == ["open_round"]
    assert act(client, "place_bet", payload=bet(500), request_id="tap-2").status_code == 200
    again = act(client, "place_bet", payload=bet(800), request_id="tap-2")
    assert again.status_code == 422
    assert again.json()["error"] == "request_id_reused"
    assert act(client, "place_bet", payload=bet(500), request_id="tap-2").json()["replayed"]
    assert [a[0] for a in table.acts] == ["open_round", "place_bet"]


def bet(amount: int) -> dict[str, Any]:
    return {"seat": 2, "amount": amount, "bettor": "P1"}


def test_a_token_added_to_the_file_works_without_a_restart(
    client: TestClient, tokens_file: Path
) -> None:
    new = "fresh-dealer-token-abcdefghijklmnopqrstuvwxyz0123"
    headers = {"Authorization": f"Bearer {new}"}
    assert client.get("/api/state", headers=headers).status_code == 401
    tokens_file.write_text(
        tokens_file.read_text() + "\n" + token_entry("sam.dealer", "dealer", new)
    )
    r = client.get("/api/state", headers=headers)
    assert r.status_code == 200
    assert r.json()["actor"] == "sam.dealer"


def test_journal_query_filters_by_round_event_and_time(
    client: TestClient, table: FakeTable, clock: ManualClock
) -> None:
    play_to_betting(client)
    clock.advance(3600)
    act(client, "shake_dice")

    def get(**q: Any) -> httpx.Response:
        r: httpx.Response = client.get("/api/journal", params=q, headers=auth("surveillance"))
        return r

    assert [e["event"] for e in get(round=1).json()["events"]] == [
        "table.open_round",
        "table.place_bet",
        "table.shake_dice",
    ]
    assert [e["event"] for e in get(event="table.place_bet").json()["events"]] == [
        "table.place_bet"
    ]
    assert len(get(event="table.").json()["events"]) == 3
    late = get(since="2026-11-29T20:30:00+08:00").json()["events"]
    assert [e["event"] for e in late] == ["table.shake_dice"]
    assert len(get(limit=1).json()["events"]) == 1

    r = get(since="2026-11-29T20:30:00")
    assert r.status_code == 422
    assert "timezone" in r.json()["message"]
    r = get(limit=0)
    assert r.status_code == 422
    assert "limit" in r.json()["message"]


def test_device_status_is_readable(client: TestClient, table: FakeTable) -> None:
    table.inject_fault("dice_shaker")
    devices = client.get("/api/devices", headers=auth("surveillance")).json()["devices"]
    assert {d["name"]: d["fault"] for d in devices}["dice_shaker"] == "jam"


def test_metrics_expose_the_table_counters_in_prometheus_text(
    client: TestClient, table: FakeTable
) -> None:
    play_to_betting(client)
    act(client, "deal")
    table.inject_fault("shuffler")
    client.get("/api/state", headers={"Authorization": "Bearer guess"})

    r = client.get("/metrics")

    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = r.text
    assert 'tabled_violations_total{table="T01",article="Art. 2(c)"} 1' in text
    assert 'tabled_device_faults_total{table="T01",device="shuffler"} 1' in text
    assert 'tabled_frame_errors_total{table="T01",device="shoe_reader"} 2' in text
    assert 'tabled_link_round_trip_seconds_bucket{table="T01",device="shuffler",le="0.001"} 3' in (
        text
    )
    assert 'tabled_link_round_trip_seconds_count{table="T01",device="shuffler"} 5' in text
    assert 'tabled_journal_fsync_seconds_bucket{table="T01",le="+Inf"} 0' in text
    assert 'tabled_rounds_total{table="T01"} 0' in text
    assert 'tabled_api_refused_total{table="T01",reason="bad_token"} 1' in text
    assert "# TYPE tabled_journal_fsync_seconds histogram" in text


def test_openapi_schema_documents_every_endpoint_and_the_bearer_scheme(
    client: TestClient,
) -> None:
    schema = client.get("/openapi.json").json()
    assert {"/api/state", "/api/actions", "/api/actions/{action}", "/api/journal", "/metrics"} <= (
        set(schema["paths"])
    )
    post = schema["paths"]["/api/actions/{action}"]["post"]
    assert {"401", "403", "404", "409", "413", "422", "429"} <= set(post["responses"])
    assert "payload" in str(post["requestBody"])
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_the_consoles_scripts_are_revalidated_so_an_upgrade_is_one_reload(
    client: TestClient,
) -> None:
    # The page itself is no-store; its script and style must not be kept from the old version.
    for path in ("/static/console.js", "/static/console.css"):
        r = client.get(path)
        assert r.status_code == 200
        assert "no-cache" in r.headers["Cache-Control"], path
        assert r.headers.get("ETag")


def test_the_console_page_is_served_with_a_strict_content_policy(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert "/static/console.js" in r.text
    assert client.get("/static/console.js").status_code == 200
    assert client.get("/static/console.css").status_code == 200


def test_unknown_paths_and_methods_get_a_named_4xx(client: TestClient) -> None:
    r = client.get("/api/nothing")
    assert r.status_code == 404
    assert "/api/nothing" in r.json()["message"]
    r = client.delete("/api/state", headers=auth("admin"))
    assert r.status_code == 405


def test_a_table_that_cannot_take_the_step_gives_503_naming_it(
    client: TestClient, table: FakeTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def stopped(*args: Any) -> dict[str, Any]:
        raise RuntimeError("journal failed: disk full")

    monkeypatch.setattr(table, "act", stopped)
    r = act(client, "open_round")
    assert r.status_code == 503
    assert r.json()["error"] == "table_unavailable"
    assert "disk full" in r.json()["message"]


def test_a_journal_that_cannot_be_read_gives_503_naming_it(
    client: TestClient, table: FakeTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(**kw: Any) -> list[dict[str, Any]]:
        raise RuntimeError("journal-000000000005-20261130.jsonl line 1 does not follow seq 0")

    monkeypatch.setattr(table, "journal_query", unreadable)
    r = client.get("/api/journal", params={"round": "3"}, headers=auth("surveillance"))
    assert r.status_code == 503
    assert r.json()["error"] == "journal_unreadable"
    assert "does not follow seq 0" in r.json()["message"]
    assert "tabled verify-log" in r.json()["message"]
