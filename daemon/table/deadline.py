"""The procedure's deadline (Thirteen's five-minute bell) as a timer of the table's clock: the
table is told when table time reaches it, and feeds `timer_expired` from `system` carrying the
deadline (the bell is told, never asked)."""

from __future__ import annotations

from collections.abc import Callable

from drivers.clock import Clock, TimerHandle


class Deadline:
    """One timer, set again whenever the procedure's deadline changes."""

    def __init__(self, clock: Clock, reached: Callable[[float], None]) -> None:
        self._clock, self._reached = clock, reached
        self._timer: TimerHandle | None = None
        self._deadline: float | None = None
        self._closed = False

    def sync(self, deadline: float | None, offset: float) -> None:
        """The procedure's deadline now (table time; None: none), and table time's `offset`
        from the clock's."""
        if deadline == self._deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._deadline = deadline
        if deadline is not None and not self._closed:
            self._timer = self._clock.call_at(deadline - offset, self._fired)

    def cancel(self) -> None:
        """For good: the table is closing."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fired(self) -> None:
        self._timer = None
        deadline, self._deadline = self._deadline, None
        if deadline is not None and not self._closed:
            self._reached(deadline)
