"""Who waits for the table to change (`Table.wait_for`: autoplay, the publisher, the tests):
each waiter's predicate, asked when the table says it changed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Waiters:
    """The waiters of one table, on its loop (opened when the table starts)."""

    def __init__(self) -> None:
        self._waiters: dict[asyncio.Future[None], Callable[[], bool]] = {}
        self.open = False

    def __len__(self) -> int:
        """How many wait now."""
        return len(self._waiters)

    def start(self) -> None:
        self._waiters = {}
        self.open = True

    def changed(self) -> None:
        """The table changed: wake the waiters whose predicate now holds (`wait_for`).

        The predicates are asked here, so a waiter whose predicate is still false costs one
        call and is not woken (most changes of a round wake nobody: waiters wait for a phase).
        """
        waiters = self._waiters
        if not waiters:
            return
        for future, predicate in list(waiters.items()):
            try:
                holds = predicate()
            except BaseException as exc:  # the waiter learns it, as if it had asked itself
                del waiters[future]
                if not future.done():
                    future.set_exception(exc)
                continue
            if holds:
                del waiters[future]
                if not future.done():
                    future.set_result(None)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until `predicate()` holds after some input; False after `timeout` seconds.

        True means the predicate held when this returned (no other task ran in between)."""
        waiters = self._waiters
        if predicate():
            return True
        loop = asyncio.get_running_loop()
        # asyncio.timeout, not asyncio.wait_for: on Python 3.11, wait_for swallows a
        # cancellation that arrives as the wait completes, and the task that was cancelled
        # (autoplay on SIGTERM) plays on.
        try:
            async with asyncio.timeout(timeout):
                while True:
                    future: asyncio.Future[None] = loop.create_future()
                    waiters[future] = predicate
                    try:
                        await future
                    finally:
                        waiters.pop(future, None)  # timed out or cancelled: nothing left behind
                    # It held when the table changed; other tasks may have run since.
                    if predicate():
                        return True
        except TimeoutError:
            return predicate()
