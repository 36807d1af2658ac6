"""The shipper beside a live journal: broker down and back, restarted mid-publish, a second
table on the same stream, wrong credentials, a stream with the wrong subjects, a refused line.
Each ends with the stream's lines per table equal to the journal's, byte for byte, once each."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import nats
import pytest
from nats.js import api as js_api

from daemon.journal import RECENT_RECORDS, Journal, Record, Subscription
from daemon.shipper.broker import FeedError, connect
from daemon.shipper.cli import replay
from daemon.shipper.engine import Shipper
from daemon.shipper.tail import line_seq
from tests.shipper.support import (
    NatsServer,
    add_events,
    assert_stream_is_journal,
    feed_config,
    journal_lines,
    make_journal,
    stream_lines,
)


class Acked:
    """Wakes a test thread when the shipper's cursor reaches a seq (no polling, no sleeping)."""

    def __init__(self) -> None:
        self.seq = 0
        self._cond = threading.Condition()

    def __call__(self, seq: int) -> None:
        with self._cond:
            self.seq = seq
            self._cond.notify_all()

    def wait_for(self, seq: int, timeout: float = 30.0) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: self.seq >= seq, timeout), (self.seq, seq)


def wait_event(journal: Journal, subscription: Subscription, event: str) -> Record:
    """The next journal record of `event` (from a subscription taken before it could happen)."""
    while True:
        record = subscription.get(timeout=30)
        if record.event == event:
            return record


def live(server: NatsServer, journal: Journal, acked: Acked, **feed: object) -> Shipper:
    shipper = Shipper(
        feed_config(server, **feed), journal.table_id, journal.dir, journal=journal,
        on_acked=acked,
    )  # fmt: skip
    shipper.start()
    return shipper


def test_live_journal_ships_as_it_grows_and_drains_on_stop(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    journal = make_journal(tmp_path / "j", "T01", 200)
    acked = Acked()
    shipper = live(nats_server, journal, acked)
    acked.wait_for(journal.durable_seq)
    add_events(journal, 300)
    acked.wait_for(journal.durable_seq)
    status = shipper.status()
    assert status.state == "shipping" and status.lag_lines == 0 and status.connected
    add_events(journal, 100)
    journal.close()  # the table stops first; then the shipper drains what is left
    shipper.stop()
    assert shipper.status().state == "stopped"
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")


def test_broker_down_then_back_the_table_plays_on(tmp_path: Path, nats_server: NatsServer) -> None:
    nats_server.stop()
    journal = make_journal(tmp_path / "j", "T01", 50)
    feed = journal.subscribe(maxsize=100_000)
    acked = Acked()
    shipper = live(nats_server, journal, acked)
    degraded = wait_event(journal, feed, "feed.degraded")
    assert degraded.payload["reason"] == f"no NATS server answers at {nats_server.url}"
    assert degraded.payload["lag_lines"] > 0 and degraded.payload["lag_seconds"] > 0
    add_events(journal, 400)  # the table plays on while the broker is away
    status = shipper.status()
    assert status.state == "degraded" and not status.connected and status.lag_lines >= 400
    assert status.lag_seconds() >= 0 and status.last_error == degraded.payload["reason"]
    nats_server.start()
    recovered = wait_event(journal, feed, "feed.recovered")
    assert recovered.payload["outage_seconds"] > 0
    acked.wait_for(journal.durable_seq)
    journal.close()
    shipper.stop()
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")


def test_broker_restarted_mid_publish(tmp_path: Path, nats_server: NatsServer) -> None:
    journal = make_journal(tmp_path / "j", "T01", 6000)
    acked = Acked()
    shipper = live(nats_server, journal, acked, window=256)
    acked.wait_for(1500)
    nats_server.restart()  # same port, same store: what it acknowledged is kept
    add_events(journal, 500)
    acked.wait_for(journal.durable_seq)
    journal.close()
    shipper.stop()
    assert shipper.status().reconnects_total >= 1
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")


def test_a_second_table_on_the_same_stream(tmp_path: Path, nats_server: NatsServer) -> None:
    one = make_journal(tmp_path / "one", "T01", 800)
    two = make_journal(tmp_path / "two", "T02", 1200)
    acked_one, acked_two = Acked(), Acked()
    first = live(nats_server, one, acked_one)
    second = live(nats_server, two, acked_two)
    add_events(one, 300)
    add_events(two, 100)
    acked_one.wait_for(one.durable_seq)
    acked_two.wait_for(two.durable_seq)
    for journal, shipper in ((one, first), (two, second)):
        journal.close()
        shipper.stop()
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "one")
    assert_stream_is_journal(nats_server.url, "T02", tmp_path / "two")


