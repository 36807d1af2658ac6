"""The table's state published after each durable change, for an API that does not read the
table itself (the API process of `tabled run --http`, `daemon.api.process`).

The table's loop carries the devices, the procedure and the journal; the API never reads the
procedure. `SnapshotPublisher` (a task on the table's loop) builds its state as immutable JSON
text (`daemon.contract.published.Published`) after a durable change, at most once per
`min_interval` (and every `refresh` seconds, so device links and the clock stay current); the
API serves the latest publication. An accepted action publishes the new state before it is
answered, so a client reads its own write.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from daemon.contract.published import Published

if TYPE_CHECKING:
    from daemon.table.runtime import Table

MIN_INTERVAL = 0.05  # seconds between two publications while the table is busy
REFRESH = 1.0  # seconds: a quiet table is published this often anyway (links, clock)
DURABLE_TIMEOUT = 5.0  # seconds an action's answer waits for what its publication shows


class SnapshotPublisher:
    """On the table's loop: publish the table's state after each durable change, rate-capped.

    The first change after a quiet spell is published at once; changes within `min_interval`
    of the last publication are published together at its end. A build costs the table's loop
    a few hundred microseconds, so at most `1 / min_interval` of them a second."""

    def __init__(
        self,
        table: Table,
        *,
        min_interval: float = MIN_INTERVAL,
        refresh: float = REFRESH,
    ) -> None:
        self._table = table
        self.min_interval, self.refresh = min_interval, refresh
        self._latest: Published | None = None
        self._listeners: list[Callable[[], None]] = []
        self._task: asyncio.Task[None] | None = None
        self._built_at = 0.0
        self.builds = 0

    @property
    def latest(self) -> Published:
        latest = self._latest
        if latest is None:
            raise RuntimeError("the table has not published its state yet")
        return latest

    def listen(self, callback: Callable[[], None]) -> None:
        """Call `callback` (from the table's thread: it must only hand over) on each
        publication."""
        self._listeners.append(callback)

    def publish(self, *, unless_same: bool = False) -> Published:
        """Build and publish the table's state now (on the table's loop). `unless_same`: keep
        the latest publication if nothing in it changed (the periodic refresh)."""
        built = self._table.facade.published_snapshot()
        self.builds += 1
        latest = self._latest
        if unless_same and latest is not None and _same(latest, built):
            return latest
        published = replace(built, version=(latest.version + 1) if latest else 1)
        self._latest = published  # one reference swap: readers on other threads see either
        for listener in self._listeners:
            listener()
        return published

    async def publish_durable(self, timeout: float = DURABLE_TIMEOUT) -> None:
        """Publish once all the state shows is durable (an action's answer: the caller's next
        read shows what it did; its lines are durable, a card read taken meanwhile may wait
        for the group commit). A disk that stalls past `timeout`: nothing is published."""
        if await self._table.wait_for(self.all_durable, timeout):
            self.publish()

    def publish_first(self) -> Published:
        """The first publication, before anyone reads: start-up's lines made durable first
        (a device's identification may be waiting for the group commit), on the loop, once."""
        journal = self._table.journal
        if journal is not None and journal.durable_seq < journal.last_seq:
            journal.commit(journal.last_seq)
        return self.publish()

    def start(self) -> None:
        self.publish_first()
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _seq(self) -> int:
        journal = self._table.journal
        return journal.durable_seq if journal is not None else 0

    def _changed(self) -> bool:
        return self._seq() != self.latest.seq

    def all_durable(self) -> bool:
        journal = self._table.journal
        return journal is None or journal.durable_seq >= journal.last_seq

    async def _run(self) -> None:
        table = self._table
        while True:
            changed = await table.wait_for(self._changed, self.refresh)
            wait = self.min_interval - (time.monotonic() - self._built_at)
            if wait > 0:
                await asyncio.sleep(wait)
            # A device's input that commands nothing (a card read) is durable with the next
            # commit point, at most the table's group-commit bound later: the consoles see the
            # state once what it shows is on disk (docs/journal.md, "What is durable when").
            durable = await table.wait_for(self.all_durable, self.refresh)
            if not table.running:
                return
            if not durable:  # a disk that stalls: nothing it has not kept is shown
                continue
            self.publish(unless_same=not changed)
            self._built_at = time.monotonic()


def _same(a: Published, b: Published) -> bool:
    return (a.seq, a.state, a.legal, a.devices) == (b.seq, b.state, b.legal, b.devices)
