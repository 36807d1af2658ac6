"""The floor staying live while it catches up (issue 25, item 3), beside today's history alone.

One run starts a throwaway PostgreSQL and, for each of the two floors, its own nats-server:

- **peer**: `tabled floor` with `[floor] live = false`, the history alone (the floor before the
  live view): a table's tile moves only when the history commits its line;
- **live**: `tabled floor` as it runs by default, the live view beside the history.

For each: N tables x L lines are published while the floor is down (the backlog, with a signed
head per table per window, as a shipper's catch-up), then the floor starts and the same tables
play on at R lines/s in all (default 1,333: 800 tables at 40 rounds of 150 lines an hour),
each table's head once a second, as their shippers send them. A client on the floor's push
feed notes when each new line's table shows it (a `live` message with its `live_seq`, or a
`batch` the history committed with its seq). Printed for each floor:

- the **staleness** of new lines during the catch-up: publish -> its tile shows it, p50/p99/max
  (goal: p99 <= 1 s);
- the catch-up: its time (until the history holds every backlog line and commits new lines within
  IN_STEP of their publish), the **ingest rate with live play** (lines the history committed by
  then / that time; goal >= 17,300 lines/s: an hour of 800 tables,
  4.8 M lines, drains in 4.8 M / (R - 1,333) s <= 5 min) and the **floor's CPU a line** (user +
  system of its process over those lines; goal <= 25 us).

    .venv/bin/python bench/bench_floor_live.py [--tables 200] [--lines 300] [--rate 1333]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

import nats
from bench_floor import Floor, enrol_all, pct, publish_all, verdict

from daemon.floor.localservers import NatsServer, PostgresCluster
from daemon.floor.synthetic import SyntheticTable, interleave, subject_of
from daemon.journal.format import line_hash

GOAL_STALE_S = 1.0
GOAL_RATE = 17_300
GOAL_CPU_US = 25.0
GOAL_HOUR_S = 300.0
HOUR_LINES = 800 * 40 * 150  # an hour of 800 tables
LIVE_RATE = HOUR_LINES / 3600  # 1,333 lines/s
IN_STEP = 2.0  # the history commits a new line this soon after its publish: caught up


class Run:
    """One floor's catch-up under live play, and what its push feed showed."""

    def __init__(
        self, floor: Floor, sims: list[SyntheticTable], rate: float, keys: dict[str, Any]
    ) -> None:
        self.floor, self.sims, self.rate, self.keys = floor, sims, rate, keys
        self.started = 0.0
        self.backlog_end = {s.table: s.seq for s in sims}
        self.left = len(sims)  # tables the history has not caught up yet
        self.stored: dict[str, int] = {}
        # Each new line's (seq, publish time), until the page shows it; and until the history
        # commits it (the catch-up is over once the history commits lines IN_STEP after their
        # publish).
        self.waiting: dict[str, deque[tuple[int, float]]] = {s.table: deque() for s in sims}
        self.history: dict[str, deque[tuple[int, float]]] = {s.table: deque() for s in sims}
        self.stale: list[tuple[float, float]] = []  # (published at, seconds until shown)
        self.caught_at: float | None = None  # seconds from the floor's start
        self.caught_lines = 0
        self.caught_cpu = 0.0
        self.live_msgs = 0
        self.gave_up = False  # not caught up within --limit seconds

    def shown(self, table: str, seq: int, now: float) -> None:
        queue = self.waiting.get(table)
        while queue and queue[0][0] <= seq:
            _, sent_at = queue.popleft()
            self.stale.append((sent_at, now - sent_at))

    async def listen(self, ws: Any, cpu0: float) -> None:
        while True:
            msg = json.loads(await ws.recv())
            now = time.perf_counter()
            if msg["type"] == "live":
                self.live_msgs += 1
                for table, tile in msg["tables"].items():
                    self.shown(table, int(tile["live_seq"]), now)
            elif msg["type"] == "batch":
                in_step = False
                for table, seq in msg["tables"].items():
                    before = self.stored.get(table, 0)
                    self.stored[table] = max(before, seq)
                    self.shown(table, seq, now)
                    end = self.backlog_end.get(table)
                    if end is not None and before < end <= seq:
                        self.left -= 1
                    queue = self.history.get(table)
                    while queue and queue[0][0] <= seq:
                        in_step = now - queue.popleft()[1] <= IN_STEP
                if self.left == 0 and in_step and self.caught_at is None:
                    self.caught_at = now - self.started
                    self.caught_lines = sum(self.stored.values())
                    self.caught_cpu = self.floor.cpu_seconds() - cpu0

    async def play(self, url: str, stop: asyncio.Event) -> None:
        """The tables play on: R lines/s round-robin, each table's head once a second."""
        nc = await nats.connect(url)
        last: dict[str, bytes] = {}
        start = time.perf_counter()
        next_heads, i = start + 1.0, 0
        try:
            while not stop.is_set():
                due = int((time.perf_counter() - start) * self.rate)
                while i < due:
                    sim = self.sims[i % len(self.sims)]
                    line = sim.next_line()
                    subject, msg_id = subject_of("tabled", line)
                    await nc.publish(subject, line, headers={"Nats-Msg-Id": msg_id})
                    self.waiting[sim.table].append((sim.seq, time.perf_counter()))
                    self.history[sim.table].append(self.waiting[sim.table][-1])
                    last[sim.table] = line
                    i += 1
                if time.perf_counter() >= next_heads or stop.is_set():
                    await heads(nc, self.keys, last)
                    next_heads += 1.0
                await asyncio.sleep(0.01)
            await heads(nc, self.keys, last)
            await nc.flush()
        finally:
            await nc.close()


