"""What an open journal keeps in memory for its readers while it is written.

- the last `RECENT_RECORDS` records appended, so a replay from a recent seq (a subscriber
  catching up, a console reconnecting) or a feed shipping what was just made durable reads no
  file;
- its subscribers (`Subscription`), each handed the records once they are durable, and the
  records staged for them that are not durable yet.

The writer (`daemon.journal.writer`) shares its lock with it: `add`, `since`, `due` and `join`
run with that lock held; `durable` and `drop` take it.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque

from daemon.journal.format import Record
from daemon.journal.subscription import Subscription

# The last events appended are kept in memory, so a replay from a recent seq (a subscriber
# catching up, a console reconnecting) reads no file.
RECENT_RECORDS = 4096


class LiveRecords:
    """The recent records of one open journal and its subscribers."""

    def __init__(self, lock: threading.Lock, keep: int = RECENT_RECORDS) -> None:
        self._lock = lock
        self.recent: deque[Record] = deque(maxlen=keep)
        self.subscribers: tuple[Subscription, ...] = ()
        self._undelivered: deque[Record] = deque()

    def add(self, record: Record) -> None:
        """A record just staged (not durable yet)."""
        self.recent.append(record)
        if self.subscribers:
            self._undelivered.append(record)

    def since(self, from_seq: int) -> list[Record] | None:
        """The records from `from_seq` on, from memory; None when it is older than memory."""
        recent = self.recent
        if recent and from_seq >= recent[0].seq:
            start = from_seq - recent[0].seq
            return list(itertools.islice(recent, start, None))
        return None

    def durable(self, from_seq: int, limit: int, upto: int) -> list[Record] | None:
        """Up to `limit` records from `from_seq` on, none past `upto` (the durable seq); None
        when `from_seq` is older than memory holds."""
        if from_seq > upto or limit < 1:
            return []
        recent = self.recent
        with self._lock:
            if not recent or from_seq < recent[0].seq:
                return None
            # Taken from the newest end: a feed that keeps up asks for the last few.
            back = recent[-1].seq - from_seq + 1
            taken = list(itertools.islice(reversed(recent), back))
        taken.reverse()
        return taken[: min(limit, upto - from_seq + 1)]

    def due(self, upto: int) -> list[Record]:
        """The records staged for the subscribers up to `upto`, now durable: taken off."""
        deliver: list[Record] = []
        undelivered = self._undelivered
        while undelivered and undelivered[0].seq <= upto:
            deliver.append(undelivered.popleft())
        return deliver

    def deliver(self, records: list[Record]) -> None:
        """Hand durable records to every subscriber (`Subscription._offer` never waits)."""
        for subscription in self.subscribers:
            subscription._offer(records)

    def join(self, subscription: Subscription) -> None:
        """A new subscriber: it gets the records made durable from now on."""
        self.subscribers = (*self.subscribers, subscription)

    def drop(self, subscription: Subscription) -> None:
        """A subscriber that lagged or closed (its `on_drop`)."""
        with self._lock:
            self.subscribers = tuple(s for s in self.subscribers if s is not subscription)
            if not self.subscribers:
                self._undelivered.clear()
