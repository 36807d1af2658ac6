from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from daemon.config import JournalConfig
from daemon.journal import (
    GENESIS,
    Journal,
    JournalClosed,
    JournalError,
    JournalLocked,
    journal_logger,
    verify,
)
from daemon.journal.format import decode_line, encode_line, iso_utc

ReadAll = Callable[[Path], list[bytes]]


def test_a_line_carries_every_field_and_chains_to_the_one_before(
    open_journal, clock, journal_dir: Path, all_lines: ReadAll
) -> None:
    journal = open_journal()
    clock.advance(1.5)
    record = journal.append(
        "shoe.card_read",
        actor="shoe_reader",
        round_id="R7",
        payload={"card": "AS", "index": 3},
        commit=True,
    )
    lines = all_lines(journal_dir)
    assert len(lines) == 2  # journal.opened, then ours
    opened, ours = (json.loads(line) for line in lines)
    assert opened["event"] == "journal.opened"
    assert opened["seq"] == 1 and opened["prev"] == GENESIS
    assert list(ours) == [
        "seq", "ts", "mono", "table", "round", "actor", "event", "payload", "prev",
    ]  # fmt: skip
    assert ours == {
        "seq": 2,
        "ts": "2027-01-15T09:00:01.500000Z",
        "mono": 1001.5,
        "table": "T01",
        "round": "R7",
        "actor": "shoe_reader",
        "event": "shoe.card_read",
        "payload": {"card": "AS", "index": 3},
        "prev": hashlib.sha256(lines[0]).hexdigest(),
    }
    assert record.line == lines[1]
    assert record.hash == hashlib.sha256(lines[1]).hexdigest() == journal.head
    assert record.seq == 2 and record.payload == {"card": "AS", "index": 3}
    assert record.round_id == "R7"
    assert journal_dir.joinpath("journal-000000000001-20270115.jsonl").is_file()


def test_event_names_are_dotted_facts(open_journal) -> None:
    journal = open_journal()
    for bad in ("card read", "shoe", "Shoe.CardRead", "shoe.", ".x", ""):
        with pytest.raises(ValueError, match="dotted fact"):
            journal.append(bad, actor="dealer", commit=False)
    with pytest.raises(ValueError, match="actor"):
        journal.append("table.bets_closed", actor="", commit=False)
    assert journal.last_seq == 1


class Seat(Enum):
    EAST = "east"


@dataclass(frozen=True)
class Bet:
    seat: Seat
    amount: int


def test_domain_values_are_rendered_and_bad_payloads_leave_the_chain_untouched(
    open_journal, journal_dir: Path
) -> None:
    journal = open_journal()
    record = journal.append(
        "table.bet_placed",
        actor="player:3",
        payload={"bet": Bet(Seat.EAST, 500), "seats": (1, 2), "raw": b"\x02\x10"},
        commit=True,
    )
    assert json.loads(record.line)["payload"] == {
        "bet": {"seat": "east", "amount": 500},
        "seats": [1, 2],
        "raw": "0210",
    }
    head = journal.head
    with pytest.raises(TypeError):
        journal.append("table.bet_placed", actor="x", payload={"obj": object()}, commit=True)
    with pytest.raises(ValueError):
        journal.append("table.bet_placed", actor="x", payload={"n": float("nan")}, commit=True)
    assert journal.head == head and journal.last_seq == record.seq
    after = journal.append("table.bet_placed", actor="x", payload={"n": 1}, commit=True)
    assert after.seq == record.seq + 1 and after.prev == record.hash
    journal.close()
    assert verify(journal_dir).ok


def test_non_commit_events_wait_for_the_next_commit_point_in_order(
    open_journal, journal_dir: Path, all_lines: ReadAll
) -> None:
    journal = open_journal(durability="fsync")
    for i in range(3):
        journal.append("shoe.card_seen", actor="shoe_reader", payload={"i": i}, commit=False)
    assert len(all_lines(journal_dir)) == 1  # only journal.opened is on disk
    assert journal.durable_seq == 1 and journal.last_seq == 4
    journal.append("table.bets_closed", actor="dealer", commit=True)
    events = [json.loads(line) for line in all_lines(journal_dir)]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5]
    assert [e["payload"].get("i") for e in events[1:4]] == [0, 1, 2]
    assert journal.durable_seq == 5


def test_a_large_backlog_is_written_before_any_commit(
    open_journal, journal_dir: Path, all_lines: ReadAll
) -> None:
    journal = open_journal()
    for _ in range(200):
        journal.append(
            "shoe.heartbeat", actor="shoe_reader", payload={"pad": "x" * 500}, commit=False
        )
    # 64 KiB of backlog went to the OS; durability still waits for a commit point.
    assert 1 < len(all_lines(journal_dir)) < 201
    assert journal.durable_seq == 1


