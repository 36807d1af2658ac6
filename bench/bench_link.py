"""Link benchmark: what one request/response exchange costs the daemon, beside its wire time.

For two exchanges of the shoe reader (GET_STATUS -> STATUS, the status poll; ARM -> ACK, a
device command) it prints, side by side:

- the wire time of the same frames (their bytes, escaping included, 10 bits a byte) at 115,200
  and 9,600 baud: what a real serial line costs, the peer figure;
- the round trip through a real pseudo-terminal to a simulated shoe in another process, and
  the daemon process's CPU time per exchange there (everything: driver, asyncio, system calls);
- the daemon's own cost per exchange: the unchanged driver (`await driver.status()`: encode,
  CRC, decode, link and driver bookkeeping, the future and the task wake-up) against an
  in-process port that answers with precomputed bytes, so nothing else is timed;
- the sans-I/O part of that alone (HostLink.request + HostLink.receive_data);
- the ratio of the daemon's own cost to the wire time at 115,200 baud (goal: at most 3 %);
- the daemon process's CPU per exchange through the pty against the wire time at 115,200 baud
  (goal, issue 10 item 7: at most 2 %), with the share of it the sans-I/O link and codec take.

The driver runs on the loop `tabled run` runs the table on (uvloop's: daemon/eventloop.py).

Run: .venv/bin/python bench/bench_link.py [--exchanges N]
Figures depend on the machine; the CI machine is shared, so read them as orders of magnitude.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tty
from collections.abc import Awaitable, Callable
from pathlib import Path
from statistics import median
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from serial.serialutil import SerialBase

from daemon import eventloop
from daemon.logging import configure_logging
from drivers.capture import register
from drivers.clock import ManualClock
from drivers.framing import FrameCodec, Role
from drivers.link import HostLink, LinkTiming, wire_time
from drivers.messages import Ack, GetStatus, Identify, Identity, Message, Status
from drivers.shoe_reader.driver import ShoeReaderDriver
from drivers.shoe_reader.messages import Arm
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import TableWorld

TIMING = LinkTiming(poll_interval=1e9)
MESSAGES = ShoeReaderDriver.MESSAGES
STATUS = Status(0, 0, 0, 1, 0)
EXCHANGES: dict[str, tuple[Message, Message]] = {
    "GET_STATUS -> STATUS": (GetStatus(), STATUS),
    "ARM -> ACK": (Arm(0, 0), Ack()),
}


def answers(request: Message, reply: Message) -> dict[bytes, bytes]:
    """The device's answer to `request` at every SEQ, as wire bytes."""
    host, device = FrameCodec(Role.HOST, MESSAGES), FrameCodec(Role.DEVICE, MESSAGES)
    return {host.send(request, seq, 1): device.send(reply, seq, 1) for seq in range(1, 256)}


def mean_sizes(table: dict[bytes, bytes]) -> tuple[float, float]:
    return (
        sum(len(k) for k in table) / len(table),
        sum(len(v) for v in table.values()) / len(table),
    )


# --- an in-process port answering from a table (the daemon's own cost) ------------------------

_table: dict[bytes, bytes] = {}


class Serial(SerialBase):  # type: ignore[misc]
    """`benchloop://`: answers each request with its precomputed reply, at once."""

    def open(self) -> None:
        self._receiver: Callable[[bytes], None] | None = None
        self.is_open = True

    def close(self) -> None:
        self.is_open = False

    def attach(self, receiver: Callable[[bytes], None] | None) -> None:
        self._receiver = receiver

    def write(self, data: bytes) -> int:
        reply = _table.get(bytes(data))
        if reply is not None and self._receiver is not None:
            self._receiver(reply)
        return len(data)

    def read(self, size: int = 1) -> bytes:
        return b""

    def _reconfigure_port(self, *args: Any, **kwargs: Any) -> None:
        pass


register("benchloop", __name__)


