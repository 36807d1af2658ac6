"""The timer bell: golden vectors, fuzzed decoders, and the driver against the simulated bell
through pyserial `sim://` (and once over a real pseudo-terminal)."""

from __future__ import annotations

import asyncio
import os
import tty
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.clock import ManualClock, MonotonicClock, settle
from drivers.crc import crc16_reference
from drivers.events import CommandRefused, DeviceFault, DriverEvent, FaultCleared, LinkUp
from drivers.framing import ErrorKind, Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.link import LinkTiming
from drivers.messages import Message
from drivers.timer_bell.driver import BellRang, TimerBellDriver, TimerExpired, TimerWarning
from drivers.timer_bell.messages import (
    BellRangEvent,
    CancelTimer,
    GetRemaining,
    Remaining,
    Ring,
    StartTimer,
    TimerExpiredEvent,
    TimerWarningEvent,
)
from simulators.timer_bell import TimerBellModel
from simulators.world import TableWorld

TIMING = LinkTiming(poll_interval=3600.0)
MESSAGES = TimerBellDriver.MESSAGES

# (role that sends it, seq, message, wire bytes): the table in docs/protocol-shoe-bell.md.
GOLDEN: list[tuple[Role, int, Message, str]] = [
    (Role.HOST, 30, StartTimer(300, 30), "02 01 1e 04 50 01 2c 00 1e 27 5f 03"),
    (Role.HOST, 31, CancelTimer(), "02 01 1f 00 51 53 32 03"),
    (Role.HOST, 32, GetRemaining(), "02 01 20 00 52 8a c5 03"),
    (Role.HOST, 33, Ring(), "02 01 21 00 53 ad d4 03"),
    (Role.DEVICE, 32, Remaining(1, 241500), "02 81 20 05 b8 01 00 10 23 af 5c c5 88 03"),
    (Role.DEVICE, 33, Remaining(0, 0), "02 81 21 05 b8 00 00 00 00 00 e7 63 03"),
    (Role.DEVICE, 40, TimerWarningEvent(41, 30), "02 81 28 04 d8 00 29 00 1e 9f cf 03"),
    (Role.DEVICE, 41, TimerExpiredEvent(42), "02 81 29 10 22 d9 00 2a a2 0d 03"),
    (Role.DEVICE, 42, BellRangEvent(43, 1), "02 81 2a 10 23 da 00 2b 01 44 d5 03"),
    (Role.DEVICE, 43, BellRangEvent(44, 2), "02 81 2b 10 23 da 00 2c 10 22 a8 81 03"),
]
IDS = [f"{type(m).__name__}-{seq}" for _, seq, m, _ in GOLDEN]


def drain(codec: FrameCodec) -> list[Frame | ProtocolError]:
    out = []
    while (item := codec.next_event()) is not None:
        out.append(item)
    return out


@pytest.mark.parametrize("vector", GOLDEN, ids=IDS)
def test_golden_vectors_both_ways(vector: tuple[Role, int, Message, str]) -> None:
    role, seq, message, wire = vector
    data = bytes.fromhex(wire)
    assert FrameCodec(role, MESSAGES).send(message, seq, 1) == data
    body = data[1:-1].replace(b"\x10\x22", b"\x02").replace(b"\x10\x23", b"\x03")
    body = body.replace(b"\x10\x30", b"\x10")
    assert crc16_reference(body[:-2]) == int.from_bytes(body[-2:], "big")
    peer = FrameCodec(Role.DEVICE if role is Role.HOST else Role.HOST, MESSAGES)
    expected = Frame(1, seq, message)
    peer.receive_data(data)
    assert drain(peer) == [expected]
    frames = []
    for byte in data:
        peer.receive_data(bytes((byte,)))
        frames += drain(peer)
    assert frames == [expected]
    peer.receive_data(b"\xaa\xbb" + data + b"\x03\x02")
    items = drain(peer)
    assert items[0] == ProtocolError(ErrorKind.GARBAGE, b"\xaa\xbb", detail="2 bytes")
    assert items[1] == expected
    assert all(isinstance(i, ProtocolError) for i in items[2:])


