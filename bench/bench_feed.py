"""The journal shipper against plain nats-py, on a real nats-server (JetStream) on loopback.

    .venv/bin/python bench/bench_feed.py [--lines 50000] [--live 2000] [--rounds 5 45]
        [--live-rounds 100] [--repeats 5] [--only throughput|latency|cpu|line-cpu]

Four figures, each beside its peer and its goal:

- throughput: a backlog of `--lines` journal lines shipped from the files by one shipper (read,
  chain-checked, published with a window in flight, acknowledged, cursor kept), against a plain
  nats-py loop publishing the same messages from memory (`js.publish_async`, pipelined, and
  `js.publish`, one ack at a time). Goals: >= 20,000 lines/s; <= 20 us of CPU a line (issue 25;
  the process's CPU while it drains, median of `--repeats` runs).
- CPU a line, live (issue 25): the shipper's thread CPU (its own clock,
  `pthread_getcpuclockid`) while a writer appends `--live-rounds` rounds of 150 lines in commits
  of 6 lines 2 ms apart (an unpaced round's pace), the shipper following the journal live, over
  the lines shipped; median of `--repeats`. Goal: <= 20 us a line. The writer appends on an
  event loop with a probe that wakes every millisecond: its lag with the shipper beside the
  same run without one (the table's loop lag must not change).
- latency: `--live` events appended to a journal with fsync, one every 2 ms; for each, the time
  from "append returned: durable" to "JetStream acknowledged it" (the shipper's cursor passed
  it), p50/p99, against `js.publish` of the same line right after the append. Goal: p99 <= 20 ms.
- CPU: `tabled run --autoplay N` as a process, with and without a [feed], the CPU of one round
  (the difference between two round counts, so start-up is not counted). Goal: <= 5 % more.

Needs `nats-server` (Debian's package; .ci/run installs it). Figures depend on the machine's
load: run it where the table will run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nats

from daemon import eventloop
from daemon.config import JournalConfig
from daemon.journal import Journal
from daemon.journal.format import journal_files, read_lines
from daemon.journal.provenance import TableKey, write_key
from daemon.logging import configure_logging
from daemon.shipper.config import FeedConfig
from daemon.shipper.engine import Shipper
from daemon.shipper.tail import line_event, line_seq

REPO = Path(__file__).resolve().parents[1]
NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"
GOAL_RATE = 20_000.0
GOAL_P99 = 0.020
GOAL_CPU = 0.05
GOAL_LINE_CPU = 20e-6  # issue 25: the feed's CPU a line, live and backlog


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Server:
    def __init__(self, store: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = [NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(store)]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            if b"Server is ready" in raw:
                break
        stderr = self.proc.stderr
        threading.Thread(target=lambda: [None for _ in stderr], daemon=True).start()
        self.url = f"nats://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def feed(url: str, stream: str) -> FeedConfig:
    return FeedConfig(servers=(url,), stream=stream, subject_prefix=stream.lower())


def backlog(directory: Path, lines: int) -> list[bytes]:
    config = JournalConfig(dir=directory, durability="none")
    with Journal.open(config, "T01") as journal:
        for i in range(lines - 1):
            journal.append(
                "shoe.card_read", actor="shoe_reader", round_id=f"R{i // 70}",
                payload={"card": "AS", "index": i % 52, "frame": "02011a0441530003c2d103"},
                commit=i % 70 == 69,
            )  # fmt: skip
    return [raw.data for f in journal_files(directory) for raw in read_lines(f)]


async def peer_throughput(
    url: str, stream: str, lines: list[bytes], pipelined: bool
) -> tuple[float, float]:
    """(lines/s, CPU seconds per line) of a plain nats-py publish loop from memory."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name=stream, subjects=[f"{stream.lower()}.>"])
    prefix = f"{stream.lower()}.T01."
    started, cpu = time.perf_counter(), time.process_time()
    for data in lines:
        subject = prefix + line_event(data)
        headers = {"Nats-Msg-Id": f"T01:{line_seq(data)}"}
        if pipelined:
            await js.publish_async(subject, data, headers=headers)
        else:
            await js.publish(subject, data, headers=headers)
    if pipelined:
        await js.publish_async_completed()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await nc.close()
    return len(lines) / elapsed, cpu / len(lines)


