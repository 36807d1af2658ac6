"""What a game is, as data: its phases with the text a dealer reads, and its actions with their
roles, parameters, bilingual labels and the article each check cites.

Each game declares one `Game` (`daemon.procedures.thirteen.game.GAME`,
`daemon.procedures.paigow.game.GAME`) and everything else reads it: the procedure engine (roles,
articles, the payload's kinds and bounds: `daemon.procedures.payload.check_params`), the API's
request models and OpenAPI schema (`daemon.api.models`), the console's forms and hints
(`/api/actions`, `daemon.api.views`), `tabled act --help` and `tabled status`, and the tables of
docs/procedures.md (`tabled diagram --update-doc`). Nothing here imports the procedure, the API
or any I/O.

What each role may see in each phase (game protection, issue 9) is declared beside the actions:
`Game.visibility` is its slot, keyed by phase then role, so a redaction reads the same `Game`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

ParamKind = Literal["int", "str", "bool", "list[int]", "list[str]"]
ROLES = ("dealer", "supervisor", "device", "system")
OPERATOR_ROLES = frozenset({"dealer", "supervisor"})


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

    @property
    def operator(self) -> bool:
        """Whether a person (dealer or supervisor) takes it, through the API or the console."""
        return bool(self.roles & OPERATOR_ROLES)

    @property
    def requires_reason(self) -> bool:
        """A supervisor's step is journaled with the reason given for it."""
        return "supervisor" in self.roles


@dataclass(frozen=True)
class PhaseText:
    """A phase's name and what comes next in it, as the dealer reads them, in both languages."""

    label_en: str
    label_zh: str
    next_en: str
    next_zh: str


@dataclass(frozen=True)
class Game:
    """A game's whole declaration: its phases (in order) and its actions (in order)."""

    name: str
    regulation: str
    phases: Mapping[str, PhaseText]
    actions: Mapping[str, Action]
    # The devices the procedure knows, and those its regulation names (a table without them
    # does not start); the others configured join the equipment check.
    devices: tuple[str, ...] = ()
    required_devices: tuple[str, ...] = ()
    # phase -> role -> what that role may see (issue 9); empty until it is declared.
    visibility: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)

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
