"""The journal as the operator API reads it: a record as a dict, and `TableFacade.subscribe`'s
gap-free stream of durable events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from daemon.journal import Journal, JournalError, SubscriberLagged, Subscription, record_dict

MAXSIZE = 8192  # durable events waiting for this reader before the journal drops it


class JournalFeed:
    """`TableFacade.subscribe`: the journal's durable events from `after_seq` on, gap-free."""

    def __init__(self, journal: Journal, after_seq: int | None) -> None:
        self._journal = journal
        self._sub: Subscription = journal.subscribe(maxsize=MAXSIZE)
        self._next = None if after_seq is None else after_seq + 1
        self._closed = False

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        if self._next is not None:
            # Durable events already journaled; later ones come from the subscription.
            upto = self._journal.durable_seq
            for record in self._journal.replay(self._next):
                if record.seq > upto:
                    break
                self._next = record.seq + 1
                yield record_dict(record)
        while not self._closed:
            try:
                record = await self._sub.next()
            except SubscriberLagged as lagged:
                # This reader fell behind the journal (which never waits for it): a new live
                # subscription, and what was missed meanwhile from the files, as below.
                self._sub = self._journal.subscribe(maxsize=MAXSIZE)
                if self._next is None and lagged.last_seq:
                    self._next = lagged.last_seq + 1
                if self._next is not None:
                    upto = self._journal.durable_seq
                    for missed in self._journal.replay(self._next):
                        if missed.seq > upto:
                            break
                        self._next = missed.seq + 1
                        yield record_dict(missed)
                continue
            except JournalError:
                return
            if self._next is not None and record.seq < self._next:
                continue
            if self._next is not None and record.seq > self._next:
                # Staged before we subscribed, durable since: read them from the files.
                for missed in self._journal.replay(self._next):
                    if missed.seq >= record.seq:
                        break
                    yield record_dict(missed)
            self._next = record.seq + 1
            yield record_dict(record)

    async def aclose(self) -> None:
        self._closed = True
        self._sub.close()
