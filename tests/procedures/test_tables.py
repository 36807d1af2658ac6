"""Every (phase, trigger) pair outside each game's transition table is refused, with an article.

The pairs come from the machines' own data, so a transition added or removed changes the cases.
Refused inputs change nothing, so one table per phase serves all of that phase's pairs.
"""

from __future__ import annotations

from typing import Any

import pytest
from procedure_drive import Table, at_phase

from daemon.config import ConfigError, load_config, parse_config
from daemon.procedures import build
from daemon.procedures.base import HOUSE_FAULTS, Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.spec import Param
from daemon.procedures.thirteen import ThirteenProcedure

GAMES: dict[str, type[Procedure]] = {"thirteen": ThirteenProcedure, "paigow": PaiGowProcedure}
# The actions the shake closes, and the article that closes them (Thirteen Art. 2(c), Pai Gow
# Art. 2(7)).
BETS_CLOSED = {
    "thirteen": (("place_bet", "withdraw_bet", "move_bet"), "Portaria 51/89/M Art. 2(c)"),
    "paigow": (
        ("place_bet", "withdraw_bet", "move_bet", "place_stake"),
        "Portaria 15/90/M Art. 2(7)",
    ),
}

OUTSIDE = [
    (game, phase.name, action)
    for game, cls in GAMES.items()
    for phase in cls.Phase
    for action in cls.ACTIONS
    if (phase.name, action) not in cls.transition_pairs()
]
INSIDE = [
    (game, phase, action)
    for game, cls in GAMES.items()
    for phase, action in sorted(cls.transition_pairs())
]

_tables: dict[tuple[str, str], Table] = {}


def _table(game: str, phase: str, prefixes: dict[str, Any]) -> Table:
    if (game, phase) not in _tables:
        _tables[game, phase] = at_phase(game, phase, prefixes)
    return _tables[game, phase]


def test_the_tables_are_not_trivial() -> None:
    for cls in GAMES.values():
        assert len(cls.transition_pairs()) > 40
        phases = {p.name for p in cls.Phase}
        # Every phase is the source of some transition and HOLD/TILT reach out of every phase.
        assert {p for p, _ in cls.transition_pairs()} == phases
        for phase in phases - {"HOLD", "TILT"}:
            assert (phase, "fault_reported") in cls.transition_pairs()
            assert (phase, "door_opened") in cls.transition_pairs()
            assert (phase, "link_lost") in cls.transition_pairs()
    assert len(OUTSIDE) > 300


@pytest.mark.parametrize(("game", "phase", "action"), OUTSIDE)
@pytest.mark.article("51/89/M", "2(a)", "2(c)", "2(d)")
@pytest.mark.article("15/90/M", "2(7)", "6(1)")
def test_a_trigger_outside_the_table_is_refused(
    game: str, phase: str, action: str, prefixes: dict[str, Any]
) -> None:
    table = _table(game, phase, prefixes)
    spec = GAMES[game].ACTIONS[action]
    actor = f"{sorted(spec.roles)[0]}:X"
    outcome = table.refused(action, actor, {})
    violation = outcome.violation
    assert violation is not None
    assert (violation.actor, violation.action, violation.phase) == (actor, action, phase)
    expected = HOUSE_FAULTS if phase in ("HOLD", "TILT") else spec.article
    if action in BETS_CLOSED[game][0] and getattr(table.proc, "bets_closed", False):
        expected = BETS_CLOSED[game][1]  # after the shake, the closing of the bets is cited
    assert violation.article == expected
    assert violation.article.startswith(("Portaria", "tabled"))
    assert outcome.events[0].commit
    assert outcome.events[0].payload["article"] == expected


@pytest.mark.parametrize(("game", "phase", "action"), INSIDE)
def test_a_trigger_inside_the_table_is_offered_to_its_roles(
    game: str, phase: str, action: str, prefixes: dict[str, Any]
) -> None:
    table = _table(game, phase, prefixes)
    spec = GAMES[game].ACTIONS[action]
    # An action the round's state leaves nothing to take with (an override with no proposal
    # pending) is in the table but not offered: the console shows no button for it.
    ready = table.proc.ready(action)
    for role in ("dealer", "supervisor", "device", "system"):
        assert (action in table.proc.legal_actions(role)) == (role in spec.roles and ready)
    if not ready:
        table.refused(action, f"{sorted(spec.roles)[0]}:X", {"reason": "r", "card": "AS"})


# Each operator action once (every one declares its parameters, even none), in the first phase
# that takes it (a fault phase only when no other does): what its declared parameters refuse
# does not depend on the phase.
DECLARED = [
    (game, action, min(phases, key=lambda p: (p in ("HOLD", "TILT"), p)))
    for game, cls in GAMES.items()
    for action, spec in cls.ACTIONS.items()
    if spec.operator and (phases := {p for p, a in cls.transition_pairs() if a == action})
]
_WRONG: dict[str, Any] = {"int": "1", "str": 1, "bool": "yes", "list[int]": 1, "list[str]": 1}


