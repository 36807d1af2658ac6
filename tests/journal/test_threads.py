from __future__ import annotations

import threading
from collections import defaultdict

from daemon.journal import Record, verify


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
    assert journal.syncs <= 1 + 4 * per_thread
    journal.close()
    assert verify(journal_dir).ok