def test_restart_continues_the_chain(open_journal, journal_dir: Path) -> None:
    journal = open_journal()
    last = journal.append("table.round_started", actor="dealer", round_id=1, commit=True)
    journal.append("shoe.card_seen", actor="shoe_reader", commit=False)
    journal.close()  # close flushes the buffered event
    again = open_journal()
    replayed = list(again.replay())
    assert [r.seq for r in replayed] == [1, 2, 3, 4]
    assert replayed[1] == last
    assert replayed[3].event == "journal.opened"
    assert replayed[3].payload["resumed_after_seq"] == 3
    assert replayed[3].prev == replayed[2].hash
    assert verify(journal_dir).ok


def test_one_writer_per_journal(open_journal, journal_dir: Path) -> None:
    open_journal()
    with pytest.raises(JournalLocked):
        Journal.open(JournalConfig(dir=journal_dir, durability="none"), "T01")


def test_a_closed_journal_refuses_appends(open_journal) -> None:
    journal = open_journal()
    journal.close()
    with pytest.raises(JournalClosed):
        journal.append("table.bets_closed", actor="dealer", commit=True)


def test_structlog_front_door_journals_and_returns_the_record(
    open_journal, journal_dir: Path
) -> None:
    journal = open_journal()
    log = journal_logger(journal, actor="dealer").bind(round_id="R9")
    record = log.info("table.bets_closed", seats=[1, 3])
    assert record.event == "table.bets_closed"
    assert record.actor == "dealer" and record.round_id == "R9"
    assert dict(record.payload) == {"seats": [1, 3]}
    assert journal.durable_seq == record.seq  # commit is the default on this path
    with structlog.contextvars.bound_contextvars(round_id="R10", request_id="abc"):
        later = journal_logger(journal, actor="shoe_reader").info(
            "shoe.card_seen", card="KH", commit=False
        )
    assert later.round_id == "R10" and journal.durable_seq == record.seq
    assert dict(later.payload) == {"card": "KH"}  # operational context stays out
    with pytest.raises(ValueError, match="actor"):
        journal_logger(journal).info("table.bets_closed")


@given(st.floats(min_value=0, max_value=4_102_444_800, allow_nan=False))
def test_timestamps_are_iso_utc_to_the_microsecond(wall: float) -> None:
    exact = datetime.fromtimestamp(round(wall * 1_000_000) / 1_000_000, tz=UTC)
    assert iso_utc(wall) == exact.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_a_journal_is_bound_to_its_table(open_journal, journal_dir: Path) -> None:
    open_journal().close()
    with pytest.raises(JournalError, match="table 'T01'"):
        Journal.open(JournalConfig(dir=journal_dir, durability="none"), "T02")


def test_a_wall_clock_step_is_journaled_before_the_next_event(open_journal, clock) -> None:
    journal = open_journal()
    before = journal.append("table.bets_closed", actor="dealer", commit=True)
    clock.advance(30)
    clock.step_wall(0.4)  # a small correction is not a step
    journal.append("dice.result", actor="dice_shaker", commit=True)
    clock.step_wall(-3600)
    after = journal.append("shoe.card_read", actor="shoe_reader", commit=True)
    events = list(journal.replay(from_seq=before.seq))
    assert [r.event for r in events] == [
        "table.bets_closed", "dice.result", "clock.wall_stepped", "shoe.card_read",
    ]  # fmt: skip
    step = events[2]
    assert step.actor == "journal" and step.seq == after.seq - 1
    assert step.payload == {"step_seconds": -3600.0, "before": events[1].ts}
    assert step.ts == after.ts == "2027-01-15T08:00:30.400000Z"


def test_a_journal_must_be_opened_before_use(journal_dir: Path) -> None:
    journal = Journal(JournalConfig(dir=journal_dir, durability="none"), "T01")
    with pytest.raises(JournalClosed, match=r"Journal\.open"):
        journal.append("table.bets_closed", actor="dealer", commit=True)
    assert not journal_dir.exists()


def test_each_fdatasync_is_reported_for_the_latency_metric(journal_dir: Path) -> None:
    seconds: list[float] = []
    config = JournalConfig(dir=journal_dir, durability="fsync")
    with Journal.open(config, "T01", on_sync=seconds.append) as journal:
        for _ in range(5):
            journal.append("table.bets_closed", actor="dealer", commit=True)
        journal.append("shoe.card_seen", actor="shoe_reader", commit=False)
        assert len(seconds) == journal.syncs == 6  # journal.opened and five commits
    assert all(s > 0 for s in seconds) and len(seconds) == 7  # close flushed the last one


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(
    payload=st.dictionaries(st.text(), json_values, max_size=5),
    actor=st.text(min_size=1),
    round_id=st.none() | st.integers() | st.text(),
)
def test_any_json_payload_is_exactly_one_line_that_reads_back(
    payload: dict[str, object], actor: str, round_id: int | str | None
) -> None:
    line = encode_line(
        seq=9, ts="2027-01-15T09:00:00.000000Z", mono=1.25, table="T01", round_id=round_id,
        actor=actor, event="table.note", payload=payload, prev=GENESIS,
    )  # fmt: skip
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # U+2028, "\n" in text: escaped
    record = decode_line(line)
    assert dict(record.payload) == payload
    assert (record.seq, record.actor, record.round_id) == (9, actor, round_id)
    assert record.hash == hashlib.sha256(line).hexdigest()
