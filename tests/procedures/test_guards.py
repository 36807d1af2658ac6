"""The order of a pair's rows, as `transitions` tries them, decides nothing a game has not written
in their guards: a row written ahead of the others to be found sooner (the card of a deal under
way) carries `unless` guards that exclude every other row of its pair, and which row fires, in
every combination of the guards' values, is the row that fired when it was written last,
unguarded. Read from each game's machine, as `transitions` holds it."""

from __future__ import annotations

from enum import Enum
from typing import Any

import pytest
from procedure_drive import DEALER, device, shuffled_deck, thirteen_table

from daemon.procedures import guards
from daemon.procedures.base import Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure

GAMES: dict[str, type[Procedure]] = {"thirteen": ThirteenProcedure, "paigow": PaiGowProcedure}
Row = tuple[str | None, tuple[guards.Guard, ...]]  # a transition's dest and its guards


def _machine_rows(cls: type[Procedure]) -> dict[tuple[str, str], list[Row]]:
    """Each (phase, trigger) of the game's machine: its transitions in the order it tries them."""
    machine = cls().machine
    return {
        (source, trigger): [
            # An internal transition (dest None) stays in its phase (Engine.machine_rows).
            (t.dest or source, tuple((c.func, bool(c.target)) for c in t.conditions))
            for t in rows
        ]
        for trigger, event in machine.events.items()
        for source, rows in event.transitions.items()
    }


def _fires(rows: list[Row], case: dict[Any, bool]) -> str | None:
    index = guards.first([g for _, g in rows], case)
    return None if index is None else rows[index][0]


def _written_last(rows: list[Row]) -> list[Row]:
    """The pair as it reads with each row written ahead for speed moved last, unguarded."""
    ahead = [r for r in rows if any(not target for _, target in r[1])]
    return [r for r in rows if r not in ahead] + [(dest, ()) for dest, _ in ahead]


@pytest.mark.parametrize("cls", list(GAMES.values()), ids=list(GAMES))
def test_a_row_written_ahead_excludes_the_others_and_changes_no_outcome(
    cls: type[Procedure],
) -> None:
    ahead = 0
    for pair, rows in _machine_rows(cls).items():
        row_guards = [g for _, g in rows]
        for index, (_, own) in enumerate(rows):
            if any(not target for _, target in own):
                ahead += 1
                assert guards.exclusive(row_guards, index), f"{pair} row {index} overlaps"
        before = _written_last(rows)
        every = guards.cases(row_guards)
        assert every is not None
        for case in every:
            assert _fires(rows, case) == _fires(before, case), (pair, case)
    assert ahead >= 1  # each game writes its deal's common step ahead


def test_the_card_of_a_deal_under_way_fires_first_and_as_before() -> None:
    """Thirteen's card_read in DEALING, against its rows as written before it was moved ahead."""
    rows = _machine_rows(ThirteenProcedure)["DEALING", "card_read"]
    assert rows[0] == ("DEALING", (("shoe_faulted", False), ("deal_complete", False)))
    written_before: list[Row] = [
        ("TILT", (("shoe_faulted", True),)),
        ("PLAYERS_ARRANGING", (("deal_complete", True), ("no_banker", True))),
        ("BANKER_ARRANGING", (("deal_complete", True),)),
        ("DEALING", ()),
    ]
    every = guards.cases([g for _, g in written_before])
    assert every is not None
    seen = set()
    for case in every:
        fired = _fires(rows, case)
        assert fired == _fires(written_before, case), case
        seen.add(fired)
    assert seen == {"DEALING", "TILT", "PLAYERS_ARRANGING", "BANKER_ARRANGING"}


@pytest.mark.parametrize("cls", list(GAMES.values()), ids=list(GAMES))
def test_a_pair_is_certain_exactly_when_its_rows_leave_no_case_out(
    cls: type[Procedure],
) -> None:
    """The engine keeps no copy of the round for a certain pair (its rows cover every case);
    every other pair it keeps, to take the input back when no row holds."""
    rows = _machine_rows(cls)
    for pair, pair_rows in rows.items():
        row_guards = [g for _, g in pair_rows]
        every = guards.cases(row_guards)
        covered = every is not None and all(guards.first(row_guards, c) is not None for c in every)
        assert (pair in cls.certain_pairs()) == covered, pair
    # The deal's card is certain: no checkpoint is taken for each of a round's 52 reads.
    if cls is ThirteenProcedure:
        assert ("DEALING", "card_read") in cls.certain_pairs()
        assert ("HOLD", "clear_hold") not in cls.certain_pairs()


def test_guards_read_conditions_and_unless_in_the_order_transitions_checks_them() -> None:
    class Phase(Enum):
        A = "A"

    row: dict[str, Any] = {
        "trigger": "go",
        "source": [Phase.A],
        "dest": Phase.A,
        "conditions": ["c1", "c2"],
        "unless": "u",
    }
    assert guards.guards(row) == (("c1", True), ("c2", True), ("u", False))
    assert guards.pairs([row]) == {("A", "go"): [row]}
    assert guards.covers([(("c", True),), (("c", False),)])
    assert not guards.covers([(("c", True),), (("d", True),)])
    # Past MAX_GUARDS the pair is not taken as certain (the engine keeps the round).
    many = [((f"g{i}", True),) for i in range(guards.MAX_GUARDS + 1)]
    assert guards.cases(many) is None and not guards.covers(many)
    assert not guards.exclusive(many, 0)


def test_a_card_read_with_the_shoe_faulted_still_tilts_and_the_last_card_ends_the_deal() -> None:
    """Through the engine: the row ahead takes the ordinary card, the others what they took."""
    table = thirteen_table()
    deck = shuffled_deck(3)
    table.ok("confirm_hand_shuffle", DEALER)
    table.ok("shuffle_completed", device("shuffler"), {"count": 52, "mode": "random"})
    table.ok("confirm_cut", DEALER, {"by": "player", "player": "P1", "cards": 20, "one_hand": True})
    table.ok("load_shoe", DEALER)
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "units": 1, "seated": True})
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4], "valid": True})
    for card in deck[:51]:
        assert table.ok("card_read", device("shoe_reader"), {"card": card}).phase == "DEALING"
    assert table.ok("card_read", device("shoe_reader"), {"card": deck[51]}).phase == (
        "BANKER_ARRANGING"
    )
    # A second copy of the first card: the shoe is faulted, the deal goes to TILT.
    dup = thirteen_table()
    for step in table.inputs[len(dup.inputs) : len(dup.inputs) + 8]:
        dup.ok(step.action, step.actor, dict(step.payload))
    assert dup.proc.phase == "DEALING"
    assert dup.ok("card_read", device("shoe_reader"), {"card": deck[0]}).phase == "TILT"


@pytest.mark.parametrize("cls", list(GAMES.values()), ids=list(GAMES))
def test_a_row_back_to_its_own_phase_is_an_internal_transition(cls: type[Procedure]) -> None:
    """The machine fires a loop without leaving its phase (no exit, no enter), which changes
    nothing while no phase has enter or exit callbacks; every other row keeps its dest."""
    machine = cls().machine
    assert not any(s.on_enter or s.on_exit for s in machine.states.values())
    internal = 0
    for row in cls.TRANSITIONS:
        for source in guards.sources(row):
            kept = [
                t.dest
                for t in machine.events[row["trigger"]].transitions[source.name]
                if tuple((c.func, bool(c.target)) for c in t.conditions) == guards.guards(row)
            ]
            loop = guards.sources(row) == [row["dest"]]
            internal += loop
            assert (None if loop else row["dest"].name) in kept, (row["trigger"], source)
    assert internal > 20
