"""Every fault every simulator knows, injected each way the issue names (by `sim://` URL, by
the control channel at run time, by `tabled sim --fault`), gives the driver event a table
expects. The fault lists are read from the models, so a fault added to a simulator without an
expectation here fails `test_every_fault_has_an_expectation`."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from daemon.cli.sim import _specs
from daemon.config import ApprovedFirmware
from drivers.base import DeviceDriver
from drivers.dice_shaker.driver import DiceInvalid, DiceShakerDriver, DiceThrown
from drivers.events import DeviceError, DeviceFault, DoorChanged, DriverEvent, LinkDown, LinkUp
from drivers.link import LinkTiming
from drivers.shoe_reader.driver import CardDrawn, CutCardReached, Misread, ShoeReaderDriver
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from drivers.timer_bell.driver import BellRang, TimerBellDriver
from simulators.base import SIM_MAKE, firmware_digest
from simulators.control import handle_control
from simulators.spec import model_class

TIMING = LinkTiming(
    reply_timeout=0.02, tries=2, poll_interval=3600.0, reconnect_initial=0.01, reconnect_max=0.02
)
DEVICES = ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")
Check = Callable[[DriverEvent], bool]


def fault(kind: str) -> Check:
    return lambda e: isinstance(e, DeviceFault) and e.kind == kind


def door(name: str) -> Check:
    return lambda e: isinstance(e, DoorChanged) and e.door == name and e.open


def invalid(reason: str) -> Check:
    return lambda e: isinstance(e, DiceInvalid) and e.reason == reason


NORMAL: dict[str, Check] = {
    "shuffler": lambda e: isinstance(e, ShuffleCompleted) and e.count == 52,
    "dice_shaker": lambda e: isinstance(e, DiceThrown),
    "shoe_reader": lambda e: isinstance(e, CardDrawn),
    "timer_bell": lambda e: isinstance(e, BellRang),
}
EXPECTED: dict[tuple[str, str], Check] = {
    ("shuffler", "jam"): fault("jam"),
    ("shuffler", "wrong_count"): lambda e: isinstance(e, ShuffleCompleted) and e.count == 51,
    ("shuffler", "foreign_card"): fault("foreign_card"),
    ("shuffler", "unreadable_card"): fault("unreadable_card"),
    ("shuffler", "power_lost"): fault("power_lost"),
    ("shuffler", "lid_open"): door("lid"),
    ("shuffler", "sort_mode"): fault("sort_mode"),
    ("dice_shaker", "die_tilted"): invalid("die_tilted"),
    ("dice_shaker", "dice_stacked"): invalid("dice_stacked"),
    ("dice_shaker", "die_out_of_cup"): invalid("die_out_of_cup"),
    ("dice_shaker", "short_shake"): invalid("short_shake"),
    ("dice_shaker", "no_shake"): invalid("no_shake"),
    ("dice_shaker", "reader_lost"): fault("reader_lost"),
    ("dice_shaker", "shaker_detached"): door("base"),
    ("shoe_reader", "misread"): lambda e: isinstance(e, Misread),
    ("shoe_reader", "duplicate_card"): lambda e: isinstance(e, CardDrawn) and e.duplicate,
    ("shoe_reader", "face_up"): lambda e: isinstance(e, CardDrawn) and e.face_up,
    ("shoe_reader", "card_out_of_phase"): fault("card_out_of_phase"),
    ("shoe_reader", "cut_card"): lambda e: isinstance(e, CutCardReached),
    ("shoe_reader", "shoe_removed"): door("shoe"),
    ("shoe_reader", "reader_blocked"): fault("reader_blocked"),
    ("timer_bell", "double_start"): fault("double_start"),
    ("timer_bell", "power_lost"): fault("power_lost"),
    ("timer_bell", "bell_failed"): fault("bell_failed"),
}
for _device in DEVICES:
    EXPECTED[(_device, "unapproved_firmware")] = fault("unapproved_firmware")
    EXPECTED[(_device, "no_response")] = lambda e: isinstance(e, LinkDown)
    EXPECTED[(_device, "bad_crc")] = NORMAL[_device]  # and the CRC errors counted, below
    # Another unit of the approved build: approved, with its own serial (read at connect).
    EXPECTED[(_device, "replaced")] = lambda e: (
        isinstance(e, LinkUp) and e.approved is True and e.identity.serial.endswith("-R")
    )

CASES = [(device, name) for device in DEVICES for name in sorted(model_class(device).fault_names())]
DRIVERS: dict[str, type[DeviceDriver]] = {
    "shuffler": ShufflerDriver,
    "dice_shaker": DiceShakerDriver,
    "shoe_reader": ShoeReaderDriver,
    "timer_bell": TimerBellDriver,
}


def approved(device: str) -> list[ApprovedFirmware]:
    cls = model_class(device)
    digest = firmware_digest(cls.MODEL, cls.FIRMWARE).hex()
    return [ApprovedFirmware(SIM_MAKE, cls.MODEL, cls.FIRMWARE, digest)]


def test_every_fault_has_an_expectation() -> None:
    assert {case for case in CASES} == set(EXPECTED)


async def operate(driver: DeviceDriver, world: Any, fault_name: str) -> None:
    """What the table does next with the device: one ordinary operation."""
    try:
        if isinstance(driver, ShufflerDriver):
            await driver.shuffle(52)
        elif isinstance(driver, DiceShakerDriver):
            await driver.shake()
        elif isinstance(driver, ShoeReaderDriver):
            await driver.arm(new_shoe=True)
        elif isinstance(driver, TimerBellDriver):
            if fault_name == "bell_failed":
                await driver.ring()
            else:
                await driver.start_timer(4, 1)
    except DeviceError:
        pass
    if isinstance(driver, ShoeReaderDriver):
        for _ in range(2):  # a duplicate needs a card before it
            assert handle_control(world, {"op": "draw"})["ok"]


async def scenario(table: Any, device: str, name: str, by: str) -> list[DriverEvent]:
    url = table.url(device, seed=3) + (f"&fault={name}" if by == "url" else "")
    driver = DRIVERS[device](url, approved=approved(device), timing=TIMING)
    up = await driver.start()
    if by == "url" and name == "no_response":
        await driver.close()
        assert not up  # it never answered: no LinkUp, and reconnection keeps trying
        return []
    events: list[DriverEvent] = driver.pending_events()
    if by == "control":
        assert handle_control(table.world, {"op": "inject", "device": device, "fault": name}) == {
            "ok": True
        }
        if name in ("unapproved_firmware", "replaced"):  # identity is read at connect
            handle_control(table.world, {"op": "unplug", "device": device})
            with pytest.raises(DeviceError):
                await driver.status()  # the next exchange finds the cable out
            handle_control(table.world, {"op": "plug", "device": device})
            while not isinstance(event := await asyncio.wait_for(driver.next_event(), 2), LinkUp):
                events.append(event)
            events.append(event)
    if up or by == "control":
        await operate(driver, table.world, name)
    check = EXPECTED[(device, name)]
    try:
        while not any(check(e) for e in events):
            events.append(await asyncio.wait_for(driver.next_event(), 2))
    except TimeoutError:
        pass
    finally:
        await driver.close()
    if name == "bad_crc":
        assert driver.link.counters.protocol_errors.get("crc", 0) > 0
    assert any(check(e) for e in events), events
    return events


@pytest.mark.parametrize(("device", "name"), CASES, ids=[f"{d}:{n}" for d, n in CASES])
@pytest.mark.parametrize("by", ["url", "control"])
def test_a_fault_gives_its_driver_event(table: Any, device: str, name: str, by: str) -> None:
    asyncio.run(scenario(table, device, name, by))


def test_tabled_sim_fault_option_reaches_each_model(tmp_path: Any) -> None:
    """`tabled sim --fault DEVICE:FAULT` gives the model the same faults as the URL does."""
    config = tmp_path / "table.toml"
    config.write_text(
        "[table]\nid = 'T9'\n" + "".join(f"[devices.{d}]\nport = 'sim://{d}'\n" for d in DEVICES)
    )
    args = argparse.Namespace(
        config=str(config),
        seed=None,
        speed=0.0,
        fault=[f"{device}:{name}" for device, name in CASES],
    )
    _, specs = _specs(args)
    assert {(s.device, f) for s in specs for f in s.faults} == set(CASES)


def test_tabled_sim_seed_gives_each_device_its_own_stream(tmp_path: Any) -> None:
    config = tmp_path / "table.toml"
    config.write_text(
        "[table]\nid = 'T9'\n" + "".join(f"[devices.{d}]\nport = 'sim://{d}'\n" for d in DEVICES)
    )
    args = argparse.Namespace(config=str(config), seed=4, speed=0.0, fault=[])
    _, specs = _specs(args)
    assert [s.seed for s in specs] == [4, 5, 6, 7]
