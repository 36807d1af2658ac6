"""The dice shaker: golden vectors, and the driver against the simulated shaker via `sim://`."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.clock import settle
from drivers.dice_shaker.driver import DiceInvalid, DiceShakerDriver, DiceThrown
from drivers.dice_shaker.messages import DiceResult, InvalidThrow, Shake
from drivers.events import CommandRefused, DeviceFault, DoorChanged, FaultCleared, LinkUp
from drivers.framing import ErrorKind, Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.link import LinkTiming
from drivers.messages import Message

TIMING = LinkTiming(poll_interval=3600.0)
MESSAGES = DiceShakerDriver.MESSAGES

GOLDEN: list[tuple[Role, int, Message, str]] = [
    (Role.HOST, 5, Shake(), "02 01 05 00 30 ab 17 03"),
    (Role.DEVICE, 6, DiceResult(12, (3, 6, 1, 4)), "02 81 06 06 c8 00 0c 10 23 06 01 04 65 68 03"),
    (Role.DEVICE, 7, InvalidThrow(13, 1, 2), "02 81 07 04 c9 00 0d 01 10 22 6f 51 03"),
    (Role.DEVICE, 8, InvalidThrow(14, 4, 0), "02 81 08 04 c9 00 0e 04 00 63 5f 03"),
]


@pytest.mark.parametrize("vector", GOLDEN, ids=[type(v[2]).__name__ + str(v[1]) for v in GOLDEN])
def test_golden_vectors_both_ways(vector: tuple[Role, int, Message, str]) -> None:
    role, seq, message, wire = vector
    data = bytes.fromhex(wire)
    assert FrameCodec(role, MESSAGES).send(message, seq, 1) == data
    peer = FrameCodec(Role.DEVICE if role is Role.HOST else Role.HOST, MESSAGES)
    for chunk in (data[:3], data[3:], b"\x00\x7f" + data + b"\xfe"):
        peer.receive_data(chunk)
    items = []
    while (item := peer.next_event()) is not None:
        items.append(item)
    assert [i for i in items if isinstance(i, Frame)] == [Frame(1, seq, message)] * 2


@given(st.integers(0, 255), st.tuples(*[st.integers(0, 255)] * 4))
def test_a_die_outside_1_to_6_is_a_bad_payload(number: int, dice: tuple[int, ...]) -> None:
    codec = FrameCodec(Role.HOST, MESSAGES)
    codec.receive_data(encode_frame(1, 1, DiceResult.CMD, bytes((0, number, *dice)), True))
    item = codec.next_event()
    if all(1 <= d <= 6 for d in dice):
        assert isinstance(item, Frame)
    else:
        assert isinstance(item, ProtocolError) and item.kind is ErrorKind.BAD_PAYLOAD


async def started(url: str) -> DiceShakerDriver:
    driver = DiceShakerDriver(url, timing=TIMING)
    assert await driver.start()
    assert isinstance(driver.pending_events()[0], LinkUp)
    return driver


async def throw(driver: DiceShakerDriver) -> Any:
    await driver.shake()
    return await asyncio.wait_for(driver.next_event(), 5)


def test_a_shake_reports_four_dice_reproducibly_by_seed(table: Any) -> None:
    async def throws(seed: int) -> list[Any]:
        driver = await started(table.url("dice_shaker", seed=seed))
        out = [await throw(driver) for _ in range(5)]
        await driver.close()
        return out

    first = asyncio.run(throws(7))
    assert first == asyncio.run(throws(7)) != asyncio.run(throws(8))
    for event in first:
        assert isinstance(event, DiceThrown) and len(event.dice) == 4
        assert all(1 <= d <= 6 for d in event.dice) and 4 <= event.total <= 24


def test_the_dice_are_fair_enough(table: Any) -> None:
    async def body() -> Counter[int]:
        driver = await started(table.url("dice_shaker", seed=99))
        faces: Counter[int] = Counter()
        for _ in range(300):
            event = await throw(driver)
            faces.update(event.dice)
        await driver.close()
        return faces

    faces = asyncio.run(body())
    expected = 1200 / 6
    statistic = sum((faces[f] - expected) ** 2 / expected for f in range(1, 7))
    assert statistic < 20.5  # chi-square, 5 degrees of freedom, p = 0.001


@pytest.mark.parametrize(
    ("fault", "die_named"),
    [
        ("die_tilted", True),
        ("dice_stacked", True),
        ("die_out_of_cup", True),
        ("short_shake", False),
        ("no_shake", False),
    ],
)
def test_an_invalid_throw_is_reported_and_the_next_shake_counts(
    table: Any, fault: str, die_named: bool
) -> None:
    async def body() -> None:
        driver = await started(table.url("dice_shaker", seed=1, fault=fault))
        invalid = await throw(driver)
        assert isinstance(invalid, DiceInvalid) and invalid.reason == fault
        assert (1 <= invalid.die <= 4) if die_named else invalid.die == 0
        assert isinstance(await throw(driver), DiceThrown)
        await driver.close()

    asyncio.run(body())


def test_a_die_pulled_out_mid_round_through_the_control_channel(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("dice_shaker", seed=2))
        assert isinstance(await throw(driver), DiceThrown)
        table.world.inject("dice_shaker", "die_out_of_cup")
        invalid = await throw(driver)
        assert isinstance(invalid, DiceInvalid) and invalid.reason == "die_out_of_cup"
        await driver.close()

    asyncio.run(body())


def test_reader_lost_is_a_fault_that_refuses_shakes_until_cleared(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("dice_shaker"))
        table.world.inject("dice_shaker", "reader_lost")
        fault = await asyncio.wait_for(driver.next_event(), 5)
        assert fault == DeviceFault("dice_shaker", "reader_lost", 4)
        with pytest.raises(CommandRefused) as refused:
            await driver.shake()
        assert refused.value.reason_name == "fault_active"
        await driver.clear_faults()  # the cause is still there: stays latched
        assert "reader_lost" in (await driver.status()).faults
        table.world.clear("dice_shaker", "reader_lost")
        await driver.clear_faults()
        cleared = await asyncio.wait_for(driver.next_event(), 5)
        assert cleared == FaultCleared("dice_shaker", "reader_lost", 4)
        assert isinstance(await throw(driver), DiceThrown)
        await driver.close()

    asyncio.run(body())


def test_a_detached_shaker_is_a_tamper_door_and_refuses_shakes(table: Any) -> None:
    async def body() -> None:
        driver = await started(table.url("dice_shaker"))
        table.world.inject("dice_shaker", "shaker_detached")
        opened = await asyncio.wait_for(driver.next_event(), 5)
        assert opened == DoorChanged("dice_shaker", "base", True)
        with pytest.raises(CommandRefused) as refused:
            await driver.shake()
        assert refused.value.reason_name == "door_open"
        table.world.clear("dice_shaker", "shaker_detached")
        await settle()
        assert driver.pending_events() == [DoorChanged("dice_shaker", "base", False)]
        await driver.close()

    asyncio.run(body())
