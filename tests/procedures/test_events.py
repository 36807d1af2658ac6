"""A game's journal events are data (daemon/procedures/events.py, each game's `EVENTS`): every
name the procedures emit and the table journals is declared, `emit` refuses any other, the
phase each declares after it is the phase the procedure is in, and each action's code is bound
by its class's `HOOKS`, not found by its name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from procedure_drive import Table, fresh
from test_replay import _draw_input, script

from daemon.api import gate
from daemon.api import requests as process
from daemon.procedures.base import Procedure
from daemon.procedures.diagram import procedure_of
from daemon.procedures.engine import Hooks, UndeclaredEvent, bind
from daemon.procedures.events import CHECKPOINT_EVENT, INPUT_EVENT, TABLE_EVENTS
from daemon.procedures.games import GAMES
from daemon.procedures.spec import OPENS
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.training import TRAINING_EVENT

DAEMON = Path(__file__).resolve().parents[2] / "daemon"
CJK = re.compile(r"[\u4e00-\u9fff]")
EVENT_NAME = re.compile(r"[a-z_]+(\.[a-z_]+)+")  # a journal event's name: `table.started`
# Calls that journal a line, by the name of the method called: the procedure's `emit`, and the
# journal's appends (the runtime, devices, the journal itself, the training panel, the API's
# security facts through the table).
JOURNALING = frozenset({"append", "append_async", "_append_sync", "journal_security"})


def _literals(path: Path, methods: frozenset[str]) -> list[tuple[str, int]]:
    """(event name, line) of each call of `methods` whose first argument is a dotted string."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        first = node.args[0]
        value = first.value if isinstance(first, ast.Constant) else None
        if name in methods and isinstance(value, str) and EVENT_NAME.fullmatch(value):
            found.append((value, node.lineno))
    return found


def _game_of(path: Path) -> list[str]:
    """The games whose procedure runs the code in `path` (a game's folder, or every game)."""
    parts = path.relative_to(DAEMON).parts
    return [parts[1]] if parts[0] == "procedures" and parts[1] in GAMES else sorted(GAMES)


def test_every_event_a_procedure_emits_is_declared_by_its_game() -> None:
    emitted = [
        (path, name, line)
        for path in sorted((DAEMON / "procedures").rglob("*.py"))
        for name, line in _literals(path, frozenset({"emit"}))
    ]
    assert len(emitted) >= 50  # the figure the issue counted (54): the scan reads them all
    for path, name, line in emitted:
        for game in _game_of(path):
            assert name in GAMES[game].events, f"{path.name}:{line}: {game} lacks {name}"
            assert GAMES[game].events[name].by == "procedure"


def test_every_event_the_table_journals_is_declared_by_both_games() -> None:
    journaled = {
        name for path in sorted(DAEMON.rglob("*.py")) for name, _ in _literals(path, JOURNALING)
    }
    # Names held in constants, and the API's security facts the table accepts.
    journaled |= {INPUT_EVENT, CHECKPOINT_EVENT, TRAINING_EVENT, gate.AUTH_REFUSED}
    journaled |= {gate.INPUT_REFUSED, *process.SECURITY_EVENTS}
    assert {"table.started", "device.restarted", "journal.opened", "api.forbidden"} <= journaled
    table = {event.name for event in TABLE_EVENTS}
    for game in GAMES.values():
        missing = journaled - set(game.events)
        assert not missing, f"{game.name} does not declare {sorted(missing)}"
    assert journaled <= table | {"table.violation"}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_event_has_its_labels_a_phase_of_its_game_and_a_known_rule(game: str) -> None:
    declared = GAMES[game]
    for name, event in declared.events.items():
        assert event.name == name
        assert event.label_en and CJK.search(event.label_zh), name
        assert event.phase_after is None or event.phase_after in declared.phases, name
        assert event.opens is None or event.opens in OPENS, name
    closing = {name for name, event in declared.events.items() if event.closes_round}
    assert closing == {"round.settled", "round.voided", "bets.returned"}


def test_emit_refuses_a_name_the_game_did_not_declare() -> None:
    procedure = ThirteenProcedure()
    with pytest.raises(UndeclaredEvent, match=r"table\.opend"):
        procedure.emit("table.opend")
    procedure.emit("table.opened", devices=[])  # a declared one goes through


def test_a_hook_that_emits_an_undeclared_event_fails_its_input() -> None:
    class Misspelt(ThirteenProcedure):
        HOOKS = bind(confirm_hand_shuffle=Hooks(apply=lambda self, p, n: self.emit("deck.shufled")))

    procedure = Misspelt()
    procedure.machine.set_state(procedure.Phase["HAND_SHUFFLE"])
    with pytest.raises(UndeclaredEvent):
        procedure.handle("confirm_hand_shuffle", "dealer:D1", {}, 1.0)


def test_a_hook_bound_to_an_undeclared_action_is_refused() -> None:
    class Stray(ThirteenProcedure):
        HOOKS = bind(shufle=Hooks(apply=lambda self, p, n: None))

    with pytest.raises(TypeError, match="shufle"):
        Stray.hooks()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_actions_code_is_bound_in_its_classs_hooks(game: str) -> None:
    """Each `_check_`, `_apply_` and `_ready_` method of an action is the one its class binds
    (no method found by name alone, none defined and never called)."""
    cls: type[Procedure] = procedure_of(game)
    hooks = cls.hooks()
    assert set(hooks) == set(cls.ACTIONS)
    bound = 0
    for action, hook in hooks.items():
        for kind in ("check", "apply", "ready"):
            method = getattr(cls, f"_{kind}_{action}", None)
            assert getattr(hook, kind) is method, f"{cls.__name__}: {kind} of {action}"
            bound += method is not None
    assert bound >= 30


@pytest.mark.parametrize("game", sorted(GAMES))
@settings(max_examples=25)  # each example plays up to 120 inputs, legal and not
@given(data=st.data())
def test_the_phase_declared_after_an_event_is_the_phase_the_procedure_is_in(
    game: str, data: st.DataObject
) -> None:
    """The phase after an input is the `phase_after` of its last event that declares one (what
    the floor's derived tables read, daemon/floor/derived.py), or the phase a `table.resumed`
    names."""
    legal = script(game)
    events = GAMES[game].events
    table = Table(fresh(game))
    position = 0
    for step in range(data.draw(st.integers(1, 120), label="steps")):
        use_script = position < len(legal) and data.draw(st.integers(0, 9)) < 7
        if use_script:
            item = legal[position]
            action, actor, payload = item.action, item.actor, dict(item.payload)
            table.now = max(table.now, item.now - 1.0)
        else:
            action, actor, payload = _draw_input(data, game, step)
        outcome = table.feed(action, actor, payload)
        position += use_script and outcome.accepted
        said = None
        for event in outcome.events:
            assert event.name in events
            if event.name == "table.resumed":
                said = event.payload["phase"]
            elif events[event.name].phase_after is not None:
                said = events[event.name].phase_after
        if said is not None:
            assert said == outcome.phase, [e.name for e in outcome.events]
