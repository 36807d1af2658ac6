"""Replay: feed a capture (`drivers.capture`) into the unchanged driver and compare what it
reports with an expected file.

The driver is given the capture as its port (through its `opener`: nothing is opened, no
thread) and runs on a manual clock. The harness walks the capture's records in order:

- it moves the clock to the record's time, so the driver's own timers (reply deadlines,
  retransmissions, reconnect backoff) fire exactly where they fired when it was recorded;
- an "rx" record is delivered to the driver as the device's bytes;
- a "tx" record is what the host wrote then. Link frames (ACK, NAK) and retransmissions the
  driver writes by itself; a connect (IDENTIFY, then GET_STATUS) it makes by itself once
  started; any other new command was its caller's, so the harness makes the same call through
  the driver's public API (`shuffle`, `arm`, `start_timer`, ...).

Everything the driver writes is kept, and must equal the capture's "tx" bytes: a replay that
diverges says so (`ReplayResult.tx_matches`). Status polling is off during a replay (the
capture's polls are replayed as the commands they were).

The expected file is JSON: the device, the driver events in order (each `{"event": "CardDrawn",
...fields}`), the outcome of each call, and the link counters. `python -m drivers.replay CAPTURE
EXPECTED` checks one capture (exit 1 on a difference); with `--write` it writes EXPECTED from
the replay, for a capture a person has checked.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drivers.base import DeviceDriver, driver_class
from drivers.capture import RX, TX, Capture, read_capture
from drivers.clock import ManualClock, settle
from drivers.dice_shaker.driver import DiceShakerDriver
from drivers.dice_shaker.messages import Shake
from drivers.events import CommandRefused, DeviceError, DriverEvent
from drivers.framing import Frame, FrameCodec, Role
from drivers.link import LinkTiming
from drivers.messages import ClearFaults, GetStatus, Identify, Message
from drivers.shoe_reader.driver import ShoeReaderDriver
from drivers.shoe_reader.messages import Arm, Disarm, ShoeMode
from drivers.shuffler.driver import ShufflerDriver
from drivers.shuffler.messages import StartShuffle
from drivers.timer_bell.driver import TimerBellDriver
from drivers.timer_bell.messages import CancelTimer, GetRemaining, Ring, StartTimer
from drivers.transport import Transport

NO_POLLING = 1e9


# --- the far end of the driver's port ------------------------------------------------------------


class ReplaySession:
    """The driver's port during a replay (its `opener`): what it wrote, where to deliver."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.receiver: Callable[[bytes], None] | None = None
        self.attached = asyncio.Event()
        self.opens = 0
        self.undelivered = 0
        self._transport: _ReplayTransport | None = None

    async def open(
        self,
        url: str,
        baudrate: int,
        on_data: Callable[[bytes], None],
        on_lost: Callable[[str], None],
    ) -> Transport:
        self.opens += 1
        self.receiver = on_data
        self._transport = _ReplayTransport(self)
        self.attached.set()
        return self._transport

    def deliver(self, data: bytes) -> None:
        """The device's bytes, delivered on the next loop turn as a real transport does."""
        if self.receiver is None:
            self.undelivered += len(data)
        else:
            asyncio.get_running_loop().call_soon(self.receiver, data)

    def closed(self, transport: _ReplayTransport) -> None:
        if transport is self._transport:
            self.receiver = None
            self._transport = None
            self.attached.clear()


class _ReplayTransport:
    def __init__(self, session: ReplaySession) -> None:
        self._session: ReplaySession | None = session

    def write(self, data: bytes) -> None:
        if self._session is not None:
            self._session.written += data

    def close(self) -> None:
        if self._session is not None:
            self._session.closed(self)
            self._session = None


# --- describing what a driver reported ---------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def describe_event(event: DriverEvent) -> dict[str, Any]:
    """A driver event as a JSON object: its type, then its fields."""
    return {"event": type(event).__name__, **_plain(event)}


