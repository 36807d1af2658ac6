"""The shared shape of a game procedure: phases, actions, refusals, HOLD and TILT.

A procedure is a pure `transitions` state machine that the table runtime feeds with inputs:
operator actions (dealer, supervisor), device facts (device) and timer facts (system). It does
no I/O. Each input returns an `Outcome` (`daemon.procedures.outcome`): accepted or refused, the
journal events to append (each marked when it is a commit point), and the device commands to
issue. Every refused input is a procedure violation that cites the article it breaks; an unknown
action, a wrong role, an action out of phase and a malformed payload are all refused the same
way, never raised.

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

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from daemon.procedures import checkpoint as codec
from daemon.procedures import guards
from daemon.procedures.common import HOUSE_FAULTS, HOUSE_ROLES, check_device_fact
from daemon.procedures.machine import PhaseMachine
from daemon.procedures.outcome import DeviceCommand, Input, JournalEvent, Outcome, Violation
from daemon.procedures.payload import Refused, check_params
from daemon.procedures.records import Fault, Misdeal
from daemon.procedures.spec import Action, Event

_PAIRS: dict[type[Engine], frozenset[tuple[str, str]]] = {}
_CERTAIN: dict[type[Engine], frozenset[tuple[str, str]]] = {}
_ROWS: dict[type[Engine], list[dict[str, Any]]] = {}
# An action's check or effect, called on the procedure with the payload and the input's time.
Hook = Callable[[Any, Mapping[str, Any], float], None]


@dataclass(frozen=True)
class Hooks:
    """An action's code in a procedure, bound by the class that defines it (`HOOKS`): `check`
    refuses a bad input (raises `Refused`) before anything changes, `apply` changes the round
    and emits its events and commands, `ready` says whether the round's state leaves anything
    for the action to take (its phase aside); each None where the action needs none."""

    check: Hook | None = None
    apply: Hook | None = None
    ready: Callable[[Any], bool] | None = None


def bind(**hooks: Hooks) -> dict[str, Hooks]:
    """A layer's table of hooks, by action name (`HOOKS = bind(place_bet=Hooks(...), ...)`)."""
    return hooks


_HOOKS: dict[type[Engine], Mapping[str, Hooks]] = {}