def shipper_throughput(
    url: str, directory: Path, lines: int, stream: str = "SHIP"
) -> tuple[float, float]:
    """(lines/s, CPU seconds per line) of one shipper draining a backlog from the files."""
    shipper = Shipper(feed(url, stream), "T01", directory, follow=False)
    started, cpu = time.perf_counter(), time.process_time()
    asyncio.run(shipper.run())
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert shipper.status().cursor == lines, shipper.status().as_dict()
    return lines / elapsed, cpu / lines


def shipper_latency(url: str, directory: Path, events: int) -> list[float]:
    config = JournalConfig(dir=directory, durability="fsync")
    durable: dict[int, float] = {}
    acked: dict[int, float] = {}
    last = [0]

    def on_acked(seq: int) -> None:
        now = time.perf_counter()
        for s in range(last[0] + 1, seq + 1):
            acked[s] = now
        last[0] = seq

    with Journal.open(config, "T02") as journal:
        shipper = Shipper(feed(url, "LIVE"), "T02", directory, journal=journal, on_acked=on_acked)
        shipper.start()
        first = journal.last_seq + 1
        for i in range(events):
            record = journal.append(
                "shoe.card_read", actor="shoe_reader", payload={"index": i}, commit=True
            )
            durable[record.seq] = time.perf_counter()
            time.sleep(0.002)
        deadline = time.monotonic() + 30
        while last[0] < journal.durable_seq and time.monotonic() < deadline:
            time.sleep(0.01)
    shipper.stop()
    return [max(0.0, acked[s] - durable[s]) for s in range(first, first + events) if s in acked]


def shipper_live_cpu(
    url: str | None, directory: Path, rounds: int, stream: str
) -> tuple[float, int, list[float]]:
    """(CPU seconds a line of the shipper's thread, lines, the writer's loop lags) while a
    table-like writer appends on an event loop (uvloop's, as the table's): a round's lines in
    commit groups of 6, 2 ms apart (about 150 lines in 50 ms, an unpaced round's pace), the
    shipper following the journal live; a probe on the same loop asks to wake every millisecond
    and records how late it woke. `url` None: no shipper (the lag's peer)."""
    config = JournalConfig(dir=directory, durability="none")
    lags: list[float] = []
    with Journal.open(config, "T04") as journal:
        shipper = None
        if url is not None:
            shipper = Shipper(feed(url, stream), "T04", directory, journal=journal)
            shipper.start()
            deadline = time.monotonic() + 30
            while shipper.status().cursor < journal.durable_seq and time.monotonic() < deadline:
                time.sleep(0.01)
            assert shipper._thread is not None and shipper._thread.ident is not None
            clock = time.pthread_getcpuclockid(shipper._thread.ident)
            cpu = time.clock_gettime(clock)
        first = journal.last_seq

        async def write() -> None:
            done = asyncio.Event()

            async def probe() -> None:
                while not done.is_set():
                    started = time.perf_counter()
                    await asyncio.sleep(0.001)
                    lags.append(max(0.0, time.perf_counter() - started - 0.001))

            task = asyncio.ensure_future(probe())
            for i in range(rounds * 150):
                journal.append(
                    "shoe.card_read", actor="shoe_reader", round_id=f"R{i // 150}",
                    payload={"card": "AS", "index": i % 52, "frame": "02011a0441530003c2d103"},
                    commit=i % 6 == 5,
                )  # fmt: skip
                if i % 6 == 5:
                    await asyncio.sleep(0.002)
            done.set()
            await task

        eventloop.run(write())
        journal.flush()
        lines = journal.durable_seq - first
        if shipper is None:
            return 0.0, lines, lags
        deadline = time.monotonic() + 60
        while shipper.status().cursor < journal.durable_seq and time.monotonic() < deadline:
            time.sleep(0.002)
        cpu = time.clock_gettime(clock) - cpu
        assert shipper.status().cursor == journal.durable_seq, shipper.status().as_dict()
    shipper.stop()
    return cpu / lines, lines, lags


async def peer_latency(url: str, directory: Path, events: int) -> list[float]:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="PEER", subjects=["peer.>"])
    config = JournalConfig(dir=directory, durability="fsync")
    out = []
    with Journal.open(config, "T03") as journal:
        for i in range(events):
            record = journal.append(
                "shoe.card_read", actor="shoe_reader", payload={"index": i}, commit=True
            )
            started = time.perf_counter()
            await js.publish(
                "peer.T03.shoe.card_read", record.line, headers={"Nats-Msg-Id": f"T03:{record.seq}"}
            )
            out.append(time.perf_counter() - started)
            await asyncio.sleep(0.002)
    await nc.close()
    return out


