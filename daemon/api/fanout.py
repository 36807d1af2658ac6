"""The push feed's fan-out: one journal subscription for every client, a bounded queue each.

The table's journal offers each durable event to ONE subscriber, the hub (O(1) for the table
however many consoles watch). The hub runs on the API's event loop: it encodes each event once
(JSON text), redacts it once per *audience* (daemon.procedures.visibility: the roles that are
served the same; the hub keeps one `Seen` of what the game has opened, learnt from the events
in their order, the same answer each client of that audience would have computed), gathers what
arrived within `flush_interval` into one batch, and appends that batch to each client's queue: a
reference per client, no copy, no I/O. The messages a batch makes (one per event, or one for the
whole batch for a client that asked for batches) are made once per audience and shared too.
Each client's own task sends what is queued at the pace the client reads.

A client whose queue holds more than `limit` events is not keeping up: it is dropped (its queue
freed at once) and its socket closed with `CLOSE_TOO_SLOW`. Nothing is lost for it: the console
reconnects with `after` = the last seq it received and gets the rest from the journal (redacted
for it on the way, `daemon.api.routes.push`). Memory per client is therefore at most `limit`
references to shared events.

New state is announced by the table (`state_changed`, from any thread through the loop) and
sent to each client after its events; a client's state message is never older than the events
it has been sent plus the table's publication interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from daemon.contract.facade import Subscription, TableFacade
from daemon.contract.journal_feed import FeedRecord
from daemon.procedures import visibility

log = structlog.get_logger("tabled.api")

# The WebSocket close code of a client dropped for not reading fast enough (4000-4999 are the
# application's; 4408 as HTTP's 408: the server gave up waiting for the client).
CLOSE_TOO_SLOW = 4408
MAX_PENDING = 4096  # events queued for one client before it is dropped
FLUSH_INTERVAL = 0.05  # seconds: events arriving within it go out as one batch (one socket
# write per console per batch: with 50 consoles the writes, not the JSON, were the API's cost)
SEEN_ROUNDS = 16  # rounds the hub remembers what was opened of (older ones: closed anyway)

# One event: its seq and its JSON text (the journal record as a reader is shown it).
Item = tuple[int, str]


class Event:
    """One journal event as the hub hands it out: its record, and its text per audience."""

    __slots__ = ("plain", "record", "seq", "shown")

    def __init__(self, seq: int, record: Mapping[str, Any]) -> None:
        self.seq, self.record = seq, record
        self.plain: str | None = None  # the record's own JSON text
        self.shown: dict[str, str] = {}  # audience -> the event's JSON text as it is shown


class Batch:
    """The events of one flush, shared by every client, with the messages they make (made
    once per audience, on first use)."""

    __slots__ = ("_hub", "_messages", "events")

    def __init__(self, hub: PushHub, events: tuple[Event, ...]) -> None:
        self._hub, self.events = hub, events
        self._messages: dict[tuple[str, bool], tuple[str, ...]] = {}

    @property
    def first(self) -> int:
        return self.events[0].seq

    @property
    def last(self) -> int:
        return self.events[-1].seq

    def items(self, audience: str) -> list[Item]:
        """Each event's seq and text as `audience` is shown it."""
        text = self._hub.text
        return [(event.seq, text(event, audience)) for event in self.events]

    def messages(self, audience: str, batch: bool) -> tuple[str, ...]:
        """What a client of `audience` is sent for the whole batch: one message per event, or
        (`batch`) one for them all."""
        key = (audience, batch)
        made = self._messages.get(key)
        if made is None:
            items = self.items(audience)
            made = (events_message(items),) if batch else tuple(event_message(t) for _, t in items)
            self._messages[key] = made
        return made


