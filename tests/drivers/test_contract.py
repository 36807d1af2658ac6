"""The tabled protocol's contract: what a device speaking it (docs/protocol.md) must do at the
byte level, run against the simulators by default and against real ports with
`pytest -m hardware` and
TABLED_HARDWARE_PORTS="shuffler=/dev/ttyUSB0,dice_shaker=/dev/ttyUSB1,shoe_reader=...,timer_bell=..."
(TABLED_HARDWARE_BAUD, default 115200). A device missing from the variable is skipped. Each
kind of device that speaks it (the built-in four, and any plug-in's whose driver keeps the
base's link) runs the same suite: identity and status, bad bytes, an unknown command, a
retransmitted operation acted on once, and one operation through its driver. What every kind
of device must do through its driver, whatever its wire, is tests/drivers/test_device_contract.py
(docs/devices.md)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import serial

import drivers.transport  # noqa: F401  -- registers sim:// with pyserial
from drivers.base import DeviceDriver, driver_class
from drivers.dice_shaker.driver import DiceInvalid, DiceShakerDriver, DiceThrown
from drivers.dice_shaker.messages import Shake
from drivers.framing import Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.kinds import kinds
from drivers.link import LinkTiming
from drivers.messages import (
    Ack,
    DeviceEvent,
    GetStatus,
    Identify,
    Identity,
    Message,
    Nak,
    NakReason,
    Status,
)
from drivers.shoe_reader.driver import ShoeReaderDriver
from drivers.shoe_reader.messages import Arm, ShoeMode
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from drivers.shuffler.messages import StartShuffle
from drivers.timer_bell.driver import BellRang, TimerBellDriver
from drivers.timer_bell.messages import StartTimer

# role -> (an operation, the events that one run of it makes the device send)
OPERATIONS: dict[str, tuple[Message, int]] = {
    "shuffler": (StartShuffle(52), 1),  # SHUFFLE_DONE
    "dice_shaker": (Shake(), 1),  # DICE_RESULT or INVALID_THROW
    "shoe_reader": (Arm(ShoeMode.CARDS, 1), 0),  # draws are the dealer's
    "timer_bell": (StartTimer(1), 2),  # TIMER_EXPIRED, BELL_RANG
}
# Every kind the registry knows whose driver speaks this protocol (keeps the base's link): the
# built-in ones, and a plug-in's of this wire (docs/devices.md).
DEVICES: dict[str, tuple[type[DeviceDriver], Message, int]] = {
    kind: (driver_class(kind), *OPERATIONS[row.role])
    for kind, row in sorted(kinds().items())
    if driver_class(kind).make_link is DeviceDriver.make_link
}
OPERATION_SECONDS = 90.0  # a real shuffle takes tens of seconds


def hardware_ports() -> dict[str, str]:
    spec = os.environ.get("TABLED_HARDWARE_PORTS", "")
    pairs = (item.partition("=") for item in spec.split(",") if item)
    return {name.strip(): port.strip() for name, _, port in pairs}


TARGETS = [pytest.param((device, "sim"), id=f"{device}-sim") for device in DEVICES] + [
    pytest.param((device, "hardware"), id=f"{device}-hardware", marks=pytest.mark.hardware)
    for device in DEVICES
]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest, table: Any) -> tuple[str, str, int]:
    device, where = request.param
    if where == "sim":
        return device, table.url(device, seed=5), 115200
    port = hardware_ports().get(device)
    if port is None:
        pytest.skip(f"no hardware port for {device} in TABLED_HARDWARE_PORTS")
    return device, port, int(os.environ.get("TABLED_HARDWARE_BAUD", "115200"))


class Wire:
    """The host end at the byte level: frames written, frames read, events ACKed."""

    def __init__(self, url: str, baudrate: int, messages: Mapping[int, type[Message]]) -> None:
        self.port = serial.serial_for_url(url, baudrate=baudrate, timeout=0.05)
        self.codec = FrameCodec(Role.HOST, messages)
        self.events: list[DeviceEvent] = []
        self.errors: list[ProtocolError] = []

    def close(self) -> None:
        self.port.close()

    def send_raw(self, data: bytes) -> None:
        self.port.write(data)

    def read_until(self, want: Any, seconds: float = 3.0) -> list[Frame]:
        """Frames until `want(frame)` is true; events are ACKed and kept."""
        frames: list[Frame] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.codec.receive_data(self.port.read(256))
            while (item := self.codec.next_event()) is not None:
                if isinstance(item, ProtocolError):
                    self.errors.append(item)
                    continue
                if isinstance(item.message, DeviceEvent):
                    self.port.write(self.codec.send(Ack(), item.seq, item.address))
                    self.events.append(item.message)
                    continue
                frames.append(item)
                if want(item):
                    return frames
        raise AssertionError(f"no expected frame in {seconds} s; got {frames} {self.errors}")

    def command(self, message: Message, seq: int) -> Frame:
        self.port.write(self.codec.send(message, seq, 1))
        return self.read_until(lambda f: f.seq == seq)[-1]


@pytest.fixture
def wire(target: tuple[str, str, int]) -> Iterator[Wire]:
    device, url, baudrate = target
    link = Wire(url, baudrate, DEVICES[device][0].MESSAGES)
    yield link
    link.close()


def test_identity_and_status_answer_with_the_commands_seq(wire: Wire) -> None:
    identity = wire.command(Identify(), 11)
    assert isinstance(identity.message, Identity) and identity.seq == 11
    assert identity.message.make and identity.message.model and identity.message.serial
    assert len(identity.message.firmware_hash) == 32
    status = wire.command(GetStatus(), 12)
    assert isinstance(status.message, Status) and status.seq == 12


def test_bad_bytes_get_nak_and_the_next_good_frame_is_answered(wire: Wire) -> None:
    good = wire.codec.send(Identify(), 21, 1)
    wire.send_raw(b"\x55\xaa" + good[:-3] + b"\x00\x00\x03")  # garbage, then a bad CRC
    wire.send_raw(good)
    frames = wire.read_until(lambda f: f.seq == 21)
    assert Frame(1, 0, Nak(NakReason.BAD_FRAME)) in frames
    assert isinstance(frames[-1].message, Identity)


def test_an_unknown_command_is_refused_by_seq(wire: Wire) -> None:
    wire.send_raw(encode_frame(1, 31, 0x7E, b"", False))
    (frame,) = wire.read_until(lambda f: f.seq == 31)
    assert frame.message == Nak(NakReason.UNKNOWN_COMMAND)


def test_a_retransmitted_command_is_acted_on_once(wire: Wire, target: tuple[str, str, int]) -> None:
    device = target[0]
    _, operation, produces = DEVICES[device]
    wire.command(Identify(), 40)  # the device's last SEQ is now 40, not 41
    first = wire.command(operation, 41)
    assert first.message == Ack()
    again = wire.command(operation, 41)
    assert again.message == Ack()  # the cached answer: a second run would be NAK BUSY
    seq = 42
    deadline = time.monotonic() + OPERATION_SECONDS
    while len(wire.events) < produces and time.monotonic() < deadline:
        wire.command(GetStatus(), seq)  # polling, as the driver does; events are ACKed
        seq = seq % 255 + 1
    for _ in range(3):  # a second run would have sent more by now
        status = wire.command(GetStatus(), seq)
        seq = seq % 255 + 1
    assert isinstance(status.message, Status)
    assert status.message.pending == 0
    assert len(wire.events) == produces, wire.events


def test_one_operation_through_the_driver(target: tuple[str, str, int]) -> None:
    device, url, baudrate = target

    async def body() -> None:
        cls = DEVICES[device][0]
        driver = cls(url, baudrate=baudrate, timing=LinkTiming(poll_interval=3600.0))
        assert await driver.start()
        expected: tuple[type, ...] = ()
        if isinstance(driver, ShufflerDriver):
            await driver.shuffle()
            expected = (ShuffleCompleted,)
        elif isinstance(driver, DiceShakerDriver):
            await driver.shake()
            expected = (DiceThrown, DiceInvalid)
        elif isinstance(driver, ShoeReaderDriver):
            await driver.arm(new_shoe=True)
            assert driver.armed
            await driver.disarm()
        else:
            assert isinstance(driver, TimerBellDriver)
            await driver.start_timer(1)
            expected = (BellRang,)
        while expected:
            event = await asyncio.wait_for(driver.next_event(), OPERATION_SECONDS)
            if isinstance(event, expected):
                break
        await driver.close()

    asyncio.run(body())
