"""What `tabled` says when asked for help, or given nothing: laid out, from the game's data."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from daemon.procedures.diagram import FAULT_PHASES, describe, portrait_edges, procedure_of
from daemon.procedures.games import GAMES
from tests.daemon.cli_support import tabled


def test_tabled_with_no_command_prints_the_help_and_exits_2() -> None:
    result = tabled()
    assert result.returncode == 2
    assert result.stdout == ""
    assert "usage: tabled COMMAND" in result.stderr
    assert "  run " in result.stderr and "  act " in result.stderr
    asked = tabled("--help")
    assert asked.returncode == 0 and asked.stdout.strip() == result.stderr.strip()


def test_rules_thirteen_help_is_laid_out_one_request_a_line() -> None:
    result = tabled("rules", "thirteen", "--help")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # Each command's request shape starts its own line, as the module documents it.
    for command in ("rank", "settle", "house-way", "rulesets"):
        assert any(re.match(rf"^    {command}\s+\S", line) for line in lines), command
    assert any(line.startswith("               or, for hk-points") for line in lines)
    assert max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("action", ["place_bet", "arrange_banker", "void_round", "set_hand"])
def test_act_action_help_lists_the_parameters_the_game_declares(action: str) -> None:
    result = tabled("act", action, "--help")
    assert result.returncode == 0, result.stderr
    games = [g for g in GAMES.values() if action in g.actions]
    assert games
    for game in games:
        declared = game.actions[action]
        assert f"{game.name} ({game.regulation}): {action}: {declared.label_en}" in result.stdout
        assert declared.article in result.stdout
        for key, param in (declared.params or {}).items():
            assert re.search(
                rf"^    {key}\s+{re.escape(describe(param))}\s", result.stdout, re.MULTILINE
            ), key
        if declared.requires_reason:
            assert "--reason TEXT is required" in result.stdout


def test_act_help_without_an_action_lists_every_action() -> None:
    result = tabled("act", "--help")
    assert result.returncode == 0
    assert "place_bet player=<str ≤64> seat=<int 0..3> units=<int 1..100>" in result.stdout


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_folded_diagram_still_draws_every_transition(game: str) -> None:
    cls = procedure_of(game)
    phases = [p.name for p in cls.Phase if p.name not in FAULT_PHASES]
    drawn = set()
    for source, dest, label in portrait_edges(game):
        for part in label.split(" | "):
            trigger = part.split(" [")[0]
            if source == "__every_phase":
                drawn |= {(phase, trigger) for phase in phases}
            else:
                drawn.add((source, trigger))
            assert dest != "__phase_held" or source in FAULT_PHASES
    assert drawn == cls.transition_pairs()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_diagram_fits_a_portrait_page(game: str, tmp_path: Path) -> None:
    png, svg = tmp_path / f"{game}.png", tmp_path / f"{game}.svg"
    for target in (png, svg):
        result = tabled("diagram", game, "-o", str(target))
        assert result.returncode == 0, result.stderr
    width, height = struct.unpack(">II", png.read_bytes()[16:24])
    # A4 is 1 : 1.414; the page inside its margins 7.5 by 10.6 inches, drawn at 150 dpi.
    assert height >= 1.3 * width
    assert width <= 7.5 * 150 and height <= 10.6 * 150 + 1
    size = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg.read_text())
    assert size is not None
    assert float(size[1]) <= 7.5 * 72 and float(size[2]) <= 10.6 * 72 + 1
