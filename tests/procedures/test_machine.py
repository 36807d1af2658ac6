"""The engine's machine (`daemon.procedures.machine`) fires a trigger as `transitions` does: for
every row of every game's table, in every combination of its guards' values, a stock
`transitions.Machine` and the engine's `PhaseMachine` try the same guards in the same order,
with the same event, and end in the same phase with the same answer; a guard that raises
leaves both where they were with the same exception. Whatever a plain machine leaves out
(callbacks of the machine's own, the narration of the `transitions` logger) a machine that is
not plain, or a logger that would write it, gets as `transitions` gives it. And a procedure on
a stock machine answers random mixes of inputs exactly as the engine's does."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any

import pytest
from procedure_drive import Prefixes, Table, fresh
from test_replay import script, seeded_walk
from transitions import EventData, Machine, MachineError

from daemon.procedures import engine, guards
from daemon.procedures.base import Procedure
from daemon.procedures.machine import PhaseMachine, PhaseState
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure

GAMES: dict[str, type[Procedure]] = {"thirteen": ThirteenProcedure, "paigow": PaiGowProcedure}
Seen = tuple[str, str, str, str, str | None, tuple[Any, ...], dict[str, Any]]


class StockMachine(Machine):
    """`transitions`' Machine as it comes, with the engine's states."""

    state_cls = PhaseState


class Probe:
    """A model whose guards answer from `case` and write down each event they are asked with."""

    def __init__(self) -> None:
        self.case: dict[Any, bool] = {}
        self.seen: list[Seen] = []
        self.fail: Any = None  # the guard that raises, if one does

    def ask(self, guard: Any, event: EventData) -> bool:
        assert event.model is self
        transition = event.transition
        assert transition is not None
        self.seen.append(
            (
                guard if isinstance(guard, str) else guard.__name__,
                event.state.name,
                event.event.name,
                transition.source,
                transition.dest,
                event.args,
                event.kwargs,
            )
        )
        if guard == self.fail:
            raise LookupError(f"guard {guard} failed")
        return self.case[guard]


def _method(name: str) -> Callable[[Probe, EventData], bool]:
    def guard(self: Probe, event: EventData) -> bool:
        return self.ask(name, event)

    return guard


class _Callable:
    """A guard written as a callable (as the fault rows' are), asked through the model."""

    def __init__(self, original: Any) -> None:
        self.original = original
        self.__name__ = getattr(original, "__name__", repr(original))

    def __call__(self, event: EventData) -> bool:
        model: Probe = event.model
        return model.ask(self.original, event)


def _probe_rows(cls: type[Procedure]) -> tuple[type[Probe], list[dict[str, Any]]]:
    """The game's rows as its machine is given them, each guard answering from the probe."""
    callables: dict[Any, _Callable] = {}
    names: set[str] = set()

    def swap(guard: Any) -> Any:
        if isinstance(guard, str):
            names.add(guard)
            return guard
        return callables.setdefault(guard, _Callable(guard))

    rows = []
    for row in cls.machine_rows():
        out = dict(row)
        for key in ("conditions", "unless"):
            if key in row:
                out[key] = [swap(g) for g in guards._listed(row[key])]
        rows.append(out)
    probe = type(f"{cls.__name__}Probe", (Probe,), {n: _method(n) for n in names})
    return probe, rows


def _pair(cls: type[Procedure], **options: Any) -> Iterator[tuple[Probe, Machine]]:
    probe, rows = _probe_rows(cls)
    for machine_cls in (StockMachine, PhaseMachine):
        model = probe()
        machine = machine_cls(
            model=model,
            states=list(cls.Phase),
            transitions=rows,
            initial=cls.INITIAL,
            auto_transitions=False,
            send_event=True,
            **options,
        )
        yield model, machine


def _fire(model: Probe, machine: Machine, source: Enum, trigger: str, case: dict[Any, bool]) -> Any:
    machine.set_state(source)
    model.case, model.seen = case, []
    try:
        answer: Any = machine.events[trigger].trigger(model, "arg", key="value")
    except Exception as exc:
        answer = (type(exc), str(exc))
    return answer, model.state, model.seen


@pytest.mark.parametrize("cls", list(GAMES.values()), ids=list(GAMES))
def test_every_row_fires_as_transitions_fires_it_in_every_case(cls: type[Procedure]) -> None:
    (stock_model, stock), (phase_model, phase) = _pair(cls)
    assert isinstance(phase, PhaseMachine) and phase.plain()
    compared = changed = raised = 0
    for (source_name, trigger), rows in guards.pairs(cls.machine_rows()).items():
        source = cls.Phase[source_name]
        every = guards.cases([guards.guards(row) for row in rows])
        assert every is not None
        for raw in every:
            # The case keyed as the probes ask: a callable guard by the original it stands for.
            case = dict(raw)
            expected = _fire(stock_model, stock, source, trigger, case)
            assert _fire(phase_model, phase, source, trigger, case) == expected, (
                source_name,
                trigger,
                raw,
            )
            compared += 1
            changed += expected[1] is not source
            # A guard that raises when asked: the same exception, the phase kept, in both (in
            # every case of a pair with few guards; where a pair has many, when none holds).
            for guard in case if len(case) <= 4 or not any(case.values()) else ():
                stock_model.fail = phase_model.fail = guard
                expected = _fire(stock_model, stock, source, trigger, case)
                assert _fire(phase_model, phase, source, trigger, case) == expected
                if isinstance(expected[0], tuple):
                    raised += 1
                    assert expected[0][0] is LookupError and expected[1] is source
                stock_model.fail = phase_model.fail = None
    assert compared > 200 and changed > 50 and raised > 100


@pytest.mark.parametrize("cls", list(GAMES.values()), ids=list(GAMES))
def test_a_trigger_from_a_phase_it_does_not_leave_raises_as_transitions_does(
    cls: type[Procedure],
) -> None:
    (stock_model, stock), (phase_model, phase) = _pair(cls)
    pairs = guards.pairs(cls.machine_rows())
    trigger = next(iter(stock.events))
    source = next(p for p in cls.Phase if (p.name, trigger) not in pairs)
    expected = _fire(stock_model, stock, source, trigger, {})
    assert expected[0][0] is MachineError
    assert _fire(phase_model, phase, source, trigger, {}) == expected


def test_a_machine_with_callbacks_of_its_own_runs_them_as_transitions_does() -> None:
    """Not plain: a before-change callback and a phase's enter callback run, in order, both
    ways; the engine's machine then is `transitions`' trigger itself."""
    cls = ThirteenProcedure
    calls: dict[str, list[str]] = {"stock": [], "phase": []}
    answers = []
    for (model, machine), name in zip(_pair(cls), calls, strict=True):
        machine.before_state_change = [lambda event, n=name: calls[n].append("before")]
        machine.after_state_change = [lambda event, n=name: calls[n].append("after")]
        if isinstance(machine, PhaseMachine):
            assert not machine.plain()
        answers.append(_fire(model, machine, cls.Phase.EQUIPMENT_CHECK, "open_table", {}))
        answers.append(_fire(model, machine, cls.Phase.EQUIPMENT_CHECK, "device_identified", {}))
    assert answers[:2] == answers[2:]
    assert calls["stock"] == calls["phase"] == ["before", "after"] * 2


@pytest.mark.parametrize("kinds", [("enter",), ("exit",), ("exit", "enter")])
def test_a_phases_enter_and_exit_callbacks_run_on_a_change_of_phase(kinds: tuple[str, ...]) -> None:
    calls: dict[str, list[str]] = {"stock": [], "phase": []}
    for (model, machine), name in zip(_pair(ThirteenProcedure), calls, strict=True):
        for state in machine.states.values():
            for kind in kinds:
                state.add_callback(
                    kind, lambda event, n=name, k=kind: calls[n].append(f"{k} {event.state.name}")
                )
        _fire(model, machine, ThirteenProcedure.Phase.EQUIPMENT_CHECK, "open_table", {})
        _fire(model, machine, ThirteenProcedure.Phase.EQUIPMENT_CHECK, "device_identified", {})
    expected = {"exit": "exit EQUIPMENT_CHECK", "enter": "enter HAND_SHUFFLE"}
    assert calls["stock"] == calls["phase"] == [expected[k] for k in kinds]


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.WARNING])
def test_the_narration_of_transitions_is_written_whenever_its_logger_would_write_it(
    level: int, caplog: pytest.LogCaptureFixture
) -> None:
    records: list[list[tuple[str, int, str]]] = []
    for model, machine in _pair(ThirteenProcedure):
        caplog.clear()
        with caplog.at_level(level, logger="transitions"):
            _fire(model, machine, ThirteenProcedure.Phase.EQUIPMENT_CHECK, "open_table", {})
            # A guard that fails is narrated too (at DEBUG).
            _fire(model, machine, ThirteenProcedure.Phase.HOLD, "clear_hold", {})
        records.append([(r.name, r.levelno, r.getMessage()) for r in caplog.records])
    assert records[0] == records[1]
    assert bool(records[0]) == (level <= logging.INFO)
    assert any("HAND_SHUFFLE" in m for _, _, m in records[0]) == (level <= logging.INFO)


