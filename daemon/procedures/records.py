"""The records a round keeps, typed. They stay plain dicts at run time (TypedDict), so the
snapshot, the journal events and the checkpoints keep their shape, and strict mypy checks every
key the procedure reads or writes."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class Identity(TypedDict, total=False):
    """A device's identity as `device_identified` carries it, without the device's name: the
    table's verdict on its build (`approved`, `approval`) and what the device reported."""

    approved: bool
    approval: str
    make: str
    model: str
    serial: str
    firmware: str
    firmware_hash: str
    kind: str
    driver: str
    package_sha256: str


class Fault(TypedDict):
    """An open fault of a device (or `table` after a restart), until a supervisor clears it."""

    fault: str
    kind: Literal["hold", "tilt"]
    healthy: bool
    since: float
    # The device on the line when it is not the one identified (`identity changed`): what a
    # replacement approved by two supervisors puts in its place (daemon.procedures.overrides).
    identity: NotRequired[Identity]


class Misdeal(TypedDict):
    """A deal fault the reader's record cannot put right (a duplicate card, a read lost), on
    record for the round it happened in: what lets the deal be voided."""

    round: int
    fault: str
    since: float


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


# ---- proposals a supervisor decides (daemon.procedures.overrides) ----------------------------


class Proposed(TypedDict):
    """What every pending proposal holds besides its `kind`: the rule it keeps, who proposed
    it and when (`since` is not journaled with the decision)."""

    article: str
    proposed_by: str
    since: float


class VoidRound(Proposed):
    """A void of the round once something of it is known, until a second supervisor decides;
    it lapses when the held round resumes."""

    kind: Literal["void_round"]
    reason: str
    phase: str
    suspended: str | None


class VoidDeal(Proposed):
    """A void of the dealt cards (Thirteen), on a misdeal on record."""

    kind: Literal["void_deal"]
    reason: str
    phase: str
    misdeal: str | None


class Replacement(Proposed):
    """A device replaced by another of its approved build: the identity held and the one now
    on the line (they differ by the serial alone)."""

    kind: Literal["replace_device"]
    device: str
    reason: str
    old: Identity
    new: Identity
    old_serial: Any
    new_serial: Any


class CardEntry(Proposed):
    """A misread card (Thirteen) entered by hand: the card proposed for its place."""

    kind: Literal["enter_card"]
    card: str
    index: int
    seat: int
    read: str | None
    note: str | None


class Correction(Proposed):
    """An open hand's rows corrected (Thirteen): the rows placed and the rows proposed."""

    kind: Literal["correct_arrangement"]
    seat: int
    reason: str
    placed: dict[str, list[str]]
    rows: dict[str, list[str]]


# A game's own proposals, which its procedure checks and applies (`_check_override`).
GameProposal = CardEntry | Correction
Proposal = VoidRound | VoidDeal | Replacement | GameProposal


# ---- what the dealer records, and the bank's members ----------------------------------------


class Advice(TypedDict):
    """A bettor who advised a seat's holder (Thirteen), as the dealer saw it."""

    seat: int
    adviser: str
    holder: str | None


class Away(TypedDict):
    """Cards taken away from the table (Thirteen): by whom, which, and the seat's holder."""

    seat: int
    player: str
    what: str
    holder: str | None


class CoBanker(TypedDict):
    """A member of this round's Pai Gow bank besides the banker (a guest or the house), in the
    order they joined."""

    player: str
    amount: int
    house: bool


# ---- settlements ------------------------------------------------------------------------------


class BetSettled(TypedDict):
    """A Thirteen bet settled against the banker. `net` is money as text (exact decimals);
    `rules` is the rules engine's comparison (none for a seat late at the bell)."""

    seat: int
    player: str
    amount: int
    outcome: str
    late: bool
    net: str
    rules: NotRequired[dict[str, object]]


class SeatScored(TypedDict):
    """A Thirteen bet settled without a banker, its seat scored against each other."""

    seat: int
    player: str
    amount: int
    points: str
    outcome: str
    late: bool
    shot: list[int]
    shooter: bool
    home_run: bool
    net: str


class DoorBettor(TypedDict):
    player: str
    amount: int


class DoorSettled(TypedDict):
    """A Pai Gow door settled against the bank, its hand as opened."""

    seat: int
    front: list[str]
    back: list[str]
    correction: str | None
    outcome: str
    bet: int
    won: int
    lost: int
    commission: int
    net: int
    limited: bool
    bettors: list[DoorBettor]


class ShareSettled(TypedDict):
    """A co-banker's part of what the bank won or lost."""

    player: str
    stake: int
    result: int
    commission: int
    net: int
    house: bool


class RoundSettled(TypedDict):
    """A Pai Gow round settled: the doors in the order settled, the bank and its members."""

    order: list[int]
    banker_hand: Setting
    doors: list[DoorSettled]
    bank_stake: int
    bank_result: int
    banker_commission: int
    banker_net: int
    banker_carried: int
    co_bankers: list[ShareSettled]
    commission: int
