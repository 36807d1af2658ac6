"""SIGKILL of the shipping process at 60 random points: the stream still holds each line once.

A forked child ships a journal that the test keeps growing (the daemon's own writer, in this
process); the test SIGKILLs it after a random delay (while it connects, publishes, waits for
acknowledgements or replaces its cursor file), grows the journal, and forks the next one. At the
end one child runs to completion and the stream must equal the journal, byte for byte.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

from daemon.shipper.config import FeedConfig
from daemon.shipper.cursor import read_cursor
from daemon.shipper.engine import Shipper
from tests.shipper.support import (
    NatsServer,
    add_events,
    assert_stream_is_journal,
    feed_config,
    make_journal,
)


def _ship(feed: FeedConfig, directory: Path) -> None:
    try:
        asyncio.run(Shipper(feed, "T01", directory, follow=False).run())
    finally:
        os._exit(0)


def test_sigkill_at_random_points_never_stores_a_line_twice(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    rng = random.Random(11)
    fork = multiprocessing.get_context("fork")
    feed = feed_config(nats_server, window=128)
    journal = make_journal(tmp_path / "j", "T01", 300, rotate_bytes=256 * 1024)
    # A first child ships the first 300 lines whole: how long a ship takes on this machine
    # now (~60 ms quiet, ten times that at load 9). The kills fall anywhere in such a span,
    # so they land while it connects, publishes, waits for acks or replaces its cursor at
    # any load, not all before its first publish on a loaded machine.
    child = fork.Process(target=_ship, args=(feed, tmp_path / "j"))
    began = time.monotonic()
    child.start()
    child.join(60)
    whole = time.monotonic() - began
    assert child.exitcode == 0
    first = read_cursor(tmp_path / "j", "TABLED").seq
    kills = rounds = 0
    cursors = []
    while kills < 60 and rounds < 300:
        rounds += 1
        child = fork.Process(target=_ship, args=(feed, tmp_path / "j"))
        child.start()
        child.join(timeout=rng.uniform(0.0, whole))  # the random point where it dies
        if child.is_alive():
            assert child.pid is not None
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        child.join()
        cursors.append(read_cursor(tmp_path / "j", "TABLED").seq)
        add_events(journal, rng.randrange(50, 600))
    journal.close()
    child = fork.Process(target=_ship, args=(feed, tmp_path / "j"))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert kills == 60
    assert first > 0
    assert cursors == sorted(cursors) and cursors[-1] > first  # it shipped between the kills
    assert_stream_is_journal(nats_server.url, "T01", tmp_path / "j")
