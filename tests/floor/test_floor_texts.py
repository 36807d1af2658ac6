"""Free text on the floor (a violation's reason, a device's fault, a held table's reason) names a
card only to whom the table's rule would show it: "Qh has already been dealt" told the pit a
card no one at the floor may see while its round is in play (issue 21's attack review).

A real floor process on PostgreSQL and NATS, read through its API as each role."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets

from daemon.floor.localservers import NatsServer, PostgresCluster
from daemon.floor.redact import blotted, visible_alert, visible_row
from daemon.floor.synthetic import SyntheticTable
from daemon.procedures.thirteen.visibility import CARD_PATTERN
from daemon.procedures.visibility import HIDDEN
from tests.floor.floor_support import FloorEnv, FloorProcess, floor_config, write_tokens

CARD = re.compile(CARD_PATTERN)


def _played() -> tuple[list[bytes], int]:
    """T01's lines: round 1 whole (a violation and a tilt naming cards, settled), then round 2
    up to its tilt, which names a card: the table is tilted, in play. And round 2's first seq."""
    table = SyntheticTable(
        "T01", seed=4, violation_share=1.0, tilt_share=1.0,
        reason="{card} has already been dealt", fault="{card} read twice",
    )  # fmt: skip
    lines: list[bytes] = []
    second = 0
    while True:
        lines.append(table.next_line())
        if table.round == 2 and not second:
            second = table.seq
        if table.round == 2 and b'"table.tilted"' in lines[-1]:
            return lines, second


@pytest.fixture(scope="module")
def floor(
    pg: PostgresCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FloorEnv, FloorProcess, int, list[dict[str, Any]]]]:
    root = tmp_path_factory.mktemp("floor-texts")
    broker = NatsServer().start()
    dsn = pg.create_database("floor_texts")
    tokens = write_tokens(root / "tokens.toml")
    config = floor_config(root / "floor.toml", dsn, broker.url, root / "tokens.toml")
    env = FloorEnv(pg, broker, dsn, root, tokens, config)
    lines, second = _played()
    try:  # a setup that fails leaves no floor or broker running
        process = env.start_floor()
        pushed = asyncio.run(_pushed(env, process, lines))
        yield env, process, second, pushed
    finally:
        for started in env.floors:
            started.stop()
        broker.destroy()


async def _pushed(env: FloorEnv, process: FloorProcess, lines: list[bytes]) -> list[Any]:
    """Publish `lines` while an auditor's push feed is open; what it was sent, to the last."""
    feed = process.url.replace("http://", "ws://") + "/api/feed"
    async with websockets.connect(feed, open_timeout=60) as ws:  # a loaded machine
        await ws.send(json.dumps({"token": env.tokens["audit"]}))
        assert json.loads(await ws.recv())["type"] == "hello"
        await env.publish(lines)
        messages: list[dict[str, Any]] = []
        while not any(m.get("tables", {}).get("T01") == len(lines) for m in messages):
            messages.append(json.loads(await asyncio.wait_for(ws.recv(), 60)))
    return messages


def test_the_push_feed_names_no_card_in_free_text_to_anyone(
    floor: tuple[FloorEnv, FloorProcess, int, list[dict[str, Any]]],
) -> None:
    pushed = floor[3]  # what the floor's push feed sent an auditor while the lines came
    rows = [m[m["type"]] for m in pushed if m["type"] in ("violation", "fault")]
    assert {"violation", "fault"} <= {m["type"] for m in pushed}
    for row in rows:
        text = row.get("reason") or row.get("fault")
        assert HIDDEN in text and not CARD.search(text), row


def _texts(rows: list[dict[str, Any]], key: str, second: int) -> tuple[list[str], list[str]]:
    """(round 1's texts, round 2's), from rows with a seq."""
    return (
        [r[key] for r in rows if r["seq"] < second],
        [r[key] for r in rows if r["seq"] >= second],
    )


