"""Lines waiting for a signed head (`pending_lines`): past a bound they are an `unproven` alert;
a batch reads at most a window of them, and a backlog larger than that is proven window by window
once a head comes, none lost (daemon/floor/store.py, docs/floor-service.md).

A real floor process on PostgreSQL and NATS; the lines published as a table's shipper would, but
with its heads held back (a shipper whose heads do not get through)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

import nats

from daemon.floor.store import PENDING_ALERT_LINES, PENDING_WINDOW
from daemon.floor.synthetic import SyntheticTable, ensure_stream, publish
from daemon.journal.format import line_hash
from tests.floor.floor_support import FloorEnv, FloorProcess

LINES = PENDING_WINDOW + 5_000


def until(what: str, check: Any, timeout: float = 180.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"not seen in {timeout:.0f} s: {what}"
        time.sleep(0.5)
    return found


def unproven(env: FloorEnv, floor: FloorProcess) -> list[dict[str, Any]]:
    return [a for a in env.get(floor, "/api/alerts", kind="unproven") if a["table"] == "T05"]


async def _ship(env: FloorEnv, lines: Sequence[bytes] = (), head: bytes | None = None) -> None:
    """Publish `lines` with no head, then the head of `head` (the shipper's for its last line,
    as it signs it once heads get through)."""
    nc = await nats.connect(env.broker.url)
    try:
        js = nc.jetstream()
        await ensure_stream(js)
        if lines:
            await publish(js, lines)  # no keys: no head
        if head is not None:
            seq = int(json.loads(head)["seq"])
            await js.publish(
                "tabled.T05.head",
                env.keys["T05"].head("T05", seq, line_hash(head)),
                headers={"Nats-Msg-Id": f"T05:head:{seq}"},
            )
    finally:
        await nc.close()


def test_lines_without_heads_alert_and_a_backlog_is_proven_window_by_window(
    env: FloorEnv,
) -> None:
    asyncio.run(env.enrol(["T05"]))
    lines = SyntheticTable("T05", seed=1).lines(LINES)
    floor = env.start_floor()
    asyncio.run(_ship(env, lines))

    # Past PENDING_ALERT_LINES waiting, one open alert, its counts kept current.
    alert = until(
        "an unproven alert counting every line",
        lambda: [a for a in unproven(env, floor) if a["details"]["lines"] == LINES],
    )
    assert len(unproven(env, floor)) == 1
    details = alert[0]["details"]
    assert details["lines"] > PENDING_ALERT_LINES and details["oldest_seq"] == 1
    assert details["newest_seq"] == LINES and details["read_per_batch"] == PENDING_WINDOW
    assert alert[0]["resolved_at"] is None
    # Nothing proven, nothing stored: the table is shown by the live view alone, provisional.
    [row] = until(
        "the live view's tile",
        lambda: [t for t in env.get(floor, "/api/tables", role="pit") if t["live_seq"] == LINES],
    )
    assert row["table"] == "T05" and row["provisional"] is True and row["last_seq"] == 0
    assert env.psql("SELECT count(*) FROM pending_lines") == [(LINES,)]

    # The head comes: the window below it, then (idle, no message) the rest, every line the
    # table's, none lost; the alert resolved.
    asyncio.run(_ship(env, head=lines[-1]))
    until(
        "every line proven",
        lambda: [t for t in env.get(floor, "/api/tables") if t["contiguous_seq"] == LINES],
    )
    assert env.psql("SELECT count(*), min(seq), max(seq) FROM journal_lines") == [(LINES, 1, LINES)]
    assert env.psql("SELECT count(*) FROM pending_lines") == [(0,)]
    until("the alert resolved", lambda: unproven(env, floor)[0]["resolved_at"] is not None)
    # A window at a time: the lines below the first window were a gap until the next one.
    gaps = [a for a in env.get(floor, "/api/alerts", kind="gap") if a["table"] == "T05"]
    assert [(a["seq"], a["gap_to"], a["resolved_at"] is not None) for a in gaps] == [
        (1, LINES - PENDING_WINDOW, True)
    ]