def _stock_fresh(game: str) -> Procedure:
    """The game's procedure, its machine `transitions`' own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "PhaseMachine", StockMachine)
        procedure = fresh(game)
    assert type(procedure.machine) is StockMachine
    return procedure


PREFIXES = Prefixes()  # each phase of each game, reached by a recorded legal prefix


@pytest.mark.parametrize("game", ["thirteen", "paigow"])
def test_a_procedure_on_a_stock_machine_answers_every_input_alike(game: str) -> None:
    """A fixed corpus (it was a hypothesis search of 60 examples a game, 24 s each): from every
    phase the session reaches (HOLD and TILT too), every action the game declares, sent by each
    of its roles and by a stranger, with the script's payload, none and a wrong one; then twelve
    seeded walks of the session with faults, voids and noise. Both machines answer each input
    alike and end in the same checkpoint and snapshot."""
    prefixes = PREFIXES[game]
    payloads: dict[str, list[dict[str, Any]]] = {}
    for item in script(game):
        payloads.setdefault(item.action, []).append(dict(item.payload))
    inputs = 0
    for phase, prefix in prefixes.items():
        mine, stock = Table(fresh(game)), Table(_stock_fresh(game))
        for item in prefix:
            mine.now = stock.now = item.now - 1.0
            assert mine.feed(item.action, item.actor, dict(item.payload)).accepted
            stock.feed(item.action, item.actor, dict(item.payload))
        saved = mine.proc.checkpoint()
        assert stock.proc.checkpoint() == saved and mine.proc.phase == phase
        for action, spec in mine.proc.ACTIONS.items():
            actors = [f"{role}:R1" for role in sorted(spec.roles)] + ["x"]
            tries = [*payloads.get(action, [])[:2], {}, {"seat": "one", "card": 7}]
            for actor in actors:
                for payload in tries:
                    mine.proc.restore(saved)
                    stock.proc.restore(saved)
                    outcome = mine.feed(action, actor, dict(payload))
                    assert stock.feed(action, actor, dict(payload)) == outcome, (phase, action)
                    assert stock.proc.checkpoint() == mine.proc.checkpoint(), (phase, action)
                    inputs += 1
    for walk in (seeded_walk(game, seed) for seed in range(12)):
        mine, stock = Table(fresh(game)), Table(_stock_fresh(game))
        assert isinstance(mine.proc.machine, PhaseMachine)
        for item in walk:
            mine.now = stock.now = max(mine.now, item.now - 1.0)
            outcome = mine.feed(item.action, item.actor, dict(item.payload))
            assert stock.feed(item.action, item.actor, dict(item.payload)) == outcome, item
            inputs += 1
        assert stock.proc.checkpoint() == mine.proc.checkpoint()
        assert stock.proc.snapshot() == mine.proc.snapshot()
    assert inputs > 2_000


def test_a_final_phase_runs_the_machines_on_final_as_transitions_does() -> None:
    calls: dict[str, list[str]] = {"stock": [], "phase": []}
    answers = []
    for (model, machine), name in zip(_pair(ThirteenProcedure), calls, strict=True):
        machine.get_state("HAND_SHUFFLE").final = True
        machine.on_final = [lambda event, n=name: calls[n].append(event.state.name)]
        answers.append(
            _fire(model, machine, ThirteenProcedure.Phase.EQUIPMENT_CHECK, "open_table", {})
        )
    assert answers[0] == answers[1]
    assert calls["stock"] == calls["phase"] == ["HAND_SHUFFLE"]
