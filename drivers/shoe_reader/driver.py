"""The shoe reader's driver: ARM and DISARM as coroutines; each draw, misread, cut card and opened
hand as a driver event (with the faults a draw reports). Wire layout in
`drivers.shoe_reader.messages`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.base import DeviceDriver
from drivers.events import DeviceFault, DriverEvent
from drivers.messages import COMMON_MESSAGES, DeviceEvent, DoorReport, Message, Status, message_set
from drivers.shoe_reader.messages import (
    DOOR_NAMES,
    FAULT_NAMES,
    SHOE,
    SHOE_MESSAGES,
    Arm,
    CardDrawnEvent,
    CutCardEvent,
    Disarm,
    DrawFlag,
    HandOpenedEvent,
    MisreadEvent,
    ShoeFault,
    ShoeMode,
    card_name,
    tile_name,
)

_MODE_NAMES = {mode: mode.name.lower() for mode in ShoeMode}  # no Enum .name lookup an arm
_FACE_UP = int(DrawFlag.FACE_UP)
_OUT_OF_PHASE = int(DrawFlag.OUT_OF_PHASE)
_DUPLICATE = int(DrawFlag.DUPLICATE)


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
    FAULTS: ClassVar[Mapping[int, str]] = FAULT_NAMES
    DOORS: ClassVar[Mapping[int, str]] = DOOR_NAMES

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
        # debug: the table logs every command it sends (table.device_command) and journals
        # what follows; an info line here said it twice, at the cost of the exchange itself
        self._log.debug("shoe.armed", mode=_MODE_NAMES[mode], new_shoe=new_shoe)

    async def disarm(self) -> None:
        """Dealing is not allowed from now on: any draw is reported out of phase."""
        self.armed = False
        await self._command(Disarm())
        self._log.debug("shoe.disarmed")

    # The reader disarms itself when the shoe leaves its base; so does our idea of it, whether
    # the removal arrives as its own event or is first seen in a status report.
    def _on_device_event(self, event: DeviceEvent) -> None:
        if type(event) is CardDrawnEvent:  # 52 a Thirteen round: straight to its facts
            for fact in self._card_drawn(event):
                self._emit(fact)
            return
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
        flags = event.flags  # an int: DrawFlag's bits read as ints (52 a round, no IntFlag)
        seen = self._seen
        key = (event.rank, event.suit)
        device_duplicate = bool(flags & _DUPLICATE)
        host_duplicate = key in seen and not device_duplicate
        seen.add(key)
        out_of_phase = bool(flags & _OUT_OF_PHASE)
        drawn = CardDrawn(
            self.name,
            event.sequence,
            event.rank,
            event.suit,
            bool(flags & _FACE_UP),
            out_of_phase,
            device_duplicate or host_duplicate,
        )
        # No card value in the operational log: whoever reads the PC's logs during play must not
        # learn a face-down card (issue 9). The journal, private to the daemon, keeps it, and is
        # the record of each card: the line is debug (52 a Thirteen round were most of the
        # operational log at info, and of its cost). A card out of phase or a duplicate is a
        # warning, each one, even while its fault is latched (the fault's line comes once).
        if not (out_of_phase or drawn.duplicate):
            self._log.debug(
                "shoe.card_read",
                sequence=event.sequence,
                face_up=drawn.face_up,
                out_of_phase=False,
                duplicate=False,
            )
            return [drawn]
        self._log.warning(
            "shoe.card_read",
            sequence=event.sequence,
            face_up=drawn.face_up,
            out_of_phase=out_of_phase,
            duplicate=drawn.duplicate,
        )
        out: list[DriverEvent | None] = [drawn]
        if out_of_phase:
            out.append(self._fault(ShoeFault.CARD_OUT_OF_PHASE))
        if device_duplicate:
            out.append(self._fault(ShoeFault.DUPLICATE_CARD))
        elif host_duplicate:
            # The reader did not notice; the host did. Code 0: the device has nothing latched.
            self._log.error("device.fault", kind="duplicate_card", code=0, sequence=event.sequence)
            out.append(DeviceFault(self.name, "duplicate_card", 0))
        return [item for item in out if item is not None]
