"""The electronic dice shaker's wire messages (four dice, 骰盅/骰宝): pure, shared with its
simulator.

Wire messages (docs/protocol.md, "Dice shaker"; common messages in `drivers.messages`):

- SHAKE 0x30, host -> device, no payload. ACK when the shake has begun; NAK BUSY, DOOR_OPEN
  (shaker detached from its base) or FAULT_ACTIVE (reader lost).
- DICE_RESULT 0xC8, device -> host event: number (u16), then the four dice (u8 each, 1-6) in
  the reader's fixed die order. A die value outside 1-6 is a malformed payload.
- INVALID_THROW 0xC9, device -> host event: number (u16), reason (u8: 1 die tilted, 2 dice
  stacked, 3 die out of the cup, 4 short shake, 5 no shake), die (u8: 1-4, 0 when no single
  die is at fault). The table shakes again (Portaria 15/90/M Art. 2(5): 翘骰或骰跌盅外 -> 再摇);
  repeated invalid throws are the table's to escalate (DOMAIN R10), not the driver's.

Fault codes: 1 power_lost, 2 hardware, 3 memory, 4 reader_lost. Doors: bit 0 the dome, bit 1
the base (set while the shaker is detached from the table: tamper, DOMAIN R6).
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

_RESULT = struct.Struct(">HBBBB")
_INVALID = struct.Struct(">HBB")


class DiceFault(IntEnum):
    READER_LOST = 4


class InvalidReason(IntEnum):
    DIE_TILTED = 1
    DICE_STACKED = 2
    DIE_OUT_OF_CUP = 3
    SHORT_SHAKE = 4
    NO_SHAKE = 5


DOME = 0
BASE = 1


@dataclass(frozen=True, slots=True)
class Shake(Message):
    CMD: ClassVar[int] = 0x30
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class DiceResult(DeviceEvent):
    CMD: ClassVar[int] = 0xC8
    dice: tuple[int, int, int, int]

    def encode_payload(self) -> bytes:
        return _RESULT.pack(self.number, *self.dice)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, a, b, c, d = unpack_exact(_RESULT, payload, "DICE_RESULT")
        dice = (a, b, c, d)
        if not all(1 <= die <= 6 for die in dice):
            raise PayloadError(f"DICE_RESULT: a die outside 1-6: {dice}")
        return cls(number, dice)


@dataclass(frozen=True, slots=True)
class InvalidThrow(DeviceEvent):
    CMD: ClassVar[int] = 0xC9
    reason: int
    die: int = 0

    def encode_payload(self) -> bytes:
        return _INVALID.pack(self.number, self.reason, self.die)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, reason, die = unpack_exact(_INVALID, payload, "INVALID_THROW")
        if die > 4:
            raise PayloadError(f"INVALID_THROW: die {die} (1-4, or 0)")
        return cls(number, reason, die)


DICE_MESSAGES: tuple[type[Message], ...] = (Shake, DiceResult, InvalidThrow)


# Fault code -> name, door bit -> name: what the driver reports and the simulator accepts.
FAULT_NAMES: Mapping[int, str] = {
    **COMMON_FAULT_NAMES,
    **{f.value: f.name.lower() for f in DiceFault},
}
DOOR_NAMES: Mapping[int, str] = {DOME: "dome", BASE: "base"}
