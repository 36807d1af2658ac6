"""One clock protocol for the whole table: the drivers' deadlines, the simulators' device timers,
the table's own time and its journal, and the scripted autoplay all read a `Clock`.

- `MonotonicClock`: an asyncio event loop's monotonic time (the service; `tabled sim`'s models).
- `ThreadClock`: real time on one background thread (the in-process `sim://` models, which run
  outside any event loop).
- `ManualClock`: time stands still until a test moves it, with `advance` (on an event loop,
  letting it run between timers) or `tick` (no loop: a model unit test).
- `SimulationClock`: monotonic time plus the time a simulation jumped over (autoplay skips the
  five-minute arrangement wait).

Each keeps its timers in the one `TimerQueue`. `wall()` is the wall-clock time that goes with
`now()`: real time for the real clocks, `wall_start + now()` for the manual one, so a test's
journal timestamps move with its clock.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Protocol

import structlog


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds (the base of `call_at`)."""
        ...

    def wall(self) -> float:
        """Wall-clock seconds since the epoch, as this clock sees them."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle: ...

    async def sleep(self, seconds: float) -> None: ...


class Timer:
    """A callback due at `when`, until cancelled."""

    __slots__ = ("callback", "cancelled", "handle", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False
        self.handle: TimerHandle | None = None  # where an event loop also holds it

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()

    def fire(self) -> None:
        """Run the callback once (a timer both a loop and a jump may fire)."""
        if not self.cancelled:
            self.cancel()
            self.callback()


class TimerQueue:
    """Timers in due order (ties in the order they were set); cancelled ones are skipped."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Timer]] = []
        self._order = itertools.count()

    def push(self, when: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(when, callback)
        heapq.heappush(self._heap, (when, next(self._order), timer))
        return timer

    def peek(self) -> float | None:
        """When the first timer is due, cancelled or not (None: no timer): cheap, and never
        earlier than `earliest()`."""
        return self._heap[0][0] if self._heap else None

    def earliest(self) -> float | None:
        """When the first live timer is due (None: no timer)."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def live(self) -> list[Timer]:
        """The timers not cancelled, in no particular order."""
        return [timer for _, _, timer in self._heap if not timer.cancelled]

    def pop_due(self, now: float) -> Timer | None:
        """The first live timer due at or before `now`, taken off the queue."""
        earliest = self.earliest()
        if earliest is None or earliest > now:
            return None
        return heapq.heappop(self._heap)[2]


_LOOP_TIME = asyncio.BaseEventLoop.time  # time.monotonic(): every loop asyncio itself makes
# A loop that keeps its own time may keep it coarsely: uvloop's (daemon/eventloop.py) counts
# whole milliseconds and rounds a delay to one, so a timer set for `when` could fire up to 1.5 ms
# before it. Such a loop is asked for this much later: a deadline never fires early.
_FOREIGN_LOOP_SLACK = 0.002


class MonotonicClock:
    """An event loop's clock (`loop.time()`, monotonic): the running loop's, or `loop`'s.

    Without `loop`, `now()` reads time.monotonic() directly, on the loop or off it (a journal
    thread): that is what the time() of every loop asyncio makes returns, and asking which
    loop is running costs a getpid() system call, several times an exchange. `call_at` turns
    the deadline into the running loop's time should that loop keep its own (uvloop's), never
    earlier than the deadline."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop
        # `now` and `wall` are the functions themselves, not methods that call them: the table,
        # its journal and the drivers read this clock a few hundred times a round, and a
        # Python frame a read cost more than the read.
        self.now: Callable[[], float] = time.monotonic if loop is None else loop.time
        self.wall: Callable[[], float] = time.time

    def _current(self) -> asyncio.AbstractEventLoop:
        return self._loop or asyncio.get_running_loop()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        loop = self._loop
        if loop is None:
            loop = asyncio.get_running_loop()
            if type(loop).time is not _LOOP_TIME:
                when += loop.time() - time.monotonic() + _FOREIGN_LOOP_SLACK
        return loop.call_at(when, callback)

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return self._current().call_later(delay, callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ThreadClock:
    """Real time, with one daemon thread running every timer in order (the in-process
    simulators' device timers, which must run whether or not an event loop does)."""

    def __init__(self) -> None:
        self._timers = TimerQueue()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._log = structlog.get_logger("tabled.simulators")

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        with self._wake:
            # The thread waits until the first timer, cancelled or not: wake it only for one
            # before that (cleaning cancelled timers is the thread's work, not the caller's).
            earliest = self._timers.peek()
            timer = self._timers.push(when, callback)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sim-timers", daemon=True)
                self._thread.start()
            elif earliest is None or when < earliest:
                self._wake.notify()
        return timer

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return self.call_at(time.monotonic() + delay, callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def _run(self) -> None:
        while True:
            with self._wake:
                while True:
                    earliest = self._timers.earliest()
                    if earliest is None:
                        self._wake.wait()
                        continue
                    timer = self._timers.pop_due(time.monotonic())
                    if timer is not None:
                        break
                    self._wake.wait(earliest - time.monotonic())
            try:
                timer.callback()
            except Exception:  # a broken model must not stop every other model's timers
                self._log.exception("simulator.timer_failed")


class ManualClock:
    """Time stands still until `advance()` or `tick()` moves it; timers fire in order as it
    passes them. `wall()` is `wall_start + now()`."""

    def __init__(self, start: float = 0.0, *, wall_start: float = 0.0) -> None:
        self._now = start
        self._wall_start = wall_start
        self._timers = TimerQueue()

    def now(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._wall_start + self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        return self._timers.push(when, callback)

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return self._timers.push(self._now + delay, callback)

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
        while (timer := self._timers.pop_due(target)) is not None:
            self._now = max(self._now, timer.when)
            timer.callback()
            await settle()
        self._now = target
        await settle()

    def tick(self, seconds: float) -> None:
        """Move time forward with no event loop: each due timer fires at its own instant."""
        target = self._now + seconds
        while (timer := self._timers.pop_due(target)) is not None:
            self._now = max(self._now, timer.when)
            timer.callback()
        self._now = target


class SimulationClock:
    """Monotonic time plus the time jumped over; timers due after a jump fire, the others are
    due that much sooner.

    The time is `time.monotonic()`'s, as the drivers' clock reads it, not the loop's: uvloop's
    `loop.time()` counts whole milliseconds, so a jump in the same millisecond as the input that
    set a deadline `seconds` ahead saw the same time plus `seconds`, and the deadline, gone
    through the table's wall-anchored offset and back, came out 1e-7 s later: not due, its loop
    timer five real minutes off (autoplay waited for the bell in vain, one run in two)."""

    def __init__(self) -> None:
        self.skipped = 0.0
        self._timers = TimerQueue()
        self._real = MonotonicClock()

    def now(self) -> float:
        return time.monotonic() + self.skipped

    def wall(self) -> float:
        return time.time() + self.skipped

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = self._timers.push(when, callback)
        timer.handle = self._real.call_at(when - self.skipped, timer.fire)
        return timer

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return self.call_at(self.now() + delay, callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def jump(self, seconds: float) -> None:
        self.skipped += seconds
        now = self.now()
        while (timer := self._timers.pop_due(now)) is not None:
            timer.fire()
        # The others are due that much sooner in real time: their loop timers move with them.
        for timer in self._timers.live():
            if timer.handle is not None:
                timer.handle.cancel()
            timer.handle = self._real.call_at(timer.when - self.skipped, timer.fire)


_shared: ThreadClock | None = None
_shared_lock = threading.Lock()


def shared_thread_clock() -> ThreadClock:
    """The process's one ThreadClock (one timer thread for every in-process simulator)."""
    global _shared  # noqa: PLW0603 -- one timer thread per process, created on first use
    with _shared_lock:
        if _shared is None:
            _shared = ThreadClock()
        return _shared


async def settle(rounds: int = 20) -> None:
    """Let the event loop run everything already runnable (tests only)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
