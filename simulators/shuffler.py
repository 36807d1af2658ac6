"""A simulated card shuffler.

It takes the table world's cards, shuffles them by Fisher-Yates with a CSPRNG
(`secrets.SystemRandom`) or, given a seed, with a seeded `random.Random` (reproducible runs),
and after SHUFFLE_SECONDS (times the speed factor) reports SHUFFLE_DONE with the count. The
shuffled order goes to the world, where the simulated shoe deals it; it is never sent. In a
world operated by hand (training) the shuffle waits for a person to run it (`world.release`),
with the faults armed by then.

How well it shuffles is an option of the URL (an honest fault of randomness, for the integrity
audit to find): `model=random` (the default: Fisher-Yates), `model=shelf&shelves=10&passes=1` (a
shelf shuffler: each card, in the order it went in, onto a uniformly chosen shelf, on top of or
under that shelf's pile with even odds, the shelves then stacked in order; Diaconis, Fulman and
Holmes 2013) and `model=riffle&riffles=5` (k Gilbert-Shannon-Reeds riffles: a binomial cut, then
cards dropped from each packet in proportion to its size; Bayer and Diaconis 1992). The cards go
in in the order the world collected them: the previous deck as it was dealt.

Faults: one-shot `jam`, `wrong_count` (a card missing: 51), `foreign_card` (a card of another
deck found and set aside), `unreadable_card` (one card set aside unread: 51), `power_lost`
(power fails mid-shuffle; the device comes back with POWER_LOST latched and no result);
conditions `lid_open`, `sort_mode` (the machine's panel is set to a sort program), and the
common `no_response`, `bad_crc`, `unapproved_firmware`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from drivers.messages import COMMON_MESSAGES, Ack, Message, Nak, message_set
from drivers.shuffler.messages import (
    DOOR_NAMES as WIRE_DOOR_NAMES,
)
from drivers.shuffler.messages import (
    FAULT_NAMES as WIRE_FAULT_NAMES,
)
from drivers.shuffler.messages import (
    LID,
    SHUFFLER_MESSAGES,
    ShuffleDone,
    ShuffleMode,
    ShufflerFault,
    StartShuffle,
)
from simulators.base import DeviceModel
from simulators.world import Card, Item

T = TypeVar("T")

SHUFFLE_SECONDS = 40.0
POWER_OUTAGE_SECONDS = 5.0


def fisher_yates(items: MutableSequence[T], rng: random.Random) -> None:
    """Shuffle in place: for i from the last index down to 1, swap i with a uniform j <= i."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.randrange(i + 1)
        items[i], items[j] = items[j], items[i]


def shelf_shuffle(
    items: Sequence[T], rng: random.Random, shelves: int = 10, passes: int = 1
) -> list[T]:
    """The shelf shuffler's order: per pass, each item onto a random shelf, on top or under."""
    order = list(items)
    for _ in range(passes):
        piles: list[list[T]] = [[] for _ in range(shelves)]
        for item in order:
            pile = piles[rng.randrange(shelves)]
            if rng.random() < 0.5:
                pile.insert(0, item)
            else:
                pile.append(item)
        order = [item for pile in piles for item in pile]
    return order


def riffle_shuffle(items: Sequence[T], rng: random.Random, riffles: int = 7) -> list[T]:
    """`riffles` Gilbert-Shannon-Reeds riffles of `items`."""
    order = list(items)
    for _ in range(riffles):
        cut = sum(rng.random() < 0.5 for _ in order)
        left, right = order[:cut], order[cut:]
        merged: list[T] = []
        i = j = 0
        while i < len(left) or j < len(right):
            if rng.random() * (len(left) - i + len(right) - j) < len(left) - i:
                merged.append(left[i])
                i += 1
            else:
                merged.append(right[j])
                j += 1
        order = merged
    return order


@dataclass(frozen=True)
class Mechanism:
    """How the machine shuffles: `random`, `shelf` or `riffle`, with its counts."""

    model: str = "random"
    shelves: int = 10
    passes: int = 1
    riffles: int = 7


_MECHANISM_OPTIONS = {"random": set(), "shelf": {"shelves", "passes"}, "riffle": {"riffles"}}


