"""The card shoe reader's wire messages (and its Pai Gow tile mode): pure, shared with its
simulator.

Wire messages (docs/protocol-shoe-bell.md, "Shoe reader"; common messages in `drivers.messages`):

- ARM 0x40, host -> device, payload mode (u8: 0 cards, 1 tiles), new_shoe (u8: 0 or 1; 1
  restarts the draw sequence at 1, for a freshly loaded shoe). The reader reports draws as in
  phase from now on. ACK, or NAK DOOR_OPEN (the shoe is out of its base) or FAULT_ACTIVE.
- DISARM 0x41, host -> device, no payload. ACK. Draws from now on are out of phase.
- CARD_DRAWN 0xD0, device -> host event: number (u16), sequence (u16, 1.. since the shoe was
  loaded), rank (u8, 1 ace .. 13 king), suit (u8, 0 spades, 1 hearts, 2 clubs, 3 diamonds),
  flags (u8: bit 0 face up, bit 1 out of phase, bit 2 duplicate; other bits 0).
- MISREAD 0xD1, device -> host event: number (u16), sequence (u16; the hand number in tile
  mode). A card or tile went past the reader unread.
- CUT_CARD_REACHED 0xD2, device -> host event: number (u16), sequence (u16, the cards drawn
  before the cut card came out).
- HAND_OPENED 0xD3, device -> host event (tile mode): number (u16), hand (u8, 1-8 in the order
  the croupier opens them), flags (u8: bit 1 out of phase), then four tiles, one byte each: the
  high nibble the lower pip count, the low nibble the higher, each 1-6 (so 6-6 is 0x66 and 1-3
  is 0x13: the hex reads as the pips).

Fault codes: 1 power_lost, 2 hardware, 3 memory, 4 misread, 5 duplicate_card, 6
card_out_of_phase, 7 reader_blocked. Misread, duplicate and out-of-phase are reported by the
draw's own event (MISREAD, the CARD_DRAWN flags) and latched in STATUS; reader_blocked by
FAULT_RAISED. Door bit 0 is the shoe: open while it is out of its base. Removing the shoe
disarms the reader; after it is put back the host re-arms it (with new_shoe if it was
reloaded), so no card drawn from a shoe that was out of sight is taken as in phase.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import ClassVar, Self

from drivers.messages import (
    COMMON_FAULT_NAMES,
    DeviceEvent,
    Kind,
    Message,
    PayloadError,
    unpack_exact,
)

_ARM = struct.Struct(">BB")
_DRAWN = struct.Struct(">HHBBB")
_SEQUENCE = struct.Struct(">HH")
_HAND = struct.Struct(">HBB4B")

RANK_NAMES = "A23456789TJQK"  # index rank - 1
SUIT_NAMES = "shcd"  # index the wire suit
TILES_PER_HAND = 4


class ShoeMode(IntEnum):
    CARDS = 0
    TILES = 1


class DrawFlag(IntFlag):
    FACE_UP = 0x01
    OUT_OF_PHASE = 0x02
    DUPLICATE = 0x04


_DRAW_FLAGS = int(DrawFlag.FACE_UP | DrawFlag.OUT_OF_PHASE | DrawFlag.DUPLICATE)


class ShoeFault(IntEnum):
    MISREAD = 4
    DUPLICATE_CARD = 5
    CARD_OUT_OF_PHASE = 6
    READER_BLOCKED = 7


SHOE = 0  # door bit: the shoe is out of its base


def card_name(rank: int, suit: int) -> str:
    """The short name the rules engine parses (`As`, `Td`, `Kh`)."""
    return RANK_NAMES[rank - 1] + SUIT_NAMES[suit]


def tile_name(pips: int) -> str:
    """`6-6` for the byte 0x66."""
    return f"{pips >> 4}-{pips & 0x0F}"


def tile_byte(low: int, high: int) -> int:
    return (low << 4) | high


# --- messages -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Arm(Message):
    CMD: ClassVar[int] = 0x40
    KIND: ClassVar[Kind] = "command"
    mode: int = ShoeMode.CARDS
    new_shoe: int = 0

    def encode_payload(self) -> bytes:
        return _ARM.pack(self.mode, self.new_shoe)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        mode, new_shoe = unpack_exact(_ARM, payload, "ARM")
        if mode > ShoeMode.TILES or new_shoe > 1:
            raise PayloadError(f"ARM: mode {mode} (0-1) or new_shoe {new_shoe} (0-1)")
        return cls(mode, new_shoe)


@dataclass(frozen=True, slots=True)
class Disarm(Message):
    CMD: ClassVar[int] = 0x41
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class CardDrawnEvent(DeviceEvent):
    """CARD_DRAWN on the wire (the driver's fact is `CardDrawn`)."""

    CMD: ClassVar[int] = 0xD0
    sequence: int
    rank: int
    suit: int
    flags: int = 0

    def encode_payload(self) -> bytes:
        return _DRAWN.pack(self.number, self.sequence, self.rank, self.suit, self.flags)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, sequence, rank, suit, flags = unpack_exact(_DRAWN, payload, "CARD_DRAWN")
        if not 1 <= rank <= 13 or suit > 3 or flags & ~_DRAW_FLAGS:
            raise PayloadError(f"CARD_DRAWN: rank {rank}, suit {suit}, flags 0x{flags:02X}")
        return cls(number, sequence, rank, suit, flags)


@dataclass(frozen=True, slots=True)
class MisreadEvent(DeviceEvent):
    CMD: ClassVar[int] = 0xD1
    sequence: int

    def encode_payload(self) -> bytes:
        return _SEQUENCE.pack(self.number, self.sequence)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(*unpack_exact(_SEQUENCE, payload, "MISREAD"))


@dataclass(frozen=True, slots=True)
class CutCardEvent(DeviceEvent):
    CMD: ClassVar[int] = 0xD2
    sequence: int

    def encode_payload(self) -> bytes:
        return _SEQUENCE.pack(self.number, self.sequence)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(*unpack_exact(_SEQUENCE, payload, "CUT_CARD_REACHED"))


@dataclass(frozen=True, slots=True)
class HandOpenedEvent(DeviceEvent):
    CMD: ClassVar[int] = 0xD3
    hand: int
    flags: int
    tiles: tuple[int, int, int, int]  # tile bytes, see tile_byte

    def encode_payload(self) -> bytes:
        return _HAND.pack(self.number, self.hand, self.flags, *self.tiles)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, hand, flags, a, b, c, d = unpack_exact(_HAND, payload, "HAND_OPENED")
        tiles = (a, b, c, d)
        if not 1 <= hand <= 8 or flags & ~int(DrawFlag.OUT_OF_PHASE):
            raise PayloadError(f"HAND_OPENED: hand {hand} (1-8), flags 0x{flags:02X}")
        for tile in tiles:
            low, high = tile >> 4, tile & 0x0F
            if not 1 <= low <= high <= 6:
                raise PayloadError(f"HAND_OPENED: 0x{tile:02X} is not a tile")
        return cls(number, hand, flags, tiles)


SHOE_MESSAGES: tuple[type[Message], ...] = (
    Arm,
    Disarm,
    CardDrawnEvent,
    MisreadEvent,
    CutCardEvent,
    HandOpenedEvent,
)


# Fault code -> name, door bit -> name: what the driver reports and the simulator accepts.
FAULT_NAMES: Mapping[int, str] = {
    **COMMON_FAULT_NAMES,
    **{f.value: f.name.lower() for f in ShoeFault},
}
DOOR_NAMES: Mapping[int, str] = {SHOE: "shoe"}
