from __future__ import annotations

import asyncio
import threading

import pytest

from daemon.journal import JournalClosed, Record, SubscriberLagged


def test_subscribers_see_events_once_durable_and_in_order(open_journal) -> None:
    journal = open_journal(durability="fsync")
    feed = journal.subscribe()
    staged = [
        journal.append("shoe.card_seen", actor="shoe_reader", payload={"i": i}, commit=False)
        for i in range(3)
    ]
    assert feed.get_nowait() is None  # not durable yet, so not acknowledged to anyone
    closed = journal.append("table.bets_closed", actor="dealer", commit=True)
    assert [feed.get_nowait() for _ in range(4)] == [*staged, closed]
    assert feed.get_nowait() is None


def test_a_slow_subscriber_is_dropped_and_never_blocks_the_table(open_journal) -> None:
    journal = open_journal()
    slow = journal.subscribe(maxsize=3)
    healthy = journal.subscribe(maxsize=100)
    records = [journal.append("shoe.card_read", actor="shoe_reader", commit=True) for _ in range(8)]
    assert [healthy.get_nowait() for _ in range(8)] == records
    assert [slow.get_nowait() for _ in range(3)] == records[:3]
    with pytest.raises(SubscriberLagged) as lagged:
        slow.get_nowait()
    assert lagged.value.last_seq == records[2].seq
    # The way back: replay from the last seq received (events are idempotent by seq).
    assert [r.seq for r in journal.replay(from_seq=lagged.value.last_seq + 1)] == [
        r.seq for r in records[3:]
    ]


def test_a_thread_consumer_receives_everything(open_journal) -> None:
    journal = open_journal()
    feed = journal.subscribe()
    received: list[Record] = []

    def consume() -> None:
        while len(received) < 100:
            received.append(feed.get(timeout=10))

    consumer = threading.Thread(target=consume)
    consumer.start()
    appended = [
        journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
        for i in range(100)
    ]
    consumer.join(timeout=30)
    assert received == appended


def test_an_asyncio_consumer_gets_events_from_the_loop_and_from_driver_threads(
    open_journal,
) -> None:
    journal = open_journal(durability="fsync")

    async def scenario() -> list[Record]:
        feed = journal.subscribe()
        received: list[Record] = []

        async def consume() -> None:
            async for record in feed:
                received.append(record)

        consumer = asyncio.create_task(consume())

        def driver() -> None:
            for i in range(50):
                journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)

        thread = threading.Thread(target=driver)
        thread.start()
        for _ in range(50):
            await journal.append_async("table.tick", actor="table", commit=True)
        await asyncio.to_thread(thread.join)
        journal.flush()
        while len(received) < 100:
            await asyncio.sleep(0)
        feed.close()
        await asyncio.wait_for(consumer, timeout=10)
        return received

    received = asyncio.run(asyncio.wait_for(scenario(), timeout=30))
    assert [r.seq for r in received] == sorted(r.seq for r in received)
    assert len(received) == 100
    assert [r.payload["i"] for r in received if r.event == "shoe.card_read"] == list(range(50))


def test_closing_the_journal_ends_its_subscriptions(open_journal) -> None:
    journal = open_journal()
    feed = journal.subscribe()
    journal.append("table.bets_closed", actor="dealer", commit=False)
    journal.close()  # flushes, so the last event still reaches the subscriber
    assert feed.get_nowait() is not None
    with pytest.raises(JournalClosed):
        feed.get(timeout=1)
