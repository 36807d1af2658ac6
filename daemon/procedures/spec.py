"""What a game is, as data: its phases with the text a dealer reads, and its actions with their
roles, parameters, bilingual labels and the article each check cites.

Each game declares one `Game` (`daemon.procedures.thirteen.GAME`,
`daemon.procedures.paigow.GAME`) and everything else reads it: the procedure engine (roles,
articles, the payload's kinds and bounds: `daemon.procedures.payload.check_params`), the API's
request models and OpenAPI schema (`daemon.api.models`), the console's forms and hints
(`/api/actions`, `daemon.table.publish.views`), `tabled act --help` and `tabled status`, and
the tables of docs/procedures.md (`tabled diagram --update-doc`). Nothing here imports the
procedure, the API or any I/O.

What a person may see of the cards or tiles (game protection, issue 9) is declared beside the
actions: `Game.visibility` (a `Visibility`, from `daemon/procedures/<game>/visibility.py`), read by
the one redaction engine `daemon.procedures.visibility` that every surface serving a person calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

ParamKind = Literal["int", "str", "bool", "list[int]", "list[str]"]
ROLES = ("dealer", "supervisor", "device", "system")
OPERATOR_ROLES = frozenset({"dealer", "supervisor"})


# What a journal event opens of the round's face-down cards or tiles, by the game's rule (the
# game's `Visibility.reveal` applies it): `face_up` the card it names when the event says it
# lies face up (Thirteen Art. 4), `shown` the tile it names, shown face up to all (Pai Gow Art.
# 4), `banker` the banker's hand, `door` the hand of the door it names, `all` every hand,
# `settled` the hands the settlement compares; `deck` closes again what lay face up, the cards
# going back into the deck unseen (Thirteen's voided deal, Art. 4: a card seen face up in it
# is dealt again face down). Nothing else opens a card: not how its payload is shaped (a card
# entered by hand is as face down as the one the reader missed).
Opens = Literal["face_up", "shown", "banker", "door", "all", "settled", "deck"]
OPENS: tuple[Opens, ...] = ("face_up", "shown", "banker", "door", "all", "settled", "deck")


@dataclass(frozen=True)
class Param:
    """One field of an action's payload: its kind, bounds and label, and the article that a bad
    value breaks (None: the action's own). The API refuses a bad value (422) and the procedure
    refuses it too (a violation citing `article`), from this one declaration."""

    kind: ParamKind
    required: bool = True
    minimum: int | None = None  # for int, and for each item of list[int]
    maximum: int | None = None
    min_length: int | None = None  # for str and lists
    max_length: int | None = None
    choices: tuple[str, ...] = ()  # for str: the only values allowed
    label_en: str = ""
    label_zh: str = ""
    article: str | None = None


@dataclass(frozen=True)
class Action:
    """One trigger of a procedure: who may send it, the article that governs it, its labels, and
    its parameters. `params` is None for a device's or the system's fact, whose payload the
    procedure reads with its own checks (a reading of the dice, a card); every operator action
    declares its parameters, even none (`{}`)."""

    name: str
    roles: frozenset[str]
    article: str
    summary: str
    commit: bool = True
    label_en: str = ""
    label_zh: str = ""
    params: Mapping[str, Param] | None = None
    # What its journaled input (`table.input`) opens of the face-down cards or tiles, by the
    # game's rule (Pai Gow's `open_hand`: the door it names); None: nothing.
    opens: Opens | None = None

    @property
    def operator(self) -> bool:
        """Whether a person (dealer or supervisor) takes it, through the API or the console."""
        return bool(self.roles & OPERATOR_ROLES)

    @property
    def requires_reason(self) -> bool:
        """A supervisor's step is journaled with the reason given for it."""
        return "supervisor" in self.roles


@dataclass(frozen=True)
class Event:
    """One kind of journal line a table of the game writes, declared like an action: its name,
    its labels (the console's journal, the floor), the phase the table is in after it where
    the event alone says so (None: the phase comes from elsewhere, a later event or the
    payload's own `phase`), whether it closes its round (the round is settled or void: its
    cards go whole to the review audience), and what it opens of the face-down cards or tiles
    (`Opens`; None: nothing). Every line of a round is served through the one redaction
    (`daemon.procedures.visibility`): a card or tile it carries is hidden unless the game has
    opened it by one of these declared rules. `by` says who journals it: the game's procedure
    (`procedure`, through `Engine.emit`, which refuses a name not declared), or the table
    around it (`table`: the runtime, devices, journal, API process)."""

    name: str
    label_en: str
    label_zh: str
    phase_after: str | None = None
    closes_round: bool = False
    opens: Opens | None = None
    by: Literal["procedure", "table"] = "procedure"

    def as_json(self) -> dict[str, Any]:
        """What the API serves of it (`GET /api/actions`, `events`)."""
        return {
            "name": self.name,
            "label_en": self.label_en,
            "label_zh": self.label_zh,
            "phase_after": self.phase_after,
            "closes_round": self.closes_round,
            "opens": self.opens,
            "by": self.by,
        }


def events(*declared: Event) -> dict[str, Event]:
    """Events keyed by name, in the order declared; a name declared twice is an error."""
    out: dict[str, Event] = {}
    for event in declared:
        if event.name in out:
            raise ValueError(f"event {event.name} declared twice")
        out[event.name] = event
    return out


@dataclass(frozen=True)
class PhaseText:
    """A phase's name and what comes next in it, as the dealer reads them, in both languages."""

    label_en: str
    label_zh: str
    next_en: str
    next_zh: str


# A hand known to be the banker's where its seat number is not at hand (Pai Gow's banker sits at
# any door; an event about the banker's hand may name no seat).
BANKER = "banker"
# What a person is served in place of a card or tile the game has not opened.
HIDDEN = "hidden"
Seat = int | str  # a seat or door number, or BANKER


@dataclass
class Revealed:
    """What a game has opened of one round so far, all of it public: the hands laid open (by
    seat, or every hand at once), the single cards or tiles lying face up (by seat, when it is
    known), and whether the round is closed (settled or voided)."""

    closed: bool = False
    all_open: bool = False
    seats: set[Seat] = field(default_factory=set)
    face_up: list[tuple[Seat | None, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "closed": self.closed,
            "all_open": self.all_open,
            "seats": sorted(self.seats, key=str),
            "face_up": [[seat, value] for seat, value in self.face_up],
        }

    @classmethod
    def from_json(cls, data: Any) -> Revealed:
        """The inverse of `as_json`; anything else (absent, malformed) opens nothing."""
        if not isinstance(data, Mapping):
            return cls()
        seats = {s for s in data.get("seats") or [] if isinstance(s, int | str)}
        face_up = [
            (item[0], item[1])
            for item in data.get("face_up") or []
            if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[1], str)
        ]
        return cls(data.get("closed") is True, data.get("all_open") is True, seats, face_up)


@dataclass(frozen=True)
class Visibility:
    """What a person may see of a game's cards or tiles (issue 9). The system knows every card
    (the journal keeps them); a person sees a face-down one only once the game opens it.

    `hand_keys` are the payload keys whose values are cards or tiles (a string, a list, rows of
    them): hidden unless opened. `public_keys` hold cards or tiles lying face up for everyone.
    `unseen_keys` hold cards that went back unseen (a voided deal's): hidden whatever the round
    has opened since (until the round is closed, to the review audience).
    `pattern` finds one card or tile written in free text (a fault, a refusal's reason). `unique`
    says every card is one of a kind, so a face-up card may be recognised by its value alone
    (cards: yes; tiles come in pairs: no). `opened(snapshot)` reads what the game has opened
    from its procedure's snapshot; `reveal(revealed, opens, payload)` what a journal event (or
    a journaled input) opens by the rule it declares (`Event.opens`, `Action.opens`), and
    nothing else decides it; `seat_of(event, payload)` whose hand an event's cards are when its
    payload names no seat (None: unknown)."""

    hand_keys: frozenset[str]
    public_keys: frozenset[str]
    pattern: str
    unique: bool
    opened: Callable[[Mapping[str, Any]], Revealed]
    reveal: Callable[[Revealed, Opens, Mapping[str, Any]], None]
    seat_of: Callable[[str, Mapping[str, Any]], Seat | None]
    unseen_keys: frozenset[str] = frozenset()


# The class of the procedure that plays a game (`daemon.procedures.base.Procedure` and its
# subclasses): a parameter, so that this bottom layer imports nothing of the procedure.
ProcedureT_co = TypeVar("ProcedureT_co", covariant=True)


@dataclass(frozen=True)
class Game(Generic[ProcedureT_co]):
    """A game's whole declaration: its phases (in order) and its actions (in order). The
    registry of the games (`daemon.procedures.games.GAMES`) holds them as
    `Game[Procedure]`; a reader of the declaration alone writes `Game[Any]`."""

    name: str
    regulation: str
    phases: Mapping[str, PhaseText]
    actions: Mapping[str, Action]
    # The devices the procedure knows, and those its regulation names (a table without them
    # does not start); the others configured join the equipment check.
    devices: tuple[str, ...] = ()
    required_devices: tuple[str, ...] = ()
    # What a person may see of its cards or tiles (issue 9); None: every game's rules at once.
    visibility: Visibility | None = None
    # The journal events its table writes (`Event`): its procedure's, the shared layers' and
    # the table's around it (daemon/procedures/events.py).
    events: Mapping[str, Event] = field(default_factory=dict)
    # The procedure that plays it (`daemon.procedures.base.Procedure`), its class: what
    # `daemon.procedures.build` makes for a table of this game, and what the diagrams, the
    # docs and the tests read its machine from.
    procedure: type[ProcedureT_co] | None = None

    def phase_text(self, phase: str) -> PhaseText:
        return self.phases.get(phase) or PhaseText(phase, phase, "", "")


def actions(*declared: Action) -> dict[str, Action]:
    """Actions keyed by name, in the order declared; a name declared twice is an error."""
    out: dict[str, Action] = {}
    for action in declared:
        if action.name in out:
            raise ValueError(f"action {action.name} declared twice")
        out[action.name] = action
    return out


# ---- parameters both games' actions use ----------------------------------------------------


def player(en: str = "Player", zh: str = "玩家", article: str | None = None) -> Param:
    return Param("str", min_length=1, max_length=64, label_en=en, label_zh=zh, article=article)


def seat(low: int, high: int, en: str, zh: str, article: str | None = None) -> Param:
    return Param("int", minimum=low, maximum=high, label_en=en, label_zh=zh, article=article)


def amount(article: str | None = None) -> Param:
    return Param(
        "int", minimum=1, maximum=10**12, label_en="Amount", label_zh="金額", article=article
    )


def one_hand(article: str | None = None) -> Param:
    return Param("bool", label_en="One hand", label_zh="單手", article=article)
