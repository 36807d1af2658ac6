"""The card shoe reader (and its Pai Gow tile mode): its message set and its driver.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any, ClassVar, Self

from drivers.base import COMMON_FAULT_NAMES, DeviceDriver, DeviceFault, DriverEvent
from drivers.messages import (
    COMMON_MESSAGES,
    DeviceEvent,
    DoorReport,
    Kind,
    Message,
    PayloadError,
    Status,
    message_set,
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


# --- driver events ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardDrawn(DriverEvent):
    """A card left the shoe and was read. `sequence` counts draws since the shoe was loaded.
    A face-up card stays valid (Thirteen Art. 4) and is only flagged. An out-of-phase or
    duplicate card comes with a DeviceFault of that kind."""

    sequence: int
    rank: int  # 1 ace .. 13 king
    suit: int  # 0 spades, 1 hearts, 2 clubs, 3 diamonds
    face_up: bool
    out_of_phase: bool
    duplicate: bool

    @property
    def card(self) -> str:
        return card_name(self.rank, self.suit)


@dataclass(frozen=True, slots=True)
class Misread(DriverEvent):
    """A card (or, in tile mode, a hand) went past the reader unread: the deal cannot be
    trusted; a DeviceFault("misread") accompanies it."""

    sequence: int


@dataclass(frozen=True, slots=True)
class CutCardReached(DriverEvent):
    sequence: int  # the cards drawn before the cut card


@dataclass(frozen=True, slots=True)
class HandOpened(DriverEvent):
    """Tile mode: the croupier opened hand `hand`; its four tiles by pips (`6-6`)."""

    hand: int
    tiles: tuple[str, ...]
    out_of_phase: bool


class ShoeReaderDriver(DeviceDriver):
    DEVICE: ClassVar[str] = "shoe_reader"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, SHOE_MESSAGES)
    FAULTS: ClassVar[Mapping[int, str]] = {
        **COMMON_FAULT_NAMES,
        **{f.value: f.name.lower() for f in ShoeFault},
    }
    DOORS: ClassVar[Mapping[int, str]] = {SHOE: "shoe"}

    def __init__(self, port: str, **kwargs: Any) -> None:
        super().__init__(port, **kwargs)
        self.armed = False
        self.mode = ShoeMode.CARDS
        self._seen: set[tuple[int, int]] = set()  # cards read since the shoe was loaded

    async def arm(self, mode: ShoeMode = ShoeMode.CARDS, new_shoe: bool = False) -> None:
        """Dealing is allowed from now on; returns when the reader has accepted it."""
        mode = ShoeMode(mode)  # ValueError for a mode the reader does not have
        await self._command(Arm(mode, int(new_shoe)))
        self.armed, self.mode = True, mode
        if new_shoe:
            self._seen.clear()
        self._log.info("shoe.armed", mode=self.mode.name.lower(), new_shoe=new_shoe)

    async def disarm(self) -> None:
        """Dealing is not allowed from now on: any draw is reported out of phase."""
        self.armed = False
        await self._command(Disarm())
        self._log.info("shoe.disarmed")

    # The reader disarms itself when the shoe leaves its base; so does our idea of it, whether
    # the removal arrives as its own event or is first seen in a status report.
    def _on_device_event(self, event: DeviceEvent) -> None:
        if isinstance(event, DoorReport) and event.door == SHOE and event.open:
            self.armed = False
        super()._on_device_event(event)

    def _restarted(self) -> None:
        self.armed = False  # a reader that restarted comes up disarmed
        super()._restarted()

    def _reconcile(self, status: Status) -> None:
        if status.doors & (1 << SHOE):
            self.armed = False
        super()._reconcile(status)

    def _translate(self, event: DeviceEvent) -> Iterable[DriverEvent]:
        if isinstance(event, CardDrawnEvent):
            return self._card_drawn(event)
        if isinstance(event, MisreadEvent):
            self._log.warning("shoe.misread", sequence=event.sequence)
            out: list[DriverEvent | None] = [Misread(self.name, event.sequence)]
            out.append(self._fault(ShoeFault.MISREAD))
            return [item for item in out if item is not None]
        if isinstance(event, CutCardEvent):
            self._log.info("shoe.cut_card_reached", sequence=event.sequence)
            return [CutCardReached(self.name, event.sequence)]
        if isinstance(event, HandOpenedEvent):
            tiles = tuple(tile_name(t) for t in event.tiles)
            late = bool(event.flags & DrawFlag.OUT_OF_PHASE)
            self._log.info(
                "shoe.hand_opened", hand=event.hand, tiles=list(tiles), out_of_phase=late
            )
            out = [HandOpened(self.name, event.hand, tiles, late)]
            if late:
                out.append(self._fault(ShoeFault.CARD_OUT_OF_PHASE))
            return [item for item in out if item is not None]
        return super()._translate(event)

    def _card_drawn(self, event: CardDrawnEvent) -> list[DriverEvent]:
        flags = DrawFlag(event.flags)
        seen = self._seen
        key = (event.rank, event.suit)
        device_duplicate = DrawFlag.DUPLICATE in flags
        host_duplicate = key in seen and not device_duplicate
        seen.add(key)
        drawn = CardDrawn(
            self.name,
            event.sequence,
            event.rank,
            event.suit,
            DrawFlag.FACE_UP in flags,
            DrawFlag.OUT_OF_PHASE in flags,
            device_duplicate or host_duplicate,
        )
        self._log.info(
            "shoe.card_read",
            card=drawn.card,
            sequence=event.sequence,
            face_up=drawn.face_up,
            out_of_phase=drawn.out_of_phase,
            duplicate=drawn.duplicate,
        )
        out: list[DriverEvent | None] = [drawn]
        if drawn.out_of_phase:
            out.append(self._fault(ShoeFault.CARD_OUT_OF_PHASE))
        if device_duplicate:
            out.append(self._fault(ShoeFault.DUPLICATE_CARD))
        elif host_duplicate:
            # The reader did not notice; the host did. Code 0: the device has nothing latched.
            self._log.error("device.fault", kind="duplicate_card", code=0, card=drawn.card)
            out.append(DeviceFault(self.name, "duplicate_card", 0))
        return [item for item in out if item is not None]
