from __future__ import annotations

import threading
from collections import defaultdict

from daemon.config import JournalConfig
from daemon.journal import Journal, Record, verify


def test_concurrent_appends_from_threads_form_one_chain(open_journal, journal_dir) -> None:
    journal = open_journal(durability="fsync", rotate_bytes=16_000)
    per_thread = 150
    results: dict[int, list[Record]] = defaultdict(list)
    start = threading.Barrier(4)

    def driver(n: int) -> None:
        start.wait()
        for i in range(per_thread):
            record = journal.append(
                "device.frame_received",
                actor=f"driver:{n}",
                payload={"i": i},
                commit=i % 3 != 0,
            )
            results[n].append(record)

    threads = [threading.Thread(target=driver, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    journal.flush()
    assert journal.durable_seq == journal.last_seq == 1 + 4 * per_thread
    replayed = list(journal.replay())
    assert [r.seq for r in replayed] == list(range(1, 2 + 4 * per_thread))
    for n, records in results.items():
        assert [r.payload["i"] for r in records] == list(range(per_thread))
        mine = [r for r in replayed if r.actor == f"driver:{n}"]
        assert mine == records
    journal.close()
    assert verify(journal_dir).ok


def test_commits_waiting_on_an_fdatasync_in_flight_share_the_next_one(journal_dir) -> None:
    in_flight, release = threading.Event(), threading.Event()
    armed = False

    def hold_first_sync(_seconds: float) -> None:
        # Runs inside the sync lock, right after an fdatasync: holding it keeps that sync
        # "in flight" for as long as the test needs.
        nonlocal armed
        if armed:
            armed = False
            in_flight.set()
            release.wait(timeout=30)

    config = JournalConfig(dir=journal_dir, durability="fsync")
    journal = Journal.open(config, "T01", on_sync=hold_first_sync)
    armed = True
    first = threading.Thread(
        target=journal.append, args=("dice.result",), kwargs={"actor": "dice", "commit": True}
    )
    first.start()
    assert in_flight.wait(timeout=30)
    syncs_before = journal.syncs
    waiters = [
        threading.Thread(
            target=journal.append,
            args=("shoe.card_read",),
            kwargs={"actor": f"driver:{n}", "commit": True},
        )
        for n in range(5)
    ]
    for waiter in waiters:
        waiter.start()
    # Each waiter stages its line (seq, hash, write) at once and then queues for the sync lock.
    for _ in range(10_000_000):
        if journal.last_seq == 7:
            break
    assert journal.last_seq == 7
    release.set()
    for thread in [first, *waiters]:
        thread.join(timeout=30)
    assert journal.durable_seq == 7
    assert journal.syncs - syncs_before == 2  # the held one finishing, then one for all five
    journal.close()
