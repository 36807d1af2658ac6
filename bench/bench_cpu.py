"""The daemon's CPU: per Thirteen round and per exchange, beside the wire time they carry; and
the CPU from start-up to the first device exchange.

    python bench/bench_cpu.py [--rounds N] [--exchanges N]

`tabled sim` runs the four simulated devices in another process on pseudo-terminals, so what
this process spends is the daemon's side only: drivers, framing, link, the event loop (uvloop's,
as `tabled run` has it: daemon/eventloop.py), the table, the procedure, the journal, and the
dealer's actions through `Table.act` (an operator's action costs the daemon that much whichever
way it comes). The benchmark's dealer draws the round's 52
cards with one request on the simulators' control socket, as a real dealer draws them by hand
at no cost to the daemon.

1. Per round: unpaced rounds (bench_table's script), this process's CPU time (user + system)
   per round beside the wire time at 115,200 baud (10 bits a byte) of every byte the drivers
   wrote and read in that round, with durability `none` and `fsync`. The operational log is
   on as `tabled run` has it by default: level info, JSON lines, here to a file in the
   bench's folder (a daemon's go to systemd's journal through stderr). The kernel's share (system
   time: with fsync, mostly the commits' `fdatasync`s) is printed beside the total.
2. Per exchange: GET_STATUS to the shoe reader through its pty, one after another: CPU per
   exchange beside the wire time of its two frames.
3. Start-up: `tabled run --trace` on the embedded config (sim:// devices); the process's CPU
   (/proc/PID/stat) when it prints the first durable device input (`ack ... device_...`). The
   tree's modules are compiled to bytecode first (`compileall`), as an installed daemon's are
   (pip compiles what it installs; the venv's packages have theirs): with
   PYTHONDONTWRITEBYTECODE set and no `__pycache__`, each start would compile ~100 modules.

4. Signing (issue 21): the CPU of one Ed25519 signature of a head, in this process, beside the
   fsync round's CPU: one head a round (the shipper signs at most one a second, and an unpaced
   round here takes ~0.1 s) against a signature a journal line.

Goals (issue 10 item 7): CPU per round <= 5 % of its wire time; per exchange <= 2 %; start-up
<= 0.3 s; (issue 21) signing <= 3 % of a round's CPU. Each figure is printed beside its goal
with met/MISSED, the load average beside.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Literal, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import DEVICES, play  # noqa: E402

from daemon import eventloop  # noqa: E402
from daemon.autoplay import SocketControl  # noqa: E402
from daemon.config import JournalConfig, TableConfig, load_config  # noqa: E402
from daemon.logging import configure_logging  # noqa: E402
from daemon.table import Table  # noqa: E402
from drivers.base import DeviceDriver, driver_class  # noqa: E402
from drivers.clock import MonotonicClock  # noqa: E402
from drivers.link import LinkTiming  # noqa: E402

BAUD = 115_200
_T = TypeVar("_T")
Durability = Literal["fsync", "none"]
ROUND_GOAL = 0.05
EXCHANGE_GOAL = 0.02
START_GOAL = 0.3
SIGNING_GOAL = 0.03  # issue 21: signing the chain adds at most this to a round's CPU


class ByteCount:
    def __init__(self) -> None:
        self.bytes = 0

    def tap(self, _direction: str, data: bytes) -> None:
        self.bytes += len(data)

    def wire_seconds(self) -> float:
        return self.bytes * 10 / BAUD


def drivers_for(config: TableConfig, count: ByteCount) -> dict[str, DeviceDriver]:
    return {
        name: driver_class(name).from_config(
            device, clock=MonotonicClock(), timing=LinkTiming(poll_interval=3600.0), tap=count.tap
        )
        for name, device in config.devices.items()
    }


async def rounds_cpu(
    config: TableConfig, control: SocketControl, rounds: int
) -> tuple[float, float, float]:
    """CPU seconds (user + system), wire seconds and system CPU seconds per round."""
    count = ByteCount()
    table = Table(config, drivers=drivers_for(config, count))
    await table.start()
    gc.freeze()  # as `tabled run` does once started (daemon/run.py)
    try:
        await play(table, control, 1, paced=False)  # warm: identification, first round
        count.bytes = 0
        first_seq = table.journal.last_seq
        before = resource.getrusage(resource.RUSAGE_SELF)
        await play(table, control, rounds, paced=False)
        after = resource.getrusage(resource.RUSAGE_SELF)
        LINES_PER_ROUND.append((table.journal.last_seq - first_seq) / rounds)
    finally:
        await table.stop()
    kernel = after.ru_stime - before.ru_stime
    cpu = after.ru_utime - before.ru_utime + kernel
    return cpu / rounds, count.wire_seconds() / rounds, kernel / rounds


LINES_PER_ROUND: list[float] = []  # journal lines a round, as each durability's run counted


def signing_cpu(n: int = 2000) -> float:
    """CPU seconds of one Ed25519 signature of a head (daemon.journal.provenance), this process."""
    from daemon.journal.provenance import TableKey  # noqa: PLC0415

    key = TableKey.generate()
    digest = "ab" * 32
    t0 = time.process_time()
    for seq in range(n):
        key.head("T01", seq + 1, digest)
    return (time.process_time() - t0) / n


async def exchange_cpu(config: TableConfig, exchanges: int) -> tuple[float, float]:
    """CPU seconds and wire seconds per GET_STATUS exchange with the shoe reader."""
    count = ByteCount()
    device = config.devices["shoe_reader"]
    driver = driver_class("shoe_reader").from_config(
        device, clock=MonotonicClock(), timing=LinkTiming(poll_interval=3600.0), tap=count.tap
    )
    await driver.start(keep_trying=False)
    try:
        for _ in range(50):
            await driver.status()
        count.bytes = 0
        cpu = time.process_time()
        for _ in range(exchanges):
            await driver.status()
        cpu = time.process_time() - cpu
    finally:
        await driver.close()
    return cpu / exchanges, count.wire_seconds() / exchanges


def compile_tree() -> None:
    """The project's modules as bytecode, as an installed daemon has them."""
    for package in ("daemon", "drivers", "simulators"):
        compileall.compile_dir(ROOT / package, quiet=1)


