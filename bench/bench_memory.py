"""Bounded memory: the daemon's RSS from round 1,000 to round 10,000 of autoplay.

    python bench/bench_memory.py [--rounds N] [--from N]

Runs `tabled run --autoplay`'s script in this process (Thirteen, the `sim://` simulators, faults
and violations as autoplay injects them, durability `none` so the disk does not pace it) and
reads the process's resident set size (/proc/self/statm, after a garbage collection) at round
`--from` (1,000) and at the last round (10,000).

Goal (issue 10 item 5): RSS growth <= 2 MiB between the two. Peer, in the same run: a table
played for a tenth of the rounds that keeps every settlement as `Table.stats.settlements` did
(a dict per round, kept for the process's life), in a child process of its own (a fresh heap:
in this one it would grow into the memory the first table freed), its growth extrapolated to
the same span.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from daemon.autoplay import Autoplay, InProcessControl, SimulationClock  # noqa: E402
from daemon.config import parse_config  # noqa: E402
from daemon.logging import configure_logging  # noqa: E402
from daemon.table import Fed, Table  # noqa: E402
from drivers.clock import MonotonicClock  # noqa: E402

GOAL_BYTES = 2 * 1024 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    gc.collect()
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * PAGE


async def play(journal: Path, world: str, rounds: int, mark: int, keep: bool) -> tuple[int, int]:
    """RSS at round `mark` and at round `rounds`."""
    config = parse_config(
        {
            "table": {"id": "M01", "game": "thirteen"},
            "journal": {"dir": str(journal), "durability": "none"},
            "devices": {
                d: {"port": f"sim://{d}?world={world}&seed={i}"}
                for i, d in enumerate(("shuffler", "dice_shaker", "shoe_reader", "timer_bell"))
            },
        }
    )
    clock = SimulationClock()
    table = Table(config, clock=clock, driver_clock=MonotonicClock())
    kept: list[dict[str, Any]] = []
    if keep:
        # What Table.stats.settlements kept before: every settlement's payload.

        def keep_settlements(fed: Fed, _received: float | None) -> None:
            for event in fed.outcome.events:
                if event.name == "round.settled":
                    kept.append({"round": event.payload.get("round"), **dict(event.payload)})

        table.on_durable = keep_settlements
    await table.start()
    marks: dict[int, int] = {}

    def progress(line: str) -> None:
        number = int(line.split()[1].split("/", maxsplit=1)[0])
        if number in (mark, rounds):
            marks[number] = rss()

    control = InProcessControl(world)
    player = Autoplay(table, control, rounds=rounds, seed=5, clock=clock, progress=progress)
    try:
        await player.run()
    finally:
        await control.close()
        await table.stop()
    return marks[mark], marks[rounds]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--from", dest="mark", type=int, default=1_000)
    parser.add_argument("--peer", action="store_true", help="(the child) play the peer only")
    args = parser.parse_args()
    configure_logging("critical")
    (ROOT / "var").mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-memory-", dir=ROOT / "var"))
    peer_rounds = max(args.rounds // 10, args.mark // 10 + 10)
    peer_mark = peer_rounds // 10
    if args.peer:
        try:
            marks = asyncio.run(play(workdir / "peer", "peer", args.rounds, args.mark, True))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        print(json.dumps(marks))
        return 0
    try:
        first, last = asyncio.run(play(workdir / "j", "memory", args.rounds, args.mark, False))
        child = subprocess.run(
            [sys.executable, __file__, "--peer", "--rounds", str(peer_rounds), "--from",
             str(peer_mark)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        peer_first, peer_last = json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    growth = last - first
    span = args.rounds - args.mark
    peer = (peer_last - peer_first) / (peer_rounds - peer_mark) * span
    print(
        f"autoplay, Thirteen on sim://, {args.rounds} rounds; load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"RSS at round {args.mark}: {first / 2**20:.1f} MiB, at round {args.rounds}: "
        f"{last / 2**20:.1f} MiB"
    )
    print(
        f"RSS growth, round {args.mark} to {args.rounds}: {growth / 2**20:.2f} MiB   goal <= "
        f"{GOAL_BYTES / 2**20:.0f} MiB   {'met' if growth <= GOAL_BYTES else 'MISSED'}   "
        f"(peer, every settlement kept: {peer / 2**20:.1f} MiB, from {peer_rounds - peer_mark} "
        f"rounds' growth of {(peer_last - peer_first) / 2**20:.2f} MiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
