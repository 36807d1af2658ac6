"""The live view (daemon/floor/live.py) against a real nats-server and PostgreSQL, `tabled floor`
as a process: while the floor catches up a backlog, a table's new line reaches the push feed
within a second, its tile marked provisional, and its tilt pushed as a provisional fault; once
the history catches up the tile is the history's, and what is stored is what it always was."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import nats
import websockets

from daemon.floor.synthetic import SyntheticTable, interleave, publish
from daemon.journal.format import line_hash
from tests.floor.floor_support import FloorEnv, FloorProcess

TABLES = [f"L{i:02d}" for i in range(40)]
BACKLOG = 1000  # lines a table: 40,000 lines behind the floor when it starts


async def _feed(env: FloorEnv, floor: FloorProcess) -> Any:
    ws = await websockets.connect(floor.url.replace("http://", "ws://") + "/api/feed")
    await ws.send(json.dumps({"token": env.tokens["pit"]}))
    assert json.loads(await ws.recv())["type"] == "hello"
    return ws


async def _catch_up_stays_live(env: FloorEnv) -> None:
    sims = {t: SyntheticTable(t, seed=3, tilt_share=0.0) for t in TABLES}
    await env.publish(interleave([s.lines(BACKLOG) for s in sims.values()]))
    floor = env.start_floor()
    ws = await _feed(env, floor)
    stored: dict[str, int] = {}

    async def next_push() -> dict[str, Any]:
        msg: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 60))
        if msg["type"] == "batch":
            for t, s in msg["tables"].items():
                stored[t] = max(stored.get(t, 0), s)
        return msg

    while (await next_push())["type"] != "batch":
        pass  # the history has started on the backlog
    # L07's dealer's shoe reader tilts now: its line (and its head) go out behind the backlog.
    sim = sims["L07"]
    sim._pending = [("device:shoe_reader", "table.tilted", {"device": "shoe_reader",
                                                            "fault": "lid open"})]  # fmt: skip
    line = sim.next_line()
    nc = await nats.connect(env.broker.url)
    try:
        sent = time.monotonic()
        await publish(nc.jetstream(), [line], keys=env.keys)
    finally:
        await nc.close()
    tile = fault = None
    while tile is None or fault is None:
        msg = await next_push()
        if msg["type"] == "live" and msg["tables"].get("L07", {}).get("live_seq", 0) >= sim.seq:
            tile, tile_after = msg["tables"]["L07"], time.monotonic() - sent
        elif msg["type"] == "fault" and msg.get("provisional") and msg["fault"]["seq"] == sim.seq:
            fault = msg["fault"]
    await ws.close()
    # Within a second of its publish, while the history is still far behind it.
    assert tile_after < 1.0, tile_after
    assert stored.get("L07", 0) < sim.seq - 100, (stored.get("L07"), sim.seq)
    assert tile["state"] == "tilted" and tile["reason"] == "shoe_reader: lid open", tile
    assert tile["provisional"] is True and tile["last_seq"] < sim.seq, tile
    assert fault["table"] == "L07" and fault["kind"] == "tilt" and fault["fault"] == "lid open"
    assert "said" in fault

    # The page's read of the tables says the same while the history catches up.
    row = next(r for r in env.get(floor, "/api/tables", role="pit") if r["table"] == "L07")
    assert row["state"] == "tilted" and max(row["live_seq"] or 0, row["last_seq"]) >= sim.seq

    # The history catches up: the tile is the history's, stored as it always was.
    await env.wait_committed(floor, {t: s.seq for t, s in sims.items()}, timeout=240)
    row = next(r for r in env.get(floor, "/api/tables", role="pit") if r["table"] == "L07")
    assert row["provisional"] is False and row["last_seq"] == sim.seq, row
    assert row["state"] == "tilted" and row["reason"] == "shoe_reader: lid open", row
    assert env.psql("SELECT count(*) FROM journal_lines")[0][0] == len(TABLES) * BACKLOG + 1
    assert env.psql("SELECT count(*) FROM chain_alerts")[0][0] == 0
    got = env.psql("SELECT line FROM journal_lines WHERE table_id = 'L07' AND seq = %s", sim.seq)
    assert bytes(got[0][0]) == line and line_hash(line) == sim.prev
    faults = env.get(floor, "/api/faults", role="pit", table="L07")
    assert [f["seq"] for f in faults] == [sim.seq]


def test_a_new_line_is_on_the_page_within_a_second_of_a_catch_up(env: FloorEnv) -> None:
    asyncio.run(_catch_up_stays_live(env))
