"""A child process for the SIGKILL test: appends forever, printing each acknowledged commit.

`python _appender.py DIR SEED`: two threads append a mix of commit and non-commit events,
some large enough that a kill can land inside a write; after each commit returns, the thread
prints ``ack SEQ HASH``: from that moment the event is acknowledged and must survive.
"""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

from daemon.config import JournalConfig
from daemon.journal import Journal
from daemon.logging import configure_logging


def main() -> None:
    directory, seed = Path(sys.argv[1]), int(sys.argv[2])
    configure_logging("warning", stream=sys.stderr)
    config = JournalConfig(dir=directory, durability="fsync", rotate_bytes=256 * 1024)
    journal = Journal.open(config, "T01")
    out = threading.Lock()

    def run(n: int) -> None:
        rng = random.Random(seed * 10 + n)
        i = 0
        while True:
            i += 1
            big = rng.random() < 0.05
            payload = {"thread": n, "i": i, "pad": "x" * (rng.randrange(150_000) if big else 20)}
            commit = rng.random() < 0.6
            record = journal.append(
                "device.frame_received", actor=f"driver:{n}", payload=payload, commit=commit
            )
            if commit:
                with out:
                    sys.stdout.write(f"ack {record.seq} {record.hash}\n")
                    sys.stdout.flush()

    threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