@pytest.mark.parametrize("role", ["pit", "surveillance", "audit", "admin"])
def test_a_card_named_in_free_text_is_served_as_the_tables_rule_says(
    floor: tuple[FloorEnv, FloorProcess, int, list[dict[str, Any]]], role: str
) -> None:
    env, process, second, _ = floor
    whole_when_closed = role != "pit"  # pit sees only what the game opened, even when closed
    for path, key in (("/api/violations", "reason"), ("/api/faults", "fault")):
        closed, in_play = _texts(env.get(process, path, role=role), key, second)
        assert closed and in_play, (path, closed, in_play)
        for text in in_play:  # round 2, in play: nobody
            assert not CARD.search(text) and HIDDEN in text, (role, path, text)
        for text in closed:
            assert bool(CARD.search(text)) == whole_when_closed, (role, path, text)
            assert (HIDDEN in text) != whole_when_closed, (role, path, text)
    # The violations' sentences are made from what the role may see.
    for row in env.get(process, "/api/violations", role=role):
        said = json.dumps(row["said"])
        assert bool(CARD.search(said)) == (whole_when_closed and row["seq"] < second), said
    # The tilted table's reason, in play: nobody sees the card in the summary.
    [summary] = env.get(process, "/api/tables", role=role)
    assert summary["state"] == "tilted" and HIDDEN in summary["reason"], summary
    assert not CARD.search(summary["reason"]), summary
    if role in ("audit", "admin"):  # the audit report: closed rounds whole, in play blotted
        report = env.get(
            process, "/api/report", role=role, since="2000-01-01T00:00", until="2100-01-01T00:00"
        )
        closed, in_play = _texts(report["violations"], "reason", second)
        assert all(CARD.search(t) for t in closed) and all(HIDDEN in t for t in in_play)
        closed, in_play = _texts(report["device_faults"], "fault", second)
        assert all(CARD.search(t) for t in closed) and all(HIDDEN in t for t in in_play)


NOTE = "confirmed on camera: qh to seat 3, then Q♥ and 10♠, a♥ and aS as ad-hoc check"


def test_a_persons_note_is_blotted_as_the_reason_it_answers() -> None:
    row = {"reason": "Qh has already been dealt", "ack_note": "confirmed on camera: Qh to seat 3"}
    shown = visible_row(row, "pit")
    assert shown["reason"] == f"{HIDDEN} has already been dealt"
    assert shown["ack_note"] == f"confirmed on camera: {HIDDEN} to seat 3"
    # Typed in lower case or with suit symbols, a card is a card; ordinary words stay.
    assert blotted(NOTE) == (
        f"confirmed on camera: {HIDDEN} to seat 3, then {HIDDEN} and {HIDDEN}, {HIDDEN} and "
        f"{HIDDEN} as ad-hoc check"
    )
    for words in ("as ad ah the 5th at 4th is", "10th", "kc1", "Ah, the dealer"):
        assert blotted(words) == words.replace("Ah", HIDDEN), words  # "Ah" as today
    alert = visible_alert({"ack_note": "Kd seen", "line_closed": True}, "pit")
    assert alert["ack_note"] == f"{HIDDEN} seen"


def test_an_acknowledgement_note_names_no_card_of_a_round_in_play(
    floor: tuple[FloorEnv, FloorProcess, int, list[dict[str, Any]]],
) -> None:
    env, process, second, _ = floor
    [row, *_] = [r for r in env.get(process, "/api/violations", role="pit") if r["seq"] >= second]
    done = httpx.post(
        f"{process.url}/api/violations/T01/{row['seq']}/acknowledge",
        json={"note": NOTE},
        headers={"Authorization": f"Bearer {env.tokens['pit']}"},
        timeout=30,
    )
    assert done.status_code == 200, done.text
    assert not CARD.search(done.json()["ack_note"]), done.json()
    for role in ("pit", "surveillance", "audit", "admin"):
        [served] = [
            r for r in env.get(process, "/api/violations", role=role) if r["seq"] == row["seq"]
        ]
        assert HIDDEN in served["ack_note"] and not CARD.search(served["ack_note"]), (role, served)
    report = env.get(
        process, "/api/report", role="audit", since="2000-01-01T00:00", until="2100-01-01T00:00"
    )
    [action] = [a for a in report["floor_actions"] if a["action"] == "acknowledge"]
    assert HIDDEN in action["note"] and not CARD.search(action["note"]), action
