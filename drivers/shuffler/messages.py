"""The card shuffler's wire messages: pure (no I/O, no asyncio), shared with its simulator.

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
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar, Self

from drivers.messages import (
    COMMON_FAULT_NAMES,
    DeviceEvent,
    Kind,
    Message,
    PayloadError,
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


# Fault code -> name, door bit -> name: what the driver reports and the simulator accepts.
FAULT_NAMES: Mapping[int, str] = {
    **COMMON_FAULT_NAMES,
    **{f.value: f.name.lower() for f in ShufflerFault},
}
DOOR_NAMES: Mapping[int, str] = {LID: "lid"}


def mode_name(mode: int) -> str:
    try:
        return ShuffleMode(mode).name.lower()
    except ValueError:
        return f"mode_{mode}"
