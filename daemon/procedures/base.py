"""The shared shape of a game procedure: phases, actions, refusals, HOLD and TILT.

A procedure is a pure `transitions` state machine that the table runtime feeds with inputs:
operator actions (dealer, supervisor), device facts (device) and timer facts (system). It does
no I/O. Each input returns an `Outcome`: accepted or refused, the journal events to append (each
marked when it is a commit point), and the device commands to issue. Every refused input is a
procedure violation that cites the article it breaks; an unknown action, a wrong role, an action
out of phase and a malformed payload are all refused the same way, never raised.

Recovery is by replay. Every change of state comes from an accepted input, time comes only in
the input's `now`, and a refused input changes nothing: feeding the accepted inputs of a journal
to a fresh procedure of the same configuration reproduces the same `snapshot()`.

HOLD and TILT are two phases reachable from every other one. TILT is a device fault (jam, wrong
card count, misread, invalid dice more than twice in a row); HOLD is a door, lid or shoe open,
or a link lost. Both remember the phase they suspended. A device reports healthy
(`device_healthy`), then only a supervisor clears (`clear_hold`, `clear_tilt`) to resume that
exact phase, or voids the round (`void_round`). A link lost mid-round is a HOLD like any other:
the restored link only marks the device healthy; the table moves again only when a supervisor
clears it, and that is journaled (`table.resumed`).

Actors are written `role` or `role:id` (`dealer:D17`, `device:shoe_reader`, `system`,
`supervisor:S03`); the role decides which actions the actor may send.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, TypeVar

from transitions import EventData, Machine

from daemon.procedures.common import (
    HOUSE_DICE,
    HOUSE_FAULTS,
    HOUSE_OVERRIDE,
    HOUSE_ROLES,
    common_actions,
    fault_transitions,
    override_actions,
)
from daemon.procedures.payload import (
    INVALID_REASONS,
    Refused,
    check_params,
    dice_reading,
    flag,
    integer,
    need,
    text,
)
from daemon.procedures.spec import Action

__all__ = [
    "HOUSE_DICE",
    "HOUSE_FAULTS",
    "HOUSE_OVERRIDE",
    "HOUSE_ROLES",
    "INVALID_REASONS",
    "MAX_INVALID_SHAKES",
    "ROLES",
    "Action",
    "DeviceCommand",
    "Input",
    "JournalEvent",
    "Outcome",
    "Procedure",
    "Refused",
    "Violation",
    "common_actions",
    "dice_reading",
    "fault_transitions",
    "flag",
    "integer",
    "need",
    "override_actions",
    "replay",
    "role_of",
    "text",
]

ROLES = ("dealer", "supervisor", "device", "system")
MAX_INVALID_SHAKES = 3
T = TypeVar("T")


@dataclass(frozen=True)
class Violation:
    actor: str
    action: str
    phase: str
    article: str
    reason: str

    def as_payload(self) -> dict[str, Any]:
        return {
            "actor": self.actor,
            "action": self.action,
            "phase": self.phase,
            "article": self.article,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class JournalEvent:
    name: str
    payload: Mapping[str, Any]
    commit: bool


@dataclass(frozen=True)
class DeviceCommand:
    device: str
    command: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Input:
    """One input as the runtime journals it, so that recovery can feed it again."""

    action: str
    actor: str
    payload: Mapping[str, Any]
    now: float

    def as_payload(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "actor": self.actor,
            "payload": copy.deepcopy(dict(self.payload)),
            "now": self.now,
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> Input:
        return cls(
            action=str(data["action"]),
            actor=str(data["actor"]),
            payload=dict(data.get("payload") or {}),
            now=float(data["now"]),
        )


@dataclass(frozen=True)
class Outcome:
    accepted: bool
    phase: str
    violation: Violation | None
    events: tuple[JournalEvent, ...]
    commands: tuple[DeviceCommand, ...]


def role_of(actor: str) -> str:
    return actor.split(":", 1)[0]


def _person(actor: str) -> str | None:
    """The person behind `role:id`, or None when the actor names no one."""
    return actor.split(":", 1)[1] if ":" in actor else None


_PAIRS: dict[type[Procedure], frozenset[tuple[str, str]]] = {}
_CERTAIN: dict[type[Procedure], frozenset[tuple[str, str]]] = {}


class Procedure:
    """The base of each game's procedure; subclasses give the data and the per-action code.

    A subclass defines `Phase` (an Enum with HOLD and TILT), `TRANSITIONS` (transition dicts),
    `ACTIONS` (name -> Action), and for each action an optional `_check_<action>(payload, now)`
    that raises `Refused`, and `_apply_<action>(payload, now)` that changes state and emits
    events and commands. Conditions in `TRANSITIONS` read the state after `_apply_`.
    """

    GAME: ClassVar[str]
    REGULATION: ClassVar[str]
    Phase: ClassVar[type[Enum]]
    TRANSITIONS: ClassVar[list[dict[str, Any]]]
    ACTIONS: ClassVar[Mapping[str, Action]]
    INITIAL: ClassVar[Enum]

    state: Enum

    def __init__(self, table_id: str = "T01") -> None:
        self.table_id = table_id
        self.round_id = 0
        self.suspended: str | None = None
        self.resume_to: str | None = None
        self.faults: dict[str, dict[str, Any]] = {}
        self.invalid_shakes = 0
        self._events: list[JournalEvent] = []
        self._commands: list[DeviceCommand] = []
        self._fired = False
        self._input: Input | None = None
        self._target: str | None = None
        self.machine = Machine(
            model=self,
            states=list(type(self).Phase),
            transitions=type(self).TRANSITIONS,
            initial=type(self).INITIAL,
            auto_transitions=False,
            queued=True,
            send_event=True,
            after_state_change="_mark_fired",
        )

    # ---- the runtime's API -------------------------------------------------------------------

    @property
    def phase(self) -> str:
        return self.state.name

    def handle(self, action: str, actor: str, payload: Mapping[str, Any], now: float) -> Outcome:
        """Feed one input; a refused input changes nothing and returns its violation."""
        phase = self.phase
        try:
            self._admit(action, actor, payload, now)
        except Refused as refusal:
            return self._refuse(action, actor, phase, refusal)
        # Validated: the action is legal here and its payload is good. Where an unconditional
        # row of the table leads out of this phase, a transition is certain; where every row is
        # conditional (a clear, a void), the conditions read the state the action makes, so the
        # round is kept as it was and taken back whole if none holds: refused, nothing changed.
        kept = None if (phase, action) in type(self).certain_pairs() else self.checkpoint()
        self._events, self._commands = [], []
        self._input = Input(action, actor, dict(payload), now)
        self._fired = False
        try:
            getattr(self, f"_apply_{action}", self._apply_nothing)(payload, now)
            self.machine.events[action].trigger(self)
        except BaseException:
            if kept is not None:
                self._take_back(kept)
            raise
        if not self._fired:
            if kept is None:
                raise RuntimeError(f"{action} from {phase}: its unconditional row did not fire")
            self._take_back(kept)
            spec = type(self).ACTIONS[action]
            reason = f"{action} from {phase}: no transition applies to the round as it stands"
            return self._refuse(action, actor, phase, Refused(spec.article, reason))
        if self.phase != phase:
            self._on_enter(phase, now)
        outcome = Outcome(True, self.phase, None, tuple(self._events), tuple(self._commands))
        self._events, self._commands, self._input = [], [], None
        return outcome

    def legal_actions(self, role: str) -> list[str]:
        """The actions this role may send now (their payload still checked): those the
        transition table allows in the current phase, less those whose `_ready_<action>()`
        hook says the round's state leaves nothing to take (no misread card, no proposal)."""
        triggers = set(self.machine.get_triggers(self.phase))
        return [
            name
            for name, spec in type(self).ACTIONS.items()
            if name in triggers and role in spec.roles and self.ready(name)
        ]

    def ready(self, action: str) -> bool:
        """Whether the round's state lets `action` be taken, its phase aside; an action without
        a `_ready_<action>` hook always can. Not offered means refused: the action's check
        refuses it in the same state."""
        hook: Callable[[], bool] | None = getattr(self, f"_ready_{action}", None)
        return hook is None or hook()

    def snapshot(self) -> dict[str, Any]:
        """Everything the round holds, JSON-able; equal snapshots mean equal procedures."""
        return {
            "game": type(self).GAME,
            "table": self.table_id,
            "round": self.round_id,
            "phase": self.phase,
            "suspended": self.suspended,
            "resume_to": self.resume_to,
            "faults": copy.deepcopy(self.faults),
            "invalid_shakes": self.invalid_shakes,
            "override": copy.deepcopy(self.override),
            **self._game_snapshot(),
        }

    # ---- checkpoints ---------------------------------------------------------------------------

    # Attributes that come from the configuration, not from play: a checkpoint records them
    # and refuses to restore into a procedure configured otherwise.
    CONFIG_ATTRS: ClassVar[tuple[str, ...]] = ("table_id",)
    _NOT_STATE: ClassVar[frozenset[str]] = frozenset({"machine", "state"})

    def checkpoint(self) -> dict[str, Any]:
        """The procedure's whole restorable state, JSON-able: `restore` on a fresh procedure of
        the same configuration gives one that answers every later input as this one does."""
        config = {k: _encode(getattr(self, k)) for k in type(self).CONFIG_ATTRS}
        state = {
            k: _encode(v)
            for k, v in vars(self).items()
            # The machine binds its triggers and checks to the model: those are not state.
            if not k.startswith("_")
            and k not in type(self)._NOT_STATE
            and k not in config
            and not callable(v)
        }
        return {"game": type(self).GAME, "phase": self.phase, "config": config, "state": state}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        """Take the state of `checkpoint()`; ValueError if it is another game or configuration."""
        if checkpoint.get("game") != type(self).GAME:
            raise ValueError(f"a checkpoint of {checkpoint.get('game')!r}, not {type(self).GAME}")
        config = {k: _encode(getattr(self, k)) for k in type(self).CONFIG_ATTRS}
        if checkpoint.get("config") != config:
            raise ValueError(f"a checkpoint of {checkpoint.get('config')}, not of {config}")
        phase = type(self).Phase[str(checkpoint["phase"])]
        for key, value in dict(checkpoint["state"]).items():
            setattr(self, key, _decode(value))
        self.machine.set_state(phase)

    @classmethod
    def machine_data(cls) -> tuple[list[Enum], list[dict[str, Any]], Enum]:
        """States, transitions and initial state: what both the procedure and diagrams use."""
        return list(cls.Phase), cls.TRANSITIONS, cls.INITIAL

    @classmethod
    def transition_pairs(cls) -> frozenset[tuple[str, str]]:
        """Every (phase name, trigger) that the transition table allows."""
        cached = _PAIRS.get(cls)
        if cached is None:
            pairs: set[tuple[str, str]] = set()
            for row in cls.TRANSITIONS:
                sources = row["source"] if isinstance(row["source"], list) else [row["source"]]
                pairs |= {(s.name, row["trigger"]) for s in sources}
            cached = _PAIRS[cls] = frozenset(pairs)
        return cached

    @classmethod
    def certain_pairs(cls) -> frozenset[tuple[str, str]]:
        """Every (phase name, trigger) with a row that has no condition: it always fires."""
        cached = _CERTAIN.get(cls)
        if cached is None:
            pairs: set[tuple[str, str]] = set()
            for row in cls.TRANSITIONS:
                if row.get("conditions") or row.get("unless"):
                    continue
                sources = row["source"] if isinstance(row["source"], list) else [row["source"]]
                pairs |= {(s.name, row["trigger"]) for s in sources}
            cached = _CERTAIN[cls] = frozenset(pairs)
        return cached

    def _take_back(self, kept: Mapping[str, Any]) -> None:
        """Undo an input that did not go through: the round as `checkpoint()` kept it."""
        self.restore(kept)
        self._events, self._commands, self._input, self._target = [], [], None, None

    # ---- subclass hooks ----------------------------------------------------------------------

    def _game_snapshot(self) -> dict[str, Any]:
        raise NotImplementedError

    def _closed_refusal(self, action: str) -> Refused | None:
        """The refusal of an action out of phase when a rule stronger than the phase forbids
        it (a bet after the shake breaks the closing of the bets, in HOLD as anywhere)."""
        if action in type(self).BET_ACTIONS and self.bets_closed:
            return Refused(
                type(self).BETS_CLOSED_ARTICLE,
                f"the bets closed at the shake: no {action} after it",
            )
        return None

    def _opened(self) -> dict[str, Any]:
        """Effects of opening the table; returns what `table.opened` carries besides devices."""
        return {}

    def _seat(self, payload: Mapping[str, Any], key: str, article: str) -> int:
        """The seat a bet names under `key`, refused if players do not bet on it."""
        raise NotImplementedError

    def _on_enter(self, previous: str, now: float) -> None:
        """Effects of entering a phase (timers, device commands); after the transition."""

    def _on_suspend(self, now: float) -> None:
        """The round is suspended in HOLD or TILT (e.g. pause the arrangement timer)."""

    def _on_resume(self, phase: str, now: float) -> None:
        """The round resumes in the phase it was suspended in."""

    def _on_redirect(self, target: str, now: float) -> None:
        """The round resumes elsewhere than where it stopped (a deck taken out of play)."""

    def _on_void(self, now: float) -> None:
        """The round is void: what the game returns and clears."""

    # ---- internals ---------------------------------------------------------------------------

    def _mark_fired(self, event: EventData) -> None:
        self._fired = True

    def _apply_nothing(self, payload: Mapping[str, Any], now: float) -> None:
        pass

    _admitting: str | None = None

    def _admit(self, action: str, actor: str, payload: Mapping[str, Any], now: float) -> None:
        self._admitting = actor
        try:
            self._admit_checked(action, actor, payload, now)
        finally:
            self._admitting = None

    def _admit_checked(
        self, action: str, actor: str, payload: Mapping[str, Any], now: float
    ) -> None:
        spec = type(self).ACTIONS.get(action)
        if spec is None:
            raise Refused(HOUSE_ROLES, f"unknown action {action!r} for {type(self).GAME}")
        if not isinstance(actor, str) or not actor:
            raise Refused(HOUSE_ROLES, "the input names no actor")
        if not isinstance(now, (int, float)) or not math.isfinite(now):
            raise Refused(HOUSE_ROLES, "the input carries no valid time")
        if not isinstance(payload, Mapping):
            raise Refused(spec.article, "the payload must be a mapping")
        role = role_of(actor)
        if role not in spec.roles:
            raise Refused(
                HOUSE_ROLES, f"{action} is for {', '.join(sorted(spec.roles))}, not {role!r}"
            )
        if (self.phase, action) not in type(self).transition_pairs():
            closed = self._closed_refusal(action)
            if closed is not None:
                raise closed
            if self.phase in ("HOLD", "TILT"):
                raise Refused(
                    HOUSE_FAULTS,
                    f"the table is in {self.phase} ({self._fault_summary()}); "
                    f"{action} waits for a supervisor to clear it",
                )
            raise Refused(spec.article, f"{action} is not allowed in phase {self.phase}")
        check_params(spec, payload)
        check: Callable[[Mapping[str, Any], float], None] | None = getattr(
            self, f"_check_{action}", None
        )
        if check is not None:
            try:
                check(payload, now)
            except (KeyError, TypeError, ValueError) as exc:
                raise Refused(spec.article, f"malformed payload: {exc}") from None

    def _refuse(self, action: str, actor: str, phase: str, refusal: Refused) -> Outcome:
        violation = Violation(actor, action, phase, refusal.article, refusal.reason)
        event = JournalEvent(
            "table.violation", {"round": self.round_id, **violation.as_payload()}, True
        )
        return Outcome(False, self.phase, violation, (event,), ())

    def _fault_summary(self) -> str:
        return ", ".join(f"{d}: {f['fault']}" for d, f in sorted(self.faults.items())) or "no fault"

    def emit(self, name: str, **payload: Any) -> None:
        """A journal event of the input being handled; a commit point when its action is."""
        actor, commit = "system", True
        if self._input is not None:
            actor, commit = self._input.actor, type(self).ACTIONS[self._input.action].commit
        self._events.append(
            JournalEvent(name, {"round": self.round_id, "actor": actor, **payload}, commit)
        )

    def command(self, device: str, command: str, **args: Any) -> None:
        self._commands.append(DeviceCommand(device, command, args))

    # ---- two-person steps (overrides) ---------------------------------------------------------

    # A dealer proposes what a device could not provide, or a correction the regulation allows;
    # the table holds it pending and changes nothing until a supervisor approves it (or rejects
    # it), with a reason; both actors are journaled. A game keeps its pending proposal in
    # `self.override` and applies an approved one in `_apply_override`. Nothing that breaks the
    # regulation is ever proposed: each proposal action checks its own article first.

    override: dict[str, Any] | None = None

    def propose(self, kind: str, article: str, now: float, **details: Any) -> None:
        actor = self._input.actor if self._input is not None else "system"
        self.override = {
            "kind": kind,
            "article": article,
            "proposed_by": actor,
            "since": now,
            **copy.deepcopy(details),
        }
        self.emit("override.proposed", **copy.deepcopy(self.override))

    def _ready_approve_override(self) -> bool:
        return self.override is not None

    _ready_reject_override = _ready_approve_override

    def _check_decision(self, payload: Mapping[str, Any]) -> None:
        if self.override is None:
            raise Refused(HOUSE_OVERRIDE, "no proposal is pending a supervisor's decision")
        text(payload, "reason", HOUSE_OVERRIDE)
        # Two persons: whoever proposed does not decide, under whatever role they sign in.
        actor, proposer = self._admitting or "", str(self.override["proposed_by"])
        if actor == proposer or _person(actor) == _person(proposer) is not None:
            raise Refused(HOUSE_OVERRIDE, "the one who proposes does not decide on it")

    def _check_approve_override(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_decision(payload)
        self._check_override(need(self.override), now)

    def _check_reject_override(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_decision(payload)

    def _apply_approve_override(self, payload: Mapping[str, Any], now: float) -> None:
        pending = need(self.override)
        self.override = None
        self.emit(
            "override.approved",
            **{k: v for k, v in pending.items() if k != "since"},
            approved_by=self._input.actor if self._input is not None else "system",
            reason=payload["reason"],
        )
        self._apply_override(pending, now)

    def _apply_reject_override(self, payload: Mapping[str, Any], now: float) -> None:
        pending = need(self.override)
        self.override = None
        self.emit(
            "override.rejected",
            **{k: v for k, v in pending.items() if k != "since"},
            rejected_by=self._input.actor if self._input is not None else "system",
            reason=payload["reason"],
        )

    def _check_override(self, pending: Mapping[str, Any], now: float) -> None:
        """The proposal still holds when the supervisor decides (raise Refused if not)."""

    def _apply_override(self, pending: Mapping[str, Any], now: float) -> None:
        raise NotImplementedError

    # ---- equipment, bets (what both games write the same) -------------------------------------

    # A game names the article of its equipment check, the actions its shake closes and the
    # article that closes them, and what a bet is placed on ("door", "seat"). Its __init__ sets
    # `devices`, `identified` and `opened`; each round starts `bets`, `bets_closed` and `dice`.
    EQUIPMENT_ARTICLE: ClassVar[str]
    BET_ACTIONS: ClassVar[tuple[str, ...]] = ()
    BETS_CLOSED_ARTICLE: ClassVar[str]
    SEAT_NAME: ClassVar[str] = "seat"

    devices: tuple[str, ...]
    identified: dict[str, dict[str, Any]]
    opened: bool
    bets: list[dict[str, Any]]
    bets_closed: bool
    dice: list[int] | None

    def dice_good(self, event: object) -> bool:
        return self.dice is not None

    def dice_failed(self, event: object) -> bool:
        return self.invalid_shakes >= MAX_INVALID_SHAKES

    def before_opening(self, event: object) -> bool:
        return not self.opened

    def played_seats(self) -> list[int]:
        return sorted({b["seat"] for b in self.bets})

    def _find_bet(self, player: str, seat: int) -> dict[str, Any] | None:
        return next((b for b in self.bets if b["player"] == player and b["seat"] == seat), None)

    def _check_device_identified(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).EQUIPMENT_ARTICLE
        device = text(payload, "device", article)
        if device not in self.devices:
            raise Refused(article, f"{device} is not equipment of this table")
        flag(payload, "approved", article)

    def _apply_device_identified(self, payload: Mapping[str, Any], now: float) -> None:
        identity = {k: v for k, v in payload.items() if k != "device"}
        self.identified[payload["device"]] = copy.deepcopy(identity)
        self.emit("device.identified", device=payload["device"], **identity)

    def _check_open_table(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).EQUIPMENT_ARTICLE
        missing = [d for d in self.devices if d not in self.identified]
        if missing:
            raise Refused(article, f"not identified: {', '.join(missing)}")
        unapproved = [d for d in self.devices if not self.identified[d]["approved"]]
        if unapproved:
            raise Refused(article, f"not approved: {', '.join(unapproved)}")

    def _apply_open_table(self, payload: Mapping[str, Any], now: float) -> None:
        self.opened = True
        opened = self._opened()
        self.emit("table.opened", devices=sorted(self.identified), **opened)

    def _check_withdraw_bet(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).ACTIONS["withdraw_bet"].article
        player = text(payload, "player", article)
        if self._find_bet(player, self._seat(payload, "seat", article)) is None:
            raise Refused(article, f"{player} has no bet on {self.SEAT_NAME} {payload['seat']}")

    def _apply_withdraw_bet(self, payload: Mapping[str, Any], now: float) -> None:
        bet = need(self._find_bet(payload["player"], payload["seat"]))
        self.bets.remove(bet)
        self.emit("bet.withdrawn", player=payload["player"], seat=payload["seat"])

    def _check_move_bet(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).ACTIONS["move_bet"].article
        player = text(payload, "player", article)
        source = self._seat(payload, "from_seat", article)
        target = self._seat(payload, "to_seat", article)
        if self._find_bet(player, source) is None:
            raise Refused(article, f"{player} has no bet on {self.SEAT_NAME} {source}")
        if source == target or self._find_bet(player, target) is not None:
            raise Refused(article, f"{player} already bets on {self.SEAT_NAME} {target}")

    def _apply_move_bet(self, payload: Mapping[str, Any], now: float) -> None:
        bet = need(self._find_bet(payload["player"], payload["from_seat"]))
        bet["seat"] = payload["to_seat"]
        self.emit(
            "bet.moved", player=bet["player"], from_seat=payload["from_seat"], seat=bet["seat"]
        )

    # ---- dice ---------------------------------------------------------------------------------

    shakes: list[dict[str, Any]]

    def _apply_dice_landed(self, payload: Mapping[str, Any], now: float) -> None:
        if not payload.get("valid", True):
            # A die tilted or out of the cup: the same player shakes again (`invalid_throw`).
            self.shakes.append(self.invalid_throw(payload, now))
            return
        dice = list(payload["dice"])
        self.shakes.append({"dice": dice, "valid": True, "reason": None})
        self.invalid_shakes = 0
        self.dice = dice
        self.emit("dice.landed", dice=dice, total=sum(dice), **self._dice_counted(dice))

    def _dice_counted(self, dice: list[int]) -> dict[str, Any]:
        """Where the deal starts from a valid throw; returns what `dice.landed` adds."""
        raise NotImplementedError

    def invalid_throw(self, payload: Mapping[str, Any], now: float) -> dict[str, Any]:
        """An invalid throw (H3, R10): shaken again, and the third in a row is a TILT whose
        clear asks the shaker again. Returns the throw as recorded; nothing is made up for
        dice the shaker did not read."""
        throw: dict[str, Any] = {"valid": False, "reason": payload.get("reason")}
        if payload.get("dice") is not None:
            throw["dice"] = list(payload["dice"])
        if "die" in payload:
            throw["die"] = payload["die"]
        self.invalid_shakes += 1
        self.emit("dice.invalid", **throw, count=self.invalid_shakes)
        if self.invalid_shakes >= MAX_INVALID_SHAKES:
            self.tilt("dice_shaker", f"{self.invalid_shakes} invalid throws in a row", now)
        else:
            self.command("dice_shaker", "shake")
        return throw

    # ---- HOLD and TILT -----------------------------------------------------------------------

    def _suspend(self, now: float) -> None:
        if self.suspended is None:
            self.suspended = self.phase
            self.resume_to = self.phase
            self._on_suspend(now)

    def _check_fault_reported(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "device", HOUSE_FAULTS)
        text(payload, "fault", HOUSE_FAULTS)

    def _apply_fault_reported(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], payload["fault"], "tilt", now)
        self.emit("table.tilted", device=payload["device"], fault=payload["fault"])

    _check_door_opened = _check_fault_reported

    def _apply_door_opened(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], payload["fault"], "hold", now)
        self.emit("table.held", device=payload["device"], fault=payload["fault"])

    def _check_link_lost(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "device", HOUSE_FAULTS)

    def _apply_link_lost(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], "link lost", "hold", now)
        self.emit("table.held", device=payload["device"], fault="link lost")

    def _apply_recovered(self, payload: Mapping[str, Any], now: float) -> None:
        # Nothing is broken, but nobody has looked: a supervisor clears before play goes on.
        self._suspend(now)
        self.faults["table"] = {"fault": "restart", "kind": "hold", "healthy": True, "since": now}
        self.emit("table.recovered", phase=self.suspended)

    def _latch(self, device: str, fault: str, kind: str, now: float) -> None:
        self._suspend(now)
        self.faults[device] = {"fault": fault, "kind": kind, "healthy": False, "since": now}

    def tilt(self, device: str, fault: str, now: float, resume_to: str | None = None) -> None:
        """A fault found in a device's own fact (wrong count, misread): the caller's transition
        must lead to TILT. `resume_to` overrides the phase a supervisor's clear returns to."""
        self._latch(device, fault, "tilt", now)
        if resume_to is not None:
            self.resume_to = resume_to
        self.emit("table.tilted", device=device, fault=fault)

    def _check_device_healthy(self, payload: Mapping[str, Any], now: float) -> None:
        device = text(payload, "device", HOUSE_FAULTS)
        if device not in self.faults:
            raise Refused(HOUSE_FAULTS, f"{device} has no fault to clear")

    def _apply_device_healthy(self, payload: Mapping[str, Any], now: float) -> None:
        self.faults[payload["device"]]["healthy"] = True
        self.emit("device.healthy", device=payload["device"])

    def _check_clear(self, kind: str) -> None:
        sick = sorted(d for d, f in self.faults.items() if not f["healthy"])
        if sick:
            raise Refused(HOUSE_FAULTS, f"{', '.join(sick)} has not reported healthy")
        if kind == "hold" and any(f["kind"] == "tilt" for f in self.faults.values()):
            raise Refused(HOUSE_FAULTS, "a TILT is cleared with clear_tilt")

    def _check_clear_hold(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_clear("hold")

    def _check_clear_tilt(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_clear("tilt")

    def _apply_clear_hold(self, payload: Mapping[str, Any], now: float) -> None:
        self._resume(now)

    _apply_clear_tilt = _apply_clear_hold

    def _resume(self, now: float) -> None:
        target, exact = self.resume_to, self.resume_to == self.suspended
        self.emit(
            "table.resumed",
            phase=target,
            suspended=self.suspended,
            exact=exact,
            faults=copy.deepcopy(self.faults),
        )
        self._target = target
        self.faults, self.suspended, self.resume_to = {}, None, None
        if exact:
            self._on_resume(str(target), now)
        else:
            self._on_redirect(str(target), now)

    def _check_void_round(self, payload: Mapping[str, Any], now: float) -> None:
        sick = sorted(d for d, f in self.faults.items() if not f["healthy"])
        if sick:
            raise Refused(HOUSE_FAULTS, f"{', '.join(sick)} has not reported healthy")
        text(payload, "reason", HOUSE_FAULTS)

    def _apply_void_round(self, payload: Mapping[str, Any], now: float) -> None:
        self.emit(
            "round.voided",
            reason=payload["reason"],
            suspended=self.suspended,
            faults=copy.deepcopy(self.faults),
        )
        self.faults, self.suspended, self.resume_to = {}, None, None
        self._on_void(now)


_TUPLE, _KEYED = "__tuple__", "__keyed__"


def _encode(value: Any) -> Any:
    """JSON-able, and exact on the way back: tuples and dicts with int keys are tagged."""
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and _TUPLE not in value and _KEYED not in value:
            return {k: _encode(v) for k, v in value.items()}
        return {_KEYED: [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not checkpointable")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {_TUPLE}:
            return tuple(_decode(v) for v in value[_TUPLE])
        if set(value) == {_KEYED}:
            return {_decode(k): _decode(v) for k, v in value[_KEYED]}
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def replay(procedure: Procedure, inputs: Iterable[Input]) -> Procedure:
    """Feed journaled inputs to a fresh procedure: how the runtime recovers a round."""
    for item in inputs:
        procedure.handle(item.action, item.actor, item.payload, item.now)
    return procedure
