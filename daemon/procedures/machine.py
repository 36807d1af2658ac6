"""The engine's `transitions` machine: `transitions`' own Machine, Event, Transition and State,
each trigger fired by `Event.trigger` through the transitions the table gives it.

A procedure's machine is plain: not queued, no callback of the machine's own around an event
or a change (prepare, before and after a change, finalize, on exception), none on a
transition, events sent (`send_event`): its rows carry only guards. For such a machine,
`transitions`' trigger does, beside the guards and the change of state, only work that
changes nothing: a partial and a queue check, a try whose handler re-raises, empty lists of
callbacks walked, and about six debug lines a trigger that the operational log never enables
(tabled sets the `transitions` logger to WARNING: `daemon.logging`).
`PhaseEvent.trigger` leaves that work out and keeps the rest as `transitions` runs it: the
same rows in the same order, each guard's `Condition.check` (or what it computes, for a guard
named by a method of the model), a change of phase as `Transition._change_state` makes it
(`_change_state` itself wherever a phase has an enter or exit callback, the phase entered is
final, or the logger would write its INFO lines; else the model's state set), the same
result, the same exceptions.

Whenever the machine is not plain (a callback added, the queue on) or the `transitions` logger
would write its debug lines, the trigger is `transitions`' own, unchanged.
tests/procedures/test_machine.py fires every row of every game both ways, in every
combination of its guards' values, and compares what each did.
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Any

from transitions import Event, EventData, Machine, State, Transition

# `transitions.core`'s module logger (`logging.getLogger(__name__)` there).
_LOGGER = logging.getLogger("transitions.core")
# Below INFO: the debug lines of the steps a plain trigger leaves out. Its INFO lines (a phase
# entered, left) are written where `transitions` writes them, in `State.enter` and `exit`.
_NARRATION = logging.DEBUG


class PhaseState(State):
    """A phase of an engine's machine: `transitions`' own State, its name read once. `State.name`
    asks the Enum member for its name on every read, and a trigger reads it about six times."""

    name = ""  # a plain attribute in place of `State.name`'s property, set once below

    def __init__(self, name: str | Enum, *args: Any, **kwargs: Any) -> None:
        super().__init__(name, *args, **kwargs)
        self.name = name.name if isinstance(name, Enum) else name


def _change(transition: Transition, event_data: EventData) -> None:
    """`Transition._change_state`: the phase left (its exit callbacks), the model's state set,
    the phase entered (its enter callbacks, the machine's on final if it is final). Where no
    callback would run and the logger would not write the two INFO lines, what remains is the
    state set, and the event's state the new one."""
    machine, state = event_data.machine, event_data.state
    dest = None if transition.dest is None else machine.states.get(transition.dest)
    if (
        dest is None
        or state is None
        or state.name != transition.source
        or state.on_exit
        or dest.on_enter
        or dest.final
        or _LOGGER.isEnabledFor(logging.INFO)
    ):
        transition._change_state(event_data)
        return
    setattr(event_data.model, machine.model_attribute, dest.value)
    event_data.state = dest


class PhaseEvent(Event):
    """`transitions`' Event; on a plain machine its trigger leaves out what changes nothing."""

    machine: PhaseMachine

    def trigger(self, model: Any, *args: Any, **kwargs: Any) -> bool:
        machine = self.machine
        if not machine.plain() or _LOGGER.isEnabledFor(_NARRATION):
            return bool(super().trigger(model, *args, **kwargs))
        # `Machine.get_model_state`: the State of the model's state (an Enum by its name).
        value = getattr(model, machine.model_attribute)
        state = machine.states.get(value._name_ if isinstance(value, Enum) else value)
        rows = None if state is None else self.transitions.get(state.name)
        if rows is None:  # no such state, or not a source of this event: `transitions` says so
            return bool(super().trigger(model, *args, **kwargs))
        event_data = EventData(state, self, machine, model, args, kwargs)
        for transition in rows:
            event_data.transition = transition
            if transition.prepare or transition.before or transition.after:
                if transition.execute(event_data):  # callbacks of its own: as `transitions` does
                    event_data.result = True
                    break
                continue
            for condition in transition.conditions:
                # `Condition.check` with events sent: a guard named by a method of the model is
                # that method, called with the event; any other as `transitions` resolves it.
                func = condition.func
                method = getattr(model, func, None) if type(func) is str else None
                if method is not None and callable(method):
                    held = method(event_data) == condition.target
                else:
                    held = condition.check(event_data)
                if not held:
                    break
            else:
                if transition.dest:  # None: an internal transition, the phase is kept
                    _change(transition, event_data)
                event_data.result = True
                break
        return bool(event_data.result)


class PhaseMachine(Machine):
    """`transitions`' Machine, its states `PhaseState`s and its events `PhaseEvent`s."""

    state_cls = PhaseState
    event_cls = PhaseEvent

    def plain(self) -> bool:
        """Whether the machine is plain: not queued, no callback of its own around an event or a
        change, events sent. A phase's enter and exit callbacks, and the machine's on final, run
        where `transitions` runs them: in `Transition._change_state`, which a change of phase
        calls either way."""
        return not (
            self._queued
            or self._prepare_event
            or self._before_state_change
            or self._after_state_change
            or self._finalize_event
            or self._on_exception
            or not self.send_event
        )