def run_cpu(work: Path, url: str | None, rounds: int) -> tuple[float, int]:
    """(CPU seconds, journal lines) of `tabled run --autoplay N`, with a [feed] to `url`."""
    journal = work / f"j-{time.monotonic_ns()}"
    config = work / "cpu.toml"
    text = (REPO / "config" / "table.toml").read_text()
    text = text.replace('dir = "var/journal"', f"dir = {json.dumps(str(journal))}")
    text = text.replace('durability = "fsync"', 'durability = "none"')
    if url is not None:
        stream = f"CPU{time.monotonic_ns()}"
        text += f'\n[feed]\nservers = ["{url}"]\nstream = "{stream}"\n'
        text += f'subject_prefix = "{stream.lower()}"\n'
        # A table with a [feed] signs its chain (issue 21): its key, made once for the bench.
        key = work / "table.key"
        if not key.exists():
            write_key(key, TableKey.generate())
        text = text.replace("[table]\n", f"[table]\nkey_file = {json.dumps(str(key))}\n", 1)
    config.write_text(text)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "daemon", "run", "--config", str(config), "--autoplay",
         str(rounds), "--seed", "3"],
        check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = sum(1 for f in journal_files(journal) for _ in read_lines(f))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), lines


def round_cpu(
    work: Path, url: str | None, rounds: tuple[int, int], repeats: int
) -> tuple[float, float]:
    """(CPU seconds, journal lines) of one round: the median over `repeats` of the difference
    between two round counts, so the start-up and the final drain are not counted."""
    per_round, lines = [], []
    for _ in range(repeats):
        small, small_lines = run_cpu(work, url, rounds[0])
        large, large_lines = run_cpu(work, url, rounds[1])
        per_round.append((large - small) / (rounds[1] - rounds[0]))
        lines.append((large_lines - small_lines) / (rounds[1] - rounds[0]))
    return statistics.median(per_round), statistics.median(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--live", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, nargs=2, default=(5, 45))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--live-rounds", type=int, default=100)
    parser.add_argument(
        "--only",
        choices=("throughput", "latency", "cpu", "line-cpu"),
        help="measure only this figure",
    )
    args = parser.parse_args()
    configure_logging("critical")
    work = Path(tempfile.mkdtemp(prefix="bench-feed-"))
    server = Server(work / "nats")
    try:
        peer_cpu = 0.0
        if args.only in (None, "throughput", "cpu", "line-cpu"):
            count = args.lines if args.only in (None, "throughput") else 10_000
            peer_cpu = throughput(server, work, count, args.repeats)
        if args.only in (None, "line-cpu"):
            live_cpu(server, work, args.live_rounds, args.repeats, peer_cpu)
        if args.only in (None, "latency"):
            latency(server, work, args.live)
        if args.only in (None, "cpu"):
            cpu(server, work, (args.rounds[0], args.rounds[1]), args.repeats, peer_cpu)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def throughput(server: Server, work: Path, count: int, repeats: int) -> float:
    """Print the backlog figures; return the pipelined peer's CPU seconds per line."""
    lines = backlog(work / "backlog", count)
    runs = []
    for n in range(repeats):  # each run a new stream and cursor over a copy of the backlog
        copy = work / f"backlog-{n}"
        shutil.copytree(work / "backlog", copy)
        runs.append(shipper_throughput(server.url, copy, len(lines), f"SHIP{n}"))
    rate = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    least = min(r[1] for r in runs)
    pipelined, peer_cpu = asyncio.run(peer_throughput(server.url, "PEERA", lines, pipelined=True))
    one_by_one, _ = asyncio.run(peer_throughput(server.url, "PEERB", lines[:5000], pipelined=False))
    print(f"throughput, a backlog of {len(lines)} lines from the journal files:")
    print(
        f"  shipper                      {rate:10,.0f} lines/s  {cpu * 1e6:5.1f} us CPU a line "
        f"(median of {repeats}; min {least * 1e6:.1f})"
    )
    print(
        f"  peer: js.publish_async       {pipelined:10,.0f} lines/s  {peer_cpu * 1e6:5.1f} us CPU "
        "a line (from memory)"
    )
    print(f"  peer: js.publish, one by one {one_by_one:10,.0f} lines/s (from memory)")
    print(f"  goal >= {GOAL_RATE:,.0f} lines/s -> {verdict(rate >= GOAL_RATE)}")
    print(
        f"  goal (issue 25) <= {GOAL_LINE_CPU * 1e6:.0f} us CPU a line, backlog -> "
        f"{verdict(cpu <= GOAL_LINE_CPU)}"
    )
    return peer_cpu


