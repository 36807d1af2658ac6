"""The push feed's fan-out: one journal subscription for every client, a bounded queue each.

The table's journal offers each durable event to ONE subscriber, the hub (O(1) for the table
however many consoles watch). The hub runs on the API's event loop: it encodes each event once
(JSON text, shared by every client), gathers what arrived within `flush_interval` into one
batch, and appends that batch to each client's queue: a reference per client, no copy, no I/O.
Each client's own task sends what is queued at the pace the client reads.

A client whose queue holds more than `limit` events is not keeping up: it is dropped (its queue
freed at once) and its socket closed with `CLOSE_TOO_SLOW`. Nothing is lost for it: the console
reconnects with `after` = the last seq it received and gets the rest from the journal. Memory
per client is therefore at most `limit` references to shared text.

New state is announced by the table (`state_changed`, from any thread through the loop) and
sent to each client after its events; a client's state message is never older than the events
it has been sent plus the table's publication interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Callable
from typing import Any

import structlog

from daemon.api.facade import Subscription, TableFacade

log = structlog.get_logger("tabled.api")

# The WebSocket close code of a client dropped for not reading fast enough (4000-4999 are the
# application's; 4408 as HTTP's 408: the server gave up waiting for the client).
CLOSE_TOO_SLOW = 4408
MAX_PENDING = 4096  # events queued for one client before it is dropped
FLUSH_INTERVAL = 0.01  # seconds: events arriving within it go out as one batch

# One event: its seq and its JSON text (the journal record as the API shows it).
Item = tuple[int, str]


class PushClient:
    """One console on the push feed: its queue (batches shared with every other client)."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.batches: deque[tuple[Item, ...]] = deque()
        self.pending = 0
        self.wake = asyncio.Event()
        self.dropped = False
        self.ended = False  # the journal closed: nothing more will come
        self.state_due = False
        self.last: int | None = None  # the last seq sent
        self.on_drop: Callable[[], None] | None = None

    def first_seq(self) -> int | None:
        for batch in self.batches:
            if batch:
                return batch[0][0]
        return None

    def take(self) -> list[tuple[Item, ...]]:
        batches = list(self.batches)
        self.batches.clear()
        self.pending = 0
        return batches

    def has_work(self) -> bool:
        return bool(self.batches) or self.dropped or self.ended or self.state_due


class PushHub:
    """The fan-out for one app, on the API's event loop (made on first use)."""

    def __init__(
        self,
        table: TableFacade,
        *,
        limit: int = MAX_PENDING,
        flush_interval: float = FLUSH_INTERVAL,
        on_flush: Callable[[], None] | None = None,
    ) -> None:
        self._table = table
        self.limit = limit
        self.flush_interval = flush_interval
        self._on_flush = on_flush
        self.clients: set[PushClient] = set()
        self._pending: list[Item] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._upstream: Subscription | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.last_seq: int | None = None
        self.dropped_total = 0
        self.encoded_total = 0

    # ---- membership -------------------------------------------------------------------------

    def join(self, client: PushClient) -> None:
        if self._pump_task is None:
            self._loop = asyncio.get_running_loop()
            self._upstream = self._table.subscribe(None)
            self._pump_task = asyncio.ensure_future(self._pump(self._upstream))
        self.clients.add(client)

    async def leave(self, client: PushClient) -> None:
        self.clients.discard(client)
        client.batches.clear()
        if not self.clients:
            await self._stop_upstream()

    async def close(self) -> None:
        for client in list(self.clients):
            client.ended = True
            client.wake.set()
        await self._stop_upstream()

    async def _stop_upstream(self) -> None:
        task, upstream = self._pump_task, self._upstream
        self._pump_task = self._upstream = None
        self._pending.clear()
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if upstream is not None:
            await upstream.aclose()

    # ---- events in --------------------------------------------------------------------------

    async def _pump(self, upstream: Subscription) -> None:
        loop = asyncio.get_running_loop()
        async for event in upstream:
            self._pending.append(encode(event))
            self.encoded_total += 1
            if self._flush_handle is None:
                self._flush_handle = loop.call_later(self.flush_interval, self._flush)
        # The journal closed (the table stopped): every client's feed ends.
        self._flush()
        for client in list(self.clients):
            client.ended = True
            client.wake.set()

    def _flush(self) -> None:
        self._flush_handle = None
        if not self._pending:
            return
        batch = tuple(self._pending)
        self._pending.clear()
        self.last_seq = batch[-1][0]
        if self._on_flush is not None:
            self._on_flush()
        for client in list(self.clients):
            self._offer(client, batch)

    def _offer(self, client: PushClient, batch: tuple[Item, ...]) -> None:
        if client.dropped:
            return
        if client.pending + len(batch) > self.limit:
            self.drop(client)
            return
        client.batches.append(batch)
        client.pending += len(batch)
        client.wake.set()

    def drop(self, client: PushClient) -> None:
        """Stop queueing for `client` and free what it holds; its task closes the socket."""
        client.dropped = True
        client.batches.clear()
        client.pending = 0
        self.clients.discard(client)
        self.dropped_total += 1
        log.warning("api.push_dropped", role=client.role, last_seq=client.last, limit=self.limit)
        client.wake.set()
        if client.on_drop is not None:
            client.on_drop()

    # ---- state ------------------------------------------------------------------------------

    def state_changed(self) -> None:
        """The table published a new state: each client sends it after its queued events."""
        for client in self.clients:
            client.state_due = True
            client.wake.set()

    def state_changed_threadsafe(self) -> None:
        """`state_changed`, from the table's thread: one call handed to the API's loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.state_changed)


def event_message(text: str) -> str:
    """One event as the push feed sends it (the event's JSON text is shared, not re-encoded)."""
    return '{"type":"event","event":' + text + "}"


def events_message(items: list[Item]) -> str:
    """Several events in one message, for a client that asked for batches."""
    return '{"type":"events","events":[' + ",".join(text for _, text in items) + "]}"


def encode(event: dict[str, Any]) -> Item:
    """An event's seq and JSON text, as Starlette's `send_json` wrote it (compact, UTF-8)."""
    text = json.dumps(event, default=str, separators=(",", ":"), ensure_ascii=False)
    return int(event["seq"]), text
