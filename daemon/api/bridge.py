"""The operator API on its own thread and event loop, the table on its own: the bridge between.

The table's loop carries the devices, the procedure and the journal; whatever the API does
(HTTP parsing, tokens, JSON, fifty consoles' sockets) runs on the API's thread and loop
(`daemon.api.threaded`). Nothing mutable crosses between them:

- the table publishes (`SnapshotPublisher`, a task on the table's loop) its state as immutable
  JSON text after a durable change, at most once per `min_interval` (and every `refresh`
  seconds, so device links and the clock stay current); the API reads the latest publication
  (`TableBridge.published`), never the procedure;
- journal events reach the API through the journal's own subscription (thread-safe, bounded:
  the committing thread does one O(1) offer to the API's single hub, `daemon.api.fanout`);
- actions and security facts go to the table's loop as coroutines (`run_coroutine_threadsafe`),
  in the order they are asked, and the API awaits the procedure's answer; an accepted action
  publishes the new state before it is answered, so a client reads its own write;
- the journal query reads the journal's files in a worker thread (as it always did);
- `/metrics` asks the table's loop for its counters and waits for them (a scrape is rare).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from daemon.contract import journal_feed
from daemon.contract.facade import ActionSpec, Subscription, TableMetrics
from daemon.contract.published import Published

if TYPE_CHECKING:
    from daemon.table.runtime import Table

T = TypeVar("T")

MIN_INTERVAL = 0.05  # seconds between two publications while the table is busy
REFRESH = 1.0  # seconds: a quiet table is published this often anyway (links, clock)
CALL_TIMEOUT = 5.0  # seconds the API waits for the table's loop on a read (/metrics)


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
        built = self._table.published_snapshot()
        self.builds += 1
        latest = self._latest
        if unless_same and latest is not None and _same(latest, built):
            return latest
        published = replace(built, version=(latest.version + 1) if latest else 1)
        self._latest = published  # one reference swap: readers on other threads see either
        for listener in self._listeners:
            listener()
        return published

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


def training_args(name: Any, args: Any) -> bool:
    """Whether `name(*args)` is a training control: `describe()` or `control(asked, actor,
    role)`."""
    if name == "describe":
        return bool(args == [])
    return (
        name == "control"
        and isinstance(args, list)
        and len(args) == 3
        and isinstance(args[0], dict)
        and all(isinstance(a, str) for a in args[1:])
    )


async def training_call(table: Any, name: str, args: list[Any]) -> Any:
    """A training control (`daemon.training.Training`) on `table`, where its simulated devices
    live: `describe()` or `control(asked, actor, role)`. None when the table's devices are not
    all simulated (no training mode)."""
    from daemon.training import Training  # noqa: PLC0415 - only for training

    if not training_args(name, args):
        raise ValueError(f"training: no control {name} with these arguments")
    if name == "describe":
        call: Callable[[Training], Any] = lambda training: training.describe()  # noqa: E731
    else:
        call = lambda training: training.control(*args)  # noqa: E731
    training = Training.of(table)
    if training is None:
        return None
    result = call(training)
    return await result if inspect.isawaitable(result) else result


def _same(a: Published, b: Published) -> bool:
    return (a.seq, a.state, a.legal, a.devices) == (b.seq, b.state, b.legal, b.devices)


class TableBridge:
    """`TableFacade` for an API served on another thread than the table's loop."""

    def __init__(
        self, table: Table, loop: asyncio.AbstractEventLoop, publisher: SnapshotPublisher
    ) -> None:
        self._table, self._loop, self._publisher = table, loop, publisher
        # The game's actions are the procedure class's declaration: fixed for the run.
        self._actions = table.actions()
        self.wall: Callable[[], float] = table._wall

    # ---- reads: the latest publication ------------------------------------------------------

    def published(self) -> Published:
        return self._publisher.latest

    def actions(self) -> list[ActionSpec]:
        return list(self._actions)

    def snapshot(self) -> dict[str, Any]:
        published = self.published()
        state: dict[str, Any] = json.loads(published.state)
        state["server_time"] = self.wall()
        return state

    def legal_actions(self, role: str) -> list[str]:
        return list(self.published().legal.get(role, ()))

    def device_status(self) -> list[dict[str, Any]]:
        status: list[dict[str, Any]] = json.loads(self.published().devices)
        return status

    def journal_query(
        self,
        *,
        round: str | None = None,
        event: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        # Already off every loop (a worker thread) and reads only the journal's files.
        return self._table.journal_query(
            round=round, event=event, since=since, until=until, limit=limit
        )

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        # The journal's subscriptions are thread-safe; the reader's loop is woken by the
        # committing thread with one call_soon_threadsafe. Its records are the journal's own,
        # not copied, with their lines' text (`journal_feed.FeedRecord`); missed ones are
        # read from the files in a worker thread.
        journal = self._table.journal
        if journal is None:
            raise RuntimeError("the table's journal is closed")
        return journal_feed.subscribe(journal, after_seq)

    def metrics(self) -> TableMetrics:
        return self._call(self._table.metrics)

    @property
    def config(self) -> Any:
        """The table's config: fixed for the run, safe to read from any thread."""
        return self._table.config

    # ---- through the table's loop -----------------------------------------------------------

    async def on_table(self, work: Callable[[Table], Coroutine[Any, Any, T]]) -> T:
        """Run `work(table)` on the table's loop and wait for it: what touches the table's own
        objects (its simulated devices, for training) runs where they live."""
        return await self._on_table(work(self._table))

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        return await self._on_table(self._act(action, actor, role, payload))

    async def _act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        answer = await self._table.act(action, actor, role, payload)
        # The caller's next read shows what it did, once all the state shows is durable: the
        # act's lines are, a card read taken meanwhile may wait for the group commit.
        if await self._table.wait_for(self._publisher.all_durable, CALL_TIMEOUT):
            self._publisher.publish()
        return answer

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        await self._on_table(self._table.journal_security(event, payload))

    async def _on_table(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        except RuntimeError:
            coro.close()
            raise
        return await asyncio.wrap_future(future)

    def _call(self, fn: Callable[[], T]) -> T:
        if threading.get_ident() == getattr(self._loop, "_thread_id", None):
            return fn()

        async def call() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result(CALL_TIMEOUT)