@given(st.sampled_from([0x50, 0x51, 0x52, 0x53, 0xB8, 0xD8, 0xD9, 0xDA]), st.binary(max_size=8))
def test_random_payloads_give_a_message_or_a_bad_payload(cmd: int, payload: bytes) -> None:
    codec = FrameCodec(Role.HOST if cmd >= 0x80 else Role.DEVICE, MESSAGES)
    codec.receive_data(encode_frame(1, 9, cmd, payload, cmd >= 0x80))
    (item,) = drain(codec)
    if isinstance(item, ProtocolError):
        assert item.kind is ErrorKind.BAD_PAYLOAD and item.seq == 9
    else:
        assert cmd == item.message.CMD
        assert item.message.encode_payload() == payload


@given(st.sampled_from(GOLDEN), st.binary(min_size=1, max_size=40))
def test_garbage_between_frames_never_loses_the_next_one(vector: Any, junk: bytes) -> None:
    role, _, message, wire = vector
    codec = FrameCodec(Role.DEVICE if role is Role.HOST else Role.HOST, MESSAGES)
    codec.receive_data(junk + bytes.fromhex(wire))
    items = drain(codec)
    assert isinstance(items[-1], Frame) and items[-1].message == message


# --- the driver against the simulated bell -------------------------------------------------------


