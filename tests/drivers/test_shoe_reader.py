"""The shoe reader: golden vectors, fuzzed decoders, and the driver against the simulated shoe
through pyserial `sim://` (and once over a real pseudo-terminal)."""

from __future__ import annotations

import asyncio
import os
import tty
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from drivers.clock import ManualClock, MonotonicClock, settle
from drivers.crc import crc16_reference
from drivers.events import (
    CommandRefused,
    DeviceFault,
    DeviceRestarted,
    DoorChanged,
    DriverEvent,
    FaultCleared,
    LinkDown,
    LinkLost,
    LinkUp,
)
from drivers.framing import ErrorKind, Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.link import LinkTiming
from drivers.messages import Message
from drivers.shoe_reader.driver import (
    CardDrawn,
    CutCardReached,
    HandOpened,
    Misread,
    ShoeReaderDriver,
)
from drivers.shoe_reader.messages import (
    Arm,
    CardDrawnEvent,
    CutCardEvent,
    Disarm,
    HandOpenedEvent,
    MisreadEvent,
    ShoeMode,
    card_name,
)
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import Card, TableWorld, Tile, paigow_tiles

TIMING = LinkTiming(poll_interval=3600.0)
MESSAGES = ShoeReaderDriver.MESSAGES

# (role that sends it, seq, message, wire bytes): the table in docs/protocol-shoe-bell.md.
GOLDEN: list[tuple[Role, int, Message, str]] = [
    (Role.HOST, 9, Arm(0, 1), "02 01 09 10 22 40 00 01 0d 38 03"),
    (Role.HOST, 10, Arm(1, 0), "02 01 0a 10 22 40 01 00 c0 fa 03"),
    (Role.HOST, 11, Disarm(), "02 01 0b 00 41 de a0 03"),
    (
        Role.DEVICE,
        20,
        CardDrawnEvent(21, 1, 1, 0, 0),
        "02 81 14 07 d0 00 15 00 01 01 00 00 f7 0f 03",
    ),
    (
        Role.DEVICE,
        21,
        CardDrawnEvent(22, 2, 10, 3, 1),
        "02 81 15 07 d0 00 16 00 10 22 0a 10 23 01 78 f5 03",
    ),
    (
        Role.DEVICE,
        22,
        CardDrawnEvent(23, 3, 13, 1, 2),
        "02 81 16 07 d0 00 17 00 10 23 0d 01 10 22 29 bf 03",
    ),
    (
        Role.DEVICE,
        23,
        CardDrawnEvent(24, 4, 12, 2, 4),
        "02 81 17 07 d0 00 18 00 04 0c 10 22 04 d0 71 03",
    ),
    (Role.DEVICE, 24, MisreadEvent(25, 5), "02 81 18 04 d1 00 19 00 05 08 c1 03"),
    (Role.DEVICE, 25, CutCardEvent(26, 52), "02 81 19 04 d2 00 1a 00 34 21 50 03"),
    (
        Role.DEVICE,
        26,
        HandOpenedEvent(27, 1, 0, (0x66, 0x13, 0x45, 0x11)),
        "02 81 1a 08 d3 00 1b 01 00 66 13 45 11 87 eb 03",
    ),
    (
        Role.DEVICE,
        27,
        HandOpenedEvent(28, 2, 2, (0x36, 0x24, 0x55, 0x12)),
        "02 81 1b 08 d3 00 1c 10 22 10 22 36 24 55 12 ca 9b 03",
    ),
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
    peer.receive_data(b"\x55\x03\xff" + data + b"\x02\x01")
    items = drain(peer)
    assert items[0] == ProtocolError(ErrorKind.GARBAGE, b"\x55\x03\xff", detail="3 bytes")
    assert items[1:] == [expected]


@given(st.sampled_from([0xD0, 0xD1, 0xD2, 0xD3, 0x40]), st.binary(max_size=12))
def test_random_payloads_give_a_message_or_a_bad_payload(cmd: int, payload: bytes) -> None:
    codec = FrameCodec(Role.HOST if cmd >= 0x80 else Role.DEVICE, MESSAGES)
    codec.receive_data(encode_frame(1, 7, cmd, payload, cmd >= 0x80))
    (item,) = drain(codec)
    if isinstance(item, ProtocolError):
        assert item.kind is ErrorKind.BAD_PAYLOAD and item.seq == 7
    else:
        assert cmd == item.message.CMD
        assert item.message.encode_payload() == payload  # decoding is exact: it round-trips


@given(st.sampled_from([g for g in GOLDEN if g[0] is Role.DEVICE]), st.data())
def test_mutated_frames_only_ever_give_frames_or_protocol_errors(vector: Any, data: Any) -> None:
    wire = bytearray.fromhex(vector[3])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(wire) - 1))
        wire[at] = data.draw(st.integers(0, 255))
    codec = FrameCodec(Role.HOST, MESSAGES)
    codec.receive_data(bytes(wire) + bytes.fromhex(vector[3]))
    items = drain(codec)
    assert all(isinstance(i, Frame | ProtocolError) for i in items)
    assert isinstance(items[-1], Frame) and items[-1].message == vector[2]  # never lost after


