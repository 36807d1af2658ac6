"""The API's journal reads over a real `daemon.journal.Journal` on disk."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from daemon.api import journal_feed
from daemon.config import JournalConfig
from daemon.journal import Journal

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
