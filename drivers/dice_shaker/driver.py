"""The dice shaker's driver: SHAKE as a coroutine, DICE_RESULT and INVALID_THROW as `DiceThrown`
and `DiceInvalid`. Wire layout in `drivers.dice_shaker.messages`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from drivers.base import DeviceDriver
from drivers.dice_shaker.messages import (
    DICE_MESSAGES,
    DOOR_NAMES,
    FAULT_NAMES,
    DiceResult,
    InvalidReason,
    InvalidThrow,
    Shake,
)
from drivers.events import DriverEvent
from drivers.messages import COMMON_MESSAGES, DeviceEvent, Message, message_set


@dataclass(frozen=True, slots=True)
class DiceThrown(DriverEvent):
    """A valid throw: four dice, each 1-6. `total` is what the table counts seats with."""

    dice: tuple[int, int, int, int]

    @property
    def total(self) -> int:
        return sum(self.dice)


@dataclass(frozen=True, slots=True)
class DiceInvalid(DriverEvent):
    """A throw that does not count: shake again. `reason` is die_tilted, dice_stacked,
    die_out_of_cup, short_shake or no_shake; `die` 1-4 or 0."""

    reason: str
    die: int


class DiceShakerDriver(DeviceDriver):
    DEVICE: ClassVar[str] = "dice_shaker"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, DICE_MESSAGES)
    FAULTS: ClassVar[Mapping[int, str]] = FAULT_NAMES
    DOORS: ClassVar[Mapping[int, str]] = DOOR_NAMES

    async def shake(self) -> None:
        """Start a shake; returns when the device has accepted it. The throw arrives as a
        DiceThrown or DiceInvalid event."""
        await self._command(Shake())

    def _translate(self, event: DeviceEvent) -> Iterable[DriverEvent]:
        if isinstance(event, DiceResult):
            self._log.info("dice_shaker.dice_thrown", dice=list(event.dice))
            return [DiceThrown(self.name, event.dice)]
        if isinstance(event, InvalidThrow):
            try:
                reason = InvalidReason(event.reason).name.lower()
            except ValueError:
                reason = f"reason_{event.reason}"
            self._log.info("dice_shaker.throw_invalid", reason=reason, die=event.die)
            return [DiceInvalid(self.name, reason, event.die)]
        return super()._translate(event)