class Engine:
    """The engine of a game's procedure: admission, the machine, events and commands.

    The layers above it add one job each: `faults.WithFaults` (HOLD and TILT),
    `overrides.WithOverrides` (two-person steps) and `base.Procedure` (equipment, bets, dice);
    each game's procedure derives from `base.Procedure`.

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
    # Every journal event the game declares (`daemon.procedures.spec.Event`): `emit` refuses
    # any other name.
    EVENTS: ClassVar[Mapping[str, Event]] = {}
    # Each layer's and the game's own hooks, by action (`bind`); merged by `hooks()`.
    HOOKS: ClassVar[Mapping[str, Hooks]] = {}

    state: Enum

    def __init__(self, table_id: str = "T01") -> None:
        self.table_id = table_id
        self.round_id = 0
        self.suspended: str | None = None
        self.resume_to: str | None = None
        self.faults: dict[str, Fault] = {}
        self.invalid_shakes = 0
        # A deal fault on record this round that the reader's record cannot put right.
        self.misdeal: Misdeal | None = None
        self._events: list[JournalEvent] = []
        self._commands: list[DeviceCommand] = []
        self._input: Input | None = None
        self._target: str | None = None
        # Not queued: nothing the machine calls fires another trigger, so each trigger runs
        # to its end at once and answers whether one of its transitions fired (no callback
        # of our own on every transition to tell it).
        self.machine = PhaseMachine(
            model=self,
            states=list(type(self).Phase),
            transitions=type(self).machine_rows(),
            initial=type(self).INITIAL,
            auto_transitions=False,
            send_event=True,
        )

    # ---- the runtime's API -------------------------------------------------------------------

    @property
    def phase(self) -> str:
        # `_name_`, the member's own attribute: `.name` goes through enum's descriptor, and the
        # phase is read several times an input.
        return self.state._name_

    def handle(self, action: str, actor: str, payload: Mapping[str, Any], now: float) -> Outcome:
        """Feed one input; a refused input changes nothing and returns its violation."""
        cls = type(self)
        phase = self.state._name_
        self._admitting = actor
        try:
            self._admit_checked(action, actor, payload, now)
        except Refused as refusal:
            return self._refuse(action, actor, phase, refusal)
        finally:
            self._admitting = None
        # Validated: the action is legal here and its payload is good. Where the rows of the
        # table from this phase leave no case out (one without guards, or guards that cover
        # every case), a transition is certain; where they may all fail (a clear, a void), the
        # conditions read the state the action makes, so the round is kept as it was and taken
        # back whole if none holds: refused, nothing changed.
        certain = _CERTAIN.get(cls) or cls.certain_pairs()
        kept = None if (phase, action) in certain else self.checkpoint()
        self._events, self._commands = [], []
        self._input = Input(action, actor, payload, now)
        self._target = None
        try:
            apply = (_HOOKS.get(cls) or cls.hooks())[action].apply
            if apply is not None:
                apply(self, payload, now)
            fired = self.machine.events[action].trigger(self)
        except BaseException:
            if kept is not None:
                self._take_back(kept)
            raise
        if not fired:
            if kept is None:
                raise RuntimeError(
                    f"{action} from {phase}: no row fired, yet they cover every case"
                )
            self._take_back(kept)
            spec = cls.ACTIONS[action]
            reason = f"{action} from {phase}: no transition applies to the round as it stands"
            return self._refuse(
                action,
                actor,
                phase,
                Refused(
                    spec.article, reason, zh=f"「{spec.label_zh or action}」：以本局現況無法執行"
                ),
            )
        now_phase = self.state._name_
        if now_phase != phase:
            self._on_enter(phase, now)
            now_phase = self.state._name_
        outcome = Outcome(True, now_phase, None, tuple(self._events), tuple(self._commands))
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
        hooks = (_HOOKS.get(type(self)) or type(self).hooks()).get(action)
        return hooks is None or hooks.ready is None or hooks.ready(self)

    # ---- checkpoints ---------------------------------------------------------------------------

    # Attributes that come from the configuration, not from play: a checkpoint records them
    # and refuses to restore into a procedure configured otherwise.
    CONFIG_ATTRS: ClassVar[tuple[str, ...]] = ("table_id",)
    # The state of play each layer keeps, by name: what a checkpoint records and restores (a
    # test proves nothing else of the procedure's is state). The engine's own, then the game's.
    ENGINE_STATE: ClassVar[tuple[str, ...]] = (
        "round_id",
        "suspended",
        "resume_to",
        "faults",
        "invalid_shakes",
        "misdeal",
    )
    STATE: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def state_names(cls) -> tuple[str, ...]:
        return tuple(dict.fromkeys(cls.ENGINE_STATE + cls.STATE))

    def checkpoint(self) -> dict[str, Any]:
        """The procedure's whole restorable state, JSON-able: `restore` on a fresh procedure of
        the same configuration gives one that answers every later input as this one does."""
        config = {k: codec.encode(getattr(self, k)) for k in type(self).CONFIG_ATTRS}
        state = {k: codec.encode(getattr(self, k)) for k in type(self).state_names()}
        return {"game": type(self).GAME, "phase": self.phase, "config": config, "state": state}

    def restore(self, checkpoint: Mapping[str, Any]) -> None:
        """Take the state of `checkpoint()`; ValueError if it is another game or configuration,
        or does not hold exactly the state this procedure keeps."""
        if checkpoint.get("game") != type(self).GAME:
            raise ValueError(f"a checkpoint of {checkpoint.get('game')!r}, not {type(self).GAME}")
        config = {k: codec.encode(getattr(self, k)) for k in type(self).CONFIG_ATTRS}
        if checkpoint.get("config") != config:
            raise ValueError(f"a checkpoint of {checkpoint.get('config')}, not of {config}")
        phase = type(self).Phase[str(checkpoint["phase"])]
        state = dict(checkpoint["state"])
        names = type(self).state_names()
        if set(state) != set(names):
            odd = sorted(set(state) ^ set(names))
            raise ValueError(f"a checkpoint whose state does not match this procedure's: {odd}")
        for key in names:
            setattr(self, key, codec.decode(state[key]))
        self.machine.set_state(phase)

    @classmethod
    def machine_rows(cls) -> list[dict[str, Any]]:
        """`TRANSITIONS` as the machine is given them: a row that leads from its one phase back
        to that phase is an internal transition (`dest` None), which `transitions` fires
        without leaving and entering the phase again (exit, set, enter: the larger part of a
        trigger's cost). The phases have no enter or exit callbacks, so nothing else differs;
        the diagrams draw it as the same loop (`diagram.edges`)."""
        cached = _ROWS.get(cls)
        if cached is None:
            cached = _ROWS[cls] = [
                {**row, "dest": None} if row["source"] in (row["dest"], [row["dest"]]) else row
                for row in cls.TRANSITIONS
            ]
        return cached

    @classmethod
    def transition_pairs(cls) -> frozenset[tuple[str, str]]:
        """Every (phase name, trigger) that the transition table allows."""
        cached = _PAIRS.get(cls)
        if cached is None:
            cached = _PAIRS[cls] = frozenset(guards.pairs(cls.TRANSITIONS))
        return cached

    @classmethod
    def certain_pairs(cls) -> frozenset[tuple[str, str]]:
        """Every (phase name, trigger) some row of which fires whatever the round's state: a
        row without guards, or rows whose guards leave no case out (`guards.covers`)."""
        cached = _CERTAIN.get(cls)
        if cached is None:
            cached = _CERTAIN[cls] = frozenset(
                pair
                for pair, rows in guards.pairs(cls.TRANSITIONS).items()
                if guards.covers([guards.guards(row) for row in rows])
            )
        return cached

    @classmethod
    def hooks(cls) -> Mapping[str, Hooks]:
        """Each declared action's hooks: the `HOOKS` tables of the class and its layers, the
        most derived binding of each of check, apply and ready winning. A hook bound to an
        action the game does not declare is an error (a name mistyped, an action renamed)."""
        cached = _HOOKS.get(cls)
        if cached is None:
            merged: dict[str, Hooks] = {}
            for klass in reversed(cls.__mro__):
                for name, bound in vars(klass).get("HOOKS", {}).items():
                    old = merged.get(name, _NO_HOOKS)
                    merged[name] = Hooks(
                        bound.check or old.check, bound.apply or old.apply, bound.ready or old.ready
                    )
            stray = sorted(set(merged) - set(cls.ACTIONS))
            if stray:
                raise TypeError(f"{cls.__name__} binds hooks of undeclared actions: {stray}")
            cached = _HOOKS[cls] = {name: merged.get(name, _NO_HOOKS) for name in cls.ACTIONS}
        return cached

    def _take_back(self, kept: Mapping[str, Any]) -> None:
        """Undo an input that did not go through: the round as `checkpoint()` kept it."""
        self.restore(kept)
        self._events, self._commands, self._input, self._target = [], [], None, None

    # ---- subclass hooks ----------------------------------------------------------------------

    def _game_snapshot(self) -> dict[str, Any]:
        raise NotImplementedError

    def _pending_refusal(self, action: str) -> Refused | None:
        """The refusal of an action that a pending decision holds back (a void waiting for a
        second supervisor), in any phase."""
        return None

    def _closed_refusal(self, action: str) -> Refused | None:
        """The refusal of an action out of phase when a rule stronger than the phase forbids
        it (a bet after the shake breaks the closing of the bets, in HOLD as anywhere)."""
        return None

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

    # The actor of the input being admitted (a check compares it with a proposer's).
    _admitting: str | None = None

    def _admit_checked(
        self, action: str, actor: str, payload: Mapping[str, Any], now: float
    ) -> None:
        spec = type(self).ACTIONS.get(action)
        if spec is None:
            raise Refused(
                HOUSE_ROLES,
                f"unknown action {action!r} for {type(self).GAME}",
                zh=f"{type(self).GAME} 沒有此動作：{action!r}",
            )
        if not isinstance(actor, str) or not actor:
            raise Refused(HOUSE_ROLES, "the input names no actor", zh="輸入未註明操作者")
        if not isinstance(now, (int, float)) or not math.isfinite(now):
            raise Refused(HOUSE_ROLES, "the input carries no valid time", zh="輸入沒有有效時間")
        if type(payload) is not dict and not isinstance(payload, Mapping):
            raise Refused(spec.article, "the payload must be a mapping", zh="參數須為鍵值表")
        role = actor.partition(":")[0]
        if role not in spec.roles:
            raise Refused(
                HOUSE_ROLES,
                f"{action} is for {', '.join(sorted(spec.roles))}, not {role!r}",
                zh=f"{action} 屬於 {', '.join(sorted(spec.roles))}，不屬於 {role!r}",
            )
        phase = self.state._name_
        if (phase, action) not in (_PAIRS.get(type(self)) or type(self).transition_pairs()):
            closed = self._closed_refusal(action)
            if closed is not None:
                raise closed
            if phase in ("HOLD", "TILT"):
                raise Refused(
                    HOUSE_FAULTS,
                    f"the table is in {phase} ({self._fault_summary()}); "
                    f"{action} waits for a supervisor to clear it",
                    zh=f"賭枱{'暫停' if phase == 'HOLD' else '故障停機'}（{self._fault_summary()}）"
                    f"；「{spec.label_zh or action}」須待主任解除",
                )
            raise Refused(
                spec.article,
                f"{action} is not allowed in phase {phase}",
                zh=f"此階段不可「{spec.label_zh or action}」",
            )
        if role == "device":
            check_device_fact(action, actor, payload)
        pending = self._pending_refusal(action)
        if pending is not None:
            raise pending
        check_params(spec, payload)
        check = (_HOOKS.get(type(self)) or type(self).hooks())[action].check
        if check is not None:
            try:
                check(self, payload, now)
            except (KeyError, TypeError, ValueError) as exc:
                raise Refused(
                    spec.article, f"malformed payload: {exc}", zh=f"參數格式錯誤：{exc}"
                ) from None

    def _refuse(self, action: str, actor: str, phase: str, refusal: Refused) -> Outcome:
        violation = Violation(
            actor, action, phase, refusal.article, refusal.reason, refusal.field, refusal.zh
        )
        event = JournalEvent(
            "table.violation", {"round": self.round_id, **violation.as_payload()}, True
        )
        return Outcome(False, self.phase, violation, (event,), ())

    def _fault_summary(self) -> str:
        return ", ".join(f"{d}: {f['fault']}" for d, f in sorted(self.faults.items())) or "no fault"

    def emit(self, name: str, **payload: Any) -> None:
        """A journal event of the input being handled; a commit point when its action is. Only
        an event the game declares (`EVENTS`): any other name is a fault of the code, raised
        (the input is taken back whole, `handle`)."""
        if name not in type(self).EVENTS:
            raise UndeclaredEvent(f"{type(self).GAME} does not declare the event {name!r}")
        actor, commit = "system", True
        if self._input is not None:
            actor, commit = self._input.actor, type(self).ACTIONS[self._input.action].commit
        self._events.append(
            JournalEvent(name, {"round": self.round_id, "actor": actor, **payload}, commit)
        )

    def command(self, device: str, command: str, **args: Any) -> None:
        self._commands.append(DeviceCommand(device, command, args))


class UndeclaredEvent(ValueError):
    """A procedure emitted an event its game does not declare."""


_NO_HOOKS = Hooks()


def replay(procedure: Engine, inputs: Iterable[Input]) -> Engine:
    """Feed journaled inputs to a fresh procedure: how the runtime recovers a round."""
    for item in inputs:
        procedure.handle(item.action, item.actor, item.payload, item.now)
    return procedure
