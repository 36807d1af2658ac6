"""`tabled run --autoplay` on each Thirteen rule set's example config (config/examples/
thirteen-<ruleset>.toml), as shipped but for its journal's folder: every rule set plays whole
rounds through the table with its simulated devices, journals them, and its journal verifies."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from tests.table.scenario_support import REPO, journal_lines
from tests.table.test_run_process import tabled

EXAMPLES = sorted((REPO / "config" / "examples").glob("thirteen-*.toml"))
RULESETS = ("macau-1989", "hk-common", "hk-extended", "hk-four", "hk-points")


def simulated(example: Path, tmp: Path) -> Path:
    text = example.read_text(encoding="utf-8")
    text = re.sub(r'dir = "[^"]*"', f'dir = "{tmp / "journal"}"', text, count=1)
    path = tmp / example.name
    path.write_text(text.replace('durability = "fsync"', 'durability = "none"'), encoding="utf-8")
    return path


def test_each_rule_set_has_its_example() -> None:
    named = {path.stem.removeprefix("thirteen-") for path in EXAMPLES}
    assert set(RULESETS) <= named


@pytest.mark.article("003", "way 2 four against each other", "way 3 scoring", "way 3 stakes")
@pytest.mark.parametrize("ruleset", RULESETS)
def test_autoplay_plays_each_rule_sets_example(ruleset: str, tmp_path: Path) -> None:
    config = simulated(REPO / "config" / "examples" / f"thirteen-{ruleset}.toml", tmp_path)
    run = tabled("run", "--config", str(config), "--autoplay", "3", "--seed", "2", "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["rounds"] == 3
    lines = journal_lines(tmp_path / "journal")
    started = [r for r in lines if r["event"] == "table.started"]
    assert started[0]["payload"]["ruleset"] == ruleset
    settled = [r["payload"]["settlement"] for r in lines if r["event"] == "round.settled"]
    assert len(settled) == 3
    if ruleset in ("hk-four", "hk-points"):
        # Each against each: no banker, the seats' money sums to zero.
        for settlement in settled:
            assert sum(Decimal(entry["net"]) for entry in settlement) == 0
    assert tabled("verify-log", str(tmp_path / "journal")).returncode == 0