def run(test: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(test())


async def started(url: str, **kwargs: Any) -> TimerBellDriver:
    kwargs.setdefault("timing", TIMING)
    driver = TimerBellDriver(url, **kwargs)
    assert await driver.start()
    assert [type(e) for e in driver.pending_events()] == [LinkUp]
    return driver


async def events_after(action: Awaitable[Any], driver: TimerBellDriver) -> list[DriverEvent]:
    await action
    await settle()
    return driver.pending_events()


def test_a_countdown_warns_expires_and_rings(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock(100.0)
        driver = await started(table.url("timer_bell"), clock=clock)
        events = await events_after(driver.start_timer(300, warn_before=30), driver)
        assert events == [
            TimerWarning("timer_bell", 30),
            TimerExpired("timer_bell"),
            BellRang("timer_bell", "expiry"),
        ]
        assert driver.deadline is None  # settled by the expiry
        assert await driver.remaining() is None
        await driver.close()

    run(body)


def test_a_ring_on_command(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("timer_bell"))
        assert await events_after(driver.ring(), driver) == [BellRang("timer_bell", "command")]
        await driver.close()

    run(body)


def test_remaining_time_and_cancel(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock(50.0)
        driver = await started(table.url("timer_bell", speed=1), clock=clock)
        await driver.start_timer(3600, warn_before=60)
        assert driver.deadline == 3650.0  # the host's own deadline, on its own clock
        left = await driver.remaining()
        assert left is not None and 0 < left <= 3600  # exact figures: test_bell_model.py
        await driver.cancel_timer()
        assert driver.deadline is None and await driver.remaining() is None
        await driver.start_timer(600)  # a cancelled countdown leaves the bell free
        await driver.cancel_timer()
        await settle()
        assert driver.pending_events() == []
        await driver.close()

    run(body)


def test_a_double_start_is_refused_and_reported(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("timer_bell", speed=1))
        await driver.start_timer(3600)
        with pytest.raises(CommandRefused) as refused:
            await driver.start_timer(300)
        assert refused.value.reason_name == "busy"
        assert driver.pending_events() == [DeviceFault("timer_bell", "double_start", 0)]
        await driver.cancel_timer()
        await driver.close()

    run(body)


def test_a_stuck_running_flag_is_a_double_start(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("timer_bell", fault="double_start"))
        with pytest.raises(CommandRefused):
            await driver.start_timer(300)
        assert driver.pending_events() == [DeviceFault("timer_bell", "double_start", 0)]
        events = await events_after(driver.start_timer(300), driver)  # spent: works again
        assert events == [TimerExpired("timer_bell"), BellRang("timer_bell", "expiry")]
        await driver.close()

    run(body)


def test_a_bell_that_fails_to_sound_is_a_fault(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("timer_bell", fault="bell_failed"))
        events = await events_after(driver.start_timer(300), driver)
        assert events == [TimerExpired("timer_bell"), DeviceFault("timer_bell", "bell_failed", 4)]
        with pytest.raises(CommandRefused):
            await driver.start_timer(300)
        table.world.clear("timer_bell", "bell_failed")
        assert await events_after(driver.clear_faults(), driver) == [
            FaultCleared("timer_bell", "bell_failed", 4)
        ]
        assert await events_after(driver.ring(), driver) == [BellRang("timer_bell", "command")]
        await driver.close()

    run(body)


def test_power_lost_mid_timer_loses_the_countdown(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("timer_bell", fault="power_lost"))
        events = await events_after(driver.start_timer(300), driver)
        assert events == [DeviceFault("timer_bell", "power_lost", 1)]  # and no expiry, no ring
        assert driver.deadline is not None  # the host's clock still holds the deadline
        status = await driver.status()
        assert status.powered_up and not status.busy and "power_lost" in status.faults
        assert await driver.remaining() is None
        await driver.close()

    run(body)


# --- over a real pseudo-terminal ----------------------------------------------------------------


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, int, str]]:
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, slave, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def test_over_a_pseudo_terminal(pty_pair: tuple[int, int, str]) -> None:
    master, _, path = pty_pair

    async def body() -> None:
        loop = asyncio.get_running_loop()
        model = TimerBellModel(
            world=TableWorld("pty-bell"),
            scheduler=MonotonicClock(loop),
            output=lambda data: os.write(master, data) and None,
        )
        loop.add_reader(master, lambda: model.receive_data(os.read(master, 4096)))
        driver = TimerBellDriver(path, timing=TIMING)
        assert await driver.start()
        assert [type(e) for e in driver.pending_events()] == [LinkUp]
        await driver.start_timer(300, warn_before=60)
        events = [await asyncio.wait_for(driver.next_event(), 5) for _ in range(3)]
        assert events == [
            TimerWarning("timer_bell", 60),
            TimerExpired("timer_bell"),
            BellRang("timer_bell", "expiry"),
        ]
        assert driver.link.counters.protocol_errors == {}
        await driver.close()
        loop.remove_reader(master)
        model.close()

    run(body)


# --- the contract, against the simulator and (with -m hardware) a real bell ------------------


def hardware_port(device: str) -> str | None:
    spec = os.environ.get("TABLED_HARDWARE_PORTS", "")
    ports = dict(item.strip().partition("=")[::2] for item in spec.split(",") if item)
    return ports.get(device)


@pytest.mark.parametrize("where", ["sim", pytest.param("hardware", marks=pytest.mark.hardware)])
def test_contract_a_short_countdown_and_a_ring(where: str, table: Any) -> None:
    """A bell counts down two seconds, warns one before, expires and rings; rings on command;
    reports no countdown afterwards. (On hardware this takes the two seconds.)"""
    url = table.url("timer_bell") if where == "sim" else hardware_port("timer_bell")
    if url is None:
        pytest.skip("no timer_bell in TABLED_HARDWARE_PORTS")
    baudrate = int(os.environ.get("TABLED_HARDWARE_BAUD", "115200"))

    async def body() -> None:
        driver = TimerBellDriver(url, baudrate=baudrate, timing=TIMING)
        assert await driver.start()
        driver.pending_events()
        await driver.cancel_timer()
        await driver.start_timer(2, warn_before=1)
        events = [await asyncio.wait_for(driver.next_event(), 10) for _ in range(3)]
        assert events == [
            TimerWarning("timer_bell", 1),
            TimerExpired("timer_bell"),
            BellRang("timer_bell", "expiry"),
        ]
        await driver.ring()
        assert await asyncio.wait_for(driver.next_event(), 10) == BellRang("timer_bell", "command")
        assert await driver.remaining() is None
        assert driver.link.counters.protocol_errors == {}
        await driver.close()

    run(body)


def test_a_countdown_the_wire_cannot_carry_is_refused_before_anything_is_sent(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("timer_bell"))
        driver.pending_events()
        sent = driver.link.counters.frames_sent
        for seconds, warn in ((300, 400), (300, 300), (70000, 0), (0, 0), (10, -1)):
            with pytest.raises(ValueError, match="seconds 1-65535"):
                await driver.start_timer(seconds, warn)
        assert driver.link.counters.frames_sent == sent
        await driver.start_timer(5, 1)  # the link carries on
        assert driver.deadline is not None
        await driver.close()

    run(body)
