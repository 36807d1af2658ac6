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
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import DEVICES, play  # noqa: E402

from daemon import eventloop  # noqa: E402
from daemon.autoplay import SocketControl  # noqa: E402
from daemon.config import JournalConfig, TableConfig, load_config  # noqa: E402
from daemon.logging import configure_logging  # noqa: E402
from daemon.run import freeze_startup  # noqa: E402
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


@dataclass
class RoundFigures:
    """Per round: CPU seconds (user + system), wire seconds, system CPU seconds, and what the
    journal and the table did: fdatasyncs of the journal's file, device commands sent and
    operator replies (the external effects a line must be durable before, issue 25)."""

    cpu: float
    wire: float
    kernel: float
    fdatasyncs: float
    commands: float
    replies: float

    @property
    def effects(self) -> float:
        return self.commands + self.replies


class Effects:
    """Counts the fdatasyncs of a table's journal, the device commands it sends and the
    operator replies it gives (`Table.act` returning), by wrapping them on the instance."""

    def __init__(self, table: Table) -> None:
        self.fdatasyncs = self.commands = self.replies = 0
        journal = table.journal
        assert journal is not None
        sync, queue, act = journal.fdatasync, table.devices.queue, table.act

        def fdatasync(fd: int) -> None:
            self.fdatasyncs += 1
            sync(fd)

        def command(cmd: Any) -> None:
            self.commands += 1
            queue(cmd)

        async def reply(*args: Any) -> dict[str, Any]:
            answer = await act(*args)
            self.replies += 1
            return answer

        journal.fdatasync = fdatasync  # type: ignore[method-assign]
        table.devices.queue = command  # type: ignore[method-assign]
        table.act = reply  # type: ignore[method-assign]

    def counts(self) -> tuple[int, int, int]:
        return self.fdatasyncs, self.commands, self.replies


async def rounds_cpu(config: TableConfig, control: SocketControl, rounds: int) -> RoundFigures:
    """The figures of `rounds` unpaced rounds, per round."""
    count = ByteCount()
    table = Table(config, drivers=drivers_for(config, count))
    await table.start()
    effects = Effects(table)
    freeze_startup()  # as `tabled run` does once started (daemon/run.py)
    try:
        await play(table, control, 1, paced=False)  # warm: identification, first round
        count.bytes = 0
        first_seq = table.journal.last_seq
        first = effects.counts()
        before = resource.getrusage(resource.RUSAGE_SELF)
        await play(table, control, rounds, paced=False)
        after = resource.getrusage(resource.RUSAGE_SELF)
        # The round's last inputs are durable once its last reply came (a reply waits for it).
        last = effects.counts()
        LINES_PER_ROUND.append((table.journal.last_seq - first_seq) / rounds)
    finally:
        await table.stop()
    kernel = after.ru_stime - before.ru_stime
    cpu = after.ru_utime - before.ru_utime + kernel
    syncs, commands, replies = (b - a for a, b in zip(first, last, strict=True))
    return RoundFigures(
        cpu / rounds, count.wire_seconds() / rounds, kernel / rounds,
        syncs / rounds, commands / rounds, replies / rounds,
    )  # fmt: skip


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


MODES = ("durability none", "durability fsync", "fsync, every input (peer)")
ROUND_GOAL_25 = 0.10  # issue 25: CPU a round with fsync <= 10 % of its wire time
INSTRUCTIONS_GOAL = 25e6  # issue 25: instructions a round at durability none
CALLGRIND_ROUNDS = (2, 6)


def rounds_of(mode: str, workdir: Path, rounds: int) -> Callable[[TableConfig, Path], RoundFigures]:
    durability: Durability = "none" if mode == MODES[0] else "fsync"

    def run(config: TableConfig, control: Path) -> RoundFigures:
        journal = JournalConfig(
            dir=workdir / f"journal-{mode.replace(' ', '_')}", durability=durability
        )
        Table.commit_every_input = mode == MODES[2]
        try:
            return eventloop.run(
                rounds_cpu(replace(config, journal=journal), SocketControl(control), rounds)
            )
        finally:
            Table.commit_every_input = False

    return run


def callgrind_round() -> float:
    """User-space instructions of one round at durability none: this script's rounds under
    callgrind (the devices' process not), the difference of two round counts, so start-up and
    the warm round cancel out."""
    valgrind = shutil.which("valgrind") or "/usr/bin/valgrind"
    totals = []
    for rounds in CALLGRIND_ROUNDS:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "callgrind.out"
            subprocess.run(
                [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}",
                 sys.executable, __file__, "--only-none", str(rounds)],
                cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            for line in out.read_text(errors="replace").splitlines():
                if line.startswith(("totals:", "summary:")):
                    totals.append(int(line.split()[1]))
                    break
    return (totals[1] - totals[0]) / (CALLGRIND_ROUNDS[1] - CALLGRIND_ROUNDS[0])


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "MISSED"


