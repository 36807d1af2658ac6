"""The API's journal reads over a real `daemon.journal.Journal` on disk."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from daemon.config import JournalConfig
from daemon.contract import journal_feed
from daemon.journal import Journal
from daemon.journal.format import JournalCorrupt

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC).timestamp()


class Wall:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def open_journal(tmp_path: Path, wall: Wall) -> Journal:
    return Journal.open(JournalConfig(dir=tmp_path, durability="none"), "T01", wall=wall)


def test_query_filters_durable_events_by_round_event_and_time(tmp_path: Path) -> None:
    wall = Wall()
    with open_journal(tmp_path, wall) as journal:
        journal.append("table.round_started", actor="dealer:D1", round_id=7, commit=True)
        wall.now += 3600
        journal.append(
            "bet.placed", actor="dealer:D1", round_id=7, payload={"seat": 1}, commit=True
        )
        journal.append("bet.placed", actor="dealer:D1", round_id=8, commit=True)
        journal.append("bet.withdrawn", actor="dealer:D1", round_id=8, commit=False)

        def q(**kw: Any) -> list[str]:
            return [f"{e['event']}@{e['round']}" for e in journal_feed.query(journal, **kw)]

        assert q(round="7") == ["table.round_started@7", "bet.placed@7"]
        assert q(event="bet.placed") == ["bet.placed@7", "bet.placed@8"]
        assert q(event="bet.") == ["bet.placed@7", "bet.placed@8"]
        macau = timezone(timedelta(hours=8))
        assert q(event="bet.placed", since=datetime(2026, 11, 29, 20, 30, tzinfo=macau)) == [
            "bet.placed@7",
            "bet.placed@8",
        ]
        early = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)
        assert q(until=early)[-1] == "table.round_started@7"
        assert q(event="table.", until=early) == ["table.round_started@7"]
        assert q(limit=1) == ["bet.placed@8"]
        [event] = journal_feed.query(journal, event="bet.placed", round="7")
        assert event["payload"] == {"seat": 1}
        assert event["actor"] == "dealer:D1"
        assert event["seq"] > 2
        assert len(event["hash"]) == 64


def test_a_subscriber_gets_the_missed_events_then_the_live_ones_without_gaps(
    tmp_path: Path,
) -> None:
    async def run() -> list[int]:
        with open_journal(tmp_path, Wall()) as journal:
            for n in range(5):
                journal.append("bet.placed", actor="dealer:D1", payload={"n": n}, commit=True)
            subscription = journal_feed.subscribe(journal, after_seq=2)
            seen: list[int] = []

            async def read() -> None:
                async for event in subscription:
                    seen.append(event["seq"])
                    if event["seq"] == 3:
                        # Committed while the reader is mid-catch-up: must come once, in order.
                        await journal.append_async("bet.placed", actor="d:1", commit=True)
                    if len(seen) == 6:
                        return

            reader = asyncio.create_task(read())
            await asyncio.sleep(0)
            await journal.append_async("dice.landed", actor="device:dice_shaker", commit=True)
            await asyncio.wait_for(reader, 10)
            await subscription.aclose()
            return seen

    seen = asyncio.run(run())
    assert seen == [3, 4, 5, 6, 7, 8]


def test_a_live_subscriber_starts_at_the_end(tmp_path: Path) -> None:
    async def run() -> list[str]:
        with open_journal(tmp_path, Wall()) as journal:
            journal.append("bet.placed", actor="dealer:D1", commit=True)
            subscription = journal_feed.subscribe(journal)
            iterator = aiter(subscription)
            await journal.append_async("dice.landed", actor="device:dice_shaker", commit=True)
            event = await asyncio.wait_for(anext(iterator), 10)
            await subscription.aclose()
            return [event["event"]]

    assert asyncio.run(run()) == ["dice.landed"]


def _three_days(tmp_path: Path) -> tuple[Wall, list[Path]]:
    """A journal of three days (a file a day, three rounds each), closed."""
    wall = Wall()
    with open_journal(tmp_path, wall) as journal:
        for day in range(3):
            for n in range(3):
                journal.append("bet.placed", actor="dealer:D1", round_id=day * 10 + n, commit=True)
            wall.now += 86400
    return wall, sorted(tmp_path.glob("journal-*.jsonl"))


def test_queries_still_answer_once_old_files_are_archived_off_the_pc(tmp_path: Path) -> None:
    # docs/operations.md: closed files go to the vault and are then removed from the PC.
    wall, files = _three_days(tmp_path)
    files[0].rename(tmp_path / f"archived-{files[0].name}")
    with open_journal(tmp_path, wall) as journal:

        def seqs(**kw: Any) -> list[int]:
            return [e["seq"] for e in journal_feed.query(journal, **kw)]

        head = journal.durable_seq  # reopening journaled events of its own after seq 9
        assert seqs(limit=2) == [head - 1, head]
        assert [e["round"] for e in journal_feed.query(journal, round="21")] == [21]
        assert seqs(round="1") == []  # archived: in the vault, not on the PC
        rounds = [e["round"] for e in journal_feed.query(journal, event="bet.placed")]
        assert rounds == [10, 11, 12, 20, 21, 22]


def test_recent_and_since_queries_read_only_the_files_they_need(tmp_path: Path) -> None:
    wall, files = _three_days(tmp_path)
    with open_journal(tmp_path, wall) as journal:
        # The oldest file changed under the daemon: a query that reads it says so (the chain is
        # checked as it is read); the console's recent events and surveillance's "since this
        # morning" never open it.
        files[0].write_text(files[0].read_text().replace("dealer:D1", "dealer:X1", 1))
        with pytest.raises(JournalCorrupt):
            journal_feed.query(journal, round="0")
        head = journal.durable_seq
        assert [e["seq"] for e in journal_feed.query(journal, limit=3)] == [
            head - 2,
            head - 1,
            head,
        ]
        third_day = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
        bets = journal_feed.query(journal, event="bet.placed", since=third_day)
        assert [e["round"] for e in bets] == [20, 21, 22]
