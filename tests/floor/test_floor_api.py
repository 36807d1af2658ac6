"""The floor API over a real floor process: who may read what, bad input, redaction of rounds
in play, malformed messages, the audit report (API and CLI), and schemathesis (no 5xx)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
import schemathesis
import websockets
from hypothesis import HealthCheck, settings

from daemon.api.tokens import TokenStore, parse_tokens
from daemon.floor.api import Hub, create_app
from daemon.floor.config import FloorApi, FloorConfig
from daemon.floor.localservers import NatsServer, PostgresCluster, free_port
from daemon.floor.store import Store
from daemon.floor.synthetic import SyntheticTable, ensure_stream
from tests.floor.floor_support import REPO, FloorEnv, FloorProcess, floor_config, write_tokens
from tests.loopback_http import http

OPEN_ROUND_LINES = 150 + 5 + 20  # start lines, one whole round, then 20 lines into round 2


@pytest.fixture(scope="module")
def floor(
    pg: PostgresCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FloorEnv, FloorProcess]]:
    root = tmp_path_factory.mktemp("floor-api")
    broker = NatsServer().start()
    dsn = pg.create_database("floor_api")
    tokens = write_tokens(root / "tokens.toml")
    config = floor_config(root / "floor.toml", dsn, broker.url, root / "tokens.toml")
    env = FloorEnv(pg, broker, dsn, root, tokens, config)
    table = SyntheticTable("T01", seed=3, violation_share=1.0, tilt_share=0.0)
    lines = table.lines(OPEN_ROUND_LINES)
    try:  # a setup that fails leaves no floor or broker running
        process = env.start_floor()
        asyncio.run(env.publish(lines))
        asyncio.run(env.wait_committed(process, {"T01": OPEN_ROUND_LINES}))
        yield env, process
    finally:
        for started in env.floors:
            started.stop()
        broker.destroy()


def get(floor: FloorProcess, path: str, token: str | None = None, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return http.get(floor.url + path, params=params, headers=headers, timeout=30)


def test_every_read_needs_a_floor_token(floor: tuple[FloorEnv, FloorProcess]) -> None:
    env, process = floor
    assert get(process, "/api/health").status_code == 200
    for path in ("/api/tables", "/api/alerts", "/api/violations", "/api/tables/T01"):
        assert get(process, path).status_code == 401
        assert get(process, path, "not-a-token").status_code == 401
        assert get(process, path, env.tokens["pit"]).status_code == 200
    r = get(process, "/api/report", env.tokens["pit"], since="2000-01-01", until="2100-01-01")
    assert r.status_code == 403 and r.json()["error"] == "forbidden"


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/api/tables", {"state": "sideways"}),
        ("/api/alerts", {"kind": "meteor"}),
        ("/api/alerts", {"limit": "0"}),
        ("/api/violations", {"since": "yesterday"}),
        ("/api/violations", {"since": "2030-01-01", "until": "2020-01-01"}),
        ("/api/tables/T01/events", {"limit": "100000"}),
        ("/api/tables/bad%20id", {}),
        ("/api/report", {"since": "2020-01-01"}),
        ("/api/faults", {"serial": "SN\x00"}),  # PostgreSQL refuses a NUL in text
        ("/api/violations", {"dealer": "\x00"}),
    ],
)
def test_bad_input_is_a_4xx_naming_it(
    floor: tuple[FloorEnv, FloorProcess], path: str, params: dict[str, str]
) -> None:
    env, process = floor
    r = get(process, path, env.tokens["audit"], **params)
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert r.json()["error"] in ("invalid_input", "not_found")


def test_unknown_table_is_404(floor: tuple[FloorEnv, FloorProcess]) -> None:
    env, process = floor
    r = get(process, "/api/tables/T99", env.tokens["pit"])
    assert r.status_code == 404 and "T99" in r.json()["message"]


def test_a_filter_the_database_cannot_hold_is_bad_input(
    floor: tuple[FloorEnv, FloorProcess],
) -> None:
    """A NUL byte in a text filter, a time range before year 1: 422, not a server error."""
    env, process = floor
    nul = get(process, "/api/faults", env.tokens["pit"], model="a\x00b")
    assert nul.status_code == 422 and nul.json()["error"] == "invalid_input"
    early = get(process, "/api/overrides", env.tokens["pit"], until="0001-01-01T00:00:00Z")
    assert early.status_code == 422 and "until" in early.json()["message"]


def test_cards_of_a_round_in_play_are_hidden_from_every_role_and_whole_after_it_to_review(
    floor: tuple[FloorEnv, FloorProcess],
) -> None:
    """The tables' visibility rule (docs/visibility.md): a face-down card of a round in play is
    served to no one; once the round is settled, surveillance, audit and admin see it whole
    (raw line too), the pit still only what the game opened."""
    env, process = floor

    def cards(role: str, round_: str) -> list[dict[str, Any]]:
        events = get(
            process, "/api/tables/T01/events", env.tokens[role], round=round_, limit=1000
        ).json()
        return [e for e in events if e["event"] == "card.dealt"]

    for role in ("pit", "surveillance", "audit", "admin"):
        open_round = cards(role, "2")
        assert open_round and all(
            e["redacted"] and e["payload"]["card"] == "hidden" for e in open_round
        )
        assert all(e["line"] is None for e in open_round)
    settled = cards("pit", "1")
    assert settled and all(e["redacted"] and e["payload"]["card"] == "hidden" for e in settled)
    assert all(e["line"] is None for e in settled)
    for role in ("surveillance", "audit", "admin"):
        settled = cards(role, "1")
        assert settled and all(not e["redacted"] and e["payload"]["card"] for e in settled)
        assert all(json.loads(e["line"])["seq"] == e["seq"] for e in settled)


def test_malformed_messages_are_alerts_not_rows(floor: tuple[FloorEnv, FloorProcess]) -> None:
    env, process = floor
    other = SyntheticTable("T02", seed=9).lines(3)

    async def ship() -> None:
        await env.enrol(["T02", "T09"])
        nc = await nats.connect(env.broker.url)
        js = nc.jetstream()
        await ensure_stream(js)
        await js.publish("tabled.T02.x.y", b"not json\n", headers={"Nats-Msg-Id": "junk:1"})
        # A line that names another table than its subject.
        await js.publish("tabled.T09.card.dealt", other[0], headers={"Nats-Msg-Id": "T09:1"})
        await nc.close()
        await env.publish(other)

    asyncio.run(ship())
    asyncio.run(env.wait_committed(process, {"T02": 3}))
    alerts = get(process, "/api/alerts", env.tokens["surveillance"], kind="malformed").json()
    assert {a["table"] for a in alerts} == {"T02", "T09"}
    assert any("T01" not in a["details"]["problem"] for a in alerts)
    assert env.psql("SELECT count(*) FROM journal_lines WHERE table_id = 'T02'") == [(3,)]


def test_report_api_and_cli(floor: tuple[FloorEnv, FloorProcess]) -> None:
    env, process = floor
    span = {"since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00Z"}
    body = get(process, "/api/report", env.tokens["audit"], **span).json()
    assert len(body["violations"]) == 2  # violation_share 1.0: one in each round so far
    assert body["settlements"][0]["net"] == "95.00"
    csv_text = get(process, "/api/report", env.tokens["admin"], format="csv", **span).text
    assert csv_text.startswith("section,table,seq,ts") and "violations,T01" in csv_text
    cli = [sys.executable, "-m", "daemon", "floor", "report", "--config", str(env.config),
           "--since", span["since"], "--until", span["until"]]  # fmt: skip
    out = subprocess.run(cli, capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert json.loads(out)["violations"] == body["violations"]
    out = subprocess.run(
        [*cli, "--format", "csv"], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out == csv_text
    bad = subprocess.run(
        [*cli[:-4], "--since", "2030-01-01", "--until", "2020-01-01"],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert bad.returncode == 2 and "--since must be before --until" in bad.stderr


def test_floor_roles_from_the_token_cli(tmp_path: Path) -> None:
    file = tmp_path / "tokens.toml"
    tokens = {}
    for name, role in (("ho.pit", "pit"), ("au.dit", "audit"), ("chan.dealer", "dealer")):
        proc = subprocess.run(
            [sys.executable, "-m", "daemon", "token", name, role, "--append", str(file)],
            capture_output=True, text=True, check=True, cwd=REPO,
        )  # fmt: skip
        tokens[role] = proc.stdout.strip()
    floor_store = TokenStore(file, ("pit", "surveillance", "audit", "admin"))
    table_store = TokenStore(file)
    assert floor_store.lookup(tokens["pit"]).role == "pit"  # type: ignore[union-attr]
    assert floor_store.lookup(tokens["dealer"]) is None  # a dealer does not read the floor
    assert table_store.lookup(tokens["pit"]) is None  # nor a pit token the table
    assert table_store.lookup(tokens["dealer"]).role == "dealer"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="croupier"):
        parse_tokens('[[token]]\nactor = "x"\nrole = "croupier"\nhash = "sha256:' + "0" * 64 + '"')


# schemathesis: the schema is drawn from the app at collection; the calls go to the real floor.
_schema_app = create_app(
    Store("postgresql:///unused"), FloorConfig(api=FloorApi(tokens_file=None)), Hub()
)
floor_schema = schemathesis.openapi.from_dict(_schema_app.openapi())


@floor_schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_5xx(case: Any, floor: tuple[FloorEnv, FloorProcess]) -> None:
    env, process = floor
    case.call_and_validate(
        base_url=process.url,
        headers={"Authorization": f"Bearer {env.tokens['audit']}"},
        checks=[schemathesis.checks.not_a_server_error],
    )


def test_feed_refuses_another_sites_page(floor: tuple[FloorEnv, FloorProcess]) -> None:
    env, process = floor
    ws_url = process.url.replace("http://", "ws://") + "/api/feed"

    async def hello(origin: str) -> dict[str, Any]:
        async with websockets.connect(ws_url, origin=origin) as ws:  # type: ignore[arg-type]
            # A refused page is told at once, before its hello: the close may beat the send.
            with contextlib.suppress(websockets.ConnectionClosed):
                await ws.send(json.dumps({"token": env.tokens["pit"]}))
            answer: dict[str, Any] = json.loads(await ws.recv())
            return answer

    assert asyncio.run(hello("http://evil.example"))["error"] == "forbidden_origin"
    assert asyncio.run(hello(process.url))["type"] == "hello"


def test_a_name_not_the_floors_is_refused_on_http_and_websocket(
    floor: tuple[FloorEnv, FloorProcess],
) -> None:
    """DNS rebinding: a page whose own name now resolves to the floor still sends that name."""
    env, process = floor
    rebound = {"Authorization": f"Bearer {env.tokens['audit']}", "Host": "rebind.example:8800"}
    r = http.get(process.url + "/api/tables", headers=rebound, timeout=30)
    assert r.status_code == 421 and r.json()["error"] == "forbidden_host"
    assert "rebind.example" in r.json()["message"]
    assert http.get(process.url + "/", headers={"Host": "rebind.example"}).status_code == 421
    port = int(process.url.rsplit(":", 1)[1])

    async def hello(name: str) -> tuple[dict[str, Any], int | None]:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        async with websockets.connect(f"ws://{name}:{port}/api/feed", sock=sock) as ws:
            with contextlib.suppress(websockets.ConnectionClosed):  # the door may shut first
                await ws.send(json.dumps({"token": env.tokens["pit"]}))
            answer: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if answer["type"] == "error":  # then the door closes
                with contextlib.suppress(websockets.ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 30)
            return answer, ws.close_code

    answer, code = asyncio.run(hello("rebind.example"))
    assert (answer["error"], code) == ("forbidden_host", 4403)
    assert asyncio.run(hello("localhost"))[0]["type"] == "hello"


def test_bad_config_or_database_is_a_clear_message(tmp_path: Path) -> None:
    def floor(config: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / "floor.toml"
        path.write_text(config)
        return subprocess.run(
            [sys.executable, "-m", "daemon", "floor", "--config", str(path)],
            capture_output=True, text=True, check=False, cwd=REPO, timeout=60,
        )  # fmt: skip

    typo = floor("[floor]\nbatchsize = 5\n")
    assert typo.returncode == 2 and "floor.batchsize: unknown key" in typo.stderr
    wrong = floor('[floor]\ndatabase = "mysql://x"\n')
    assert wrong.returncode == 2 and "postgresql://" in wrong.stderr
    port = free_port()
    down = floor(f'[floor]\ndatabase = "postgresql://floor@127.0.0.1:{port}/floor"\n')
    assert down.returncode == 1 and f"127.0.0.1:{port}" in down.stderr
    assert "Traceback" not in typo.stderr + wrong.stderr + down.stderr


def post(floor: FloorProcess, path: str, token: str, body: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return http.post(floor.url + path, json=body, headers=headers, timeout=30)


def test_a_chain_alert_is_acknowledged_once_and_every_attempt_is_recorded(
    floor: tuple[FloorEnv, FloorProcess],
) -> None:
    env, process = floor

    async def ship_junk() -> None:
        nc = await nats.connect(env.broker.url)
        await ensure_stream(nc.jetstream())
        await nc.jetstream().publish("tabled.T07.x", b"{oops\n", headers={"Nats-Msg-Id": "T07:j"})
        await nc.close()

    # Other tests (schemathesis) may have tried acknowledging already: count from here.
    (before,) = env.psql("SELECT coalesce(max(id), 0) FROM floor_actions")[0]
    asyncio.run(ship_junk())
    alert: dict[str, Any] = {}
    deadline = time.monotonic() + 60  # a hang guard
    while time.monotonic() < deadline:  # the floor commits the junk as an alert within a batch
        found = get(process, "/api/alerts", env.tokens["pit"], table="T07").json()
        if found:
            alert = found[0]
            break
        asyncio.run(asyncio.sleep(0.05))
    assert alert and alert["acknowledged_at"] is None
    path = f"/api/alerts/{alert['id']}/acknowledge"
    ws_url = process.url.replace("http://", "ws://") + "/api/feed"

    async def acknowledge_while_listening() -> tuple[httpx.Response, dict[str, Any]]:
        async with websockets.connect(ws_url, origin=process.url) as ws:  # type: ignore[arg-type]
            await ws.send(json.dumps({"token": env.tokens["admin"]}))
            assert json.loads(await ws.recv())["type"] == "hello"
            # Refused: audit reads but does not take alerts in hand; notes must say something.
            assert post(process, path, env.tokens["audit"], {"note": "seen it"}).status_code == 403
            assert post(process, path, env.tokens["pit"], {"note": "  "}).status_code == 422
            bad = post(process, path, env.tokens["pit"], {"note": "on it", "extra": 1})
            assert bad.status_code == 422
            done = await asyncio.to_thread(
                post, process, path, env.tokens["surveillance"], {"note": "called IT; T07 held"}
            )
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] == "acknowledged":
                    return done, message

    done, pushed = asyncio.run(acknowledge_while_listening())
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["acknowledged_by"], body["acknowledged_role"]) == (
        "surveillance.person",
        "surveillance",
    )
    assert body["ack_note"] == "called IT; T07 held" and body["resolved_at"] is None
    assert pushed["alert"]["id"] == alert["id"] and pushed["alert"]["ack_note"] == body["ack_note"]
    again = post(process, path, env.tokens["pit"], {"note": "me too"})
    assert again.status_code == 409 and body["acknowledged_by"] in again.json()["message"]
    missing = post(process, "/api/alerts/999999/acknowledge", env.tokens["pit"], {"note": "x!!"})
    assert missing.status_code == 404
    # The alert stays open: acknowledging is not resolving.
    still = get(process, "/api/alerts", env.tokens["pit"], table="T07", open_only="true").json()
    assert [a["id"] for a in still] == [alert["id"]]
    actions = env.psql(
        "SELECT role, outcome FROM floor_actions WHERE target = %s AND id > %s ORDER BY id",
        str(alert["id"]),
        before,
    )
    assert actions == [
        ("audit", "refused: role"),
        ("surveillance", "done"),
        ("pit", "refused: already acknowledged"),
    ]
    assert env.psql(
        "SELECT count(*) FROM floor_actions WHERE target = '999999' AND id > %s", before
    ) == [(1,)]
    span = {"since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00Z"}
    report = get(process, "/api/report", env.tokens["audit"], **span).json()
    assert {"surveillance", "audit"} <= {a["role"] for a in report["floor_actions"]}


def test_alert_digests_only_to_who_may_have_the_raw_line(
    floor: tuple[FloorEnv, FloorProcess],
) -> None:
    """Forgeries of a line of the closed round 1 (seq 10) and of the round in play (seq 170):
    their alerts' hashes go to roles that see closed rounds, for the closed round only; the
    pit never gets them, nor /api/tables' chain status, nor the push feed."""
    env, process = floor
    lines = [
        bytes(row[0])
        for row in env.psql("SELECT line FROM journal_lines WHERE table_id = 'T01' ORDER BY seq")
    ]

    def forge(line: bytes) -> bytes:
        obj = json.loads(line)
        obj["payload"]["forged"] = True
        return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()

    closed, in_play = forge(lines[9]), forge(lines[169])

    async def ship() -> list[dict[str, Any]]:
        async with websockets.connect(process.url.replace("http", "ws") + "/api/feed") as ws:
            await ws.send(json.dumps({"token": env.tokens["admin"]}))
            await ws.recv()
            nc = await nats.connect(env.broker.url)
            for seq, body in ((10, closed), (170, in_play)):
                sha16 = hashlib.sha256(body).hexdigest()[:16]
                await nc.jetstream().publish(
                    "tabled.T01.conflict", body,
                    headers={"Nats-Msg-Id": f"T01:{seq}:conflict:{sha16}"},
                )  # fmt: skip
            await nc.close()
            pushed: list[dict[str, Any]] = []
            while len(pushed) < 2:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 60))
                if msg["type"] == "alert" and msg["alert"]["kind"] == "forged":
                    pushed.append(msg["alert"])
            return pushed

    pushed = asyncio.run(ship())
    assert all(a["expected_hash"] is None and a["actual_hash"] is None for a in pushed)
    assert all(a["details"]["digests"] == "withheld" for a in pushed)

    def forged(role: str) -> dict[int, dict[str, Any]]:
        found = get(process, "/api/alerts", env.tokens[role], kind="forged").json()
        return {a["seq"]: a for a in found if a["seq"] in (10, 170)}

    for role in ("pit", "surveillance", "audit", "admin"):
        alerts = forged(role)
        assert alerts[170]["expected_hash"] is None and alerts[170]["actual_hash"] is None
        if role == "pit":
            assert alerts[10]["expected_hash"] is None
        else:
            assert alerts[10]["expected_hash"] == hashlib.sha256(lines[9]).hexdigest()
            assert alerts[10]["actual_hash"] == hashlib.sha256(closed).hexdigest()
    for role in ("pit", "surveillance"):
        tables = get(process, "/api/tables", env.tokens[role]).json()
        chain = next(t for t in tables if t["table"] == "T01")["chain"]
        assert isinstance(chain, dict) and chain["kind"] == "forged"
        if role == "pit":
            assert chain["expected_hash"] is None and chain["actual_hash"] is None
    held = env.psql("SELECT line FROM journal_lines WHERE table_id = 'T01' AND seq IN (10, 170)")
    assert sorted(bytes(r[0]) for r in held) == sorted([lines[9], lines[169]])


