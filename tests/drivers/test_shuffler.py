"""The shuffler driver against the simulated shuffler, through pyserial `sim://`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from structlog.testing import capture_logs

from daemon.config import ApprovedFirmware
from drivers.clock import ManualClock, settle
from drivers.events import (
    CommandRefused,
    DeviceFault,
    DeviceRestarted,
    DoorChanged,
    DriverEvent,
    EventsMissed,
    FaultCleared,
    LinkDown,
    LinkLost,
    LinkUp,
    NotApproved,
)
from drivers.framing import Frame, FrameCodec, Role
from drivers.link import LinkTiming
from drivers.messages import GetStatus, Identify, Identity, NakReason, Status
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from drivers.shuffler.messages import ShuffleDone, StartShuffle
from simulators.base import firmware_digest
from simulators.shuffler import ShufflerModel

TIMING = LinkTiming(reply_timeout=0.2, tries=3, poll_interval=3600.0, reconnect_initial=0.5)


def run(test: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(test())


async def started(url: str, **kwargs: Any) -> ShufflerDriver:
    kwargs.setdefault("timing", TIMING)
    driver = ShufflerDriver(url, **kwargs)
    assert await driver.start()
    return driver


async def events_until(driver: ShufflerDriver, kind: type[DriverEvent]) -> list[DriverEvent]:
    out: list[DriverEvent] = []
    while not out or not isinstance(out[-1], kind):
        out.append(await asyncio.wait_for(driver.next_event(), 5))
    return out


def test_a_shuffle_reports_52_and_deals_the_world_a_shuffled_deck(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler", seed=3))
        (up,) = driver.pending_events()
        assert isinstance(up, LinkUp) and up.identity.model == "SHUF-52"
        before = table.world.collect()
        await driver.shuffle(expected=52)
        events = await events_until(driver, ShuffleCompleted)
        assert events == [ShuffleCompleted("shuffler", 52, 52, 0, 0)]
        assert table.world.generation == 1
        assert sorted(table.world.items) == sorted(before) and table.world.items != before
        assert driver.link.counters.protocol_errors == {}
        await driver.close()

    run(body)


def test_the_same_seed_gives_the_same_order(table: Any) -> None:
    async def order(url: str) -> list[Any]:
        # The same cards in (the world collects the stack as last dealt): a new deck each time.
        table.world.load(list(table.world.deck))
        driver = await started(url)
        await driver.shuffle()
        await events_until(driver, ShuffleCompleted)
        await driver.close()
        return list(table.world.items)

    first = run(lambda: order(table.url("shuffler", seed=11)))
    second = run(lambda: order(table.url("shuffler", seed=11)))
    other = run(lambda: order(table.url("shuffler", seed=12)))
    assert first == second != other


@pytest.mark.parametrize(
    ("fault", "result", "kind"),
    [
        ("wrong_count", (51, 0, 0), "wrong_count"),
        ("foreign_card", (52, 0, 1), "foreign_card"),
        ("unreadable_card", (51, 1, 0), "unreadable_card"),
        ("sort_mode", (52, 0, 0), "sort_mode"),
    ],
)
def test_faults_reported_with_the_shuffle_result(
    table: Any, fault: str, result: tuple[int, int, int], kind: str
) -> None:
    count, unreadable, foreign = result

    async def body() -> None:
        driver = await started(table.url("shuffler", seed=1, fault=fault))
        driver.pending_events()
        await driver.shuffle()
        completed = await asyncio.wait_for(driver.next_event(), 5)
        mode = "sort" if fault == "sort_mode" else "random"
        assert completed == ShuffleCompleted("shuffler", count, 52, unreadable, foreign, mode)
        await settle()
        faults = [e.kind for e in driver.pending_events() if isinstance(e, DeviceFault)]
        assert kind in faults
        # latched: the next shuffle is refused until a supervisor clears it
        with pytest.raises(CommandRefused) as refused:
            await driver.shuffle()
        assert refused.value.reason == NakReason.FAULT_ACTIVE
        status = await driver.status()
        assert kind in status.faults
        assert driver.pending_events() == []  # the status poll does not report it twice
        await driver.close()

    run(body)


def test_a_sort_mode_shuffle_is_not_random(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler", fault="sort_mode"))
        await driver.shuffle()
        await events_until(driver, DeviceFault)
        assert table.world.items == sorted(table.world.items)
        await driver.close()

    run(body)


def test_a_jam_is_a_fault_with_no_result_and_clears_once_fixed(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler", fault="jam"))
        driver.pending_events()
        await driver.shuffle()
        assert await asyncio.wait_for(driver.next_event(), 5) == DeviceFault("shuffler", "jam", 4)
        await driver.clear_faults()
        assert await asyncio.wait_for(driver.next_event(), 5) == FaultCleared("shuffler", "jam", 4)
        await driver.shuffle()
        assert isinstance(await asyncio.wait_for(driver.next_event(), 5), ShuffleCompleted)
        await driver.close()

    run(body)


def test_an_open_lid_is_a_door_and_refuses_a_shuffle(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler", fault="lid_open"))
        events = driver.pending_events()
        assert DoorChanged("shuffler", "lid", True) in events
        with pytest.raises(CommandRefused) as refused:
            await driver.shuffle()
        assert refused.value.reason_name == "door_open"
        table.world.clear("shuffler", "lid_open")  # the control channel: the dealer closes it
        assert await asyncio.wait_for(driver.next_event(), 5) == DoorChanged(
            "shuffler", "lid", False
        )
        await driver.shuffle()
        await events_until(driver, ShuffleCompleted)
        await driver.close()

    run(body)


def test_power_lost_mid_shuffle_gives_no_result_and_a_latched_fault(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler", fault="power_lost"))
        driver.pending_events()
        await driver.shuffle()
        fault = await asyncio.wait_for(driver.next_event(), 5)
        assert fault == DeviceFault("shuffler", "power_lost", 1)
        status = await driver.status()
        assert status.powered_up and "power_lost" in status.faults and not status.busy
        assert driver.pending_events() == [DeviceRestarted("shuffler")]
        assert not (await driver.status()).powered_up
        assert driver.pending_events() == []  # reported once
        assert table.world.generation == 0  # no shuffled deck reached the shoe
        await driver.close()

    run(body)


def test_bad_crc_frames_are_naked_counted_and_recovered(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler", fault="bad_crc"))
        for _ in range(5):
            await driver.status()
        await driver.shuffle()
        await events_until(driver, ShuffleCompleted)
        counters = driver.link.counters
        assert counters.protocol_errors.get("crc", 0) >= 3
        assert counters.naks_sent == sum(counters.protocol_errors.values())
        await driver.close()

    run(body)


def test_unapproved_firmware_is_reported_and_the_device_stays_disabled(table: Any) -> None:
    digest = firmware_digest(ShufflerModel.MODEL, ShufflerModel.FIRMWARE).hex()
    approved = [ApprovedFirmware("tabled-sim", "SHUF-52", ShufflerModel.FIRMWARE, digest)]

    async def body() -> None:
        good = await started(table.url("shuffler"), approved=approved)
        assert good.approved is True
        await good.close()
        driver = await started(
            table.url("shuffler", fault="unapproved_firmware"), approved=approved
        )
        up, fault = driver.pending_events()[:2]
        assert isinstance(up, LinkUp) and up.approved is False
        assert fault == DeviceFault("shuffler", "unapproved_firmware", 0)
        with pytest.raises(NotApproved):
            await driver.shuffle()
        assert (await driver.identify()).firmware.endswith("-unsigned")
        await driver.close()

    run(body)


def test_no_response_takes_the_link_down_after_the_tries_then_it_reconnects(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        driver = await started(table.url("shuffler"), clock=clock)
        driver.pending_events()
        table.world.inject("shuffler", "no_response")
        command = asyncio.ensure_future(driver.status())
        await settle()
        assert driver.link.counters.frames_sent == 3  # identify, status, this one
        await clock.advance(0.25)
        await clock.advance(0.25)
        assert driver.link.counters.retransmits == 2 and not command.done()
        await clock.advance(0.25)
        with pytest.raises(LinkLost):
            await command
        assert driver.pending_events() == [LinkDown("shuffler", "no_response")]
        with pytest.raises(LinkLost):
            await driver.shuffle()
        await clock.advance(0.5)  # the first reconnect: a power-cycled, answering device
        up, restarted = driver.pending_events()
        assert isinstance(up, LinkUp) and driver.link_up
        assert restarted == DeviceRestarted("shuffler")
        await driver.close()

    run(body)


def test_an_unplugged_port_is_retried_with_growing_backoff(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        driver = await started(table.url("shuffler"), clock=clock)
        driver.pending_events()
        table.world.unplug("shuffler")
        with pytest.raises(LinkLost):
            await driver.status()
        (down,) = driver.pending_events()
        assert isinstance(down, LinkDown) and down.reason.startswith("port_lost")
        await clock.advance(0.5 + 1.0 + 2.0)  # three failed attempts
        assert not driver.link_up
        table.world.plug("shuffler")
        await clock.advance(3.9)
        assert not driver.link_up  # the next attempt is due 4 s after the last
        await clock.advance(0.1)
        assert driver.link_up
        assert isinstance(driver.pending_events()[0], LinkUp)
        await driver.close()

    run(body)


def test_status_polling_notices_a_fault_whose_event_was_lost(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        timing = LinkTiming(poll_interval=1.0)
        driver = await started(table.url("shuffler"), clock=clock, timing=timing)
        driver.pending_events()
        model = table.world.devices["shuffler"]
        with model.lock:
            model.latched |= 1 << 4  # latched with no FAULT_RAISED: as if the event was lost
        await clock.advance(1.0)
        assert driver.pending_events() == [DeviceFault("shuffler", "jam", 4)]
        await driver.close()

    run(body)


def test_status_polling_notices_events_that_never_arrived(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        driver = await started(table.url("shuffler"), clock=clock, timing=LinkTiming())
        driver.pending_events()
        model = table.world.devices["shuffler"]
        with model.lock:
            model._event_counter += 2  # two events generated and lost before reaching us
        await clock.advance(1.0)
        assert driver.pending_events() == [EventsMissed("shuffler", 2)]
        assert driver.link.counters.missed_events == 2
        await driver.close()

    run(body)


def test_protocol_errors_are_logged_and_the_tap_sees_every_byte(table: Any) -> None:
    traffic: list[tuple[str, bytes]] = []

    async def body() -> None:
        url = table.url("shuffler", fault="bad_crc")
        driver = await started(url, tap=lambda direction, data: traffic.append((direction, data)))
        await driver.status()
        await driver.close()

    with capture_logs() as logs:
        run(body)
    errors = [entry for entry in logs if entry["event"] == "device.protocol_error"]
    assert errors and errors[0]["kind"] == "crc" and errors[0]["log_level"] == "warning"
    sent = b"".join(data for direction, data in traffic if direction == "tx")
    device = FrameCodec(Role.DEVICE, ShufflerDriver.MESSAGES)
    device.receive_data(sent)
    frames = []
    while (item := device.next_event()) is not None:
        frames.append(item)
    assert [type(f.message).__name__ for f in frames if isinstance(f, Frame)][:3] == [
        "Identify",
        "Nak",
        "GetStatus",
    ]


def test_a_latched_fault_and_an_open_lid_survive_a_reconnect(table: Any) -> None:
    """A reopened `sim://` port is a power-cycled device: its latched faults (non-volatile,
    DOMAIN R5) and its lid stay as they were, so a link that flaps never heals a jam."""

    async def body() -> None:
        clock = ManualClock()
        driver = await started(table.url("shuffler", fault="jam"), clock=clock)
        await driver.shuffle()
        await events_until(driver, DeviceFault)
        table.world.inject("shuffler", "lid_open")
        table.world.inject("shuffler", "no_response")
        command = asyncio.ensure_future(driver.status())
        await settle()
        for _ in range(3):
            await clock.advance(0.25)
        with pytest.raises(LinkLost):
            await command
        await clock.advance(0.5)  # reconnected to the power-cycled device
        assert driver.link_up
        events = driver.pending_events()
        assert not any(isinstance(e, FaultCleared) for e in events), events
        status = await driver.status()
        assert status.faults == ("jam",) and status.doors_open == ("lid",)
        with pytest.raises(CommandRefused):
            await driver.shuffle()
        await driver.close()

    run(body)


def test_a_status_poll_that_changes_nothing_walks_no_fault_or_door_bit(table: Any) -> None:
    """Every device is polled every second: the usual, quiet STATUS must cost next to nothing
    (bench/bench_link.py), while a changed one is still reconciled bit by bit."""

    walked: list[int] = []

    class Counting(ShufflerDriver):
        def _door(self, door: int, is_open: bool) -> None:
            walked.append(door)
            super()._door(door, is_open)

        def _fault(self, code: int) -> DriverEvent | None:
            walked.append(code)
            return super()._fault(code)

    async def body() -> None:
        driver = Counting(table.url("shuffler"), timing=TIMING)
        assert await driver.start()
        driver.pending_events()
        walked.clear()
        for _ in range(3):
            await driver.status()
        assert walked == []
        model = table.world.devices["shuffler"]
        with model.lock:  # changed with no event: only STATUS shows them
            model.latched |= 1 << 4
            model.doors |= 1 << 0
        await driver.status()
        assert driver.pending_events() == [
            DeviceFault("shuffler", "jam", 4),
            DoorChanged("shuffler", "lid", True),
        ]
        await driver.close()

    run(body)


def test_a_pulled_cable_takes_the_link_down_at_once(table: Any) -> None:
    """As a tty's read fails when its USB adapter goes, with no command or poll pending."""

    async def body() -> None:
        driver = await started(table.url("shuffler"))  # polling off
        driver.pending_events()
        table.world.unplug("shuffler")
        down = await asyncio.wait_for(driver.next_event(), 2)
        assert isinstance(down, LinkDown) and down.reason.startswith("port_lost")
        assert "unplugged" in down.reason
        table.world.plug("shuffler")
        assert isinstance(await asyncio.wait_for(driver.next_event(), 2), LinkUp)
        await driver.close()

    run(body)


