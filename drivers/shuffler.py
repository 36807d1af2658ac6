"""The card shuffler: its message set and its driver.

Wire messages (docs/protocol.md, "Shuffler"; common messages in `drivers.messages`):

- START_SHUFFLE 0x20, host -> device, payload `expected` (u8, 52 for Thirteen). The device
  answers ACK when the shuffle has begun, or NAK BUSY (a shuffle is running: shuffles cannot be
  interrupted), DOOR_OPEN (lid open) or FAULT_ACTIVE (a latched fault). There is no mode in the
  command: the host never asks for a sorted or sequenced deck (DOMAIN R2).
- SHUFFLE_DONE 0xC0, device -> host event: number (u16), count (u8, cards delivered), unreadable
  (u8, cards set aside unread), foreign (u8, cards set aside as not of this deck), mode (u8, 0 =
  random; anything else means the device ran a sort or sequence program). The card order is
  never sent.

Fault codes (FAULT_RAISED / STATUS.faults bits): 1 power_lost, 2 hardware, 3 memory, 4 jam,
5 foreign_card, 6 unreadable_card, 7 wrong_count, 8 sort_mode. Doors: bit 0 the lid. Wrong
count, foreign, unreadable and sort mode are reported by SHUFFLE_DONE itself (and latched in
STATUS); jam and power loss by FAULT_RAISED.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar, Self

from drivers.base import COMMON_FAULT_NAMES, DeviceDriver, DriverEvent
from drivers.messages import (
    COMMON_MESSAGES,
    DeviceEvent,
    Kind,
    Message,
    PayloadError,
    message_set,
    unpack_exact,
)

_U8 = struct.Struct(">B")
_DONE = struct.Struct(">HBBBB")


class ShufflerFault(IntEnum):
    JAM = 4
    FOREIGN_CARD = 5
    UNREADABLE_CARD = 6
    WRONG_COUNT = 7
    SORT_MODE = 8


class ShuffleMode(IntEnum):
    RANDOM = 0
    SORT = 1


LID = 0


@dataclass(frozen=True, slots=True)
class StartShuffle(Message):
    CMD: ClassVar[int] = 0x20
    KIND: ClassVar[Kind] = "command"
    expected: int = 52

    def encode_payload(self) -> bytes:
        return _U8.pack(self.expected)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        (expected,) = unpack_exact(_U8, payload, "START_SHUFFLE")
        if expected == 0:
            raise PayloadError("START_SHUFFLE: expected count 0")
        return cls(expected)


@dataclass(frozen=True, slots=True)
class ShuffleDone(DeviceEvent):
    CMD: ClassVar[int] = 0xC0
    count: int
    unreadable: int = 0
    foreign: int = 0
    mode: int = ShuffleMode.RANDOM

    def encode_payload(self) -> bytes:
        return _DONE.pack(self.number, self.count, self.unreadable, self.foreign, self.mode)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(*unpack_exact(_DONE, payload, "SHUFFLE_DONE"))


SHUFFLER_MESSAGES: tuple[type[Message], ...] = (StartShuffle, ShuffleDone)


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


def mode_name(mode: int) -> str:
    try:
        return ShuffleMode(mode).name.lower()
    except ValueError:
        return f"mode_{mode}"


class ShufflerDriver(DeviceDriver):
    DEVICE: ClassVar[str] = "shuffler"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(
        COMMON_MESSAGES, SHUFFLER_MESSAGES
    )
    FAULTS: ClassVar[Mapping[int, str]] = {
        **COMMON_FAULT_NAMES,
        **{f.value: f.name.lower() for f in ShufflerFault},
    }
    DOORS: ClassVar[Mapping[int, str]] = {LID: "lid"}

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