async def timed_calls(call: Callable[[], Awaitable[Any]], count: int) -> float:
    """Median seconds per call over `count` calls in blocks of 100, after a warm-up."""
    for _ in range(200):
        await call()
    blocks = []
    for _ in range(max(1, count // 100)):
        start = time.perf_counter()
        for _ in range(100):
            await call()
        blocks.append((time.perf_counter() - start) / 100)
    return median(blocks)


async def in_process(request: Message, reply: Message, count: int) -> float:
    _table.clear()
    _table.update(answers(Identify(), Identity("bench", "SHOE", "1", "1.0", bytes(32))))
    _table.update(answers(GetStatus(), STATUS))
    _table.update(answers(request, reply))
    driver = ShoeReaderDriver("benchloop://shoe", timing=TIMING)
    assert await driver.start()
    call = driver.status if isinstance(request, GetStatus) else driver.arm
    per_call = await timed_calls(call, count)
    await driver.close()
    return per_call


def sans_io(request: Message, reply: Message, count: int) -> float:
    link = HostLink(MESSAGES, timing=TIMING)
    table = answers(request, reply)
    blocks = []
    for _ in range(max(1, count // 100) + 2):
        start = time.perf_counter()
        for _ in range(100):
            link.receive_data(table[link.request(request, 0.0)], 0.0)
        blocks.append((time.perf_counter() - start) / 100)
    return median(blocks[2:])


# --- through a real pseudo-terminal ----------------------------------------------------------


def serve(fd: int) -> None:
    """The child: a simulated shoe on the pty's master end, until the host goes away."""
    model = ShoeReaderModel(
        world=TableWorld("bench"),
        scheduler=ManualClock(),
        output=lambda data: os.write(fd, data) and None,
    )
    print("ready", flush=True)  # on stdout, a pipe: never on the line itself
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            return
        if not data:
            return
        model.receive_data(data)


async def through_pty(path: str, request: Message, count: int) -> tuple[float, float]:
    """(median round trip, daemon CPU seconds per exchange) over a pseudo-terminal."""
    driver = ShoeReaderDriver(path, timing=TIMING)
    assert await driver.start()
    call = driver.status if isinstance(request, GetStatus) else driver.arm
    cpu = time.process_time()
    wall = await timed_calls(call, count)
    cpu = (time.process_time() - cpu) / (200 + max(1, count // 100) * 100)
    await driver.close()
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=3000)
    parser.add_argument("--serve-fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # As in service: info level, JSON lines (rendered, then thrown away here).
    configure_logging("info", json=True, stream=open(os.devnull, "w"))  # noqa: SIM115
    if args.serve_fd is not None:
        serve(args.serve_fd)
        return
    master, slave = os.openpty()
    tty.setraw(slave)
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve-fd", str(master)],
        pass_fds=(master,),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    path = os.ttyname(slave)
    rows = []
    try:
        for name, (request, reply) in EXCHANGES.items():
            sizes = mean_sizes(answers(request, reply))
            wire = sum(sizes)
            pty_rtt, pty_cpu = eventloop.run(through_pty(path, request, args.exchanges))
            own = eventloop.run(in_process(request, reply, args.exchanges))
            pure = sans_io(request, reply, args.exchanges * 10)
            rows.append((name, sizes, wire, pty_rtt, pty_cpu, own, pure))
    finally:
        child.terminate()
        child.wait()
        os.close(master)
        os.close(slave)

    us = 1e6
    print(f"link benchmark, {args.exchanges} exchanges each (shared 2-core machine: indicative)")
    print(
        f"{'exchange':<22}{'bytes':>11}{'wire@115200':>13}{'wire@9600':>11}"
        f"{'pty RTT':>10}{'pty CPU':>10}{'own cost':>10}{'sans-I/O':>10}"
        f"{'own/wire':>10}{'CPU/wire':>10}"
    )
    worst = worst_cpu = 0.0
    pure_share = 0.0
    for name, (out, back), wire, pty_rtt, pty_cpu, own, pure in rows:
        fast = wire_time(round(wire), 115200)
        slow = wire_time(round(wire), 9600)
        ratio = own / fast
        worst = max(worst, ratio)
        if pty_cpu / fast > worst_cpu:
            worst_cpu, pure_share = pty_cpu / fast, pure / pty_cpu
        print(
            f"{name:<22}{f'{out:.0f}+{back:.1f}':>11}{fast * 1000:>11.2f}ms{slow * 1000:>9.2f}ms"
            f"{pty_rtt * us:>8.0f}us{pty_cpu * us:>8.0f}us{own * us:>8.1f}us{pure * us:>8.1f}us"
            f"{ratio:>10.2%}{pty_cpu / fast:>10.2%}"
        )
    print(
        f"daemon's own cost / wire time at 115,200 baud: worst {worst:.2%} "
        f"(goal <= 3 %: {'met' if worst <= 0.03 else 'MISSED'})"
    )
    print(
        f"daemon CPU per exchange through a pty / wire time at 115,200 baud: worst "
        f"{worst_cpu:.2%} (goal <= 2 %: {'met' if worst_cpu <= 0.02 else 'MISSED'}); "
        f"the sans-I/O link and codec are {pure_share:.0%} of it, the rest is the driver, "
        f"asyncio and the system calls"
    )


if __name__ == "__main__":
    main()
