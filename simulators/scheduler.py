"""Timers for device models: when a simulated shuffle ends, when an unacknowledged event is
sent again. A model runs on whichever scheduler hosts it: a shared background thread for the
in-process `sim://` ports, the event loop for pseudo-terminals (`tabled sim`), a manual one in
model unit tests."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Protocol

import structlog


class Handle(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Handle: ...


class _Timer:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ThreadScheduler:
    """One daemon thread running every in-process simulator's timers in order."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Timer]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._log = structlog.get_logger("tabled.simulators")

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Handle:
        timer = _Timer(callback)
        when = time.monotonic() + delay
        with self._wake:
            earliest = self._heap[0][0] if self._heap else None
            heapq.heappush(self._heap, (when, next(self._order), timer))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sim-timers", daemon=True)
                self._thread.start()
            elif earliest is None or when < earliest:
                self._wake.notify()
        return timer

    def _run(self) -> None:
        while True:
            with self._wake:
                while True:
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._wake.wait()
                        continue
                    wait = self._heap[0][0] - time.monotonic()
                    if wait <= 0:
                        timer = heapq.heappop(self._heap)[2]
                        break
                    self._wake.wait(wait)
            try:
                timer.callback()
            except Exception:  # a broken model must not stop every other model's timers
                self._log.exception("simulator.timer_failed")


class LoopScheduler:
    """Timers on an asyncio event loop (the pseudo-terminal host)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def now(self) -> float:
        return self._loop.time()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Handle:
        return self._loop.call_later(delay, callback)


class ManualScheduler:
    """Time moves only when `advance()` is called (model unit tests)."""

    def __init__(self) -> None:
        self._now = 0.0
        self._heap: list[tuple[float, int, _Timer]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Handle:
        timer = _Timer(callback)
        heapq.heappush(self._heap, (self._now + delay, next(self._order), timer))
        return timer

    def advance(self, seconds: float) -> None:
        target = self._now + seconds
        while self._heap and self._heap[0][0] <= target:
            when, _, timer = heapq.heappop(self._heap)
            if not timer.cancelled:
                self._now = max(self._now, when)
                timer.callback()
        self._now = target


_shared: ThreadScheduler | None = None
_shared_lock = threading.Lock()


def shared_thread_scheduler() -> ThreadScheduler:
    global _shared  # noqa: PLW0603 -- one timer thread per process, created on first use
    with _shared_lock:
        if _shared is None:
            _shared = ThreadScheduler()
        return _shared


__all__ = [
    "Handle",
    "LoopScheduler",
    "ManualScheduler",
    "Scheduler",
    "ThreadScheduler",
    "shared_thread_scheduler",
]
