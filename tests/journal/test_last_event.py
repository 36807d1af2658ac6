"""`last_event`: a restart finds its last checkpoint from the end, without reading the rest."""

from __future__ import annotations

from pathlib import Path

from daemon.journal import last_event, replay
from tests.journal.conftest import OpenJournal


def test_the_last_line_of_an_event_is_found_across_files_and_small_blocks(
    open_journal: OpenJournal, journal_dir: Path
) -> None:
    journal = open_journal(rotate_bytes=700)
    checkpoints = []
    for i in range(40):
        # A payload naming the event as data is not the event.
        journal.append(
            "table.note",
            actor="dealer",
            payload={"event": "table.checkpoint", "i": i},
            commit=False,
        )
        if i % 7 == 3:
            record = journal.append(
                "table.checkpoint", actor="system", payload={"i": i}, commit=False
            )
            checkpoints.append(record.seq)
    journal.append("table.note", actor="dealer", payload={"text": "x" * 900}, commit=True)
    journal.close()
    for block in (16, 100, 1 << 20):
        found = last_event(journal_dir, "table.checkpoint", block=block)
        assert found is not None and found.seq == checkpoints[-1], block
        assert found.payload == {"i": 38}
    assert last_event(journal_dir, "table.nothing") is None
    # The replay from it checks its link to the line before and goes on to the end.
    tail = list(replay(journal_dir, from_seq=checkpoints[-1]))
    assert tail[0].event == "table.checkpoint" and tail[-1].payload == {"text": "x" * 900}


def test_a_torn_last_line_is_never_taken_and_an_empty_journal_has_none(
    open_journal: OpenJournal, journal_dir: Path
) -> None:
    journal = open_journal()
    first = journal.append("table.checkpoint", actor="system", payload={"n": 1}, commit=True)
    journal.close()
    files = sorted(journal_dir.glob("journal-*.jsonl"))
    with files[-1].open("ab") as fh:
        fh.write(b'{"seq":99,"ts":"x","mono":0,"table":"T01","round":null,"actor":"system",')
        fh.write(b'"event":"table.checkpoint","payload":{"n":2')
    found = last_event(journal_dir, "table.checkpoint")
    assert found is not None and found.seq == first.seq
    assert last_event(journal_dir.parent / "none", "table.checkpoint") is None
