from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

from daemon.journal import verify
from daemon.journal.format import journal_files, line_hash

ReadAll = Callable[[Path], list[bytes]]


def test_size_rotation_keeps_the_chain_across_files(
    open_journal, journal_dir: Path, all_lines: ReadAll
) -> None:
    journal = open_journal(rotate_bytes=1000)
    for i in range(30):
        journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=i % 4 == 0)
    journal.close()
    files = journal_files(journal_dir)
    assert len(files) > 3
    for path in files:
        assert path.stat().st_size <= 1000
        first = json.loads(path.read_bytes().splitlines()[0])
        assert path.name == f"journal-{first['seq']:012d}-20270115.jsonl"
    lines = all_lines(journal_dir)
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, 32))
    for before, after in itertools.pairwise(lines):
        assert json.loads(after)["prev"] == line_hash(before)
    assert verify(journal_dir).ok


def test_a_line_larger_than_the_limit_gets_a_file_of_its_own(open_journal, journal_dir) -> None:
    journal = open_journal(rotate_bytes=300)
    journal.append("table.note", actor="dealer", payload={"text": "x" * 1000}, commit=True)
    journal.append("table.note", actor="dealer", commit=True)
    assert len(journal_files(journal_dir)) == 3
    journal.close()
    assert verify(journal_dir).events == 3


def test_daily_rotation_follows_the_injected_wall_clock(
    open_journal, clock, journal_dir: Path
) -> None:
    journal = open_journal()
    journal.append("table.round_started", actor="dealer", commit=True)
    clock.advance(15 * 3600)  # 2027-01-16T00:00:00Z
    journal.append("table.round_started", actor="dealer", commit=True)
    journal.append("table.bets_closed", actor="dealer", commit=True)
    journal.close()
    assert [p.name for p in journal_files(journal_dir)] == [
        "journal-000000000001-20270115.jsonl",
        "journal-000000000003-20270116.jsonl",
    ]
    assert verify(journal_dir).events == 4


def test_daily_rotation_can_be_turned_off(open_journal, clock, journal_dir: Path) -> None:
    journal = open_journal(rotate_daily=False)
    clock.advance(86400 * 3)
    journal.append("table.round_started", actor="dealer", commit=True)
    assert len(journal_files(journal_dir)) == 1


def test_a_wall_clock_stepping_back_keeps_files_in_chain_order(
    open_journal, clock, journal_dir: Path
) -> None:
    journal = open_journal()
    clock.advance(86400)
    journal.append("table.round_started", actor="dealer", commit=True)
    clock.step_wall(-2 * 86400)  # someone set the clock two days back
    journal.append("clock.wall_stepped", actor="supervisor", commit=True)
    journal.close()
    names = [p.name for p in journal_files(journal_dir)]
    assert names == [
        "journal-000000000001-20270115.jsonl",
        "journal-000000000002-20270116.jsonl",
        "journal-000000000003-20270114.jsonl",
    ]
    assert verify(journal_dir).ok


def test_a_restart_on_a_new_day_rotates_and_keeps_the_chain(
    open_journal, clock, journal_dir: Path
) -> None:
    journal = open_journal()
    journal.append("table.round_started", actor="dealer", commit=True)
    journal.close()
    clock.advance(86400)
    again = open_journal()
    again.close()
    assert len(journal_files(journal_dir)) == 2
    result = verify(journal_dir)
    assert result.ok and result.last_seq == 3