def report_rounds(results: dict[str, list[RoundFigures]], instructions: float | None) -> None:
    for mode, runs in results.items():
        cpu = [r.cpu for r in runs]
        wire = statistics.median(r.wire for r in runs)
        share = statistics.median(cpu) / wire
        print(
            f"Thirteen round, {mode:<22}: CPU {min(cpu) * 1e3:5.1f} / "
            f"{statistics.median(cpu) * 1e3:5.1f} ms (kernel "
            f"{statistics.median(r.kernel for r in runs) * 1e3:4.1f} ms), wire {wire * 1e3:6.1f} ms"
            f": {share:6.1%}; fdatasyncs {statistics.median(r.fdatasyncs for r in runs):5.1f}, "
            f"effects {statistics.median(r.effects for r in runs):5.1f} ("
            f"{statistics.median(r.commands for r in runs):.1f} device commands, "
            f"{statistics.median(r.replies for r in runs):.1f} operator replies)"
        )
    fsync_runs, peer = results[MODES[1]], results[MODES[2]]
    cpu_fsync = statistics.median(r.cpu for r in fsync_runs)
    wire = statistics.median(r.wire for r in fsync_runs)
    print("issue 25, item 1 (the peer: every input a commit point waited for, same run):")
    syncs = statistics.median(r.fdatasyncs for r in fsync_runs)
    effects = statistics.median(r.effects for r in fsync_runs)
    print(
        f"  fdatasyncs a round {syncs:.1f} <= its external effects {effects:.1f}   "
        f"{verdict(syncs, effects)}   (peer: {statistics.median(r.fdatasyncs for r in peer):.1f})"
    )
    print(
        f"  CPU a round with fsync {min(r.cpu for r in fsync_runs) * 1e3:.1f} / "
        f"{cpu_fsync * 1e3:.1f} ms (min / median) <= {ROUND_GOAL_25:.0%} of its wire time "
        f"({ROUND_GOAL_25 * wire * 1e3:.1f} ms)   {verdict(cpu_fsync, ROUND_GOAL_25 * wire)}   "
        f"(peer: {min(r.cpu for r in peer) * 1e3:.1f} / "
        f"{statistics.median(r.cpu for r in peer) * 1e3:.1f} ms)"
    )
    if instructions is not None:
        print(
            f"  instructions a round at durability none (callgrind, user space, the difference "
            f"of {CALLGRIND_ROUNDS[1]} and {CALLGRIND_ROUNDS[0]} rounds): "
            f"{instructions / 1e6:.1f} M <= {INSTRUCTIONS_GOAL / 1e6:.0f} M   "
            f"{verdict(instructions, INSTRUCTIONS_GOAL)}"
        )
    for mode, runs in results.items():
        share = statistics.median(r.cpu for r in runs) / statistics.median(r.wire for r in runs)
        print(
            f"issue 10: round CPU, {mode}: {share:.1%} of wire time   goal <= {ROUND_GOAL:.0%}"
            f"   {verdict(share, ROUND_GOAL)}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--exchanges", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each mode")
    parser.add_argument(
        "--instructions", action="store_true", help="count a round's instructions (valgrind)"
    )
    parser.add_argument("--only-none", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    (ROOT / "var").mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-cpu-", dir=ROOT / "var"))
    oplog = (workdir / "tabled.log").open("w")
    # `tabled run`'s default level, written as it writes them when stderr is not a terminal.
    configure_logging("info", json=True, stream=oplog)
    if args.only_none is not None:  # the child `callgrind_round` runs under valgrind
        try:
            with_sim(workdir, rounds_of(MODES[0], workdir, args.only_none))
        finally:
            oplog.close()
            shutil.rmtree(workdir, ignore_errors=True)
        return 0
    # Each mode `--repeats` times, the modes interleaved so load that comes and goes meets all.
    results: dict[str, list[RoundFigures]] = {mode: [] for mode in MODES}
    try:
        for _ in range(args.repeats):
            for mode in MODES:
                results[mode].append(with_sim(workdir, rounds_of(mode, workdir, args.rounds)))

        def run_exchanges(config: TableConfig, _control: Path) -> tuple[float, float]:
            return eventloop.run(exchange_cpu(config, args.exchanges))

        exchange, exchange_wire = with_sim(workdir, run_exchanges)
        compile_tree()
        start = min(start_cpu(workdir / f"start-{n}") for n in range(3))
        instructions = callgrind_round() if args.instructions else None
    finally:
        oplog.close()
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"the daemon's CPU (this process; the devices in `tabled sim` on ptys), {args.rounds} "
        f"rounds x {args.repeats} runs a mode (min / median of the runs), {args.exchanges} "
        f"exchanges; log level info; load average before {load_before}, after "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    report_rounds(results, instructions)
    # Issue 21: a table with a [feed] signs its chain. Heads: one a second at most while lines
    # flow (daemon.shipper.heads.HEAD_SECONDS), so at most one an unpaced round of this bench
    # (it takes ~0.1 s); a signature a line would be one a journal line.
    sign = signing_cpu()
    cpu_fsync = statistics.median(r.cpu for r in results[MODES[1]])
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
