"""`tabled diagram` draws what the machines hold, and docs/procedures.md shows it current."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.procedures.diagram import dot, edges, mermaid, procedure_of, update_doc
from daemon.procedures.games import GAMES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "procedures.md"


def tabled(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_the_doc_embeds_the_current_diagrams_and_action_tables() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert update_doc(text) == text, "run: tabled diagram --update-doc docs/procedures.md"
    for game in GAMES:
        assert f"<!-- diagram:{game}:full -->\n```mermaid\nstateDiagram-v2" in text
        assert f"<!-- actions:{game} -->\n| action |" in text
        assert f"<!-- events:{game} -->\n| event |" in text


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_diagram_has_every_transition_of_the_machine(game: str) -> None:
    cls = procedure_of(game)
    drawn = set()
    for source, _, label in edges(game):
        drawn |= {(source, part.split(" [")[0]) for part in label.split(" | ")}
    assert drawn == cls.transition_pairs()
    text = mermaid(game)
    for phase in cls.Phase:
        assert re.search(rf"^  {phase.name} --> ", text, re.MULTILINE)
    assert "[*] --> EQUIPMENT_CHECK" in text
    without = mermaid(game, faults=False)
    assert "HOLD" not in without and "TILT -->" not in without
    assert dot(game).startswith(f'digraph "{game}"')


def test_tabled_diagram_prints_and_writes(tmp_path: Path) -> None:
    printed = tabled("diagram", "thirteen")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == mermaid("thirteen")
    target = tmp_path / "paigow.dot"
    written = tabled("diagram", "paigow", "-o", str(target), "--no-faults")
    assert written.returncode == 0, written.stderr
    assert target.read_text() == dot("paigow", faults=False)
    unknown = tabled("diagram", "baccarat")
    assert unknown.returncode == 2 and "baccarat" in unknown.stderr


def test_svg_needs_graphviz(tmp_path: Path) -> None:
    result = tabled("diagram", "paigow", "-o", str(tmp_path / "p.svg"))
    if shutil.which("dot") is None:
        assert result.returncode == 1 and "Graphviz" in result.stderr
    else:
        assert result.returncode == 0
        assert (tmp_path / "p.svg").read_bytes().lstrip().startswith((b"<?xml", b"<svg"))


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_png_reads_down_a_page_for_approval_documents(game: str, tmp_path: Path) -> None:
    """The procedure runs top to bottom, so the picture fits a portrait page (left to right,
    Thirteen was 5,325 x 473 pixels: unreadable once printed)."""
    target = tmp_path / f"{game}.png"
    result = tabled("diagram", game, "--no-faults", "-o", str(target))
    assert result.returncode == 0, result.stderr
    header = target.read_bytes()[:24]
    assert header.startswith(b"\x89PNG")
    width, height = int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    assert height > width / 2, (width, height)