# --- the driver against the simulated shoe ------------------------------------------------------


def run(test: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(test())


async def started(url: str, **kwargs: Any) -> ShoeReaderDriver:
    kwargs.setdefault("timing", TIMING)
    driver = ShoeReaderDriver(url, **kwargs)
    assert await driver.start()
    (up,) = [e for e in driver.pending_events() if isinstance(e, LinkUp)]
    assert up.identity.model == "SHOE-R8"
    return driver


async def draw(world: TableWorld, driver: ShoeReaderDriver) -> tuple[dict[str, Any], list[Any]]:
    result = world.dealer_draw()
    await settle()
    return result, driver.pending_events()


def test_the_shoe_deals_the_deck_the_shuffler_shuffled_after_the_cut(table: Any) -> None:
    async def body() -> None:
        shuffler = ShufflerDriver(table.url("shuffler", seed=5), timing=TIMING)
        assert await shuffler.start()
        await shuffler.shuffle()
        while not isinstance(await asyncio.wait_for(shuffler.next_event(), 5), ShuffleCompleted):
            pass
        table.world.cut(17)
        stack = list(table.world.items)
        driver = await started(table.url("shoe_reader"))
        await driver.arm(new_shoe=True)
        assert driver.armed
        drawn: list[CardDrawn] = []
        for _ in range(52):
            _, events = await draw(table.world, driver)
            drawn += events
        assert [e.sequence for e in drawn] == list(range(1, 53))
        assert [(e.rank, e.suit) for e in drawn] == [(c.rank, c.suit) for c in stack]
        assert not any(e.face_up or e.out_of_phase or e.duplicate for e in drawn)
        assert len({e.card for e in drawn}) == 52
        result, events = await draw(table.world, driver)
        assert result["reader"] == "empty" and events == []
        await shuffler.close()
        await driver.close()

    run(body)


def test_card_names_are_what_the_rules_engine_parses() -> None:
    assert [card_name(1, 0), card_name(10, 3), card_name(13, 1), card_name(2, 2)] == [
        "As",
        "Td",
        "Kh",
        "2c",
    ]


def test_a_card_drawn_while_disarmed_is_out_of_phase_and_latches(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        _, events = await draw(table.world, driver)
        first = table.world.items[0]
        assert events == [
            CardDrawn("shoe_reader", 1, first.rank, first.suit, False, True, False),
            DeviceFault("shoe_reader", "card_out_of_phase", 6),
        ]
        with pytest.raises(CommandRefused) as refused:
            await driver.arm()
        assert refused.value.reason_name == "fault_active"
        await driver.clear_faults()
        await settle()
        assert driver.pending_events() == [FaultCleared("shoe_reader", "card_out_of_phase", 6)]
        await driver.arm()
        _, events = await draw(table.world, driver)
        assert [type(e) for e in events] == [CardDrawn] and not events[0].out_of_phase
        await driver.disarm()
        _, events = await draw(table.world, driver)
        assert events[0].out_of_phase and events[1].kind == "card_out_of_phase"
        await driver.close()

    run(body)


def test_a_card_read_is_a_debug_line_and_a_faulty_card_a_warning_each_time(table: Any) -> None:
    """The journal is the record of each card: the operational log at info says nothing of an
    ordinary draw (52 lines a round). A card drawn out of phase is a warning every time, the
    second too while the fault it raised is latched (that fault's own line comes once). No line
    names a card (issue 9)."""

    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        await driver.arm(new_shoe=True)
        drawn: list[CardDrawn] = []
        with capture_logs() as logs:
            drawn += (await draw(table.world, driver))[1]
            await driver.disarm()
            drawn += (await draw(table.world, driver))[1]
            drawn += (await draw(table.world, driver))[1]
        reads = [
            (e["log_level"], e["out_of_phase"]) for e in logs if e["event"] == "shoe.card_read"
        ]
        assert reads == [("debug", False), ("warning", True), ("warning", True)]
        faults = [e["kind"] for e in logs if e["event"] == "device.fault"]
        assert faults == ["card_out_of_phase"]
        names = {e.card for e in drawn if isinstance(e, CardDrawn)}
        assert len(names) == 3
        assert not any(str(v) in names for e in logs for v in e.values())
        await driver.close()

    run(body)


@pytest.mark.parametrize(
    ("fault", "flags", "expected_fault"),
    [
        ("misread", None, DeviceFault("shoe_reader", "misread", 4)),
        ("face_up", (True, False, False), None),
        (
            "card_out_of_phase",
            (False, True, False),
            DeviceFault("shoe_reader", "card_out_of_phase", 6),
        ),
        ("duplicate_card", (False, False, True), DeviceFault("shoe_reader", "duplicate_card", 5)),
        ("cut_card", None, None),
    ],
)
def test_each_draw_fault_gives_its_driver_event(
    table: Any,
    fault: str,
    flags: tuple[bool, bool, bool] | None,
    expected_fault: DeviceFault | None,
) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        await driver.arm(new_shoe=True)
        _, (first,) = await draw(table.world, driver)
        table.world.inject("shoe_reader", fault)  # through the control channel, mid-deal
        _, events = await draw(table.world, driver)
        following = table.world.items[1]
        if fault == "misread":
            expected: list[DriverEvent] = [Misread("shoe_reader", 2)]
        elif fault == "cut_card":
            expected = [CutCardReached("shoe_reader", 1)]
        else:
            assert flags is not None
            rank, suit = (
                (first.rank, first.suit)
                if fault == "duplicate_card"
                else (following.rank, following.suit)
            )
            expected = [CardDrawn("shoe_reader", 2, rank, suit, *flags)]
        if expected_fault is not None:
            expected.append(expected_fault)
        assert events == expected
        await driver.close()

    run(body)


def test_the_shoe_removed_mid_deal_disarms_and_holds_until_rearmed(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        await driver.arm(new_shoe=True)
        _, events = await draw(table.world, driver)
        assert isinstance(events[0], CardDrawn)
        table.world.inject("shoe_reader", "shoe_removed")
        await settle()
        assert driver.pending_events() == [DoorChanged("shoe_reader", "shoe", True)]
        assert not driver.armed
        result, events = await draw(table.world, driver)
        assert result["reader"] == "shoe_removed" and events == []
        with pytest.raises(CommandRefused) as refused:
            await driver.arm()
        assert refused.value.reason_name == "door_open"
        table.world.clear("shoe_reader", "shoe_removed")  # put back
        await settle()
        assert driver.pending_events() == [DoorChanged("shoe_reader", "shoe", False)]
        _, events = await draw(table.world, driver)  # not re-armed yet: out of phase
        assert events[0].out_of_phase and events[1].kind == "card_out_of_phase"
        await driver.close()

    run(body)


def test_a_blocked_reader_is_a_fault_until_cleared(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        table.world.inject("shoe_reader", "reader_blocked")
        await settle()
        assert driver.pending_events() == [DeviceFault("shoe_reader", "reader_blocked", 7)]
        result, events = await draw(table.world, driver)
        assert result["reader"] == "blocked" and events == []
        await driver.clear_faults()  # still blocked: stays latched
        assert "reader_blocked" in (await driver.status()).faults
        table.world.clear("shoe_reader", "reader_blocked")
        await driver.clear_faults()
        await settle()
        assert driver.pending_events() == [FaultCleared("shoe_reader", "reader_blocked", 7)]
        await driver.arm()
        await driver.close()

    run(body)


def test_a_duplicate_the_reader_missed_is_caught_by_the_host(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        await driver.arm(new_shoe=True)
        _, first = await draw(table.world, driver)
        model = table.world.devices["shoe_reader"]
        with model.lock:
            model.seen.clear()  # the reader forgot (e.g. restarted) ...
            model.inject("duplicate_card")  # ... and a second copy comes out
        _, events = await draw(table.world, driver)
        assert events[0].duplicate and events[0].card == first[0].card
        assert events[1] == DeviceFault("shoe_reader", "duplicate_card", 0)
        await driver.close()

    run(body)


def test_tile_mode_reports_each_hand_by_pips(table: Any) -> None:
    async def body() -> None:
        table.world.replace_deck(paigow_tiles())
        stack = list(paigow_tiles())
        stack.reverse()
        table.world.load(stack)
        driver = await started(table.url("shoe_reader"))
        await driver.arm(ShoeMode.TILES, new_shoe=True)
        hands: list[HandOpened] = []
        for _ in range(8):
            _, events = await draw(table.world, driver)
            hands += events
        assert [h.hand for h in hands] == list(range(1, 9))
        names = [name for h in hands for name in h.tiles]
        assert names == [f"{min(t.top, t.bottom)}-{max(t.top, t.bottom)}" for t in stack]
        assert hands[-1].tiles[-1] == "6-6" and not any(h.out_of_phase for h in hands)
        result, events = await draw(table.world, driver)
        assert result["reader"] == "empty" and events == []
        await driver.close()

    run(body)


def test_bad_crc_frames_from_the_shoe_lose_no_card(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader", fault="bad_crc"))
        await driver.arm(new_shoe=True)
        drawn = []
        for _ in range(12):
            _, events = await draw(table.world, driver)
            drawn += events
        assert [e.sequence for e in drawn] == list(range(1, 13))
        counters = driver.link.counters
        assert counters.protocol_errors.get("crc", 0) >= 6
        assert counters.duplicates == 0 and counters.missed_events == 0
        await driver.close()

    run(body)


def test_no_response_takes_the_link_down_then_reconnects(table: Any) -> None:
    async def body() -> None:
        clock = ManualClock()
        driver = await started(table.url("shoe_reader"), clock=clock)
        await driver.arm()
        table.world.inject("shoe_reader", "no_response")
        command = asyncio.ensure_future(driver.status())
        for _ in range(3):
            await clock.advance(0.25)
        with pytest.raises(LinkLost):
            await command
        assert driver.pending_events()[-1] == LinkDown("shoe_reader", "no_response")
        await clock.advance(0.5)
        up, restarted = driver.pending_events()
        assert isinstance(up, LinkUp) and driver.link_up
        # the reader came back powered up, so disarmed: the table must arm it again
        assert restarted == DeviceRestarted("shoe_reader") and not driver.armed
        await driver.arm()
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
    world = TableWorld("pty-shoe", [Card(1, 0), Card(12, 3), Tile(6, 6)])

    async def body() -> None:
        loop = asyncio.get_running_loop()
        model = ShoeReaderModel(
            world=world,
            scheduler=MonotonicClock(loop),
            output=lambda data: os.write(master, data) and None,
        )
        loop.add_reader(master, lambda: model.receive_data(os.read(master, 4096)))
        driver = ShoeReaderDriver(path, timing=TIMING)
        assert await driver.start()
        assert [type(e) for e in driver.pending_events()] == [LinkUp]
        await driver.arm(new_shoe=True)
        events: list[DriverEvent] = []
        for count in (1, 1, 2):  # the tile in a card shoe is a misread, with its fault
            world.dealer_draw()
            for _ in range(count):
                events.append(await asyncio.wait_for(driver.next_event(), 5))
        assert [type(e) for e in events] == [CardDrawn, CardDrawn, Misread, DeviceFault]
        assert [e.card for e in events[:2] if isinstance(e, CardDrawn)] == ["As", "Qd"]
        assert driver.link.counters.protocol_errors == {}
        await driver.close()
        loop.remove_reader(master)
        model.close()

    run(body)


# --- the contract, against the simulator and (with -m hardware) a real reader ------------------


def hardware_port(device: str) -> str | None:
    spec = os.environ.get("TABLED_HARDWARE_PORTS", "")
    ports = dict(item.strip().partition("=")[::2] for item in spec.split(",") if item)
    return ports.get(device)


@pytest.mark.parametrize("where", ["sim", pytest.param("hardware", marks=pytest.mark.hardware)])
def test_contract_arm_and_disarm(where: str, table: Any) -> None:
    """A reader answers its identity and status, and accepts ARM and DISARM. On hardware no
    card is drawn: a person at the table would have to draw it."""
    url = table.url("shoe_reader") if where == "sim" else hardware_port("shoe_reader")
    if url is None:
        pytest.skip("no shoe_reader in TABLED_HARDWARE_PORTS")
    baudrate = int(os.environ.get("TABLED_HARDWARE_BAUD", "115200"))

    async def body() -> None:
        driver = ShoeReaderDriver(url, baudrate=baudrate, timing=TIMING)
        assert await driver.start()
        status = await driver.status()
        assert "shoe" not in status.doors_open, "put the shoe in its base"
        await driver.arm(ShoeMode.CARDS, new_shoe=True)
        await driver.disarm()
        await driver.arm(ShoeMode.TILES, new_shoe=True)
        await driver.disarm()
        assert driver.link.counters.protocol_errors == {}
        await driver.close()

    run(body)


def test_a_mode_the_reader_does_not_have_is_refused_before_anything_is_sent(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("shoe_reader"))
        sent = driver.link.counters.frames_sent
        with pytest.raises(ValueError, match="ShoeMode"):
            await driver.arm(mode=5)  # type: ignore[arg-type]  # what a caller might pass
        assert driver.link.counters.frames_sent == sent and not driver.armed
        await driver.arm(mode=ShoeMode.TILES)
        assert driver.armed and driver.mode is ShoeMode.TILES
        await driver.close()

    run(body)
