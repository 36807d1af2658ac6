from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.journal import RECENT_RECORDS, JournalCorrupt, TornTail, replay, verify
from daemon.journal.format import journal_files


def test_replay_iterates_every_event_in_order_across_files(open_journal, journal_dir) -> None:
    journal = open_journal(rotate_bytes=800)
    appended = [journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i},
                               commit=i % 5 == 0) for i in range(40)]  # fmt: skip
    assert len(journal_files(journal_dir)) > 3
    replayed = list(journal.replay())  # buffered events included
    assert [r.seq for r in replayed] == list(range(1, 42))
    assert replayed[1:] == appended
    assert [r.seq for r in journal.replay(from_seq=30)] == list(range(30, 42))
    journal.close()
    assert [r.seq for r in replay(journal_dir, from_seq=17)] == list(range(17, 42))


def test_a_torn_last_line_is_cut_off_and_journaled(open_journal, journal_dir) -> None:
    journal = open_journal(durability="fsync")
    acknowledged = journal.append("table.bets_closed", actor="dealer", commit=True)
    journal.close()
    last_file = journal_files(journal_dir)[-1]
    torn = b'{"seq":3,"ts":"2027-01-15T09:00:00.000000Z","mono":1000.0,"table":"T01","rou'
    with last_file.open("ab") as fh:
        fh.write(torn)
    size_before = last_file.stat().st_size
    seen: list[TornTail] = []
    assert [r.seq for r in replay(journal_dir, on_torn=seen.append)] == [1, 2]  # not an event
    assert seen == [TornTail(last_file, size_before - len(torn), torn)]

    again = open_journal(durability="fsync")
    assert again.torn is not None
    assert again.torn.data == torn and again.torn.offset == size_before - len(torn)
    events = list(again.replay())
    assert events[1] == acknowledged
    truncated, opened = events[2], events[3]
    assert truncated.event == "journal.torn_tail_truncated" and truncated.seq == 3
    assert truncated.payload["bytes"] == len(torn)
    assert truncated.payload["preview"] == torn.decode()
    assert truncated.prev == acknowledged.hash
    assert opened.event == "journal.opened"
    again.close()
    assert verify(journal_dir).ok


def test_a_torn_line_alone_in_a_fresh_file_is_recovered(open_journal, journal_dir) -> None:
    journal = open_journal(rotate_bytes=400)
    for i in range(6):
        journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
    last = journal.last_seq
    journal.close()
    name = f"journal-{last + 1:012d}-20270115.jsonl"
    (journal_dir / name).write_bytes(b'{"seq":')
    again = open_journal(rotate_bytes=400)
    assert again.torn is not None
    again.close()
    result = verify(journal_dir)
    assert result.ok and result.last_seq == last + 2


def test_an_empty_last_file_from_a_crash_mid_rotation_is_reused(open_journal, journal_dir) -> None:
    journal = open_journal()
    journal.append("table.bets_closed", actor="dealer", commit=True)
    journal.close()
    (journal_dir / "journal-000000000003-20270115.jsonl").touch()
    open_journal().close()
    assert verify(journal_dir).ok
    assert len(journal_files(journal_dir)) == 2


def test_a_tampered_journal_is_refused_by_replay(open_journal, journal_dir: Path) -> None:
    journal = open_journal()
    for i in range(5):
        journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
    journal.close()
    path = journal_files(journal_dir)[0]
    lines = path.read_bytes().splitlines(keepends=True)
    obj = json.loads(lines[2])
    obj["payload"] = {"i": 42}
    lines[2] = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    path.write_bytes(b"".join(lines))
    with pytest.raises(JournalCorrupt, match="line 4"):
        list(replay(journal_dir))


def test_a_last_line_that_is_not_an_event_stops_the_open(open_journal, journal_dir) -> None:
    open_journal().close()
    with journal_files(journal_dir)[-1].open("ab") as fh:
        fh.write(b"garbage that ends a line\n")
    with pytest.raises(JournalCorrupt):
        open_journal()


def test_replay_from_a_seq_reads_memory_for_recent_events_and_files_for_older(
    open_journal, journal_dir: Path
) -> None:
    journal = open_journal(rotate_bytes=64_000)
    total = RECENT_RECORDS + 300
    for i in range(total):
        journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=i % 50 == 0)
    journal.flush()
    from_files = {r.seq: r for r in replay(journal_dir)}
    assert len(from_files) == total + 1
    for start in (1, 2, 150, 299, 301, 302, 1000, total - 5, total + 1, total + 2):
        expected = [from_files[s] for s in range(start, total + 2)]
        assert list(journal.replay(from_seq=start)) == expected, start
        assert list(replay(journal_dir, from_seq=start)) == expected, start


def test_replay_from_a_seq_still_checks_the_link_into_it(open_journal, journal_dir) -> None:
    journal = open_journal()
    for i in range(10):
        journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
    journal.close()
    path = journal_files(journal_dir)[0]
    lines = path.read_bytes().splitlines(keepends=True)
    del lines[3]  # seq 4 removed: counting lines now lands on the wrong one
    path.write_bytes(b"".join(lines))
    with pytest.raises(JournalCorrupt):
        list(replay(journal_dir, from_seq=5))  # in the first half: counted
    # In the second half the line is found by its seq from the end: the right one, linked.
    assert [r.seq for r in replay(journal_dir, from_seq=8)] == [8, 9, 10, 11]
    at_eight = next(i for i, line in enumerate(lines) if line.startswith(b'{"seq":8,'))
    changed = lines[at_eight].replace(b'"i":6', b'"i":60')
    path.write_bytes(b"".join([*lines[:at_eight], changed, *lines[at_eight + 1 :]]))
    with pytest.raises(JournalCorrupt, match="at byte"):
        list(replay(journal_dir, from_seq=9))  # the link into seq 9 is checked
    path.write_bytes(b"".join(lines))
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, lines[2].replace(b'"i":1', b'"i":9'))  # seq 3 twice, one of them altered
    path.write_bytes(b"".join(lines))
    with pytest.raises(JournalCorrupt):
        list(replay(journal_dir, from_seq=4))
