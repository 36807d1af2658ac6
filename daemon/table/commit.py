"""Group commit: a device's inputs that command nothing (a card read: the driver has
acknowledged its frame on the link already, and nothing outside acts on it) are not synced on
their own. Their lines join the next commit point, which the timer here brings within
`Table.GROUP_COMMIT_SECONDS` of the last of them if no effect brings it sooner, and within
`GROUP_COMMIT_MAX_SECONDS` of the first however closely they follow each other (an unpaced
deal): docs/journal.md, "What is durable when"."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from daemon.table.common import Staged


class Committing(Protocol):
    """The table as its group commit reaches it (`daemon.table.runtime.Table`)."""

    GROUP_COMMIT_SECONDS: float
    GROUP_COMMIT_MAX_SECONDS: float

    @property
    def running(self) -> bool: ...

    def spawn(self, coro: Awaitable[Any]) -> None: ...

    def commit_now(self, seq: int) -> bool: ...

    async def commit(self, seq: int) -> None: ...


class GroupCommit:
    """The inputs taken, not yet durable, that nothing outside waits for, and the timer of the
    commit point that will cover them."""

    def __init__(self, table: Committing) -> None:
        self._table = table
        self.deferred: list[Staged] = []
        self._timer: asyncio.TimerHandle | None = None
        self._first = self._last = 0.0  # the loop's time
        self._loop: asyncio.AbstractEventLoop | None = None

    def defer(self, staged: Sequence[Staged], loop: asyncio.AbstractEventLoop) -> None:
        """`staged`, bookkept already, durable with the next commit point. `loop` is the
        table's (kept: asking asyncio for the running loop is a system call)."""
        self.deferred.extend(staged)
        self._loop = loop
        self._last = now = loop.time()
        if self._timer is None:
            self._first = now
            self._timer = loop.call_later(self._table.GROUP_COMMIT_SECONDS, self._due)

    def covered(self, upto: int) -> list[Staged]:
        """The deferred inputs a commit up to `upto` made durable, taken off the list."""
        deferred = self.deferred
        done = 0
        while done < len(deferred) and deferred[done].fed.seq <= upto:
            done += 1
        covered = deferred[:done]
        del deferred[:done]
        return covered

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _due(self) -> None:
        self._timer = None
        table, loop = self._table, self._loop
        if not self.deferred or not table.running or loop is None:
            return
        # The device still sending (a deal): its stream shares one commit, which its last input
        # (the disarm's) usually brings; else the timer's, once it falls quiet or at the cap.
        due = min(
            self._last + table.GROUP_COMMIT_SECONDS,
            self._first + table.GROUP_COMMIT_MAX_SECONDS,
        )
        if due > loop.time():
            self._timer = loop.call_at(due, self._due)
            return
        seq = self.deferred[-1].fed.seq
        if not table.commit_now(seq):  # a disk wait: off the loop, in a task
            table.spawn(table.commit(seq))
