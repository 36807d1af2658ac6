"""A driver's events on their way to the table (and the table's commands on their way to a
device, `daemon.table.devices`): in arrival order, unbounded, one hand-off each.

`asyncio.Queue` did this job, at the price of its generality (a maximum size, `task_done` and
`join` bookkeeping, an `Event` cleared on every put): on uvloop, a hand-off from a callback to
the task waiting for it cost 2.05 us through asyncio.Queue and costs 1.55 us through this (most of
what is left is the task's wake-up), on each of the ~60 events of a Thirteen round. What a driver
needs is less: `put` from the receive path (never blocks, never raises), `get` for the
table's pump (the next event, waiting if there is none), `drain` for the ones already there.
Order is arrival order; a waiter cancelled after it was woken passes the wake-up on, so no event
is left waiting while a getter sleeps. (The deque is `_queue`, as in asyncio.Queue:
bench_table's frame clock reads it.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Generic, TypeVar

_T = TypeVar("_T")


class Mailbox(Generic[_T]):
    __slots__ = ("_queue", "_waiters")

    def __init__(self) -> None:
        self._queue: deque[_T] = deque()
        self._waiters: deque[asyncio.Future[None]] = deque()

    def __len__(self) -> int:
        return len(self._queue)

    def qsize(self) -> int:
        return len(self._queue)

    def empty(self) -> bool:
        return not self._queue

    def put(self, item: _T) -> None:
        self._queue.append(item)
        waiters = self._waiters
        while waiters:  # `_wake_next()`, inline: every event of a round comes this way
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_next(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def get(self) -> _T:
        items = self._queue
        while not items:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
                if items and not waiter.cancelled():
                    self._wake_next()  # woken, then cancelled: the next getter takes it
                raise
        return items.popleft()

    def get_nowait(self) -> _T:
        """The next item; IndexError if there is none."""
        return self._queue.popleft()

    def drain(self) -> list[_T]:
        """Every item already there, in order, without waiting."""
        out = list(self._queue)
        self._queue.clear()
        return out
