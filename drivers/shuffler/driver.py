"""The card shuffler's driver: START_SHUFFLE as a coroutine, SHUFFLE_DONE as `ShuffleCompleted`
(with the faults a result reports). Wire layout in `drivers.shuffler.messages`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from drivers.base import DeviceDriver
from drivers.events import DriverEvent
from drivers.messages import COMMON_MESSAGES, DeviceEvent, Message, message_set
from drivers.shuffler.messages import (
    DOOR_NAMES,
    FAULT_NAMES,
    SHUFFLER_MESSAGES,
    ShuffleDone,
    ShuffleMode,
    ShufflerFault,
    StartShuffle,
    mode_name,
)


@dataclass(frozen=True, slots=True)
class ShuffleCompleted(DriverEvent):
    """A shuffle finished. `count` is what the device delivered: the table compares it with the
    game's deck (52 for Thirteen, DOMAIN R1); a DeviceFault("wrong_count") accompanies it when
    it differs from the count the shuffle was started with."""

    count: int
    expected: int
    unreadable: int
    foreign: int
    mode: str = "random"  # "random"; anything else ("sort", "mode_7") is a sort_mode fault


class ShufflerDriver(DeviceDriver):
    DEVICE: ClassVar[str] = "shuffler"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(
        COMMON_MESSAGES, SHUFFLER_MESSAGES
    )
    FAULTS: ClassVar[Mapping[int, str]] = FAULT_NAMES
    DOORS: ClassVar[Mapping[int, str]] = DOOR_NAMES

    _expected = 52

    async def shuffle(self, expected: int = 52) -> None:
        """Start a shuffle; returns when the device has accepted it. The result arrives as a
        ShuffleCompleted event (tens of seconds later on a real machine)."""
        if not 1 <= expected <= 255:
            raise ValueError(f"expected count {expected}: 1-255 cards")
        self._expected = expected
        await self._command(StartShuffle(expected))

    def _translate(self, event: DeviceEvent) -> Iterable[DriverEvent]:
        if not isinstance(event, ShuffleDone):
            return super()._translate(event)
        mode = mode_name(event.mode)
        out: list[DriverEvent | None] = [
            ShuffleCompleted(
                self.name, event.count, self._expected, event.unreadable, event.foreign, mode
            )
        ]
        self._log.info(
            "shuffler.shuffle_completed",
            count=event.count,
            expected=self._expected,
            unreadable=event.unreadable,
            foreign=event.foreign,
            mode=mode,
        )
        if event.count != self._expected:
            out.append(self._fault(ShufflerFault.WRONG_COUNT))
        if event.foreign:
            out.append(self._fault(ShufflerFault.FOREIGN_CARD))
        if event.unreadable:
            out.append(self._fault(ShufflerFault.UNREADABLE_CARD))
        if event.mode != ShuffleMode.RANDOM:
            out.append(self._fault(ShufflerFault.SORT_MODE))
        return [item for item in out if item is not None]
