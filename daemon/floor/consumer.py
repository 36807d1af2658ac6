"""The floor's JetStream consumer: pull a batch, commit it to PostgreSQL, then ack it.

The consumer is durable (its name is `[floor] durable`) and nothing is acked before its row is
committed. Its ack policy is JetStream's "all": one ack after a batch commits acknowledges every
message of the batch, instead of a thousand ack messages per batch. The stream sequence
of the last committed message is written in the same transaction as the rows (`stream_cursor`),
and at start the floor points its durable consumer at the message after it. So a floor killed
between its commit and its acks resumes exactly where its database is, without waiting for the
broker's ack timeout to redeliver: nothing is lost (the database never says more than it
committed) and nothing is written twice (a line received again is judged a duplicate).

PostgreSQL down: the batch is retried with a capped backoff, unacked, until it commits. The
broker down: nats-py reconnects forever; fetching resumes when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import nats
import psycopg
import structlog
from nats.aio.msg import Msg
from nats.js import api as js_api
from nats.js.errors import NotFoundError

from daemon.floor.config import FloorSection
from daemon.floor.store import BatchResult, Incoming, Store
from daemon.floor.storebase import Parsed
from daemon.journal.format import MAX_LINE_BYTES
from daemon.journal.provenance import HEAD_SUBJECT
from daemon.shipper.broker import auth_options, floor_inbox_prefix

log = structlog.get_logger("tabled.floor")

DUPLICATE_WINDOW = 120.0  # seconds; the stream's if the floor has to create it
# A pull request unanswered this long (beyond its own wait) is given up and asked again: in a
# cluster, the consumer's leader may have died with the request, and its successor never saw it
# (the floor would otherwise sit out the rest of a 10 s wait after every failover).
ANSWER_SECONDS = 2.0


@dataclass
class ConsumerStats:
    batches: int = 0
    lines: int = 0
    duplicates: int = 0
    alerts: int = 0
    db_retries: int = 0
    broker_errors: int = 0
    connected: bool = False
    last_commit: float | None = None
    stream_pending: int | None = None
    started: float = field(default_factory=time.time)


class _Raw(NamedTuple):
    """One delivered message as the wire gave it (no header parsing, no `Msg` object), and its
    `Nats-Msg-Id` ("" without one): the floor checks it is the one the shipper gives a line."""

    subject: bytes
    reply: bytes
    data: bytes
    msg_id: str = ""


MSG_ID_HEADER = b"Nats-Msg-Id:"


def msg_id_of(headers: bytes | None) -> str:
    """The `Nats-Msg-Id` of a message's raw header block ("" without one)."""
    if not headers:
        return ""
    start = headers.find(MSG_ID_HEADER)
    if start < 0:
        return ""
    end = headers.find(b"\r\n", start)
    value = headers[start + len(MSG_ID_HEADER) : end if end >= 0 else None]
    return value.strip().decode("utf-8", "replace")


NATS_HDR_STATUS = len(b"NATS/1.0")  # a status header is "NATS/1.0 404 ...", others "NATS/1.0\r\n"