def test_violations_and_tilts_are_acknowledged_and_filtered_like_chain_alerts(
    floor: tuple[FloorEnv, FloorProcess],
) -> None:
    env, process = floor
    (before,) = env.psql("SELECT coalesce(max(id), 0) FROM floor_actions")[0]
    # A second table that tilts: its faults are what the pit acknowledges next.
    tilting = SyntheticTable("T08", seed=5, lines_per_round=40, violation_share=0, tilt_share=1)
    lines = tilting.lines(130)
    asyncio.run(env.publish(lines))
    asyncio.run(env.wait_committed(process, {"T08": 130}))
    pit, audit = env.tokens["pit"], env.tokens["audit"]

    open_ones = get(process, "/api/violations", pit, table="T01", acknowledged="false").json()
    assert open_ones and all(v["acknowledged_at"] is None for v in open_ones)
    violation = open_ones[-1]
    # In words, from the game's data: the action, the phase, the article, not JSON.
    assert "in Betting" in violation["said"]["en"] and "Portaria" in violation["said"]["en"]
    assert "於下注" in violation["said"]["zh"]
    path = f"/api/violations/T01/{violation['seq']}/acknowledge"
    assert post(process, path, audit, {"note": "seen"}).status_code == 403
    assert post(process, path, pit, {"note": " "}).status_code == 422
    done = post(process, path, pit, {"note": "talked to D1 about the shake"})
    assert done.status_code == 200, done.text
    assert (done.json()["acknowledged_by"], done.json()["ack_note"]) == (
        "pit.person",
        "talked to D1 about the shake",
    )
    assert post(process, path, env.tokens["surveillance"], {"note": "too"}).status_code == 409
    missing = post(process, "/api/violations/T01/999999/acknowledge", pit, {"note": "x!!"})
    assert missing.status_code == 404
    still = get(process, "/api/violations", pit, table="T01", acknowledged="false").json()
    assert violation["seq"] not in {v["seq"] for v in still}
    assert len(still) == len(open_ones) - 1
    taken = get(process, "/api/violations", pit, table="T01", acknowledged="true").json()
    assert [v["seq"] for v in taken] == [violation["seq"]]

    tilts = get(process, "/api/faults", pit, table="T08", kind="tilt").json()
    assert tilts and {f["kind"] for f in tilts} == {"tilt"}
    assert get(process, "/api/faults", pit, table="T08", kind="hold").json() == []
    assert "shoe reader" in tilts[0]["said"]["en"]
    fault_path = f"/api/faults/T08/{tilts[0]['seq']}/acknowledge"
    assert post(process, fault_path, pit, {"note": "reader cleaned"}).status_code == 200
    unacked = get(process, "/api/faults", pit, table="T08", acknowledged="false").json()
    assert tilts[0]["seq"] not in {f["seq"] for f in unacked}
    assert get(process, "/api/faults", pit, kind="sideways").status_code == 422

    # Journaled in the floor's audit table, refusals included, as chain alerts are.
    actions = env.psql(
        "SELECT role, target, outcome FROM floor_actions WHERE action = 'acknowledge' "
        "AND id > %s ORDER BY id",
        before,
    )
    target = f"violation:T01:{violation['seq']}"
    assert actions == [
        ("audit", target, "refused: role"),
        ("pit", target, "done"),
        ("surveillance", target, "refused: already acknowledged"),
        ("pit", "violation:T01:999999", "refused: no such violation"),
        ("pit", f"fault:T08:{tilts[0]['seq']}", "done"),
    ]
    # The drill-down's lines say themselves too.
    detail = get(process, "/api/tables/T08", pit, events=60).json()
    assert all(e["said"]["en"] and "{" not in e["said"]["en"] for e in detail["events"])
