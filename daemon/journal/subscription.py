"""Subscriptions: a bounded, in-order feed of the journal's durable events, to threads or asyncio.

The journal never waits for a subscriber; one that falls behind is dropped and told so
(`SubscriberLagged`), and catches up by replaying from its last seq. A subscription knows
nothing of the journal: it is handed the records it gets (`_offer`) and tells whoever made it
when it is done with (`on_drop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable

from daemon.journal.format import JournalError, Record


class JournalClosed(JournalError):
    """The journal (or the subscription) is closed."""


class SubscriberLagged(JournalError):
    """The subscriber fell `maxsize` events behind and was dropped; it must replay and resubscribe.

    `last_seq` is the last event it received (0 if none): replay from `last_seq + 1`.
    """

    def __init__(self, last_seq: int) -> None:
        super().__init__(f"subscriber fell behind after seq {last_seq}; replay from there")
        self.last_seq = last_seq


class Subscription:
    """A bounded, in-order feed of durable events, for threads (`get`) or asyncio (`async for`).

    The journal never waits for a subscriber: when `maxsize` events are waiting, the
    subscription is dropped, and reading it yields what it holds and then raises
    `SubscriberLagged`, so the reader replays from its last seq (events are idempotent by seq).
    """

    def __init__(self, on_drop: Callable[[Subscription], None], maxsize: int) -> None:
        """`on_drop(self)` is called once it lags or is closed: no more records for it."""
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self._on_drop = on_drop
        self._maxsize = maxsize
        self._items: deque[Record] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._lagged = False
        self._closed = False
        self._last_seq = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Event | None = None

    def _offer(self, records: list[Record]) -> None:
        # Runs in the committing thread: constant work, no waiting on the reader.
        wake_loop = None
        with self._cond:
            if self._lagged or self._closed:
                return
            if len(self._items) + len(records) > self._maxsize:
                self._lagged = True
            else:
                self._items.extend(records)
            self._cond.notify()
            if self._wakeup is not None:
                wake_loop = self._loop
        if wake_loop is not None and self._wakeup is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the reader is gone
                wake_loop.call_soon_threadsafe(self._wakeup.set)
        if self._lagged:
            self._on_drop(self)

    def _take(self) -> Record | None:
        # Caller holds self._cond.
        if self._items:
            record = self._items.popleft()
            self._last_seq = record.seq
            return record
        if self._lagged:
            raise SubscriberLagged(self._last_seq)
        if self._closed:
            raise JournalClosed("subscription closed")
        return None

    def get(self, timeout: float | None = None) -> Record:
        """The next durable event; TimeoutError after `timeout` seconds without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                record = self._take()
                if record is not None:
                    return record
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("no journal event within the timeout")
                self._cond.wait(remaining)

    def get_nowait(self) -> Record | None:
        with self._cond:
            return self._take()

    async def next(self) -> Record:
        """The next durable event, awaited without blocking the loop."""
        while True:
            with self._cond:
                record = self._take()
                if record is not None:
                    return record
                if self._wakeup is None:
                    self._loop = asyncio.get_running_loop()
                    self._wakeup = asyncio.Event()
                wakeup = self._wakeup
                wakeup.clear()
            await wakeup.wait()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Record:
        try:
            return await self.next()
        except JournalClosed:
            raise StopAsyncIteration from None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            loop, wakeup = self._loop, self._wakeup
        if loop is not None and wakeup is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wakeup.set)
        self._on_drop(self)
