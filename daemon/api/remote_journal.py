"""The table's journal as the API process sees it (`daemon.api.worker`): the durable events the
table's process sends over the channel, the recent ones kept in memory, and the journal's files,
read-only, for older ones; and `TableFacade.subscribe` over them."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from daemon.contract.journal_feed import FeedRecord
from daemon.journal import Record
from daemon.journal.live import LiveRecords
from daemon.journal.reader import replay

RECENT = 8192  # durable events kept in memory (a console's catch-up rarely reads the files)
SUBSCRIBER_QUEUE = 4096  # events waiting for one subscriber before it reads the journal instead
CATCH_UP_BATCH = 500


class RemoteJournal:
    """The table's journal as the API process sees it: the durable events sent to it (the
    recent ones kept), and the journal's files for older ones."""

    def __init__(self, directory: Path | None, durable_seq: int) -> None:
        self.dir = directory if directory is not None else Path("/nonexistent")
        self.durable_seq = durable_seq
        self._lock = threading.Lock()  # `replay` runs in worker threads
        # The recent durable events, read as the journal reads its own (`LiveRecords.since`);
        # no subscriber of it: this journal hands the events to its own (`RemoteSubscription`).
        self._live = LiveRecords(self._lock, keep=RECENT)
        self.subscriptions: set[RemoteSubscription] = set()

    def replay(self, from_seq: int = 1) -> Iterator[Record]:
        """Every durable event from `from_seq` (at most the durable seq now), in order."""
        with self._lock:
            durable = self.durable_seq
            recent = self._live.since(from_seq)
        if recent is not None:
            return iter(recent)
        return self._from_files(from_seq, durable)

    def _from_files(self, from_seq: int, upto: int) -> Iterator[Record]:
        if from_seq > upto:
            return
        for record in replay(self.dir, from_seq=from_seq):
            if record.seq > upto:
                return
            yield record

    async def add(self, records: list[Record]) -> None:
        """Durable events from the table, in order (on the API's loop). Any the table's process
        did not send (this process started since, or its forwarder fell behind) are read from
        the files first."""
        if not records:
            return
        if records[0].seq > self.durable_seq + 1:
            first, upto = self.durable_seq + 1, records[0].seq - 1
            missed = await asyncio.to_thread(lambda: list(self._from_files(first, upto)))
            records = missed + records
        fresh = [r for r in records if r.seq > self.durable_seq]
        if not fresh:
            return
        with self._lock:
            self._live.recent.extend(fresh)
            self.durable_seq = fresh[-1].seq
        for subscription in list(self.subscriptions):
            subscription.offer(fresh)

    def close(self) -> None:
        for subscription in list(self.subscriptions):
            subscription.end()


class RemoteSubscription:
    """`TableFacade.subscribe`: the durable events after `after_seq` (None: from now), then the
    live ones, gap-free and in order; one that falls `maxsize` behind reads the journal."""

    def __init__(
        self, journal: RemoteJournal, after_seq: int | None, maxsize: int = SUBSCRIBER_QUEUE
    ) -> None:
        self._journal, self._maxsize = journal, maxsize
        self._last = journal.durable_seq if after_seq is None else after_seq
        self._queue: deque[Record] = deque()
        self._wake = asyncio.Event()
        self._closed = self._ended = False
        journal.subscriptions.add(self)

    def offer(self, records: list[Record]) -> None:
        if len(self._queue) + len(records) > self._maxsize:
            self._queue.clear()  # it reads the journal instead, from its last seq
        else:
            self._queue.extend(records)
        self._wake.set()

    def end(self) -> None:
        self._ended = True
        self._wake.set()

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    def _read(self, first: int) -> list[Record]:
        return list(itertools.islice(self._journal.replay(first), CATCH_UP_BATCH))

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        queue, journal = self._queue, self._journal
        while not self._closed:
            if queue and queue[0].seq <= self._last + 1:
                record = queue.popleft()
                if record.seq > self._last:
                    self._last = record.seq
                    yield FeedRecord(record)
                continue
            if self._last < journal.durable_seq:
                # Behind what is queued (a catch-up, or it fell behind): read the journal.
                for record in await asyncio.to_thread(self._read, self._last + 1):
                    if record.seq > self._last:
                        self._last = record.seq
                        yield FeedRecord(record)
                continue
            if self._ended:
                return
            self._wake.clear()
            await self._wake.wait()

    async def aclose(self) -> None:
        self._closed = True
        self._journal.subscriptions.discard(self)
        self._wake.set()