def test_an_event_sent_while_connecting_is_reported_after_link_up() -> None:
    """A device with an event queued may send it between IDENTITY and STATUS: the table must
    still see LinkUp first, and the event (already acknowledged) must not be lost."""

    class Device:
        def __init__(self, on_data: Callable[[bytes], None]) -> None:
            self.codec = FrameCodec(Role.DEVICE, ShufflerDriver.MESSAGES)
            self.on_data = on_data

        def write(self, data: bytes) -> None:
            self.codec.receive_data(data)
            while (frame := self.codec.next_event()) is not None:
                assert isinstance(frame, Frame)
                message = frame.message
                out = b""
                if isinstance(message, Identify):
                    identity = Identity("m", "SHUF-52", "1", "2.3.1", bytes(32))
                    out = self.codec.send(identity, frame.seq, 1)
                    out += self.codec.send(ShuffleDone(7, 52), 9, 1)  # queued since before
                elif isinstance(message, GetStatus):
                    out = self.codec.send(Status(0, 0, 0, 7, 0), frame.seq, 1)
                if out:
                    asyncio.get_running_loop().call_soon(self.on_data, out)

        def close(self) -> None:
            pass

    async def opener(
        url: str, baudrate: int, on_data: Callable[[bytes], None], on_lost: Any
    ) -> Device:
        return Device(on_data)

    async def body() -> None:
        driver = ShufflerDriver("scripted://", timing=TIMING, opener=opener)
        assert await driver.start()
        events = driver.pending_events()
        assert [type(e) for e in events] == [LinkUp, ShuffleCompleted], events
        await driver.close()

    run(body)