class ShufflerModel(DeviceModel):
    DEVICE: ClassVar[str] = "shuffler"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(
        COMMON_MESSAGES, SHUFFLER_MESSAGES
    )
    MODEL: ClassVar[str] = "SHUF-52"
    FIRMWARE: ClassVar[str] = "2.3.1"
    FAULT_NAMES: ClassVar[Mapping[int, str]] = WIRE_FAULT_NAMES
    DOOR_NAMES: ClassVar[Mapping[int, str]] = WIRE_DOOR_NAMES
    ONE_SHOT: ClassVar[frozenset[str]] = frozenset(
        {"jam", "wrong_count", "foreign_card", "unreadable_card", "power_lost"}
    )
    CONDITIONS: ClassVar[frozenset[str]] = frozenset({"lid_open", "sort_mode"})
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"model", "shelves", "passes", "riffles"})
    mechanism: Mechanism = Mechanism()

    @classmethod
    def parse_options(cls, options: Mapping[str, str]) -> Mechanism:
        super().parse_options(options)
        model = options.get("model", "random")
        if model not in _MECHANISM_OPTIONS:
            raise ValueError(f"model={model}: one of {', '.join(_MECHANISM_OPTIONS)}")
        stray = set(options) - {"model"} - _MECHANISM_OPTIONS[model]
        if stray:
            raise ValueError(f"model={model} takes no {', '.join(sorted(stray))}")
        counts: dict[str, int] = {}
        for key in ("shelves", "passes", "riffles"):
            if key in options:
                text = options[key]
                if not text.isdigit() or not 1 <= int(text) <= 1000:
                    raise ValueError(f"{key}={text}: a whole number 1-1000")
                counts[key] = int(text)
        if counts.get("shelves", 2) < 2:
            raise ValueError("shelves must be at least 2")
        return Mechanism(model, **counts)

    def configure(self, options: Mechanism) -> None:
        self.mechanism = options

    def handle(self, message: Message) -> Message:
        if isinstance(message, StartShuffle):
            refusal = self.refusal()
            if refusal is not None:
                return Nak(refusal)
            self.busy = True
            if self.by_hand(lambda: self._shuffled(message.expected)):
                return Ack()  # a person runs it (training): its outcome is decided then
            if self.take("power_lost"):
                self.after(SHUFFLE_SECONDS / 2, lambda: self.power_off(POWER_OUTAGE_SECONDS))
            elif self.take("jam"):
                self.after(SHUFFLE_SECONDS / 3, self._jam)
            else:
                self.after(SHUFFLE_SECONDS, lambda: self._finish(message.expected))
            return Ack()
        return super().handle(message)

    def _shuffled(self, expected: int) -> None:
        """A shuffle run by hand ends at once, as the faults armed by then say."""
        if self.take("power_lost"):
            self.power_off(POWER_OUTAGE_SECONDS)
        elif self.take("jam"):
            self._jam()
        else:
            self._finish(expected)

    def _jam(self) -> None:
        self.busy = False
        self.raise_fault(ShufflerFault.JAM)

    def _finish(self, expected: int) -> None:
        self.busy = False
        cards = self.world.collect()
        unreadable = foreign = 0
        if self.take("wrong_count") and cards:
            cards.pop(self.rng.randrange(len(cards)))
        if self.take("foreign_card"):
            foreign = 1  # found among the cards and set aside: the count is unaffected
        if self.take("unreadable_card") and cards:
            cards.pop(self.rng.randrange(len(cards)))
            unreadable = 1
        sort = "sort_mode" in self.conditions
        if sort:
            cards.sort(key=lambda c: (c.rank, c.suit) if isinstance(c, Card) else (0, 0))
        else:
            cards = self._shuffled_order(cards)
        self.world.load(cards)
        count = len(cards)
        # Faults that SHUFFLE_DONE itself reports are latched without a FAULT_RAISED of their own.
        if count != expected:
            self.raise_fault(ShufflerFault.WRONG_COUNT, report=False)
        if foreign:
            self.raise_fault(ShufflerFault.FOREIGN_CARD, report=False)
        if unreadable:
            self.raise_fault(ShufflerFault.UNREADABLE_CARD, report=False)
        if sort:
            self.raise_fault(ShufflerFault.SORT_MODE, report=False)
        mode = ShuffleMode.SORT if sort else ShuffleMode.RANDOM
        self.emit(lambda n: ShuffleDone(n, count, unreadable, foreign, mode))

    def _shuffled_order(self, cards: list[Item]) -> list[Item]:
        mechanism = self.mechanism
        if mechanism.model == "shelf":
            return shelf_shuffle(cards, self.rng, mechanism.shelves, mechanism.passes)
        if mechanism.model == "riffle":
            return riffle_shuffle(cards, self.rng, mechanism.riffles)
        fisher_yates(cards, self.rng)
        return cards

    def on_condition(self, fault: str, active: bool) -> None:
        if fault == "lid_open":
            self.set_door(LID, active)

    def active_causes(self) -> set[int]:
        return {ShufflerFault.SORT_MODE} if "sort_mode" in self.conditions else set()
