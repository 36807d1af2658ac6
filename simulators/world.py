"""The simulated table world: the physical things the simulated devices share.

One `TableWorld` per table (keyed by the `world=` parameter of a `sim://` URL, by default
"default"; `tabled sim` uses the config's table id). It holds the deck or the tiles, where the
dealer cut, and how far the shoe has dealt, so the deck the simulated shuffler shuffled is the
deck the simulated shoe deals from. Device models attach themselves by name, which is how the
control channel reaches them ("pull a die out of the cup", "draw the next card").

Cards are `Card(rank, suit)`: rank 1 (ace) .. 13 (king), suit 0 spades, 1 hearts, 2 clubs,
3 diamonds. Tiles are `Tile(top, bottom)` by pips, the 32 tiles of Pai Gow. Only the simulators
see this order; it never goes on the wire from the shuffler.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, order=True)
class Card:
    rank: int
    suit: int


@dataclass(frozen=True, order=True)
class Tile:
    top: int
    bottom: int


Item = Card | Tile


def standard_deck() -> tuple[Card, ...]:
    return tuple(Card(rank, suit) for suit in range(4) for rank in range(1, 14))


# Civil tiles come in pairs, military tiles singly: 11 * 2 + 10 = 32 (Portaria 15/90/M, Table I).
_CIVIL = ((6, 6), (1, 1), (4, 4), (1, 3), (5, 5), (3, 3), (2, 2), (5, 6), (4, 6), (1, 6), (1, 5))
_MILITARY = ((3, 6), (4, 5), (2, 6), (3, 5), (2, 5), (3, 4), (1, 4), (2, 3), (2, 4), (1, 2))


def paigow_tiles() -> tuple[Tile, ...]:
    return tuple(Tile(*pips) for pips in _CIVIL * 2 + _MILITARY)


class AttachedDevice(Protocol):
    def inject(self, fault: str) -> None: ...

    def clear(self, fault: str) -> None: ...

    def describe(self) -> dict[str, Any]: ...


class TableWorld:
    """The deck (or tiles), the cut and the draw cursor, shared by one table's simulators.

    `deck` is the set of cards (or tiles) in play; `items` the stack in dealing order once
    shuffled; `cursor` the index of the next item to draw; `cut_card` the index at which the
    cut card sits (drawing it means "cut card reached"). Every method takes the world's lock:
    models run on timer threads and the control channel.
    """

    def __init__(self, key: str, items: Sequence[Item] | None = None) -> None:
        self.key = key
        self.lock = threading.RLock()
        self.deck: tuple[Item, ...] = tuple(items if items is not None else standard_deck())
        self.items: list[Item] = list(self.deck)
        self.cursor = 0
        self.cut_card: int | None = None
        self.generation = 0  # increments with each completed shuffle
        self.devices: dict[str, AttachedDevice] = {}
        self.unplugged: set[str] = set()  # devices whose cable is out: their ports fail
        # what each device keeps while its port is closed: (conditions, latched fault bits)
        self._kept: dict[str, tuple[frozenset[str], int]] = {}
        self._unplug_listeners: dict[str, dict[object, Callable[[], None]]] = {}
        self._draw_handler: Callable[[], dict[str, Any]] | None = None
        # Operated by hand (training): the shuffler's shuffle and the shaker's throw wait for
        # a person (`release`) instead of finishing on their own after the mechanical delay.
        self.by_hand = False
        self._held: dict[str, Callable[[], None]] = {}

    # --- the deck -------------------------------------------------------------------------

    def collect(self) -> list[Item]:
        """The table's whole deck (or tile set), gathered for the shuffler: the stack as it was
        last dealt (the dealer collects the cards in the order the shoe dealt them, the ones
        left in the shoe last), or the deck in its box order when the stack is not the whole
        deck (a new deck, a card lost by the machine)."""
        with self.lock:
            if sorted(self.items) == sorted(self.deck):
                return list(self.items)
            return list(self.deck)

    def replace_deck(self, items: Sequence[Item]) -> None:
        """A new deck (or tile set) comes into play, e.g. after a wrong count."""
        with self.lock:
            self.deck = tuple(items)

    def load(self, items: Sequence[Item]) -> None:
        """A shuffled stack, ready to cut and deal."""
        with self.lock:
            self.items = list(items)
            self.cursor = 0
            self.cut_card = None
            self.generation += 1

    def cut(self, at: int) -> None:
        """Cut the stack: the top `at` items go to the bottom."""
        with self.lock:
            if not 0 <= at <= len(self.items):
                raise ValueError(f"cannot cut {at} of {len(self.items)}")
            self.items = self.items[at:] + self.items[:at]
            self.cursor = 0

    def place_cut_card(self, index: int | None) -> None:
        with self.lock:
            self.cut_card = index

    def draw(self) -> Item | None:
        """The next item from the stack, or None when none is left."""
        with self.lock:
            if self.cursor >= len(self.items):
                return None
            item = self.items[self.cursor]
            self.cursor += 1
            return item

    @property
    def remaining(self) -> int:
        with self.lock:
            return len(self.items) - self.cursor

    # --- devices and the dealer -----------------------------------------------------------

    def attach(self, name: str, device: AttachedDevice) -> None:
        with self.lock:
            self.devices[name] = device

    def detach(self, name: str, device: AttachedDevice) -> None:
        with self.lock:
            if self.devices.get(name) is device:
                del self.devices[name]
                self._held.pop(name, None)  # switched off mid-operation: it never finishes

    def hold(self, name: str, finish: Callable[[], None]) -> None:
        """Device `name` started an operation that a person finishes (`release`)."""
        with self.lock:
            self._held[name] = finish

    def waiting(self, name: str) -> bool:
        """Device `name` has an operation waiting for a person."""
        with self.lock:
            return name in self._held

    def release(self, name: str) -> bool:
        """Finish the operation device `name` holds; False if it holds none."""
        with self.lock:
            finish = self._held.pop(name, None)
            if finish is None:
                return False
            finish()
            return True

    def keep(self, name: str, conditions: set[str] | frozenset[str], latched: int) -> None:
        """A device switched off: what it will still have when it is switched on again."""
        with self.lock:
            self._kept[name] = (frozenset(conditions), latched)

    def kept(self, name: str) -> tuple[frozenset[str], int]:
        with self.lock:
            return self._kept.get(name, (frozenset(), 0))

    def unplug(self, name: str) -> None:
        """Pull the device's cable (or USB adapter): its open port fails at once (as a tty's
        read fails with EIO when its USB adapter goes), and reopening fails."""
        with self.lock:
            self.unplugged.add(name)
            listeners = list(self._unplug_listeners.get(name, {}).values())
        for listener in listeners:
            listener()

    def on_unplug(self, name: str, listener: Callable[[], None] | None, key: object) -> None:
        """An open port of `name` registers (or, with None, removes) what to call when its
        cable is pulled."""
        with self.lock:
            listeners = self._unplug_listeners.setdefault(name, {})
            if listener is None:
                listeners.pop(key, None)
            else:
                listeners[key] = listener

    def plug(self, name: str) -> None:
        with self.lock:
            self.unplugged.discard(name)

    def set_draw_handler(self, handler: Callable[[], dict[str, Any]] | None) -> None:
        """The shoe model installs how a dealer's draw is carried out (it reads the card)."""
        with self.lock:
            self._draw_handler = handler

    def dealer_draw(self) -> dict[str, Any]:
        """The dealer draws the next card from the shoe."""
        with self.lock:
            if self._draw_handler is not None:
                return self._draw_handler()
            item = self.draw()
            return {"drawn": None if item is None else _describe_item(item), "reader": None}

    def ring(self) -> None:
        """A person presses the timer bell's test button."""
        press = getattr(self._device("timer_bell"), "test_ring", None)
        if press is None:
            raise LookupError(f"the timer_bell at table {self.key} has no test button")
        press()

    def inject(self, device: str, fault: str) -> None:
        self._device(device).inject(fault)

    def clear(self, device: str, fault: str) -> None:
        self._device(device).clear(fault)

    def _device(self, name: str) -> AttachedDevice:
        with self.lock:
            try:
                return self.devices[name]
            except KeyError:
                known = ", ".join(sorted(self.devices)) or "none"
                raise LookupError(f"no simulated {name} at table {self.key} ({known})") from None

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {
                "world": self.key,
                "generation": self.generation,
                "remaining": len(self.items) - self.cursor,
                "by_hand": self.by_hand,
                "waiting": sorted(self._held),
                "devices": {name: dev.describe() for name, dev in sorted(self.devices.items())},
            }


def _describe_item(item: Item) -> dict[str, int]:
    if isinstance(item, Card):
        return {"rank": item.rank, "suit": item.suit}
    return {"top": item.top, "bottom": item.bottom}


_worlds: dict[str, TableWorld] = {}
_worlds_lock = threading.Lock()


def get_world(key: str = "default") -> TableWorld:
    """The world of table `key`, created on first use."""
    with _worlds_lock:
        world = _worlds.get(key)
        if world is None:
            world = _worlds[key] = TableWorld(key)
        return world


def forget_world(key: str) -> None:
    """Drop a world (tests start from a fresh deck)."""
    with _worlds_lock:
        _worlds.pop(key, None)
