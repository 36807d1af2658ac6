"""Each device's adapter, looked up by kind as the table does: what its driver events mean to
the procedure (and which faults a result already reports), with the generic adapter for a
device that has none of its own. The whole path through the table is in tests/table."""

from __future__ import annotations

import pytest

from drivers.adapter import DeviceAdapter, ProcedureInput, adapter_class
from drivers.base import driver_class
from drivers.dice_shaker.driver import DiceInvalid, DiceThrown
from drivers.events import DeviceFault, DoorChanged, EventsMissed, LinkDown
from drivers.shoe_reader.driver import CardDrawn, Misread
from drivers.shuffler.driver import ShuffleCompleted
from drivers.timer_bell.driver import TimerExpired

ACTIONS = frozenset({"card_read", "shuffle_completed", "dice_landed", "fault_reported"})


def adapter(device: str, actions: frozenset[str] = ACTIONS) -> DeviceAdapter:
    driver = driver_class(device)(f"sim://{device}?seed=1")
    return adapter_class(device)(driver, actions)


def test_every_registered_device_has_its_own_adapter() -> None:
    for device in ("shuffler", "dice_shaker", "shoe_reader", "timer_bell"):
        cls = adapter_class(device)
        assert cls is not DeviceAdapter and issubclass(cls, DeviceAdapter), device
    assert adapter_class("smoke_detector") is DeviceAdapter


def test_the_facts_every_device_shares() -> None:
    bell = adapter("timer_bell")
    assert bell.input_for(LinkDown("timer_bell", "no_response")) == ProcedureInput(
        "link_lost", {"device": "timer_bell", "reason": "no_response"}
    )
    assert bell.input_for(DeviceFault("timer_bell", "bell_failed", 4)) == ProcedureInput(
        "fault_reported", {"device": "timer_bell", "fault": "bell_failed"}
    )
    assert bell.input_for(DoorChanged("timer_bell", "lid", True)) == ProcedureInput(
        "door_opened", {"device": "timer_bell", "fault": "lid open"}
    )
    assert bell.input_for(DoorChanged("timer_bell", "lid", False)) is None
    assert bell.input_for(EventsMissed("timer_bell", 2)).payload == {  # type: ignore[union-attr]
        "device": "timer_bell",
        "fault": "2 device event(s) missed",
    }
    # The bell is told, never asked: its expiry is not an input.
    assert bell.input_for(TimerExpired("timer_bell")) is None
    # An unapproved build is judged with the identity, not as a fault.
    assert bell.input_for(DeviceFault("timer_bell", "unapproved_firmware", 0)) is None


def test_a_shuffle_result_is_judged_once() -> None:
    shuffler = adapter("shuffler")
    done = ShuffleCompleted("shuffler", 51, 52, 0, 0, "random")
    assert shuffler.input_for(done) == ProcedureInput(
        "shuffle_completed", {"count": 51, "mode": "random", "unreadable": 0, "foreign": 0}
    )
    assert shuffler.input_for(DeviceFault("shuffler", "wrong_count", 7)) is None
    assert shuffler.input_for(DeviceFault("shuffler", "jam", 4)) is not None


def test_dice_valid_and_invalid() -> None:
    dice = adapter("dice_shaker")
    assert dice.input_for(DiceThrown("dice_shaker", (1, 2, 3, 4))) == ProcedureInput(
        "dice_landed", {"dice": [1, 2, 3, 4], "valid": True}
    )
    assert dice.input_for(DiceInvalid("dice_shaker", "die_tilted", 2)) == ProcedureInput(
        "dice_landed", {"valid": False, "reason": "die_tilted", "die": 2}
    )


@pytest.mark.parametrize("tilted", [True, False])
def test_a_card_fault_the_procedure_tilted_on_is_not_fed_again(tilted: bool) -> None:
    shoe = adapter("shoe_reader")
    duplicate = CardDrawn("shoe_reader", 7, 1, 0, False, False, True)
    item = shoe.input_for(duplicate)
    assert item == ProcedureInput("card_read", {"card": "As", "face_up": False, "index": 7})
    shoe.taken(item, tilted=tilted)
    fault = DeviceFault("shoe_reader", "duplicate_card", 5)
    assert (shoe.input_for(fault) is None) is tilted
    # Only the one fault that follows the read: the next is fed.
    assert shoe.input_for(fault) is not None


def test_the_shoe_reads_misreads_only_for_a_procedure_that_takes_cards() -> None:
    assert adapter("shoe_reader").input_for(Misread("shoe_reader", 9)) == ProcedureInput(
        "card_read", {"misread": True, "index": 9}
    )
    assert (
        adapter("shoe_reader", frozenset({"dice_landed"})).input_for(Misread("shoe_reader", 9))
        is None
    )
    out_of_phase = CardDrawn("shoe_reader", 8, 1, 0, False, True, False)
    assert adapter("shoe_reader").input_for(out_of_phase) is None
