"""`scan`: a few events out of a journal by their bytes, in order, across files and blocks."""

from __future__ import annotations

import json
from pathlib import Path

from daemon.config import JournalConfig
from daemon.journal import Journal, replay, scan


def test_scan_finds_the_named_events_in_order_across_files_and_blocks(tmp_path: Path) -> None:
    journal = Journal.open(JournalConfig(dir=tmp_path, durability="none", rotate_bytes=4096), "T01")
    for i in range(300):
        event = ("dice.landed", "card.dealt", "bet.placed")[i % 3]
        journal.append(event, actor="x", payload={"i": i, "text": "\n" * (i % 2)}, commit=False)
    journal.close()
    assert len(list(tmp_path.glob("journal-*.jsonl"))) > 3
    wanted = {"dice.landed", "card.dealt"}
    expected = [(r.event, r.line) for r in replay(tmp_path) if r.event in wanted]
    for block in (64, 1000, 1 << 22):
        assert list(scan(tmp_path, wanted, block=block)) == expected
    assert [json.loads(line)["payload"]["i"] for _, line in scan(tmp_path, ["bet.placed"])][:3] == [
        2,
        5,
        8,
    ]


def test_scan_from_a_time_skips_the_lines_before_it(tmp_path: Path) -> None:
    clock = iter(float(1_800_000_000 + 3600 * i) for i in range(100))
    journal = Journal.open(
        JournalConfig(dir=tmp_path, durability="none"), "T01", wall=lambda: next(clock)
    )
    for i in range(10):
        journal.append("dice.landed", actor="x", payload={"i": i}, commit=False)
    journal.close()
    records = [r for r in replay(tmp_path) if r.event == "dice.landed"]
    since = records[6].ts
    found = [
        json.loads(line)["payload"]["i"]
        for _, line in scan(tmp_path, ["dice.landed"], from_time=since)
    ]
    assert found == [6, 7, 8, 9]
