"""What the driver's lean exchange path must keep (issue 10 item 7): one reply timer serves many
exchanges, so a timer left from an earlier exchange must neither resend early nor let a deadline
pass; a late answer still settles nothing; the codec's and the status description's reuse of
what they decoded last never hides a change; the clock reads time.monotonic() yet times a loop
that keeps its own time correctly."""

from __future__ import annotations

import asyncio
import os
import tty
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvloop

from drivers.clock import ManualClock, MonotonicClock, SimulationClock, settle
from drivers.events import LinkDown, LinkLost
from drivers.framing import ErrorKind, Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.link import MAX_WIRE_FRAME, LinkTiming, wire_time
from drivers.messages import GetStatus, Identify, Identity, Message, Status, StatusFlag
from drivers.shoe_reader.driver import ShoeReaderDriver
from tests.drivers.conftest import LoopRun

TIMING = LinkTiming(poll_interval=3600.0)
MESSAGES = ShoeReaderDriver.MESSAGES


class Wire:
    """What the driver wrote, when (its own clock), through its tap."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.sent: list[tuple[float, bytes]] = []

    def tap(self, direction: str, data: bytes) -> None:
        if direction == "tx":
            self.sent.append((self.clock.now(), data))


def wait_for(driver: ShoeReaderDriver, data: bytes) -> float:
    """The reply deadline of a command whose frame is `data` (drivers.link, rule 3)."""
    return driver.timing.reply_timeout + wire_time(len(data) + MAX_WIRE_FRAME, driver.baudrate)


async def started(url: str, clock: ManualClock, wire: Wire, **kwargs: Any) -> ShoeReaderDriver:
    driver = ShoeReaderDriver(url, clock=clock, timing=TIMING, tap=wire.tap, **kwargs)
    assert await driver.start()
    driver.pending_events()
    return driver


def test_a_timer_left_by_earlier_exchanges_neither_resends_early_nor_late(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        wire = Wire(clock)
        driver = await started(table.url("shoe_reader"), clock, wire)
        for _ in range(300):  # answered at once: each leaves the one timer where it was
            await driver.status()
            await clock.advance(0.01)
        table.world.inject("shoe_reader", "no_response")
        wire.sent.clear()
        command = asyncio.ensure_future(driver.status())
        await settle()
        (sent_at, data), *_ = wire.sent
        wait = wait_for(driver, data)
        await clock.advance(wait * 3.5)
        with pytest.raises(LinkLost):
            await asyncio.wait_for(command, 10)  # (a safety: the clock is manual)
        # three transmissions of the same bytes, each exactly one reply wait after the last
        assert [d for _, d in wire.sent] == [data] * 3
        assert [t - sent_at for t, _ in wire.sent] == pytest.approx([0.0, wait, 2 * wait])
        assert driver.pending_events()[-1] == LinkDown("shoe_reader", "no_response")
        await driver.close()

    asyncio.run(body())


def test_a_deadline_earlier_than_the_pending_timer_gets_its_own(table: Any) -> None:
    """At 9,600 baud an ARM's deadline lies 3 ms further out than a GET_STATUS's (its frame is
    3 bytes longer); a GET_STATUS sent 1 ms after an answered ARM must time out at its own
    deadline, not at the ARM's."""

    async def body() -> None:
        clock = ManualClock()
        wire = Wire(clock)
        driver = await started(table.url("shoe_reader"), clock, wire, baudrate=9600)
        await clock.advance(1.0)  # the timers of the connect's exchanges are spent
        await driver.arm()
        arm_at, arm = wire.sent[-1]
        await clock.advance(0.001)
        table.world.inject("shoe_reader", "no_response")
        command = asyncio.ensure_future(driver.status())
        await settle()
        status_at, status = wire.sent[-1]
        deadline = status_at + wait_for(driver, status)
        assert deadline < arm_at + wait_for(driver, arm)
        await clock.advance(deadline - clock.now())
        assert wire.sent[-1] == (deadline, status)  # resent at its own deadline
        await clock.advance(1.0)
        with pytest.raises(LinkLost):
            await asyncio.wait_for(command, 10)  # (a safety: the clock is manual)
        await driver.close()

    asyncio.run(body())


