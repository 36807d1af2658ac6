"""Bounded memory: a table counts its settlements and the autoplay summary keeps a round's
seconds as one double, so nothing a round leaves behind grows with the rounds played (the
journal holds every settlement). bench/bench_memory.py measures the RSS over 9,000 rounds."""

from __future__ import annotations

import asyncio
import dataclasses
from array import array
from pathlib import Path

from daemon.autoplay import Autoplay, InProcessControl
from tests.table.scenario_support import journal_lines, make_table, new_world, table_config


def test_rounds_are_counted_not_kept(tmp_path: Path) -> None:
    key, _ = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key))

    async def main() -> Autoplay:
        await table.start()
        player = Autoplay(table, InProcessControl(key), rounds=3, seed=3, fault_share=0.0)
        try:
            await player.run()
        finally:
            await table.stop()
        return player

    player = asyncio.run(main())
    settled = [r for r in journal_lines(tmp_path / "j") if r["event"] == "round.settled"]
    assert table.stats.rounds_settled == len(settled) == 3
    # The stats hold counters and numbers only: no field that grows a round at a time.
    for field in dataclasses.fields(table.stats):
        assert not isinstance(getattr(table.stats, field.name), list), field.name
    summary = player.summary
    assert isinstance(summary.seconds, array) and summary.seconds.typecode == "d"
    assert len(summary.seconds) == 3
    times = summary.as_dict()["seconds_per_round"]
    assert times["max"] == max(summary.seconds) and times["median"] is not None
    assert "seconds per round" in summary.render()