async def heads(nc: Any, keys: dict[str, Any], last: dict[str, bytes]) -> None:
    for table, line in last.items():
        seq = json.loads(line)["seq"]
        await nc.publish(f"tabled.{table}.head", keys[table].head(table, seq, line_hash(line)),
                         headers={"Nats-Msg-Id": f"{table}:head:{seq}"})  # fmt: skip
    last.clear()


async def one_floor(
    pg: PostgresCluster,
    name: str,
    *,
    live: bool,
    tables: int,
    lines: int,
    rate: float,
    limit: float,
) -> Run:
    broker = NatsServer().start()
    root = Path(tempfile.mkdtemp(prefix=f"bench-floor-live-{name}-"))
    # No integrity pass (its numpy and scipy imports at start are seconds of CPU, not ingest).
    extra = ("" if live else "live = false\n") + "[integrity]\nperiod_seconds = 0\n"
    floor = Floor(root, pg.create_database(f"floor_{name}"), broker.url, extra)
    try:
        sims = [SyntheticTable(f"B{i:04d}", seed=i) for i in range(tables)]
        backlog = interleave([s.lines(lines) for s in sims])
        keys = await enrol_all(floor.dsn, [s.table for s in sims])
        t0 = time.perf_counter()
        await publish_all(broker.url, backlog, keys)
        print(f"  {name}: published {len(backlog):,} lines in {time.perf_counter() - t0:.1f} s "
              "(floor down); the floor starts, the tables play on")  # fmt: skip
        run = Run(floor, sims, rate, keys)
        floor.start()
        run.started, cpu0 = time.perf_counter(), floor.cpu_seconds()
        ws = await floor.feed()
        stop = asyncio.Event()
        listener = asyncio.create_task(run.listen(ws, cpu0))
        player = asyncio.create_task(run.play(broker.url, stop))
        while run.caught_at is None and time.perf_counter() - run.started < limit:
            if listener.done():
                listener.result()
            await asyncio.sleep(0.2)
        if run.caught_at is None:  # not caught up: what it did in the time given
            run.caught_at = time.perf_counter() - run.started
            run.caught_lines = sum(run.stored.values())
            run.caught_cpu = floor.cpu_seconds() - cpu0
            run.gave_up = True
        await asyncio.sleep(3.0)  # a few seconds in step, after the catch-up
        stop.set()
        await player
        drained = time.perf_counter()
        while any(run.waiting.values()) and time.perf_counter() - drained < 60:
            await asyncio.sleep(0.2)
        listener.cancel()
        await ws.close()
        return run
    finally:
        floor.stop()
        broker.destroy()


def report(name: str, run: Run) -> dict[str, float]:
    assert run.caught_at is not None
    ended = run.started + run.caught_at
    during = [seconds for at, seconds in run.stale if at <= ended]
    rate = run.caught_lines / run.caught_at
    cpu_us = run.caught_cpu / max(1, run.caught_lines) * 1e6
    print(f"  {name:<26} p50 {pct(during, 0.5):6.2f} s  p99 {pct(during, 0.99):6.2f} s  "
          f"max {max(during, default=float('nan')):6.2f} s  ({len(during):,} lines; "
          f"catch-up {run.caught_at:.1f} s{' (NOT caught up)' if run.gave_up else ''}, "
          f"{run.caught_lines:,} lines committed: "
          f"{rate:,.0f} lines/s, {cpu_us:.0f} us CPU a line; {run.live_msgs} live pushes)"
          )  # fmt: skip
    return {"p99": pct(during, 0.99), "rate": rate, "cpu": cpu_us}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200, help="tables in the backlog")
    parser.add_argument("--lines", type=int, default=300, help="backlog lines per table")
    parser.add_argument("--rate", type=float, default=LIVE_RATE, help="live play, lines/s")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds to catch up")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"(1, 5, 15 min) on {os.cpu_count()} cores")  # fmt: skip
    print(f"backlog {args.tables} tables x {args.lines} lines, live play {args.rate:,.0f} lines/s")
    pg = PostgresCluster().init().start()
    try:
        size = {"tables": args.tables, "lines": args.lines, "rate": args.rate, "limit": args.limit}
        peer = asyncio.run(one_floor(pg, "peer", live=False, **size))
        live = asyncio.run(one_floor(pg, "live", live=True, **size))
    finally:
        pg.destroy()
    print("staleness of a new line on the page during the catch-up (publish -> its tile shows it):")
    a = report("peer: the history alone", peer)
    b = report("live view beside it", live)
    print(f"  goal p99 <= {GOAL_STALE_S:.0f} s: peer {verdict(a['p99'] <= GOAL_STALE_S)}, "
          f"live {verdict(b['p99'] <= GOAL_STALE_S)}")  # fmt: skip
    for key, label, goal, ok in (
        ("rate", "ingest with live play, lines/s", f">= {GOAL_RATE:,}", lambda v: v >= GOAL_RATE),
        ("cpu", "floor CPU a line, us", f"<= {GOAL_CPU_US:.0f}", lambda v: v <= GOAL_CPU_US),
    ):
        print(f"  {label:<32} peer {a[key]:>9,.0f}  live {b[key]:>9,.0f}   goal {goal}: "
              f"{verdict(ok(b[key]))}")  # fmt: skip
    drain = HOUR_LINES / (b["rate"] - LIVE_RATE) if b["rate"] > LIVE_RATE else float("inf")
    print(f"  1-hour backlog of 800 tables ({HOUR_LINES:,} lines) with live play, at the live "
          f"floor's rate: {drain:,.0f} s   goal <= {GOAL_HOUR_S:.0f} s: "
          f"{verdict(drain <= GOAL_HOUR_S)}")  # fmt: skip
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
