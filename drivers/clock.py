"""The clock drivers read: the event loop's monotonic time in service, a manual one in tests.

Every deadline a driver keeps (reply timeouts, status polling, reconnect backoff) goes through a
`Clock`, so a test advances time instead of sleeping through it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle: ...

    async def sleep(self, seconds: float) -> None: ...


class MonotonicClock:
    """The running event loop's clock (`loop.time()`, monotonic)."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_at(when, callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class _ManualTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """Time stands still until `advance()` moves it; timers fire in order as it passes them."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _ManualTimer]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _ManualTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_at(self._now + seconds, wake)
        try:
            await future
        finally:
            timer.cancel()

    async def advance(self, seconds: float) -> None:
        """Move time forward, firing each due timer at its own instant and letting the event
        loop run what it woke before the next one fires."""
        target = self._now + seconds
        await settle()
        while self._timers and self._timers[0][0] <= target:
            when, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, when)
            timer.callback()
            await settle()
        self._now = target
        await settle()


async def settle(rounds: int = 20) -> None:
    """Let the event loop run everything already runnable (tests only)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
