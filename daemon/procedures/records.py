"""The records a round keeps, typed. They stay plain dicts at run time (TypedDict), so the
snapshot, the journal events and the checkpoints keep their shape, and strict mypy checks every
key the procedure reads or writes."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class Fault(TypedDict):
    """An open fault of a device (or `table` after a restart), until a supervisor clears it."""

    fault: str
    kind: Literal["hold", "tilt"]
    healthy: bool
    since: float
    # The device on the line when it is not the one identified (`identity changed`): what a
    # replacement approved by two supervisors puts in its place (daemon.procedures.overrides).
    identity: NotRequired[dict[str, Any]]


class Shuffle(TypedDict):
    """The shuffler's report (Thirteen Art. 2(a)); `good` is a random shuffle of 52."""

    count: int
    mode: str
    good: bool


class Cut(TypedDict):
    by: str
    player: str | None
    cards: int


class Entered(TypedDict):
    by: str
    approved_by: str


class DealtCard(TypedDict):
    """One card the shoe reader read (or a supervisor approved), in the order dealt."""

    card: str
    seat: int
    face_up: bool
    entered: NotRequired[Entered]


class Misread(TypedDict):
    """The card the reader could not name: its place in the deal, until it is entered."""

    index: int
    seat: int
    read: str | None


class StackMove(TypedDict):
    """A move of the Pai Gow stacks before the dice (Art. 2(6)): by a player or the banker."""

    by: str
    player: str


class FaceUp(TypedDict):
    """A Pai Gow tile dealt face up (Art. 4): it stays valid and is journaled. `by_name`: the
    croupier named it (杂九 is either face), so the hand opened at `seat` must hold a tile of
    that name; otherwise that very face."""

    seat: int
    tile: str
    by_name: NotRequired[bool]


class Setting(TypedDict):
    """A Pai Gow hand set as two pairs (Art. 6(1)), each as the tiles' names."""

    front: list[str]
    back: list[str]


class Reset(TypedDict):
    """The croupier's re-set of a wrongly set hand (Art. 6(2))."""

    seat: int
    before: Setting
    after: Setting


class Bet(TypedDict):
    """A bet on a seat (Thirteen: a door, with its units; Pai Gow: a door, its amount), in the
    order placed (`seq`); a player's second bet on a seat replaces the first."""

    seq: int
    player: str
    seat: int
    amount: int
    # Thirteen only: the units bet and whether the player sits at that seat.
    units: NotRequired[int]
    seated: NotRequired[bool]


class Throw(TypedDict):
    """A throw of the shaker: whether it counts (`reason` why not), and its dice (an invalid
    throw has those the shaker read, if any, and the die it names)."""

    valid: bool
    reason: str | None
    dice: NotRequired[list[int]]
    die: NotRequired[int]
