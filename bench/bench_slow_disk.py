"""A slow disk cannot delay a frame: loop lag and another device's exchanges with a 10 ms fdatasync.

    python bench/bench_slow_disk.py [--rounds N] [--dir DIR]

Plays unpaced Thirteen rounds through the real `Table` (the `sim://` simulators behind pyserial,
durability `fsync`, the journal under ./var) while two probes run on the same event loop:

- loop lag: a task that asks to wake every millisecond and records how late it woke;
- another device's exchanges: GET_STATUS to the dice shaker, one after another, timed from the
  command to its reply (the dice shaker is idle while the shoe deals, so its exchanges only
  wait for the loop).

Three runs in one process:

- `slow, off loop`: every fdatasync made 10 ms longer (`Journal.fdatasync` wrapped), the commit
  points waited for in the journal's commit thread (the default);
- `slow, on loop`: the peer, the same slow disk with each commit's fdatasync on the loop
  (`Table.commit_on_loop = True`);
- `disk, off loop`: the disk as it is, off the loop, played for as long as the first run: the
  reference for the exchanges.

Goals (issue 10 item 3): with the 10 ms fdatasync, loop lag p99 <= 2 ms, and the dice shaker's
GET_STATUS p99 no more than 1.5x the reference run's (unaffected). Each is printed beside its
goal and the peer's figure, with `met` or `MISSED`. The lag is printed raw and net of the time
the loop's thread waited for a CPU (the kernel's schedstat run-queue wait): on a machine whose
cores other processes share, the raw figure is mostly theirs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import DEVICES, percentile, play, sim_config  # noqa: E402

from daemon.autoplay import InProcessControl  # noqa: E402
from daemon.journal import Journal  # noqa: E402
from daemon.logging import configure_logging  # noqa: E402
from daemon.table import Table  # noqa: E402
from drivers.base import driver_class  # noqa: E402
from drivers.clock import MonotonicClock  # noqa: E402
from drivers.link import LinkTiming  # noqa: E402

SLOW_SECONDS = 0.010
LAG_GOAL = 0.002
EXCHANGE_RATIO_GOAL = 1.5


def slow_fdatasync(fd: int) -> None:
    time.sleep(SLOW_SECONDS)  # the disk's stall: the caller's thread waits, as in fdatasync
    os.fdatasync(fd)


def run_queue_wait() -> float:
    """Seconds this thread has waited for a CPU (runnable, not running): the kernel's
    schedstat. On two cores shared with other work, it is most of a loop's raw lag."""
    with open("/proc/thread-self/schedstat", "rb") as f:
        return int(f.read().split()[1]) / 1e9