def start_cpu(journal: Path) -> float:
    """The process's CPU seconds when `tabled run` journals its first device input (on a new
    journal: a restarted table knows its devices already)."""
    tick = os.sysconf("SC_CLK_TCK")
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "run", "--trace", "--journal", str(journal)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        while "device_" not in (line := process.stdout.readline()):
            if not line:
                raise RuntimeError("tabled run ended before its first device input")
        with open(f"/proc/{process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick
    finally:
        process.terminate()
        process.wait(timeout=30)


def with_sim(workdir: Path, run: Callable[[TableConfig, Path], _T]) -> _T:
    base = workdir / "sim.toml"
    base.write_text(
        '[table]\nid = "B01"\ngame = "thirteen"\n'
        + "".join(f'[devices.{d}]\nport = "sim://{d}"\n' for d in DEVICES)
    )
    written = workdir / "pty.toml"
    sim = subprocess.Popen(
        [sys.executable, "-m", "daemon", "sim", "--config", str(base), "--speed", "0",
         "--seed", "1", "--json", "--write-config", str(written)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert sim.stdout is not None
        control = None
        for line in sim.stdout:
            item = json.loads(line)
            if "control" in item:
                control = Path(item["control"])
                break
        if control is None:
            raise RuntimeError("tabled sim did not start")
        return run(load_config(written), control)
    finally:
        sim.terminate()
        sim.wait(timeout=10)


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--exchanges", type=int, default=1000)
    args = parser.parse_args()
    (ROOT / "var").mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-cpu-", dir=ROOT / "var"))
    results: dict[str, tuple[float, float, float]] = {}
    oplog = (workdir / "tabled.log").open("w")
    # `tabled run`'s default level, written as it writes them when stderr is not a terminal.
    configure_logging("info", json=True, stream=oplog)
    try:
        durabilities: tuple[Durability, ...] = ("none", "fsync")
        for durability in durabilities:

            def run_rounds(
                config: TableConfig, control: Path, d: Durability = durability
            ) -> tuple[float, float, float]:
                journal = JournalConfig(dir=workdir / f"journal-{d}", durability=d)
                return eventloop.run(
                    rounds_cpu(
                        replace(config, journal=journal), SocketControl(control), args.rounds
                    )
                )

            results[durability] = with_sim(workdir, run_rounds)

        def run_exchanges(config: TableConfig, _control: Path) -> tuple[float, float]:
            return eventloop.run(exchange_cpu(config, args.exchanges))

        exchange, exchange_wire = with_sim(workdir, run_exchanges)
        compile_tree()
        start = min(start_cpu(workdir / f"start-{n}") for n in range(3))
    finally:
        oplog.close()
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"the daemon's CPU (this process; the devices in `tabled sim` on ptys), {args.rounds} "
        f"rounds, {args.exchanges} exchanges; log level info; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    for mode, (cpu, wire, kernel) in results.items():
        share = cpu / wire
        print(
            f"Thirteen round, durability {mode:<5}: CPU {cpu * 1e3:6.1f} ms (kernel "
            f"{kernel * 1e3:4.1f} ms), wire {wire * 1e3:6.1f} ms at 115,200 baud: {share:6.1%}   "
            f"goal <= {ROUND_GOAL:.0%}   {verdict(share, ROUND_GOAL)}"
        )
    # Issue 21: a table with a [feed] signs its chain. Heads: one a second at most while lines
    # flow (daemon.shipper.engine.HEAD_SECONDS), so at most one an unpaced round of this bench
    # (it takes ~0.1 s); a signature a line would be one a journal line.
    sign = signing_cpu()
    cpu_fsync = results["fsync"][0]
    lines = LINES_PER_ROUND[-1] if LINES_PER_ROUND else 0.0
    for scheme, signatures in (("a head a round (what the shipper does)", 1.0),
                               (f"a signature a line ({lines:.0f} lines)", lines)):  # fmt: skip
        share = signatures * sign / cpu_fsync
        print(
            f"signing, {scheme}: {signatures * sign * 1e3:.2f} ms = {share:.2%} of the fsync "
            f"round's CPU   goal <= {SIGNING_GOAL:.0%}   {verdict(share, SIGNING_GOAL)}"
        )
    share = exchange / exchange_wire
    print(
        f"GET_STATUS exchange through a pty: CPU {exchange * 1e6:.0f} us, wire "
        f"{exchange_wire * 1e6:.0f} us: {share:.1%}   goal <= {EXCHANGE_GOAL:.0%}   "
        f"{verdict(share, EXCHANGE_GOAL)}"
    )
    print(
        f"start-up to the first device input durable: CPU {start:.2f} s (best of 3)   goal <= "
        f"{START_GOAL} s   {verdict(start, START_GOAL)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
