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