class _Puller:
    """Pull requests on one inbox, messages gathered straight off the wire.

    nats-py's `fetch` wakes a task per message, and even a subscription callback costs a header
    parse (the stdlib e-mail parser, for the `Nats-Msg-Id` header the floor does not read) and a
    `Msg` object per message: together the largest part of the floor's time in a backlog. So the
    puller hooks the client's message dispatch for its own inbox only (every other
    subscription goes through nats-py as before) and keeps (subject, reply, data) as bytes; a
    status message (a 404/408/409 that ends the request; a 100 heartbeat) is told by its header
    line alone. A pull first asks for what is there (`no_wait`: the messages, then a 408 or 404
    that ends the request); when nothing is, it waits for one message (`expires`) and then takes
    the rest without waiting, so a quiet floor still sees a line one round trip after it arrives.
    """

    def __init__(self, nc: Any, stream: str, durable: str) -> None:
        self.nc = nc
        self.subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self.inbox = ""
        self._sid = -1
        self._msgs: list[_Raw] = []
        self._want = 0
        self._done = asyncio.Event()

    async def start(self) -> _Puller:
        self.inbox = self.nc.new_inbox()
        sub = await self.nc.subscribe(self.inbox)
        self._sid = sub._id
        dispatch = self.nc._process_msg

        async def process_msg(
            sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes | None
        ) -> None:
            if sid != self._sid:
                await dispatch(sid, subject, reply, data, headers)
            else:
                self._on_raw(subject, reply, data, headers)

        self.nc._process_msg = process_msg
        return self

    def _on_raw(self, subject: bytes, reply: bytes, data: bytes, headers: bytes | None) -> None:
        if headers and headers[NATS_HDR_STATUS : NATS_HDR_STATUS + 1] == b" ":
            if headers[NATS_HDR_STATUS + 1 : NATS_HDR_STATUS + 4] != b"100":
                self._done.set()  # not a heartbeat: 404, 408 or 409 ends the request
            return
        self._msgs.append(_Raw(subject, reply, data, msg_id_of(headers)))
        if len(self._msgs) >= self._want:
            self._done.set()

    def abort(self) -> None:
        """End the request in flight now (with what it has)."""
        self._done.set()

    async def _request(self, body: dict[str, Any], timeout: float) -> list[_Raw]:
        self._msgs, self._want = [], int(body["batch"])
        self._done.clear()
        await self.nc.publish(self.subject, json.dumps(body).encode(), reply=self.inbox)
        await asyncio.wait_for(self._done.wait(), timeout)
        return self._msgs

    async def fetch(self, batch: int, wait: float) -> list[_Raw]:
        msgs = await self._request({"batch": batch, "no_wait": True}, ANSWER_SECONDS)
        if msgs:
            return msgs
        first = await self._request({"batch": 1, "expires": int(wait * 1e9)}, wait + ANSWER_SECONDS)
        if not first:
            raise TimeoutError
        if batch == 1:
            return first
        return first + await self._request({"batch": batch - 1, "no_wait": True}, ANSWER_SECONDS)


async def connect(
    config: FloorSection,
    name: str,
    disconnected: Callable[[], Awaitable[None]],
    reconnected: Callable[[], Awaitable[None]],
) -> Any:
    """A connection of the floor's to the broker (its identity, TLS and inboxes), reconnecting
    by itself for ever."""

    async def error(exc: Exception) -> None:
        log.warning("floor.broker_error", connection=name, problem=str(exc) or type(exc).__name__)

    return await nats.connect(
        servers=list(config.servers),
        name=name,
        # Replies come to the floor's own inboxes, the subscription its broker permissions
        # allow (`tabled floor broker-config`); identity and TLS as the [feed]'s.
        inbox_prefix=floor_inbox_prefix(config.durable),
        **auth_options(config, "floor"),
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        allow_reconnect=True,
        disconnected_cb=disconnected,
        reconnected_cb=reconnected,
        error_cb=error,
    )


