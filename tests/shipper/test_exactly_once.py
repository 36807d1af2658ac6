"""Every journal line reaches the stream exactly once, in order, byte for byte (real server)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from daemon.shipper.cursor import read_cursor
from daemon.shipper.engine import Shipper
from tests.shipper.support import (
    NatsServer,
    add_events,
    assert_stream_is_journal,
    feed_config,
    journal_lines,
    make_journal,
)


def ship_files(server: NatsServer, directory: Path, table: str = "T01", **feed: object) -> Shipper:
    shipper = Shipper(feed_config(server, **feed), table, directory, follow=False)
    asyncio.run(shipper.run())
    return shipper


def test_every_line_once_in_order_across_rotated_files(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    journal = make_journal(tmp_path / "j", "T01", 3000, rotate_bytes=64 * 1024)
    journal.close()
    files = sorted((tmp_path / "j").glob("journal-*.jsonl"))
    assert len(files) > 5  # the journal rotated: the shipper goes from file to file
    shipper = ship_files(nats_server, tmp_path / "j", window=64)
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")
    head = len(journal_lines(tmp_path / "j"))
    assert read_cursor(tmp_path / "j", "TABLED").seq == head
    assert shipper.status().cursor == head

    # Shipping again sends nothing new; more lines go on from the cursor.
    ship_files(nats_server, tmp_path / "j")
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")
    journal = make_journal(tmp_path / "j", "T01", 0, rotate_bytes=64 * 1024)
    add_events(journal, 500)
    journal.close()
    ship_files(nats_server, tmp_path / "j")
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")


def test_a_lost_cursor_ships_nothing_twice(tmp_path: Path, nats_server: NatsServer) -> None:
    journal = make_journal(tmp_path / "j", "T01", 700)
    journal.close()
    ship_files(nats_server, tmp_path / "j")
    # A cursor file left unreadable (or deleted): the stream's last message of this table is
    # the cursor then, after its bytes were compared with the journal's line.
    (tmp_path / "j" / "feed.cursor").write_bytes(b'{"stream": "TAB')
    shipper = ship_files(nats_server, tmp_path / "j")
    assert shipper.status().sent_total == 0  # not even resent: JetStream had them all
    assert read_cursor(tmp_path / "j", "TABLED").seq == 701
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")


def test_another_journal_under_the_same_table_id_is_refused(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    make_journal(tmp_path / "first", "T01", 300).close()
    ship_files(nats_server, tmp_path / "first")
    second = make_journal(tmp_path / "second", "T01", 400)
    second.close()
    shipper = Shipper(feed_config(nats_server), "T01", tmp_path / "second", follow=False)

    async def until_degraded() -> None:
        task = asyncio.ensure_future(shipper.run())
        while shipper.status().state != "degraded":
            await asyncio.wait({task}, timeout=0.01)
        shipper.request_stop(0)
        await task

    asyncio.run(until_degraded())
    assert shipper.status().cursor == 0
    assert shipper.status().last_error == (
        "stream TABLED holds T01:301 with other bytes than this journal's line 301 (is another "
        "table configured as T01, or was this journal started anew?); nothing more is shipped"
    )
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "first")