def issue(driver: DeviceDriver, message: Message) -> Awaitable[Any]:
    """The driver's public call that sends `message` (what its caller did when recording)."""
    if isinstance(message, Identify):
        return driver.identify()
    if isinstance(message, GetStatus):
        return driver.status()
    if isinstance(message, ClearFaults):
        return driver.clear_faults()
    if isinstance(driver, ShufflerDriver) and isinstance(message, StartShuffle):
        return driver.shuffle(message.expected)
    if isinstance(driver, DiceShakerDriver) and isinstance(message, Shake):
        return driver.shake()
    if isinstance(driver, ShoeReaderDriver):
        if isinstance(message, Arm):
            return driver.arm(ShoeMode(message.mode), bool(message.new_shoe))
        if isinstance(message, Disarm):
            return driver.disarm()
    if isinstance(driver, TimerBellDriver):
        if isinstance(message, StartTimer):
            return driver.start_timer(message.seconds, message.warn_before)
        if isinstance(message, CancelTimer):
            return driver.cancel_timer()
        if isinstance(message, GetRemaining):
            return driver.remaining()
        if isinstance(message, Ring):
            return driver.ring()
    raise LookupError(f"{type(driver).__name__} has no call that sends {type(message).__name__}")


def _outcome(task: asyncio.Task[Any]) -> str:
    if not task.done():
        return "pending"
    if task.cancelled():
        return "cancelled"
    error = task.exception()
    if error is None:
        result = task.result()
        return "ok" if result is None or result is True else f"ok: {json.dumps(_plain(result))}"
    if isinstance(error, CommandRefused):
        return f"refused: {error.reason_name}"
    if isinstance(error, DeviceError):
        return f"failed: {type(error).__name__}"
    return f"error: {type(error).__name__}: {error}"


# --- the harness --------------------------------------------------------------------------------


@dataclass
class ReplayResult:
    device: str
    events: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    tx_expected: bytes = b""
    tx_actual: bytes = b""

    @property
    def tx_matches(self) -> bool:
        return self.tx_expected == self.tx_actual

    def as_expected(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "events": self.events,
            "calls": self.calls,
            "counters": self.counters,
        }


class _Replayer:
    """One replay: the driver under test, its manual clock and the capture's far end."""

    def __init__(self, capture: Capture, name: str, timing: LinkTiming | None) -> None:
        self.capture = capture
        self.session = ReplaySession()
        self.clock = ManualClock(0.0)
        timing = dataclasses.replace(timing or LinkTiming(), poll_interval=NO_POLLING)
        self.driver = driver_class(name)(
            f"replay:{capture.header.port}",
            baudrate=capture.header.baudrate,
            clock=self.clock,
            timing=timing,
            name=name,
            opener=self.session.open,
        )
        # Reads the host's frames as a device would.
        self.sent = FrameCodec(Role.DEVICE, self.driver.MESSAGES)
        self.calls: list[tuple[str, dict[str, Any], asyncio.Task[Any]]] = []
        self.tx_expected = bytearray()
        self.last_seq: int | None = None
        self.connect_status_due = False

    async def run(self) -> ReplayResult:
        driver = self.driver
        try:
            for record in self.capture.records:
                if record.t > self.clock.now():
                    await self.clock.advance(record.t - self.clock.now())
                if record.direction == RX:
                    self.session.deliver(record.data)
                elif record.direction == TX:
                    self.tx_expected += record.data
                    self.sent.receive_data(record.data)
                    while (item := self.sent.next_event()) is not None:
                        if isinstance(item, Frame):
                            await self._host_frame(item)
                await settle()
            await settle()
            return ReplayResult(
                driver.name,
                [describe_event(e) for e in driver.pending_events()],
                [
                    {"call": call, "args": args, "outcome": _outcome(task)}
                    for call, args, task in self.calls
                ],
                driver.link.counters.as_dict(),
                bytes(self.tx_expected),
                bytes(self.session.written),
            )
        finally:
            await driver.close()
            for _, _, task in self.calls:
                task.cancel()
            await settle()

    async def _host_frame(self, frame: Frame) -> None:
        message = frame.message
        if message.KIND != "command" or frame.seq == self.last_seq:
            return  # ACK, NAK and retransmissions: the driver writes those by itself
        self.last_seq = frame.seq
        if isinstance(message, Identify) and not self.driver.link_up:
            # A connect: the first is the caller's start(), later ones the driver's own
            # reconnects; either way the GET_STATUS after it is the driver's too.
            if not self.calls:
                self.calls.append(("connect", {}, asyncio.ensure_future(self.driver.start())))
            self.connect_status_due = True
            await self.session.attached.wait()
            return
        if isinstance(message, GetStatus) and self.connect_status_due:
            self.connect_status_due = False
            return
        self.connect_status_due = False
        task = asyncio.ensure_future(issue(self.driver, message))
        self.calls.append((type(message).__name__, _plain(message), task))


