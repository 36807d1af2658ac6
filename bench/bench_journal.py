"""Journal append latency and round time, side by side with a plain json + write + fsync loop.

    .venv/bin/python bench/bench_journal.py [--n 2000] [--rounds 40] [--lines 1000000] [--dir DIR]

Prints p50/p99/max of one append for each durability, the time of a whole round (70 events,
61 of them commit points), and group commit under four appending threads; the peer is the
least a durable JSON log can do: ``json.dumps`` + ``os.write`` + ``os.fsync`` per event, no
hash, no seq, no lock. The goal line is half the wire time of a device frame at 115,200 baud.
Start-up: opening a journal of --lines lines (the chain checked before any append) after a
clean stop and after a crash, beside the same check with no anchor (every line).
Figures depend on the disk and on the machine's load; run it where the table will run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from daemon.config import JournalConfig
from daemon.journal import Journal, last_event, replay, verify
from daemon.logging import configure_logging

BAUD = 115_200
BITS_PER_BYTE = 10  # start + 8 data + stop
ROUND_EVENTS = 70
ROUND_COMMITS = 61  # bets closed, dice, 52 cards, 4 arrangements, settlement, 2 violations


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99, ordered[-1]


def payload(i: int) -> dict[str, object]:
    return {"card": "AS", "index": i % 52, "frame": "02011a0441530003c2d103"}


class Peer:
    """json.dumps + os.write (+ os.fsync): one line a call, nothing else."""

    def __init__(self, directory: Path, fsync: bool) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(directory / "peer.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.fsync = fsync
        self.seq = 0

    def append(self, event: str, data: dict[str, object], commit: bool) -> None:
        self.seq += 1
        line = json.dumps({"seq": self.seq, "ts": time.time(), "event": event, "payload": data})
        os.write(self.fd, (line + "\n").encode())
        if commit and self.fsync:
            os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


def open_journal(directory: Path, durability: str) -> Journal:
    return Journal.open(JournalConfig(dir=directory, durability=durability), "BENCH")


def time_pair(
    ours: Callable[[int], object], theirs: Callable[[int], object], n: int
) -> tuple[list[float], list[float]]:
    """Latency of each call, the two alternating so both meet the same disk and load."""
    a: list[float] = []
    b: list[float] = []
    for i in range(n):
        for fn, out in ((ours, a), (theirs, b)) if i % 2 else ((theirs, b), (ours, a)):
            start = time.perf_counter()
            fn(i)
            out.append(time.perf_counter() - start)
    return a, b


def threaded(append: Callable[[int], object], threads: int, per_thread: int) -> float:
    barrier = threading.Barrier(threads + 1)

    def run() -> None:
        barrier.wait()
        for i in range(per_thread):
            append(i)

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    start = time.perf_counter()
    for worker in workers:
        worker.join()
    return threads * per_thread / (time.perf_counter() - start)


def us(values: tuple[float, float, float]) -> str:
    return "  ".join(f"{v * 1e6:8.1f}" for v in values)


def ms(values: tuple[float, float, float]) -> str:
    return "  ".join(f"{v * 1e3:8.2f}" for v in values)


HEADER = (
    f"{'case':34}  {'tabled p50':>10}  {'p99':>8}  {'max':>8}   |  "
    f"{'peer p50':>8}  {'p99':>8}  {'max':>8}"
)


def bench_appends(base: Path, n: int) -> dict[str, tuple[float, float, float]]:
    print("one append, microseconds")
    print(HEADER)
    rows: dict[str, tuple[float, float, float]] = {}
    for durability, commit, label in (
        ("fsync", True, "commit point, durability fsync"),
        ("none", True, "commit point, durability none"),
        ("fsync", False, "non-commit (buffered), fsync"),
    ):
        journal = open_journal(base / f"j-{durability}-{commit}", durability)
        peer = Peer(base / f"p-{durability}-{commit}", durability == "fsync")

        def ours(i: int, j: Journal = journal, c: bool = commit) -> object:
            return j.append("shoe.card_read", actor="shoe_reader", payload=payload(i), commit=c)

        def theirs(i: int, p: Peer = peer, c: bool = commit) -> object:
            p.append("shoe.card_read", payload(i), c)
            return None

        time_pair(ours, theirs, 50)  # warm up
        a, b = time_pair(ours, theirs, n)
        journal.close()
        peer.close()
        rows[label] = percentiles(a)
        print(f"{label:34}  {us(rows[label])}   |  {us(percentiles(b))}")
    return rows


def bench_async(base: Path, n: int) -> None:
    journal = open_journal(base / "async-fsync", "fsync")

    async def run() -> tuple[list[float], list[float]]:
        on_thread: list[float] = []
        on_loop: list[float] = []
        for i in range(n):
            start = time.perf_counter()
            await journal.append_async("dice.result", actor="dice_shaker", payload=payload(i),
                                       commit=True)  # fmt: skip
            on_thread.append(time.perf_counter() - start)
            start = time.perf_counter()
            journal.append("dice.result", actor="dice_shaker", payload=payload(i), commit=True)
            on_loop.append(time.perf_counter() - start)
        return on_thread, on_loop

    on_thread, on_loop = asyncio.run(run())
    journal.close()
    label = "from asyncio: append_async | append"
    print(f"{label:34}  {us(percentiles(on_thread))}   |  {us(percentiles(on_loop))}")
    print("  (append_async waits for the fdatasync in a worker thread: the loop stays free,")
    print("   at the cost of the hand-off; plain append blocks the loop for one fdatasync)")


def bench_rounds(base: Path, rounds: int) -> dict[str, tuple[float, float, float]]:
    print(f"a round: {ROUND_EVENTS} events, {ROUND_COMMITS} commit points, milliseconds")
    print(HEADER)
    rows: dict[str, tuple[float, float, float]] = {}
    for durability in ("fsync", "none"):
        journal = open_journal(base / f"r-{durability}", durability)
        peer = Peer(base / f"rp-{durability}", durability == "fsync")

        def ours(_: int, j: Journal = journal) -> object:
            for i in range(ROUND_EVENTS):
                j.append(
                    "shoe.card_read",
                    actor="shoe_reader",
                    round_id="R1",
                    payload=payload(i),
                    commit=i < ROUND_COMMITS,
                )
            return None

        def theirs(_: int, p: Peer = peer) -> object:
            for i in range(ROUND_EVENTS):
                p.append("shoe.card_read", payload(i), i < ROUND_COMMITS)
            return None

        a, b = time_pair(ours, theirs, rounds)
        journal.close()
        peer.close()
        label = f"round, durability {durability}"
        rows[label] = percentiles(a)
        print(f"{label:34}  {ms(rows[label])}   |  {ms(percentiles(b))}")
    return rows


def bench_threads(base: Path, threads: int, per_thread: int) -> None:
    journal = open_journal(base / "t-fsync", "fsync")

    def ours(i: int) -> object:
        return journal.append("device.frame_received", actor="driver", payload=payload(i),
                              commit=True)  # fmt: skip

    ours_rate = threaded(ours, threads, per_thread)
    syncs = journal.syncs
    journal.close()
    peer = Peer(base / "tp-fsync", True)
    lock = threading.Lock()

    def theirs(i: int) -> object:
        with lock:
            peer.append("device.frame_received", payload(i), True)
        return None

    peer_rate = threaded(theirs, threads, per_thread)
    peer.close()
    print(f"{threads} threads committing at once (group commit), fsync")
    print(
        f"  tabled {ours_rate:8.0f} events/s, {syncs / (threads * per_thread):.2f} fsyncs a "
        f"commit   |  peer (a lock, an fsync each) {peer_rate:8.0f} events/s"
    )


def bench_recovery(base: Path, events: int) -> None:
    directory = base / "recovery"
    config = JournalConfig(dir=directory, durability="none", rotate_bytes=1 << 20)
    with Journal.open(config, "BENCH") as journal:
        for i in range(events):
            journal.append("shoe.card_read", actor="shoe_reader", payload=payload(i),
                           commit=i % 10 == 0)  # fmt: skip
    start = time.perf_counter()
    reopened = Journal.open(config, "BENCH")
    opened = time.perf_counter() - start
    reopened.close()
    start = time.perf_counter()
    count = sum(1 for _ in replay(directory))
    replayed = time.perf_counter() - start
    start = time.perf_counter()
    result = verify(directory)
    verified = time.perf_counter() - start
    assert result.ok and count == result.events
    files = len(result.files)
    print(f"recovery over {count} events in {files} files (no peer: the peer has no chain)")
    print(
        f"  open (the chain checked through the anchor) {opened * 1e3:.1f} ms; "
        f"replay {count / replayed:,.0f} events/s; verify-log {count / verified:,.0f} events/s"
    )


CRASH = """
import os, sys
from pathlib import Path
from daemon.config import JournalConfig
from daemon.journal import Journal
journal = Journal.open(JournalConfig(dir=Path(sys.argv[1]), durability="fsync"), "BENCH")
for i in range(int(sys.argv[2])):
    journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
