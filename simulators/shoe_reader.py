"""A simulated card shoe reader, dealing from the table world's stack.

The dealer's hand is the world's control channel: `world.dealer_draw()` slides the next card
out of the shoe (in tile mode it opens the next hand of four tiles), this model reads it and
reports it, and the result comes back as a dict for the test or trainer that drew:

    {"drawn": {"rank": 1, "suit": 0}, "reader": "read", "sequence": 1}

`reader` is "read", "misread", "cut_card" (the cut card came out, nothing was dealt),
"empty", "blocked" or "shoe_removed" (no card could come out). Cards come from the stack the
simulated shuffler left in the world (after the cut), so the shoe deals the deck that was
shuffled.

A reader that misreads at random is an option of the URL: `misread=200` lets one card in 200
(each card with probability 1/200, from the model's RNG) go past unread, as the one-shot fault
does.

Faults: one-shot `misread` (the next card goes past unread), `duplicate_card` (the next card
out is a second copy of the last card read), `face_up` (the next card comes out face up),
`card_out_of_phase` (the next draw is out of phase, as if the reader had been disarmed),
`cut_card` (the cut card sits in front of the next card); conditions `shoe_removed` (the shoe
is out of its base: door open, the reader disarms), `reader_blocked` (the shoe's mouth is
obstructed: FAULT_RAISED, no card comes out), and the common `no_response`, `bad_crc`,
`unapproved_firmware`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from drivers.messages import COMMON_MESSAGES, Ack, Message, Nak, message_set
from drivers.shoe_reader.messages import (
    DOOR_NAMES as WIRE_DOOR_NAMES,
)
from drivers.shoe_reader.messages import (
    FAULT_NAMES as WIRE_FAULT_NAMES,
)
from drivers.shoe_reader.messages import (
    SHOE,
    SHOE_MESSAGES,
    TILES_PER_HAND,
    Arm,
    CardDrawnEvent,
    CutCardEvent,
    Disarm,
    DrawFlag,
    HandOpenedEvent,
    MisreadEvent,
    ShoeFault,
    ShoeMode,
    tile_byte,
)
from simulators.base import DeviceModel
from simulators.world import Card, Item, Tile


def describe(item: Item) -> dict[str, int]:
    if isinstance(item, Card):
        return {"rank": item.rank, "suit": item.suit}
    return {"top": item.top, "bottom": item.bottom}


class ShoeReaderModel(DeviceModel):
    DEVICE: ClassVar[str] = "shoe_reader"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, SHOE_MESSAGES)
    MODEL: ClassVar[str] = "SHOE-R8"
    FIRMWARE: ClassVar[str] = "4.0.2"
    FAULT_NAMES: ClassVar[Mapping[int, str]] = WIRE_FAULT_NAMES
    DOOR_NAMES: ClassVar[Mapping[int, str]] = WIRE_DOOR_NAMES
    ONE_SHOT: ClassVar[frozenset[str]] = frozenset(
        {"misread", "duplicate_card", "face_up", "card_out_of_phase", "cut_card"}
    )
    CONDITIONS: ClassVar[frozenset[str]] = frozenset({"shoe_removed", "reader_blocked"})
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"misread"})
    misread_one_in: int | None = None

    @classmethod
    def parse_options(cls, options: Mapping[str, str]) -> int | None:
        super().parse_options(options)
        if "misread" not in options:
            return None
        text = options["misread"]
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"misread={text}: one card in N, N a whole number >= 1")
        return int(text)

    def configure(self, options: int | None) -> None:
        self.misread_one_in = options

    def __init__(self, **kwargs: Any) -> None:
        self.shoe_armed = False
        self.mode = ShoeMode.CARDS
        self.sequence = 0  # cards drawn since the shoe was loaded
        self.hands = 0  # hands opened since the tiles were loaded
        self.seen: set[Item] = set()
        self.last_read: Item | None = None
        super().__init__(**kwargs)
        self.world.set_draw_handler(self.dealer_draw)

    def close(self) -> None:
        super().close()
        with self.lock:
            if self.DEVICE not in self.world.devices:
                self.world.set_draw_handler(None)

    # --- host commands --------------------------------------------------------------------

    def handle(self, message: Message) -> Message:
        if isinstance(message, Arm):
            refusal = self.refusal()
            if refusal is not None:
                return Nak(refusal)
            self.shoe_armed = True
            self.mode = ShoeMode(message.mode)
            if message.new_shoe:
                self.sequence = self.hands = 0
                self.seen.clear()
                self.last_read = None
            return Ack()
        if isinstance(message, Disarm):
            self.shoe_armed = False
            return Ack()
        return super().handle(message)

    def on_condition(self, fault: str, active: bool) -> None:
        if fault == "shoe_removed":
            if active:
                self.shoe_armed = False
            self.set_door(SHOE, active)
        elif fault == "reader_blocked" and active:
            self.raise_fault(ShoeFault.READER_BLOCKED)

    def active_causes(self) -> set[int]:
        return {ShoeFault.READER_BLOCKED} if "reader_blocked" in self.conditions else set()

    # --- the dealer -----------------------------------------------------------------------

    def dealer_draw(self) -> dict[str, Any]:
        """The dealer draws the next card (tile mode: opens the next hand)."""
        with self.lock:
            try:
                if "shoe_removed" in self.conditions:
                    return {"drawn": None, "reader": "shoe_removed"}
                if "reader_blocked" in self.conditions:
                    return {"drawn": None, "reader": "blocked"}
                if self.mode is ShoeMode.TILES:
                    return self._open_hand()
                return self._draw_card()
            finally:
                self._drain()

    def _in_phase(self) -> bool:
        spoilt = self.take("card_out_of_phase")  # spent by this draw, armed or not
        return self.shoe_armed and not spoilt

    def _draw_card(self) -> dict[str, Any]:
        world = self.world
        if self.take("cut_card"):
            world.place_cut_card(world.cursor)
        if world.cut_card is not None and world.cursor == world.cut_card:
            world.place_cut_card(None)
            drawn = self.sequence
            self.emit(lambda n: CutCardEvent(n, drawn))
            return {"drawn": None, "reader": "cut_card", "sequence": drawn}
        if self.last_read is not None and self.take("duplicate_card"):
            item: Item | None = self.last_read  # a second copy of it was in the shoe
        else:
            item = world.draw()
        if item is None:
            return {"drawn": None, "reader": "empty", "sequence": self.sequence}
        self.sequence += 1
        sequence = self.sequence
        result = {"drawn": describe(item), "sequence": sequence}
        if self.take("misread") or self._misreads() or not isinstance(item, Card):
            self.raise_fault(ShoeFault.MISREAD, report=False)
            self.emit(lambda n: MisreadEvent(n, sequence))
            return {**result, "reader": "misread"}
        flags = 0
        if self.take("face_up"):
            flags |= DrawFlag.FACE_UP
        if not self._in_phase():
            flags |= DrawFlag.OUT_OF_PHASE
            self.raise_fault(ShoeFault.CARD_OUT_OF_PHASE, report=False)
        if item in self.seen:
            flags |= DrawFlag.DUPLICATE
            self.raise_fault(ShoeFault.DUPLICATE_CARD, report=False)
        self.seen.add(item)
        self.last_read = item
        card = item
        self.emit(lambda n: CardDrawnEvent(n, sequence, card.rank, card.suit, flags))
        return {**result, "reader": "read", "flags": flags}

    def _misreads(self) -> bool:
        """A card misread at random (the `misread=N` option): one in N."""
        return self.misread_one_in is not None and self.rng.randrange(self.misread_one_in) == 0

    def _open_hand(self) -> dict[str, Any]:
        world = self.world
        if world.remaining < TILES_PER_HAND:
            return {"drawn": None, "reader": "empty", "hand": self.hands}
        items = [world.draw() for _ in range(TILES_PER_HAND)]
        self.hands += 1
        hand = self.hands
        result = {"drawn": [describe(t) for t in items if t is not None], "hand": hand}
        tiles = [t for t in items if isinstance(t, Tile)]
        if self.take("misread") or len(tiles) != TILES_PER_HAND:
            self.raise_fault(ShoeFault.MISREAD, report=False)
            self.emit(lambda n: MisreadEvent(n, hand))
            return {**result, "reader": "misread"}
        flags = 0
        if not self._in_phase():
            flags = DrawFlag.OUT_OF_PHASE
            self.raise_fault(ShoeFault.CARD_OUT_OF_PHASE, report=False)
        a, b, c, d = (tile_byte(min(t.top, t.bottom), max(t.top, t.bottom)) for t in tiles)
        self.emit(lambda n: HandOpenedEvent(n, hand, flags, (a, b, c, d)))
        return {**result, "reader": "read", "flags": flags}

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {
                **super().describe(),
                "shoe_armed": self.shoe_armed,
                "mode": self.mode.name.lower(),
                "sequence": self.sequence,
                "hands": self.hands,
            }