async def replay(
    capture: Capture, device: str | None = None, timing: LinkTiming | None = None
) -> ReplayResult:
    """Run the driver of `device` (default: the capture's) against the capture."""
    name = device or capture.header.device
    if name is None:
        raise ValueError("the capture does not name its device: pass device=")
    return await _Replayer(capture, name, timing).run()


def format_expected(expected: dict[str, Any]) -> str:
    """The expected file's text: one event or call per line, so a change reads as a diff."""
    lines = ["{", f'"device": {json.dumps(expected["device"])},']
    for key in ("events", "calls"):
        items = [json.dumps(item, ensure_ascii=False) for item in expected[key]]
        lines.append(f'"{key}": [')
        lines += [f" {item}," for item in items[:-1]] + [f" {item}" for item in items[-1:]]
        lines.append("],")
    lines.append(f'"counters": {json.dumps(expected["counters"])}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def replay_file(path: str | Path, device: str | None = None) -> ReplayResult:
    return asyncio.run(replay(read_capture(path), device))


def compare(result: ReplayResult, expected: dict[str, Any]) -> list[str]:
    """The differences between a replay and an expected file, as sentences (empty: none)."""
    problems: list[str] = []
    if not result.tx_matches:
        problems.append("the driver wrote other bytes than the capture's host did")
    got = result.as_expected()
    for key in ("device", "calls", "counters"):
        if got[key] != expected.get(key):
            problems.append(f"{key}: expected {expected.get(key)!r}, got {got[key]!r}")
    want_events: list[Any] = expected.get("events", [])
    for index, (want, have) in enumerate(itertools.zip_longest(want_events, got["events"])):
        if want != have:
            problems.append(f"event {index}: expected {want!r}, got {have!r}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m drivers.replay",
        description="Replay a device capture into its driver and compare with an expected file.",
    )
    parser.add_argument("capture", type=Path)
    parser.add_argument("expected", type=Path)
    parser.add_argument("--device", help="the driver to use when the capture names none")
    parser.add_argument("--write", action="store_true", help="write EXPECTED from this replay")
    args = parser.parse_args(argv)
    try:
        expected: Any = None
        if not args.write:
            expected = json.loads(args.expected.read_text(encoding="utf-8"))
            if not isinstance(expected, dict):
                raise ValueError(f"{args.expected}: not an expected file (a JSON object)")
        result = replay_file(args.capture, args.device)
    except (OSError, ValueError, LookupError) as exc:
        # a missing or malformed capture or expected file, or an unknown device: exit 2, not
        # 1, which means "replayed, and it differs"
        print(f"python -m drivers.replay: {exc}", file=sys.stderr)
        return 2
    if args.write:
        if not result.tx_matches:
            print("refusing to write: the replay diverged from the capture", file=sys.stderr)
            return 1
        args.expected.write_text(format_expected(result.as_expected()), encoding="utf-8")
        return 0
    problems = compare(result, expected)
    for problem in problems:
        print(problem)
    print(f"{args.capture}: {'differs' if problems else 'as expected'}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