def test_wrong_credentials_are_a_clear_journaled_error(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats", args=("--user", "table", "--pass", "right"))
    server.start()
    try:
        journal = make_journal(tmp_path / "j", "T01", 20)
        feed = journal.subscribe(maxsize=100_000)
        acked = Acked()
        shipper = live(server, journal, acked, user="table", password="wrong")  # noqa: S106
        degraded = wait_event(journal, feed, "feed.degraded")
        assert "refused the credentials" in degraded.payload["reason"]
        add_events(journal, 30)  # the table plays on
        shipper.stop(0)
        assert shipper.status().cursor == 0
        # The right password ships everything, the degraded notice included.
        acked = Acked()
        shipper = live(server, journal, acked, user="table", password="right")  # noqa: S106
        acked.wait_for(journal.durable_seq)
        journal.close()
        shipper.stop()
        url = f"nats://table:right@127.0.0.1:{server.port}"
        assert_stream_is_journal(url, "T01", tmp_path / "j")
    finally:
        server.stop()


async def _add_stream(url: str, **config: object) -> None:
    nc = await nats.connect(url)
    try:
        await nc.jetstream().add_stream(js_api.StreamConfig(name="TABLED", **config))  # type: ignore[arg-type]
    finally:
        await nc.close()


def test_a_stream_with_the_wrong_subjects_is_a_clear_error(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    asyncio.run(_add_stream(nats_server.url, subjects=["pit.>"]))
    journal = make_journal(tmp_path / "j", "T01", 20)
    feed = journal.subscribe(maxsize=100_000)
    shipper = live(nats_server, journal, Acked())
    degraded = wait_event(journal, feed, "feed.degraded")
    assert degraded.payload["reason"] == (
        "stream TABLED exists with subjects ['pit.>'], which do not take tabled.T01.>; add "
        "tabled.> to its subjects or name another stream in [feed] stream"
    )
    add_events(journal, 10)
    journal.close()
    shipper.stop(0)
    assert shipper.status().cursor == 0
    assert stream_lines(nats_server.url, "T01") == []


def test_a_line_the_stream_refuses_is_journaled_not_skipped_silently(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    asyncio.run(_add_stream(nats_server.url, subjects=["tabled.>"], max_msg_size=2048))
    journal = make_journal(tmp_path / "j", "T01", 10)
    big = journal.append("card.dealt", actor="dealer", payload={"blob": "x" * 4000}, commit=True)
    add_events(journal, 10)
    feed = journal.subscribe(maxsize=100_000)
    acked = Acked()
    shipper = live(nats_server, journal, acked)
    refused = wait_event(journal, feed, "feed.refused")
    assert refused.payload["seq"] == big.seq
    assert refused.payload["event"] == "card.dealt"
    assert "size" in refused.payload["reason"]
    acked.wait_for(journal.durable_seq)
    journal.close()
    shipper.stop()
    assert shipper.status().refused_total == 1
    stored = stream_lines(nats_server.url, "T01")
    assert stored == [x for x in journal_lines(tmp_path / "j") if x != big.line]


async def _raise_max_msg_size(url: str) -> None:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        info = await js.stream_info("TABLED")
        info.config.max_msg_size = 1 << 20
        await js.update_stream(info.config)
    finally:
        await nc.close()


def test_replay_fills_the_gap_of_a_refused_line_and_stores_nothing_twice(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    asyncio.run(_add_stream(nats_server.url, subjects=["tabled.>"], max_msg_size=2048))
    journal = make_journal(tmp_path / "j", "T01", 30)
    big = journal.append("card.dealt", actor="dealer", payload={"blob": "y" * 3000}, commit=True)
    add_events(journal, 30)
    journal.close()
    shipper = Shipper(feed_config(nats_server), "T01", tmp_path / "j", follow=False)
    asyncio.run(shipper.run())
    assert shipper.status().refused_total == 1
    assert big.line not in stream_lines(nats_server.url, "T01")

    asyncio.run(_raise_max_msg_size(nats_server.url))
    head = len(journal_lines(tmp_path / "j"))
    result = asyncio.run(replay(feed_config(nats_server), "T01", tmp_path / "j", 1, head))
    assert (result["stored"], result["duplicates"], result["refused"]) == (1, head - 1, 0)
    again = asyncio.run(replay(feed_config(nats_server), "T01", tmp_path / "j", 1, head))
    assert (again["stored"], again["duplicates"]) == (0, head)
    stored = stream_lines(nats_server.url, "T01")
    assert stored[-1] == big.line  # the gap filled, at the end of the stream
    assert sorted(stored, key=line_seq) == journal_lines(tmp_path / "j")


def test_a_connection_lost_while_sending_loses_no_line(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    """The moment a broker restart hit in issue 11: the connection gone as a batch is taken."""
    journal = make_journal(tmp_path / "j", "T01", 20)
    shipper = Shipper(feed_config(nats_server), "T01", journal.dir, journal=journal)

    async def send_on_a_lost_connection() -> None:
        nc = await connect(shipper.feed, "T01")
        await nc.close()
        shipper._window.ensure_tail()
        with pytest.raises(FeedError, match="connection to the NATS server was lost"):
            await shipper._send(nc, nc.new_inbox(), 7)
        shipper._requeue()

    asyncio.run(send_on_a_lost_connection())
    # Whatever was taken is sent again first, and the tail goes on right after it.
    resend = [line.seq for line in shipper._window.resend]
    shipper._window.ensure_tail()
    assert resend + [line.seq for line in shipper._window.tail.read(None, 5)] == list(
        range(1, len(resend) + 6)
    )
    shipper._window.tail.close()
    journal.close()


class FileReads:
    """Counts the times the shipper's journal tail reads the files (its `_fill`)."""

    def __init__(self, shipper: Shipper) -> None:
        self.calls = 0
        tail = shipper._window.tail
        fill = tail._fill

        def counted() -> bool:
            self.calls += 1
            return fill()

        tail._fill = counted  # type: ignore[method-assign]


def test_live_lines_ship_from_the_journals_memory_not_its_files(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    """A running table's lines are shipped from the records its journal made durable (their
    bytes in memory), and the files are not read again for them."""
    journal = make_journal(tmp_path / "j", "T01", 200, rotate_bytes=16 * 1024)
    acked = Acked()
    shipper = Shipper(feed_config(nats_server), "T01", journal.dir, journal=journal, on_acked=acked)
    reads = FileReads(shipper)
    shipper.start()
    acked.wait_for(journal.durable_seq)
    add_events(journal, 700)  # across several rotated files
    acked.wait_for(journal.durable_seq)
    journal.close()
    shipper.stop()
    assert reads.calls == 0
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")


def test_an_outage_longer_than_the_journals_memory_ships_from_the_files(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    """Lines that left the journal's memory while the broker was away are read from the files,
    chain-checked, and every line reaches the stream once, in order."""
    nats_server.stop()
    journal = make_journal(tmp_path / "j", "T01", 20, rotate_bytes=64 * 1024)
    acked = Acked()
    shipper = Shipper(feed_config(nats_server), "T01", journal.dir, journal=journal, on_acked=acked)
    reads = FileReads(shipper)
    shipper.start()
    add_events(journal, RECENT_RECORDS + 600)
    nats_server.start()
    acked.wait_for(journal.durable_seq)
    assert reads.calls > 0
    add_events(journal, 100)  # and live again, from memory
    acked.wait_for(journal.durable_seq)
    journal.close()
    shipper.stop()
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")