def live_cpu(server: Server, work: Path, rounds: int, repeats: int, peer_cpu: float) -> None:
    runs, lags, peer_lags = [], [], []
    for n in range(repeats):  # with the shipper and without, alternately
        cpu, _, lag = shipper_live_cpu(server.url, work / f"live-cpu-{n}", rounds, f"LIVECPU{n}")
        runs.append(cpu)
        lags += lag
        peer_lags += shipper_live_cpu(None, work / f"live-nofeed-{n}", rounds, "")[2]
    cpu = statistics.median(runs)
    print(
        f"CPU a line, live: the shipper's thread while a writer appends {rounds} rounds of 150 "
        f"lines (commits of 6 lines 2 ms apart), median of {repeats}:"
    )
    print(f"  shipper   {cpu * 1e6:6.1f} us CPU a line (min {min(runs) * 1e6:.1f})")
    print(f"  peer: js.publish_async from memory, a backlog {peer_cpu * 1e6:6.1f} us a line")
    print(
        f"  goal (issue 25) <= {GOAL_LINE_CPU * 1e6:.0f} us CPU a line, live -> "
        f"{verdict(cpu <= GOAL_LINE_CPU)}"
    )
    print(
        f"  the writer's loop lag (a 1 ms probe): with the shipper p50 "
        f"{percentile(lags, 0.5) * 1e3:.2f} ms, p99 {percentile(lags, 0.99) * 1e3:.2f} ms; "
        f"without a shipper p50 {percentile(peer_lags, 0.5) * 1e3:.2f} ms, p99 "
        f"{percentile(peer_lags, 0.99) * 1e3:.2f} ms"
    )


def latency(server: Server, work: Path, events: int) -> None:
    shipped = shipper_latency(server.url, work / "live", events)
    peer = asyncio.run(peer_latency(server.url, work / "peer", events))
    p50, p99 = percentile(shipped, 0.5), percentile(shipped, 0.99)
    q50, q99 = percentile(peer, 0.5), percentile(peer, 0.99)
    print(f"latency, durable in the journal (fsync) -> acknowledged, {len(shipped)} events:")
    print(f"  shipper      p50 {p50 * 1e3:7.2f} ms  p99 {p99 * 1e3:7.2f} ms")
    print(f"  js.publish   p50 {q50 * 1e3:7.2f} ms  p99 {q99 * 1e3:7.2f} ms (inline, blocking)")
    print(f"  goal p99 <= {GOAL_P99 * 1e3:.0f} ms -> {verdict(p99 <= GOAL_P99)}")


def cpu(server: Server, work: Path, rounds: tuple[int, int], repeats: int, peer_cpu: float) -> None:
    plain, lines = round_cpu(work, None, rounds, repeats)
    shipping, _ = round_cpu(work, server.url, rounds, repeats)
    extra = shipping / plain - 1
    print(f"CPU of one autoplay round of `tabled run` ({lines:.0f} lines; median of {repeats}):")
    print(f"  without [feed] {plain * 1e3:8.1f} ms")
    print(
        f"  with [feed]    {shipping * 1e3:8.1f} ms ({extra:+.1%}; "
        f"{(shipping - plain) / lines * 1e6:.0f} us per line shipped)"
    )
    # The least any shipper of one JetStream message per line can add: what the plain nats-py
    # loop spends on publishing and acknowledging the same number of lines, nothing else.
    least = peer_cpu * lines / plain
    print(
        f"  peer: plain js.publish_async of the same {lines:.0f} lines alone "
        f"{peer_cpu * lines * 1e3:.1f} ms ({least:+.1%})"
    )
    print(f"  goal <= +{GOAL_CPU:.0%} -> {verdict(extra <= GOAL_CPU)}")


if __name__ == "__main__":
    main()