async def lag_probe(samples: list[float], net: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        waited = run_queue_wait()
        asked = time.perf_counter()
        await asyncio.sleep(0.001)
        late = max(0.0, time.perf_counter() - asked - 0.001)
        samples.append(late)
        net.append(max(0.0, late - (run_queue_wait() - waited)))


async def status_probe(
    table: Table, samples: list[float], net: list[float], stop: asyncio.Event
) -> None:
    driver = table.drivers["dice_shaker"]
    while not stop.is_set():
        waited = run_queue_wait()
        started = time.perf_counter()
        await driver.status()
        took = time.perf_counter() - started
        samples.append(took)
        net.append(max(0.0, took - (run_queue_wait() - waited)))
        await asyncio.sleep(0.002)


Result = tuple[list[float], list[float], list[float], list[float], float]


async def run(journal: Path, world: str, rounds: int, seconds: float) -> Result:
    """`rounds` rounds and at least `seconds` of play: the probes of every run see the
    machine's noise for as long."""
    config = sim_config(journal, "fsync", world)
    drivers = {
        name: driver_class(name).from_config(
            device, clock=MonotonicClock(), timing=LinkTiming(poll_interval=3600.0)
        )
        for name, device in config.devices.items()
    }
    table = Table(config, drivers=drivers)
    control = InProcessControl(world)
    await table.start()
    lags: list[float] = []
    net: list[float] = []
    exchanges: list[float] = []
    exchanges_net: list[float] = []
    stop = asyncio.Event()
    try:
        await play(table, control, 1, paced=False)  # warm: identification, first round
        probes = [
            asyncio.ensure_future(lag_probe(lags, net, stop)),
            asyncio.ensure_future(status_probe(table, exchanges, exchanges_net, stop)),
        ]
        started = time.perf_counter()
        played = 0
        while played < rounds or time.perf_counter() - started < seconds:
            await play(table, control, 1, paced=False)
            played += 1
        elapsed = (time.perf_counter() - started) / played
        stop.set()
        await asyncio.gather(*probes)
    finally:
        await table.stop()
        await control.close()
    return lags, net, exchanges, exchanges_net, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--dir", type=Path, help="where the journals go (default: under ./var)")
    args = parser.parse_args()
    configure_logging("error")
    (ROOT / "var").mkdir(exist_ok=True)
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="bench-slow-disk-", dir=ROOT / "var"))
    print(
        f"Thirteen rounds through the real drivers ({', '.join(DEVICES)} on sim://), "
        f"{args.rounds} per run, durability fsync; load average {os.getloadavg()[0]:.2f}"
    )
    runs = [
        ("slow, off loop", True, False),
        ("slow, on loop", True, True),
        ("disk, off loop", False, False),
    ]
    results: dict[str, Result] = {}
    original = Journal.fdatasync
    try:
        for label, slow, on_loop in runs:
            journal = workdir / label.replace(", ", "-").replace(" ", "-")
            shutil.rmtree(journal, ignore_errors=True)
            Journal.fdatasync = staticmethod(slow_fdatasync if slow else os.fdatasync)  # type: ignore[method-assign,assignment]
            Table.commit_on_loop = on_loop
            try:
                # The reference plays as long as the first run did.
                seconds = next(iter(results.values()))[-1] * args.rounds if results else 0.0
                world = f"slow-disk-{len(results)}"
                results[label] = asyncio.run(run(journal, world, args.rounds, seconds))
            finally:
                Table.commit_on_loop = False
                Journal.fdatasync = original  # type: ignore[method-assign]
    finally:
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    header = (
        f"{'run':<15} {'round':>9} | {'loop lag p50':>12} {'p99':>8} {'max':>8} | "
        f"{'net of CPU wait p99':>19} | {'dice GET_STATUS p50':>19} {'p99':>8} {'net p99':>8} "
        f"{'n':>5}"
    )
    print(header)
    print("-" * len(header))
    for label, (lags, net, exchanges, exchanges_net, round_seconds) in results.items():
        print(
            f"{label:<15} {round_seconds * 1e3:>6.0f} ms | "
            f"{percentile(lags, 0.5) * 1e3:>9.2f} ms {percentile(lags, 0.99) * 1e3:>5.2f} ms "
            f"{max(lags) * 1e3:>5.1f} ms | {percentile(net, 0.99) * 1e3:>16.2f} ms | "
            f"{statistics.median(exchanges) * 1e3:>16.2f} ms "
            f"{percentile(exchanges, 0.99) * 1e3:>5.2f} ms "
            f"{percentile(exchanges_net, 0.99) * 1e3:>5.2f} ms {len(exchanges):>5}"
        )
    off, on, ref = (results[label] for label, _, _ in runs)
    for what, index in (("loop lag p99", 0), ("loop lag p99 net of waiting for a CPU", 1)):
        lag, peer = percentile(off[index], 0.99), percentile(on[index], 0.99)
        print(
            f"{what}, 10 ms fdatasync: {lag * 1e3:.2f} ms   goal <= {LAG_GOAL * 1e3:.0f} ms   "
            f"{'met' if lag <= LAG_GOAL else 'MISSED'}   (peer, sync on the loop: "
            f"{peer * 1e3:.2f} ms)"
        )
    for what, index in (("GET_STATUS p99", 2), ("GET_STATUS p99 net of waiting for a CPU", 3)):
        reference = percentile(ref[index], 0.99)
        ratio = percentile(off[index], 0.99) / reference
        ratio_peer = percentile(on[index], 0.99) / reference
        print(
            f"dice shaker {what} against the quiet-disk run: {ratio:.2f}x   goal <= "
            f"{EXCHANGE_RATIO_GOAL}x   {'met' if ratio <= EXCHANGE_RATIO_GOAL else 'MISSED'}   "
            f"(peer, sync on the loop: {ratio_peer:.2f}x)"
        )
    print(
        "The raw lag counts the time the loop's thread waited for one of the machine's CPUs "
        "(kernel\nschedstat): on a shared machine that is other processes' doing; the net "
        "figure is the loop's own."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
