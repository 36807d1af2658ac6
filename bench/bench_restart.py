"""Restart in constant time, end to end: `Table.start` from a checkpoint at 10^6 journal lines,
and `tabled verify-log` streaming the same journal.

    python bench/bench_restart.py [--lines N]

Builds a journal of `--lines` lines (10^6): filler device lines first (card reads, written
through the journal, chain and anchors as the table writes them), then a real table on the
`sim://` simulators plays two rounds and starts a third (a checkpoint at each round's end, a
few inputs after the last). Then, in the same run:

- `Table.start` on it (no devices connected) from its last checkpoint: the goal's figure;
- the peer: `Table.start` replaying every input from the first line (`use_checkpoint` off);
- `tabled verify-log` over the 10^6 lines as a process: lines per second (by wall time and by
  the process's CPU time, since the machine's other work slows the first) and its peak RSS,
  beside its peak RSS over a journal a tenth as long (flat memory: the same peak).

Goals (issue 10 item 6): start from the checkpoint <= 50 ms; verify-log >= 35,000 lines/s with
a peak RSS within 10 % of the small journal's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import play, sim_config  # noqa: E402

from daemon.autoplay import InProcessControl  # noqa: E402
from daemon.journal import Journal  # noqa: E402
from daemon.logging import configure_logging  # noqa: E402
from daemon.table import Table  # noqa: E402

START_GOAL = 0.050
VERIFY_GOAL = 35_000
FLAT = 1.10


def fill(directory: Path, lines: int) -> None:
    config = sim_config(directory, "none", "unused").journal
    with Journal.open(config, "B01") as journal:
        for i in range(lines):
            journal.append(
                "shoe.card_read",
                actor="device:shoe_reader",
                payload={"card": "AS", "index": i % 52, "frame": "02011a0441530003c2d103"},
                commit=i % 1000 == 0,
            )


async def rounds(directory: Path) -> None:
    world = "restart"
    config = sim_config(directory, "none", world)
    table = Table(config)
    control = InProcessControl(world)
    await table.start()
    try:
        await play(table, control, 2, paced=False)
        await table.act("start_round", "D1", "dealer", {})
        await table.act("confirm_hand_shuffle", "D1", "dealer", {})
    finally:
        await table.stop()
        await control.close()


async def start(directory: Path, checkpoint: bool) -> tuple[float, float, int]:
    """Wall and CPU seconds of `Table.start`, and the inputs it replayed."""
    table = Table(sim_config(directory, "none", "unused"), drivers={})
    table.use_checkpoint = checkpoint
    cpu = time.process_time()
    started = time.perf_counter()
    await table.start(connect=False)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    await table.stop()
    return elapsed, cpu, table.stats.replayed


def verify_log(directory: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of `tabled verify-log`, and the peak RSS of every child so far
    (KiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "daemon", "verify-log", str(directory)],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, after.ru_maxrss


def count_lines(directory: Path) -> int:
    total = 0
    for path in directory.glob("journal-*.jsonl"):
        with path.open("rb") as f:
            total += sum(1 for _ in f)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    configure_logging("error")
    (ROOT / "var").mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-restart-", dir=ROOT / "var"))
    try:
        small, big = workdir / "small", workdir / "big"
        fill(small, args.lines // 10)
        fill(big, args.lines)
        asyncio.run(rounds(big))
        lines = count_lines(big)
        starts = [asyncio.run(start(big, checkpoint=True)) for _ in range(3)]
        fast, fast_cpu, tail = min(starts)
        full, full_cpu, inputs = asyncio.run(start(big, checkpoint=False))
        _, _, small_rss = verify_log(small)
        seconds, cpu, big_rss = verify_log(big)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rate, cpu_rate = lines / seconds, lines / cpu
    print(f"a journal of {lines:,} lines; load average {os.getloadavg()[0]:.2f}")
    for what, value, peer in (("wall", fast, full), ("CPU", fast_cpu, full_cpu)):
        print(
            f"Table.start from the last checkpoint, {what} time (best of 3): "
            f"{value * 1e3:.1f} ms ({tail} inputs replayed)   goal <= {START_GOAL * 1e3:.0f} ms"
            f"   {'met' if value <= START_GOAL else 'MISSED'}   (peer, every input replayed "
            f"from the first line: {peer * 1e3:.0f} ms, {inputs} inputs)"
        )
    flat = big_rss <= small_rss * FLAT
    for what, value, seconds_of in (("wall", rate, seconds), ("CPU", cpu_rate, cpu)):
        print(
            f"tabled verify-log, {what} time: {value:,.0f} lines/s ({seconds_of:.1f} s with "
            f"start-up)   goal >= {VERIFY_GOAL:,}   {'met' if value >= VERIFY_GOAL else 'MISSED'}"
        )
    print(
        f"tabled verify-log peak RSS {big_rss / 1024:.1f} MiB (peer, a tenth as many lines: "
        f"{small_rss / 1024:.1f} MiB)   goal <= {FLAT:.2f}x   {'met' if flat else 'MISSED'}"
    )
    print(
        "Wall time counts the waits for a CPU on a shared machine; CPU time is the process's "
        "own (user + system)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