def test_a_timer_firing_with_nothing_outstanding_sends_and_reports_nothing(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        wire = Wire(clock)
        driver = await started(table.url("shoe_reader"), clock, wire)
        for _ in range(5):
            await driver.status()
        sent = len(wire.sent)
        await clock.advance(10.0)  # well past every deadline those exchanges had
        assert len(wire.sent) == sent
        assert driver.pending_events() == [] and driver.link_up
        counters = driver.link.counters
        assert counters.retransmits == 0 and counters.timeouts == 0
        assert (await driver.status()).events == 0  # and the link still works
        await driver.close()

    asyncio.run(body())


# --- over a real pseudo-terminal, the device played frame by frame ---------------------------


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


class HandDevice:
    """The far end of a pty, answering through the real codec what `answer` says (None: no
    answer) and keeping every frame it received."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.codec = FrameCodec(Role.DEVICE, MESSAGES)
        self.received: list[Frame] = []
        self.mute = False
        self.status = Status(0, 0, 0, 0, 0)
        asyncio.get_running_loop().add_reader(master, self._readable)

    def send(self, message: Message, seq: int) -> None:
        os.write(self.master, self.codec.send(message, seq, 1))

    def _readable(self) -> None:
        self.codec.receive_data(os.read(self.master, 4096))
        while (item := self.codec.next_event()) is not None:
            assert isinstance(item, Frame), item
            self.received.append(item)
            if self.mute:
                continue
            if isinstance(item.message, Identify):
                self.send(Identity("ACME", "SHOE-R8", "1", "1.0", bytes(32)), item.seq)
            elif isinstance(item.message, GetStatus):
                self.send(self.status, item.seq)

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.master)


def test_over_a_pty_a_late_answer_settles_nothing_and_the_right_one_settles(
    pty_pair: tuple[int, str], on_loop: LoopRun
) -> None:
    master, path = pty_pair

    async def body() -> None:
        device = HandDevice(master)
        driver = ShoeReaderDriver(path, timing=TIMING)
        assert await driver.start(keep_trying=False)
        device.status = Status(int(StatusFlag.BUSY), 0, 0, 0, 0)
        assert (await driver.status()).busy
        answered = device.received[-1].seq
        device.mute = True
        command = asyncio.ensure_future(driver.status())
        while len(device.received) < 4:
            await asyncio.sleep(0.001)
        device.send(Status(int(StatusFlag.BUSY), 0, 0, 0, 0), answered)  # late: the last SEQ
        device.send(Status(0, 0, 0, 0, 0), device.received[-1].seq)
        status = await asyncio.wait_for(command, 10)
        assert not status.busy  # the right answer settled it, not the late one
        assert driver.link.counters.duplicates == 1
        await driver.close()
        device.close()

    on_loop(body())


def test_over_a_pty_a_silent_device_still_times_out_after_every_try(
    pty_pair: tuple[int, str], on_loop: LoopRun
) -> None:
    master, path = pty_pair

    async def body() -> None:
        device = HandDevice(master)
        timing = LinkTiming(poll_interval=3600.0, reply_timeout=0.05)
        driver = ShoeReaderDriver(path, timing=timing)
        assert await driver.start(keep_trying=False)
        for _ in range(100):
            await driver.status()
        device.mute = True
        before = len(device.received)
        with pytest.raises(LinkLost):
            await asyncio.wait_for(driver.status(), 10)
        tries = device.received[before:]
        assert len(tries) == timing.tries and len({(f.seq, f.message) for f in tries}) == 1
        assert not driver.link_up
        await driver.close()
        device.close()

    on_loop(body())


# --- the codec and the status description reuse what they decoded last -----------------------


def test_the_codec_reuses_a_payload_it_decoded_but_never_hides_a_new_or_bad_one() -> None:
    host, device = FrameCodec(Role.HOST, MESSAGES), FrameCodec(Role.DEVICE, MESSAGES)

    def decode(data: bytes) -> Frame | ProtocolError | None:
        host.receive_data(data)
        return host.next_event()

    first = decode(device.send(Status(0, 0, 0, 7, 0), 1, 1))
    again = decode(device.send(Status(0, 0, 0, 7, 0), 2, 1))
    changed = decode(device.send(Status(0, 4, 0, 7, 0), 3, 1))
    assert isinstance(first, Frame) and isinstance(again, Frame) and isinstance(changed, Frame)
    assert again.seq == 2 and again.message is first.message
    assert changed.message == Status(0, 4, 0, 7, 0)
    # a STATUS one byte short, with a good CRC: a bad payload however often STATUS was decoded
    short = encode_frame(1, 4, Status.CMD, Status(0, 0, 0, 7, 0).encode_payload()[:-1], True)
    bad = decode(short)
    assert isinstance(bad, ProtocolError) and bad.kind is ErrorKind.BAD_PAYLOAD
    assert decode(device.send(Status(0, 0, 0, 7, 0), 5, 1)) == Frame(1, 5, first.message)


@pytest.mark.parametrize("byte", [-3, -2])  # the CRC's high and low byte (before ETX)
@pytest.mark.parametrize("bit", range(8))
def test_any_flipped_crc_bit_is_a_crc_error(byte: int, bit: int) -> None:
    data = bytearray(FrameCodec(Role.DEVICE, MESSAGES).send(Status(0, 0, 0, 7, 0), 1, 1))
    data[byte] ^= 1 << bit
    if data[byte] in (0x02, 0x03, 0x10):
        pytest.skip("the flip made a framing byte: another error kind")
    host = FrameCodec(Role.HOST, MESSAGES)
    host.receive_data(bytes(data))
    error = host.next_event()
    assert isinstance(error, ProtocolError) and error.kind is ErrorKind.CRC


def test_a_changed_status_is_described_anew_an_unchanged_one_is_shared(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        driver = await started(table.url("shoe_reader"), clock, Wire(clock))
        first, second = await driver.status(), await driver.status()
        assert first is second and first.faults == ()
        table.world.inject("shoe_reader", "reader_blocked")
        await settle()
        assert (await driver.status()).faults == ("reader_blocked",)
        table.world.clear("shoe_reader", "reader_blocked")
        await driver.clear_faults()
        assert (await driver.status()).faults == ()
        await driver.close()

    asyncio.run(body())


# --- the clock -----------------------------------------------------------------------------


class OffsetLoop(asyncio.SelectorEventLoop):
    """A loop that keeps its own time (1,000 s ahead of time.monotonic())."""

    def time(self) -> float:
        return super().time() + 1000.0


@pytest.mark.parametrize("loop_factory", [OffsetLoop, uvloop.new_event_loop])
def test_the_clock_times_a_loop_that_keeps_its_own_time(
    loop_factory: Callable[[], asyncio.AbstractEventLoop],
) -> None:
    """A deadline in the clock's time (time.monotonic()) is met on a loop whose time is its own:
    one 1,000 s ahead, and uvloop's, which counts whole milliseconds. Never before it."""
    clock = MonotonicClock()

    async def body() -> list[tuple[float, float]]:
        times = []
        for n in range(50):
            fired: asyncio.Future[float] = asyncio.get_running_loop().create_future()
            when = clock.now() + 0.002 + n * 0.00013  # at every fraction of a millisecond
            clock.call_at(when, lambda f=fired: f.set_result(clock.now()))
            times.append((when, await asyncio.wait_for(fired, 10)))
        return times

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        times = runner.run(body())
    assert all(fired_at >= when for when, fired_at in times)  # not early, and each fired


def test_the_clock_reads_the_asyncio_loops_own_time() -> None:
    clock = MonotonicClock()

    async def body() -> None:
        loop = asyncio.get_running_loop()
        before = loop.time()
        now = clock.now()
        assert before <= now <= loop.time()

    asyncio.run(body())


def test_a_simulation_jump_fires_what_it_reached_and_brings_the_rest_forward(
    on_loop: LoopRun,
) -> None:
    """Autoplay jumps the five-minute arrangement: a deadline set just before it, exactly five
    minutes ahead, fires at the jump, on either loop (uvloop's time counts whole milliseconds);
    one 50 ms beyond it fires 50 ms later, not five real minutes later."""
    clock = SimulationClock()

    async def body() -> tuple[list[str], float, float]:
        fired: list[str] = []
        later = asyncio.get_running_loop().create_future()
        for _ in range(20):  # each in the same millisecond as its jump, or not
            clock.call_at(clock.now() + 300.0, lambda: fired.append("deadline"))
            clock.jump(300.0)
        when = clock.now() + 300.05
        clock.call_at(when, lambda: later.set_result(clock.now()))
        clock.jump(300.0)
        fired_at = await asyncio.wait_for(later, 5)
        return fired, when, fired_at

    fired, when, fired_at = on_loop(body())
    assert fired == ["deadline"] * 20
    assert when <= fired_at < when + 5


def test_simulation_time_is_the_drivers_monotonic_time(on_loop: LoopRun) -> None:
    clock, drivers = SimulationClock(), MonotonicClock()

    async def body() -> None:
        clock.jump(12.5)
        before = drivers.now()
        now = clock.now() - clock.skipped
        assert before <= now <= drivers.now()

    on_loop(body())