@pytest.mark.parametrize(("game", "action", "phase"), DECLARED)
@pytest.mark.article("51/89/M", "1(b)", "1(c)", "1(d)", "2(a)", "2(b)", "2(c)", "2(d)", "3", "4")
@pytest.mark.article("51/89/M", "5", "7", "8", "9 I", "9 II", "10", "11")
@pytest.mark.article("003", "way 1 bets", "way 1 rows", "way 1 foul")
@pytest.mark.article("15/90/M", "1(2)", "2(1)", "2(2)", "2(3)", "2(6)", "2(7)", "2(8)", "3(2)", "4")
@pytest.mark.article("15/90/M", "5(1)", "5(2)", "5(3)", "5(5)", "6(1)", "6(2)", "6(3)", "8")
def test_a_field_the_action_does_not_declare_is_refused_citing_its_article(
    game: str, action: str, phase: str, prefixes: dict[str, Any]
) -> None:
    """An operator action takes only the fields its game declares for it (`Action.params`): a
    payload cannot carry anything the checks of its article do not read, and a value of the
    wrong kind for a field that breaks an article of its own (Thirteen's units, Art. 11, and
    the bettor seated, Art. 5) is refused citing that article, naming the field."""
    table = _table(game, phase, prefixes)
    spec = GAMES[game].ACTIONS[action]
    actor = f"{sorted(spec.roles)[0]}:X"
    refused = table.refused(action, actor, {"undeclared": 1}).violation
    assert refused is not None and refused.article == spec.article
    assert refused.reason.startswith(f"unknown field(s) undeclared for {action} (known: ")
    params = spec.params or {}
    for key, param in params.items():
        if param.article is None or param.article == spec.article:
            continue
        payload = {k: _valid(p) for k, p in params.items() if p.required and k != key}
        payload[key] = _WRONG[param.kind]
        wrong = table.refused(action, actor, payload).violation
        assert wrong is not None and (wrong.article, wrong.field) == (param.article, key)
        assert wrong.reason.startswith(f"{key} must ")


def _valid(param: Param) -> Any:
    """A value of the parameter's kind within its bounds (what it means is not checked yet)."""
    if param.kind == "int":
        return param.minimum if param.minimum is not None else 0
    if param.kind == "str":
        return param.choices[0] if param.choices else "x" * max(1, param.min_length or 1)
    if param.kind == "bool":
        return True
    item = "x" if param.kind == "list[str]" else (param.minimum or 0)
    return [item] * (param.min_length or 0)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_wrong_role_and_unknown_actions_are_refused_in_every_phase(
    game: str, prefixes: dict[str, Any]
) -> None:
    for phase in GAMES[game].Phase:
        table = _table(game, phase.name, prefixes)
        for action in table.proc.legal_actions("dealer"):
            table.refused(action, "device:shoe_reader", {})
            table.refused(action, "visitor:V1", {})
        table.refused("undo_everything", "supervisor:S1", {})
        table.refused("", "dealer:D1", {})


def test_build_gives_the_procedure_the_config_names() -> None:
    default = build(load_config(None))
    assert isinstance(default, ThirteenProcedure) and default.ruleset == "macau-1989"
    assert set(default.devices) == {"shuffler", "shoe_reader", "dice_shaker", "timer_bell"}
    four = build(
        parse_config(
            {
                "table": {"id": "T9", "game": "paigow", "paigow_hands": 4},
                "devices": {
                    "dice_shaker": {"port": "sim://dice_shaker"},
                    "timer_bell": {"port": "sim://timer_bell"},
                },
            }
        )
    )
    # The bell is no equipment of Pai Gow: the procedure checks only what it knows.
    assert isinstance(four, PaiGowProcedure)
    assert (four.table_id, four.hands, four.devices) == ("T9", 4, ("dice_shaker",))
    # A Thirteen table's bell is optional; the equipment Art. 1 names is not.
    bell_less = {k: {"port": f"sim://{k}"} for k in ("shuffler", "shoe_reader", "dice_shaker")}
    thirteen = build(parse_config({"table": {"id": "T1"}, "devices": bell_less}))
    assert thirteen.devices == ("shuffler", "shoe_reader", "dice_shaker")
    with pytest.raises(ConfigError, match=r"needs \[devices.dice_shaker\]"):
        build(parse_config({"table": {"id": "T9", "game": "paigow"}, "devices": {}}))


def test_the_daemon_and_the_tests_build_with_the_one_builder() -> None:
    from daemon import table  # noqa: PLC0415 - only to compare

    assert table.build_procedure is build