class PushClient:
    """One console on the push feed: its queue (batches shared with every other client)."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.audience = visibility.audience(role)
        self.batches: deque[Batch] = deque()
        self.pending = 0
        self.wake = asyncio.Event()
        self.dropped = False
        self.ended = False  # the journal closed: nothing more will come
        self.state_due = False
        self.last: int | None = None  # the last seq sent
        self.on_drop: Callable[[], None] | None = None

    def first_seq(self) -> int | None:
        for batch in self.batches:
            return batch.first
        return None

    def take(self) -> list[Batch]:
        batches = list(self.batches)
        self.batches.clear()
        self.pending = 0
        return batches

    def has_work(self) -> bool:
        return bool(self.batches) or self.dropped or self.ended or self.state_due


class PushHub:
    """The fan-out for one app, on the API's event loop (made on first use).

    `state` is the table's state now as the console's view (with what the game has opened,
    `revealed`): what the hub's `Seen` starts from when its journal subscription starts
    (default: the table's `snapshot()`)."""

    def __init__(
        self,
        table: TableFacade,
        *,
        limit: int = MAX_PENDING,
        flush_interval: float = FLUSH_INTERVAL,
        on_flush: Callable[[], None] | None = None,
        state: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self._table = table
        self.limit = limit
        self.flush_interval = flush_interval
        self._on_flush = on_flush
        self._state = state or table.snapshot
        self.clients: set[PushClient] = set()
        self._pending: list[Event] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._upstream: Subscription | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._seen = visibility.Seen()
        self._roles: dict[str, str] = {}  # audience -> a role of it (whom `Seen.show` asks for)
        self.last_seq: int | None = None
        self.dropped_total = 0
        self.encoded_total = 0
        self.redacted_total = 0  # records redacted: once per event and audience

    # ---- membership -------------------------------------------------------------------------

    def join(self, client: PushClient) -> None:
        self._roles.setdefault(client.audience, client.role)
        if self._pump_task is None:
            # What the game has opened so far, then every event from here on, in order.
            self._seen = visibility.Seen(state=self._state())
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
        async for record in upstream:
            try:
                event = self.learn(record)
            except Exception as exc:  # the last resort: that record is not sent, the rest are
                log.error("api.push_skipped", seq=record.get("seq"), error=repr(exc))
                continue
            self._pending.append(event)
            if self._flush_handle is None:
                self._flush_handle = loop.call_later(self.flush_interval, self._flush)
        # The journal closed (the table stopped): every client's feed ends.
        self._flush()
        for client in list(self.clients):
            client.ended = True
            client.wake.set()

    def learn(self, record: Mapping[str, Any]) -> Event:
        """The next event of the journal: learnt from (what it opens), encoded, and shown to
        each audience that has a client now, as that audience may see it."""
        seen = self._seen
        event = Event(int(record["seq"]), record)
        try:
            seen.learn(record)
        except Exception as exc:
            log.error(
                "api.push_unreadable", seq=event.seq, event=record.get("event"), error=repr(exc)
            )
        if len(seen.rounds) > 2 * SEEN_ROUNDS:
            # Rounds long over: a later round has begun, so `Seen` counts them closed anyway.
            for key in list(seen.rounds)[:-SEEN_ROUNDS]:
                del seen.rounds[key]
        self.encoded_total += 1
        for audience in self._roles:
            self.text(event, audience)
        return event

    def text(self, event: Event, audience: str) -> str:
        """`event`'s JSON text as `audience` is shown it (made once, then shared). An audience
        whose first client joined after the event was learnt is shown it with what the hub
        knows now, which is never less than what the game had opened then."""
        text = event.shown.get(audience)
        if text is None:
            record = event.record
            role = self._roles.get(audience, "")
            try:
                shown = self._seen.show(record, role)
                self.redacted_total += 1
                if shown == record:
                    if event.plain is None:
                        event.plain = record_text(record)
                    text = event.plain
                else:
                    text = shown_text(record, shown)
            except Exception as exc:  # shown as withheld (fail closed); the feed goes on
                text = _dumps(withheld(record, exc))
            event.shown[audience] = text
        return text

    def _flush(self) -> None:
        self._flush_handle = None
        if not self._pending:
            return
        batch = Batch(self, tuple(self._pending))
        self._pending.clear()
        self.last_seq = batch.last
        if self._on_flush is not None:
            self._on_flush()
        for client in list(self.clients):
            self._offer(client, batch)

    def _offer(self, client: PushClient, batch: Batch) -> None:
        if client.dropped:
            return
        size = len(batch.events)
        if client.pending + size > self.limit:
            self.drop(client)
            return
        client.batches.append(batch)
        client.pending += size
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


def withheld(record: Mapping[str, Any], error: BaseException) -> dict[str, Any]:
    """What a reader is shown of a record its redaction could not be made for (a payload nested
    past the interpreter's recursion, say): the record's plain fields, its payload withheld.
    Logged; the feed goes on with the next event."""
    log.error(
        "api.push_withheld", seq=record.get("seq"), name=record.get("event"), error=repr(error)
    )
    plain = (str, int, float, bool, type(None))
    # Nor its line's digests: the payload's cards could be found from them.
    left_out = visibility.DIGESTS | {"payload"}
    kept = {k: v for k, v in record.items() if k not in left_out and isinstance(v, plain)}
    return {**kept, "payload": {}, "withheld": "the payload could not be shown"}


def event_message(text: str) -> str:
    """One event as the push feed sends it (the event's JSON text is shared, not re-encoded)."""
    return '{"type":"event","event":' + text + "}"


def events_message(items: list[Item]) -> str:
    """Several events in one message, for a client that asked for batches."""
    return '{"type":"events","events":[' + ",".join(text for _, text in items) + "]}"


def record_text(record: Mapping[str, Any]) -> str:
    """A record's own JSON text: made from its journal line when it has one (`FeedRecord`)."""
    if isinstance(record, FeedRecord):
        return record.text()
    return _dumps(record)


def shown_text(record: Mapping[str, Any], shown: Mapping[str, Any]) -> str:
    """The JSON text of `shown`, `record` as a reader may see it: the record's own text when
    nothing of it was hidden (without its digests when it went through the redaction)."""
    if shown == record:
        return record_text(record)
    if (
        isinstance(record, FeedRecord)
        and "hash" not in shown
        and len(shown) == len(record) - len(visibility.DIGESTS)
        and shown.get("payload") == record.get("payload")
    ):
        return record.text_without_digests()
    return _dumps(shown)


def _dumps(record: Mapping[str, Any]) -> str:
    """A record's JSON text, as Starlette's `send_json` wrote it (compact, UTF-8)."""
    return json.dumps(record, default=str, separators=(",", ":"), ensure_ascii=False)