os._exit(0)  # a crash: no close, so no closing anchor
"""


def timed_open(config: JournalConfig) -> float:
    start = time.perf_counter()
    Journal.open(config, "BENCH").close()
    return time.perf_counter() - start


def bench_startup(base: Path, lines: int) -> tuple[float, float]:
    """Opening a journal of `lines` lines: the writer checks the chain end to end first."""
    directory = base / "startup"
    config = JournalConfig(dir=directory, durability="none")  # the default 64 MiB files
    with Journal.open(config, "BENCH") as journal:
        for i in range(lines):
            if i % ROUND_EVENTS == ROUND_EVENTS - 1:  # a round ends: the table's checkpoint
                journal.append(
                    "table.checkpoint", actor="system", payload={"round": i}, commit=True
                )
            else:
                journal.append("shoe.card_read", actor="shoe_reader", payload=payload(i),
                               commit=i % 1000 == 0)  # fmt: skip
    paths = sorted(directory.glob("journal-*.jsonl"))
    files, newest = len(paths), paths[-1].stat().st_size
    total = sum(path.stat().st_size for path in paths)
    print(
        f"start-up over {lines:,} lines, {total / 1e6:.0f} MB in {files} files, the newest "
        f"{newest / 1e6:.1f} MB (the chain checked before appending)"
    )
    clean = min(timed_open(config) for _ in range(3))
    # A crash after the last anchor: the newest file's lines are walked (SHA-256 and links).
    subprocess.run([sys.executable, "-c", CRASH, str(directory), "200"], check=True)
    crashed = timed_open(config)
    # A restart from the last checkpoint: found from the end, the lines after it replayed.
    journal = Journal.open(config, "BENCH")
    start = time.perf_counter()
    checkpoint = last_event(directory, "table.checkpoint")
    assert checkpoint is not None
    after = sum(1 for _ in replay(directory, from_seq=checkpoint.seq))
    restart = time.perf_counter() - start
    journal.close()
    start = time.perf_counter()
    counted = sum(1 for _ in paths[-1].open("rb"))  # what finding it by counting lines read
    counting = time.perf_counter() - start
    print(
        f"  restart from the last checkpoint ({after} lines replayed) {restart * 1e3:.1f} ms; "
        f"peer, counting the newest file's {counted:,} lines to it {counting * 1e3:.1f} ms"
    )
    # The peer: the same check without an anchor, every line decoded and linked.
    (directory / ".journal.anchor").unlink()
    unanchored = timed_open(config)
    print(f"  after a clean stop {clean * 1e3:.1f} ms; after a crash {crashed * 1e3:.1f} ms")
    print(f"  peer, no anchor (every line checked) {unanchored * 1e3:.0f} ms")
    return max(clean, crashed), restart


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="appends per latency case")
    parser.add_argument("--rounds", type=int, default=40, help="rounds per round case")
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: temp)")
    parser.add_argument("--frame-bytes", type=int, default=10, help="device frame size")
    parser.add_argument("--lines", type=int, default=1_000_000, help="journal size at start-up")
    args = parser.parse_args()
    configure_logging("warning")
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)  # --dir need not exist yet
    base = Path(tempfile.mkdtemp(prefix="bench-journal-", dir=args.dir))
    print(f"journal benchmark: {args.n} appends a case, {args.rounds} rounds, in {base}")
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} (shared machines vary)")
    print()
    rows = bench_appends(base, args.n)
    bench_async(base, args.n // 2)
    print()
    round_rows = bench_rounds(base, args.rounds)
    print()
    bench_threads(base, 4, max(50, args.n // 8))
    print()
    bench_recovery(base, 50_000)
    print()
    startup, restart = bench_startup(base, args.lines)
    print()
    wire = args.frame_bytes * BITS_PER_BYTE / BAUD
    p99 = rows["commit point, durability fsync"][1]
    goal = wire / 2
    print(f"goal: p99 commit+fsync <= half a {args.frame_bytes}-byte frame at {BAUD} baud")
    print(
        f"  frame wire time {wire * 1e6:.0f} us, half {goal * 1e6:.0f} us; "
        f"tabled p99 {p99 * 1e6:.0f} us -> {'met' if p99 <= goal else 'NOT met'}"
    )
    round_p50 = round_rows["round, durability fsync"][0]
    print(
        f"goal: a round with every commit point fsynced <= 50 ms; tabled p50 "
        f"{round_p50 * 1e3:.1f} ms -> {'met' if round_p50 <= 0.050 else 'NOT met'}"
    )
    print(
        f"goal: start-up at {args.lines:,} lines, chain checked, <= 1 s; tabled (worst of clean "
        f"stop and crash) {startup * 1e3:.0f} ms -> {'met' if startup <= 1.0 else 'MISSED'}"
    )
    print(
        f"goal: restart from the last checkpoint at {args.lines:,} lines <= 50 ms; tabled "
        f"{restart * 1e3:.1f} ms -> {'met' if restart <= 0.050 else 'MISSED'}"
    )
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
