"""A restart from the last round-boundary checkpoint rebuilds the table a full replay builds.

Each game plays whole rounds with faults and violations (`tabled run --autoplay`), then the
journal is opened twice by a new table: once from its last checkpoint, once replaying every
input. Both must hold the same procedure, to the last attribute.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.config import parse_config
from daemon.journal import JournalError, verify
from daemon.table import Table
from drivers.clock import ManualClock
from tests.table.scenario_support import REPO, journal_lines, table_config, toml

COMMAND = (sys.executable, "-m", "daemon", "run", "--fault-share", "0.5")


async def _restart(config: dict[str, Any], journal: Path, checkpoint: bool) -> Table:
    # Each restart journals its own recovery: each gets its own copy of the journal.
    copy = journal.with_name(f"{journal.name}-{checkpoint}")
    shutil.copytree(journal, copy)
    # A wall clock behind the journal's: both restarts take the time of its last input.
    table = Table(
        parse_config(config), journal_dir=copy, drivers={}, clock=ManualClock(), wall=lambda: 0.0
    )
    table.use_checkpoint = checkpoint
    await table.start(connect=False)
    await table.stop()
    return table


@pytest.mark.parametrize(("game", "hands"), [("thirteen", 8), ("paigow", 4)])
def test_restart_from_the_checkpoint_equals_the_full_replay(
    tmp_path: Path, game: str, hands: int
) -> None:
    journal = tmp_path / "j"
    data = table_config(journal, game=game, hands=hands, world=f"checkpoint-{game}")
    config = tmp_path / "t.toml"
    config.write_text(toml(data))
    run = subprocess.run(
        [*COMMAND, "--config", str(config), "--autoplay", "6", "--seed", "3"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = journal_lines(journal)
    checkpoints = [r for r in lines if r["event"] == "table.checkpoint"]
    settled = [r for r in lines if r["event"] == "round.settled"]
    # One checkpoint a round, in the settlement's group, as the group's commit point.
    assert len(checkpoints) == len(settled) >= 6
    for point in checkpoints:
        before = lines[lines.index(point) - 1]
        assert before["event"] in ("round.settled", "tiles.shown_face_up")
    fast = asyncio.run(_restart(data, journal, checkpoint=True))
    full = asyncio.run(_restart(data, journal, checkpoint=False))
    assert fast.checkpoint_seq is not None and full.checkpoint_seq is None
    assert fast.stats.replayed < full.stats.replayed
    assert fast.procedure.checkpoint() == full.procedure.checkpoint()
    assert fast.procedure.snapshot() == full.procedure.snapshot()
    # The autoplay stopped cleanly after a settled round: the restart is ready to play.
    assert fast.procedure.phase == full.procedure.phase == "ROUND_OVER"


def test_a_changed_checkpoint_stops_the_restart_and_verify_log_names_it(tmp_path: Path) -> None:
    """A checkpoint is a journal line like any other: changed, the link from the next line
    breaks, so the restart refuses to build a table from it, and `verify-log` names it."""
    journal = tmp_path / "j"
    data = table_config(journal, world="checkpoint-tamper")
    config = tmp_path / "t.toml"
    config.write_text(toml(data))
    run = subprocess.run(
        [*COMMAND, "--config", str(config), "--autoplay", "2", "--seed", "4"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (path,) = sorted(journal.glob("journal-*.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    at = max(i for i, line in enumerate(lines) if b'"event":"table.checkpoint"' in line)
    assert at < len(lines) - 1
    lines[at] = lines[at].replace(b'"amount":', b'"amount":9', 1)
    path.write_bytes(b"".join(lines))
    with pytest.raises(JournalError):
        asyncio.run(_restart(data, journal, checkpoint=True))
    result = verify(journal)
    assert result.problem is not None
    assert (result.problem.kind, result.problem.line) == ("changed", at + 1)
    assert result.problem.seq == json.loads(lines[at])["seq"]