def test_a_count_the_wire_cannot_carry_is_a_clear_error_and_the_link_carries_on(
    table: Any,
) -> None:
    async def body() -> None:
        driver = await started(table.url("shuffler"))
        for expected in (0, 256, -1):
            with pytest.raises(ValueError, match="1-255"):
                await driver.shuffle(expected)
        # below the driver's own checks, a value no payload can carry fails its own command
        with pytest.raises(ValueError, match="StartShuffle"):
            await driver._command(StartShuffle(300))
        await driver.shuffle(52)
        await events_until(driver, ShuffleCompleted)
        await driver.close()

    run(body)


def test_a_noisy_line_is_counted_in_full_and_logged_at_most_once_a_second(table: Any) -> None:
    async def body() -> int:
        clock = ManualClock()
        driver = await started(table.url("shuffler"), clock=clock)
        for _ in range(500):
            driver._on_data(b"\x55\x02\x01")  # garbage, then a frame cut short by the next
        await clock.advance(1.0)
        driver._on_data(b"\x55")
        counted = sum(driver.link.counters.protocol_errors.values())
        await driver.close()
        return counted

    with capture_logs() as logs:
        counted = asyncio.run(body())
    lines = [entry for entry in logs if entry["event"] == "device.protocol_error"]
    assert counted >= 500
    assert len(lines) == 2 and lines[0]["not_logged_before"] == 0
    assert lines[1]["not_logged_before"] == counted - 2