class Consumer:
    def __init__(
        self,
        config: FloorSection,
        store: Store,
        on_commit: Callable[[BatchResult], Awaitable[None]] | None = None,
        *,
        ack_wait: float = 30.0,
    ) -> None:
        self.config, self.store, self.on_commit = config, store, on_commit
        self.ack_wait = ack_wait
        self.stats = ConsumerStats()
        self._nc: Any = None
        self._puller: _Puller | None = None
        # Lines per fetch: `batch` when live, `catchup_batch` while the stream holds a backlog
        # (the per-batch work, one statement per table touched, is then spread over more lines).
        self._catchup = max(config.batch, config.catchup_batch)
        self._size = config.batch
        # Messages fetched after a batch's last head, for the next batch (`_handle`).
        self._carry: tuple[list[_Raw], list[Incoming], list[Parsed | None]] = ([], [], [])

    async def _connect(self) -> Any:
        async def disconnected() -> None:
            self.stats.connected = False
            if self._puller is not None:
                self._puller.abort()  # its pull request died with the connection
            log.warning("floor.broker_disconnected")

        async def reconnected() -> None:
            self.stats.connected = True
            log.info("floor.broker_reconnected")

        nc = await connect(self.config, "tabled-floor", disconnected, reconnected)
        self.stats.connected = True
        return nc

    async def _subscribe(self, js: Any) -> Any:
        cfg = self.config
        subjects = [f"{cfg.subject_prefix}.>"]
        try:
            await js.stream_info(cfg.stream)
        except NotFoundError:
            await js.add_stream(
                name=cfg.stream,
                subjects=subjects,
                storage=js_api.StorageType.FILE,
                duplicate_window=DUPLICATE_WINDOW,
                max_msg_size=MAX_LINE_BYTES,
                num_replicas=cfg.replicas,
            )
            log.info("floor.stream_created", stream=cfg.stream, subjects=subjects)
        await _bound_messages(js, cfg.stream)
        cursor = await self.store.stream_cursor(cfg.stream)
        info = await js.stream_info(cfg.stream)
        if cursor > info.state.last_seq:
            log.warning(
                "floor.stream_behind_cursor",
                stream=cfg.stream,
                cursor=cursor,
                stream_last=info.state.last_seq,
                note="the stream was recreated; reading it whole (lines already held are no-ops)",
            )
            cursor = 0
        with contextlib.suppress(NotFoundError):
            await js.delete_consumer(cfg.stream, cfg.durable)
        await js.add_consumer(
            cfg.stream,
            js_api.ConsumerConfig(
                durable_name=cfg.durable,
                deliver_policy=(
                    js_api.DeliverPolicy.BY_START_SEQUENCE if cursor else js_api.DeliverPolicy.ALL
                ),
                opt_start_seq=cursor + 1 if cursor else None,
                ack_policy=js_api.AckPolicy.ALL,
                ack_wait=self.ack_wait,
                max_ack_pending=max(1000, self._catchup * 4),
                filter_subject=subjects[0],
            ),
        )
        log.info("floor.consuming", stream=cfg.stream, durable=cfg.durable, after=cursor)
        self._carry = ([], [], [])  # the new consumer delivers them again, after the cursor
        self._puller = await _Puller(self._nc, cfg.stream, cfg.durable).start()
        return self._puller

    async def _commit(
        self, batch: list[Incoming], parsed: list[Parsed | None], stop: asyncio.Event
    ) -> BatchResult | None:
        delay = 0.2
        while True:
            try:
                return await self.store.ingest(batch, self.config.stream, parsed)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                self.stats.db_retries += 1
                log.warning("floor.database_unavailable", problem=str(exc).strip()[:300])
                with contextlib.suppress(Exception):
                    await self.store.close()
            if stop.is_set():
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 2.0)

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until `stop` is set."""
        delay = 0.2
        sub = None
        ahead: asyncio.Task[Any] | None = None
        try:
            while not stop.is_set():
                try:
                    if self._nc is None:
                        self._nc = await self._connect()
                    if sub is None:
                        sub = await self._subscribe(self._nc.jetstream())
                        delay = 0.2
                    # The next batch is fetched while this one commits.
                    msgs, batch, parsed = await (ahead or self._fetch(sub))
                    pending = Msg.Metadata._from_reply(msgs[-1].reply.decode()).num_pending
                    self._size = self._catchup if pending >= self._catchup else self.config.batch
                    ahead = asyncio.ensure_future(self._fetch(sub))
                except (TimeoutError, nats.errors.TimeoutError):
                    ahead = None
                    if self._carry[0]:  # nothing came after it: committed as it is
                        if not await self._handle([], [], [], stop, more=False):
                            return
                    else:
                        await self._idle()
                    continue
                except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                    log.warning("floor.database_unavailable", problem=str(exc).strip()[:300])
                    with contextlib.suppress(Exception):
                        await self.store.close()
                except Exception as exc:  # any broker trouble: back off and retry
                    ahead = None
                    self.stats.broker_errors += 1
                    log.warning("floor.broker_unavailable", problem=str(exc) or type(exc).__name__)
                    if self._nc is not None and self._nc.is_closed:
                        self._nc, sub = None, None
                else:
                    if not await self._handle(msgs, batch, parsed, stop, more=pending > 0):
                        return
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
                delay = min(delay * 2, 2.0)
        finally:
            if ahead is not None:
                ahead.cancel()
                with contextlib.suppress(BaseException):
                    await ahead

    async def _idle(self) -> None:
        """No message this second: the lines waiting for a head still age (`unproven`)."""
        try:
            result = await self.store.check_unproven()
        except psycopg.Error as exc:
            log.warning("floor.database_unavailable", problem=str(exc).strip()[:300])
            return
        self.stats.alerts += len(result.alerts)
        if (result.alerts or result.resolved) and self.on_commit is not None:
            await self.on_commit(result)

    async def _fetch(self, sub: _Puller) -> tuple[list[_Raw], list[Incoming], list[Parsed | None]]:
        """A batch's messages, and its lines decoded: the next batch's while this one commits
        (`Store.parse_ahead`: the decoding waits for no query, so it runs while PostgreSQL
        works on the commit before it)."""
        msgs = await sub.fetch(self._size, wait=1.0)
        batch = [Incoming(m.subject.decode(), m.data, 0, m.msg_id) for m in msgs]
        return msgs, batch, await self.store.parse_ahead(batch)

    async def _handle(
        self,
        msgs: list[_Raw],
        batch: list[Incoming],
        parsed: list[Parsed | None],
        stop: asyncio.Event,
        *,
        more: bool,
    ) -> bool:
        """Commit a batch, then ack it: False if the floor stopped before it could commit.

        While the stream holds more (`more`), the messages after the batch's last signed head
        are carried to the next batch (`_carry`) instead of committed now: a shipper's catch-up
        sends a window of lines, then its heads, so a batch cut anywhere else leaves the lines
        of the window it cut waiting in `pending_lines` (written, read back, deleted: about a
        third of PostgreSQL's time a line in bench_floor's backlog). They stay unacked until
        the batch that commits them; a new consumer (`_subscribe`) gets them again."""
        held_msgs, held_batch, held_parsed = self._carry
        if held_msgs:
            msgs, batch, parsed = held_msgs + msgs, held_batch + batch, held_parsed + parsed
            self._carry = ([], [], [])
        cut = _after_last_head(msgs) if more else len(msgs)
        if 0 < cut < len(msgs):
            self._carry = (msgs[cut:], batch[cut:], parsed[cut:])
            msgs, batch, parsed = msgs[:cut], batch[:cut], parsed[:cut]
        tail = msgs[-1]
        end = Msg(_client=self._nc, subject=tail.subject.decode(), reply=tail.reply.decode(),
                  data=tail.data)  # fmt: skip
        last = end.metadata
        batch[-1] = Incoming(end.subject, tail.data, last.sequence.stream, tail.msg_id)
        result = await self._commit(batch, parsed, stop)
        if result is None:
            return False
        # AckPolicy.ALL: acking the batch's last message acks every one before it.
        with contextlib.suppress(Exception):
            await end.ack()
        self.stats.batches += 1
        self.stats.lines += result.inserted
        self.stats.duplicates += result.duplicates
        self.stats.alerts += len(result.alerts)
        self.stats.last_commit = time.time()
        self.stats.stream_pending = last.num_pending
        if self.on_commit is not None:
            await self.on_commit(result)
        return True

    async def close(self) -> None:
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.flush(timeout=2)
            with contextlib.suppress(Exception):
                await self._nc.close()
            self._nc = None


HEAD_TAIL = b"." + HEAD_SUBJECT.encode()


def _after_last_head(msgs: list[_Raw]) -> int:
    """The index after the last signed head among `msgs` (0: none)."""
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].subject.endswith(HEAD_TAIL):
            return i + 1
    return 0


async def _bound_messages(js: Any, stream: str) -> None:
    """The stream's `max_msg_size` the floor's line bound (MAX_LINE_BYTES): a stream made
    before it had it, or made by another, is updated where the floor may (a broker without
    per-user permissions); under the floor's own permissions (daemon/floor/brokerconf.py: no
    STREAM.UPDATE) it is logged with the command an admin runs to set it."""
    info = await js.stream_info(stream)
    if info.config.max_msg_size == MAX_LINE_BYTES:
        return
    was = info.config.max_msg_size
    info.config.max_msg_size = MAX_LINE_BYTES
    try:
        await js.update_stream(info.config)
    except Exception as exc:  # a broker that refuses (permissions, an old server): said, not fatal
        log.warning(
            "floor.stream_message_bound_not_set", stream=stream, max_msg_size=was,
            problem=str(exc) or type(exc).__name__,
            fix=f"nats stream edit {stream} --max-msg-size {MAX_LINE_BYTES}",
        )  # fmt: skip
        return
    log.info("floor.stream_message_bound_set", stream=stream, was=was, now=MAX_LINE_BYTES)
