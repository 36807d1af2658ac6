"""The shipper: the table's journal, line by line, into a NATS JetStream stream, exactly once.

The journal is the outbox. The shipper takes its durable lines from the cursor on (the last seq
JetStream acknowledged, `daemon.shipper.cursor`): from the journal's memory while the table runs
(`Journal.durable_records`, their exact bytes), from its files when it must reach further back
(`daemon.shipper.tail`). It publishes each durable line on
``<prefix>.<table>.<event>`` with ``Nats-Msg-Id: <table>:<seq>`` and the line's exact bytes as
the body, keeps at most `window` messages unacknowledged, and moves the cursor only over
acknowledged seqs. Anything that goes wrong (the broker down, a timeout, a refused connection, a
stream with the wrong subjects) sends it back to the cursor: it backs off, reconnects, asks the
stream for the last message it holds of this table (so a resend after a long outage is not
stored twice even past JetStream's de-duplication window), and sends again from there;
JetStream drops a resend within the window by its message id.

It runs in its own thread with its own event loop (`start`/`stop`), so the table's loop never
waits for it or for the network; it wakes when the journal makes lines durable (a journal
subscription), and takes only lines the journal has made durable, so a line it sends can never
be rolled back by a power loss. Each line has its own acknowledgement (docs/floor.md: a
duplicate must be seen to keep the real line), taken off the client's parser in batches.
`status()` is its state for /metrics, /api/health and `tabled status`; its own events go to
the journal (`feed.degraded`, `feed.recovered`, `feed.refused`), rate-limited, and so to the
stream too.

With the table's signing key it also publishes **signed heads** of the chain
(`daemon.journal.provenance`) on ``<prefix>.<table>.head``: after the lines it sends, one every
`HEAD_SECONDS` while lines flow (and every `HEAD_LINES` lines of a backlog), one for the last
line sent once the flow pauses, one after each (re)connection for the last line acknowledged,
and one before a clean stop. A head vouches
for its line and, through the ``prev`` links, every line before it: the floor takes a line into
the table's history only once a head proves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from daemon import eventloop
from daemon.journal.format import JournalCorrupt
from daemon.logging import get_logger
from daemon.shipper.broker import (
    CONFLICT_EVENT,
    EXPECTED_STREAM,
    MSG_ID,
    SITE_HEADER,
    FeedError,
    FeedMismatch,
    FeedStatus,
    Stored,
    conflict_msg_id,
    connect,
    describe,
    ensure_stream,
    is_head,
    last_stored,
    own_messages,
    stored_message,
    stored_seq,
    stream_answers,
)
from daemon.shipper.config import FeedConfig
from daemon.shipper.cursor import ShipperLock, ShipperLocked, read_cursor, write_cursor
from daemon.shipper.tail import JournalTail, Line, line_ts

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.js.client import JetStreamContext

    from daemon.journal import Journal
    from daemon.journal.provenance import TableKey

# JetStream error codes that will never succeed on a resend of the same line.
REFUSED_FOR_GOOD = {
    10054: "message size exceeds the stream's maximum",
}
# The cursor file is replaced at most this often (two fsyncs each); after a crash the lines
# acknowledged since are sent again and dropped by JetStream (or skipped by the reconcile).
CURSOR_WRITE_SECONDS = 1.0
JOURNAL_EVENT_SECONDS = 30.0  # feed.degraded / feed.refused at most this often
POLL_SECONDS = 0.05  # without a journal to wake it (shipping files of a stopped table)
BACKOFF_FIRST = 0.1  # seconds before the first reconnection; doubles to backoff_max_seconds
# A durable line waits up to this long for the lines that usually follow it (a round journals
# in bursts), unless this many are waiting: fewer, larger batches cost less CPU per line, for a
# little latency.
LINGER_SECONDS = 0.010
LINGER_LINES = 256
# A signed head at most this often while lines flow (and this long after the last line sent):
# a line is proven at the floor within about this, its batch and the floor's fetch.
HEAD_SECONDS = 1.0
# ... and one at least every this many lines sent (a backlog after an outage ships tens of
# thousands of lines a second: the floor proves them as they come instead of holding them).
HEAD_LINES = 1000
# The pump is woken by this many acknowledgements waiting even before the last line's comes.
ACKS_WAKE = 64


def _head_of(body: bytes, key: TableKey | None) -> tuple[str | None, bool]:
    """(the line hash a stored head names, whether it is signed by `key`)."""
    from daemon.journal.provenance import BadHead, parse_head, verify_head  # noqa: PLC0415

    try:
        head = parse_head(body)
    except BadHead:
        return None, False
    ours = (
        key is not None
        and head.key == key.fingerprint
        and verify_head(head, key.private.public_key())
    )
    return head.hash, ours


class Ack(NamedTuple):
    """A JetStream acknowledgement as `_take_ack` reads it (the fields of nats-py's `Msg` it
    uses)."""

    subject: str
    data: bytes
    headers: dict[str, str] | None


def _wall(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


class Shipper:
    """Ships one table's journal; `run()` is the coroutine, `start()`/`stop()` its thread.

    `journal` is the table's open journal (the shipper wakes on its commits, reads only what it
    has made durable and journals its own events); without one it ships the files of a stopped
    table. `follow=False` stops once everything in the files is acknowledged.
    """

    def __init__(
        self,
        feed: FeedConfig,
        table_id: str,
        journal_dir: Path,
        *,
        journal: Journal | None = None,
        follow: bool = True,
        on_acked: Callable[[int], None] | None = None,
        key: TableKey | None = None,
    ) -> None:
        self.feed = feed
        self.key = key
        # The last line sent (its seq and bytes).
        self._last_sent: Line | None = None
        # The seq of the last head published and when; the highest seq this shipper has sent
        # (on any connection).
        self._head_seq, self._head_at, self._sent_max = 0, 0.0, 0
        self.table_id = table_id
        self.dir = Path(journal_dir)
        self.journal = journal
        self.follow = follow
        self.on_acked = on_acked
        self._status = FeedStatus(stream=feed.stream)
        self._log = get_logger("daemon.shipper")
        self._headers_base = {EXPECTED_STREAM: feed.stream}
        if feed.site:
            self._headers_base[SITE_HEADER] = feed.site
        self._prefix = f"{feed.subject_prefix}.{table_id}."
        self._table_bytes = table_id.encode()
        self._header_tail = b"".join(
            b"%s: %s\r\n" % (key.encode(), value.encode())
            for key, value in self._headers_base.items()
        )
        self._acked = 0
        self._written = 0
        self._inflight: OrderedDict[int, Line] = OrderedDict()
        self._sent_at: dict[int, float] = {}
        self._done: set[int] = set()
        # Lines answered `duplicate`, by seq, with the stream seq of the message that holds the id.
        self._duplicates: dict[int, int] = {}
        self._conflicted: set[int] = set()  # seqs journaled as conflicts by this shipper
        self._resend: deque[Line] = deque()
        # Acknowledgements as they came off the wire (subject, body, raw headers), unread.
        self._acks: list[tuple[bytes, bytes, bytes | None]] = []
        self._subjects: dict[str, bytes] = {}  # each event's subject, encoded once
        self._oldest_of = -1  # the seq `oldest_unacked_wall` was last read from
        self._last_ack_subject = b"."  # the end of the last line's ack subject: `.SEQ`
        self._flowing = False  # lines keep coming: the journal watcher paces the batches
        self._batch_at = 0.0  # when the last batch was sent (monotonic)
        self._tail = JournalTail(self.dir)
        self._tail_ready = False
        self._problem: BaseException | None = None
        self._server_errors: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._stop_requested = threading.Event()
        self._drain_deadline: float | None = None
        self._thread: threading.Thread | None = None
        self._cursor_writing: asyncio.Task[None] | None = None
        self._last_cursor_write = 0.0
        self._cursor_lock = threading.Lock()
        self._degraded_journaled = False
        self._last_journaled: dict[str, float] = {}
        self._refused_unjournaled = 0
        self._probing = True
        # The wait before the next reconnection: doubles while they fail, back to the first
        # once a connection has stored a line (a cluster's next failover starts afresh).
        self._backoff = BACKOFF_FIRST
        self._unsent_since: float | None = None
        # A line the broker answered with an error since the last (re)connection: the stream may
        # hold later lines without it, so the next reconnect must not move the cursor over it.
        self._broker_refused = False

    # -- the thread ----------------------------------------------------------------------

    def start(self) -> None:
        """Run the shipper in its own thread (and event loop)."""
        self._thread = threading.Thread(target=self._thread_main, name="feed-shipper", daemon=True)
        self._thread.start()

    def _thread_main(self) -> None:
        try:
            eventloop.run(self.run())  # uvloop's: a loop turn costs less than asyncio's
        except Exception as exc:  # the table must not notice: say it, stop shipping
            self._status.state = "stopped"
            self._status.last_error = f"the shipper stopped: {exc!r}"
            self._log.error("feed.crashed", error=repr(exc))

    def request_stop(self, drain_seconds: float | None = None) -> None:
        """Ask the shipper to drain (at most `drain_seconds`, while the broker answers) and end."""
        drain = self.feed.drain_seconds if drain_seconds is None else drain_seconds
        self._drain_deadline = time.monotonic() + drain
        self._stop_requested.set()
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._wake.set)

    def stop(self, drain_seconds: float | None = None) -> None:
        """`request_stop` and wait for the thread (bounded by the drain time and a margin)."""
        self.request_stop(drain_seconds)
        drain = self.feed.drain_seconds if drain_seconds is None else drain_seconds
        if self._thread is not None:
            self._thread.join(drain + self.feed.connect_timeout_seconds + 5.0)

    async def stop_async(self, drain_seconds: float | None = None) -> None:
        await asyncio.to_thread(self.stop, drain_seconds)

    def status(self) -> FeedStatus:
        if self.journal is not None:
            self._status.head = self.journal.durable_seq
        return self._status

    # -- the coroutine -------------------------------------------------------------------

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            lock = ShipperLock(self.dir)
        except ShipperLocked as exc:
            self._status.state = "stopped"
            self._status.last_error = str(exc)
            self._log.error("feed.locked", error=str(exc))
            return
        watcher = None
        try:
            cursor = read_cursor(self.dir, self.feed.stream)
            self._acked = self._written = cursor.seq
            self._status.cursor = cursor.seq
            if self.journal is not None:
                watcher = asyncio.ensure_future(self._watch_journal(self.journal))
            await self._loop_connections()
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher
            await self._write_cursor_now()
            self._tail.close()
            lock.release()
            self._status.state = "stopped"
            self._status.connected = False

    async def _watch_journal(self, journal: Journal) -> None:
        """Wake the pump when the journal makes lines durable.

        Idle, it waits on a journal subscription (one wake-up for the first commit); then,
        while commits keep coming, it reads the journal's durable seq every `LINGER_SECONDS`
        instead, so a burst of commits costs the table no wake-up per commit.
        """
        from daemon.journal import JournalClosed, SubscriberLagged  # noqa: PLC0415

        seen = journal.durable_seq
        while True:
            try:
                subscription = journal.subscribe(maxsize=64)
            except JournalClosed:
                self._wake.set()
                return
            try:
                if journal.durable_seq <= seen:
                    await subscription.next()
            except SubscriberLagged:
                pass  # many commits at once: a wake-up all the same
            except JournalClosed:
                self._wake.set()
                return
            finally:
                subscription.close()
            while journal.durable_seq > seen:
                seen = journal.durable_seq
                self._flowing = True  # this cadence is the lines' linger: the pump sends at once
                self._wake.set()
                await asyncio.sleep(LINGER_SECONDS)
            self._flowing = False

    def _stopping(self) -> bool:
        return self._stop_requested.is_set()

    def _past_deadline(self) -> bool:
        return self._drain_deadline is not None and time.monotonic() >= self._drain_deadline

    async def _loop_connections(self) -> None:
        while True:
            if self._stopping() and (not self._status.connected or self._past_deadline()):
                return
            nc: Client | None = None
            self._server_errors.clear()
            try:
                nc = await connect(
                    self.feed,
                    self.table_id,
                    error_cb=self._on_server_error,
                    disconnected_cb=self._on_disconnected,
                )
                self._status.connected = True
                self._status.server = str(nc.connected_url.geturl()) if nc.connected_url else None
                js = nc.jetstream(timeout=self.feed.ack_timeout_seconds)
                await stream_answers(nc, self.feed)
                self._status.notes = await ensure_stream(js, self.feed, self.table_id)
                await self._reconcile(js)
                finished = await self._pump(nc)
                if finished:
                    return
            except asyncio.CancelledError:
                raise
            except JournalCorrupt as exc:
                self._degraded(f"the journal cannot be shipped: {exc}")
            except Exception as exc:  # every other failure: back off, resend from the cursor
                reason = describe(exc)
                if self._server_errors and self._server_errors[-1] not in reason:
                    # What the server said on the way (a permission it refused) is the cause.
                    reason += f" ({self._server_errors[-1]})"
                self._degraded(reason)
            finally:
                self._status.connected = False
                if nc is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(nc.close(), 2.0)
                self._requeue()
            if self._stopping():
                return  # the broker does not answer: the drain ends here, the cursor is kept
            self._status.reconnects_total += 1
            self._update_oldest()
            await self._sleep(self._backoff * (0.5 + random.random()))
            self._backoff = min(self._backoff * 2, self.feed.backoff_max_seconds)

    async def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stopping():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), remaining)

    async def _on_server_error(self, exc: Exception) -> None:
        text = describe(exc)
        self._server_errors.append(text)
        del self._server_errors[:-5]
        if "permissions violation" in text.lower():
            self._problem = FeedError(text)
            if self._wake is not None:
                self._wake.set()

    async def _on_disconnected(self) -> None:
        if self._problem is None:
            self._problem = FeedError("the connection to the NATS server was lost")
        if self._wake is not None:
            self._wake.set()

    def _requeue(self) -> None:
        """After a failure, what was in flight is sent again first (from memory, in order)."""
        pending = {line.seq: line for line in self._resend if line.seq > self._acked}
        pending.update((seq, line) for seq, line in self._inflight.items() if seq > self._acked)
        self._inflight.clear()
        self._sent_at.clear()
        self._done.clear()
        self._acks.clear()  # the lost connection's: its lines are sent again
        # Only a run without a hole is resent from memory; from the first seq missing (or if the
        # run does not end where the tail stands) the journal is read again: a line is never
        # passed over because it was in neither place.
        resend: deque[Line] = deque()
        for seq in sorted(pending):
            if seq != self._acked + 1 + len(resend):
                break
            resend.append(pending[seq])
        self._resend = resend
        if self._tail.next_seq != self._acked + 1 + len(resend):
            self._tail_ready = False  # `_ensure_tail` seeks it to the line after the run
        self._probing = True

    def _head(self) -> int | None:
        return None if self.journal is None else self.journal.durable_seq

    async def _reconcile(self, js: JetStreamContext) -> None:
        """Move the cursor up to the last line of this table the stream already holds."""
        refused, self._broker_refused = self._broker_refused, False
        if refused or self._sent_max:
            # Once this shipper has sent lines, whatever the stream holds past the cursor is
            # its own unacknowledged lines, and the last of them does not vouch for the ones
            # before it. One server stores a connection's lines in order, but not a cluster
            # across a leader change: the dead leader takes the lines it had not replicated
            # with it, and its successor stores the connection's later ones (bench_cluster.py
            # lost a line when the cursor moved here). A line the broker answered with an error
            # is not stored either. So every unacknowledged line is resent: JetStream's
            # de-duplication drops those it holds, and a duplicate is checked against the
            # stored message. Only a previous run's lines (acknowledged before its cursor was
            # written) move the cursor, read once, before this run sends anything: so a
            # reconnection asks nothing of the cluster's metadata leader (a consumer), which
            # may be the node just lost.
            return
        msg = await last_stored(js, self.feed, self.table_id)
        if msg is None:
            return
        seq = stored_seq(msg, self.table_id)
        if seq is None or seq <= self._acked:
            return
        head = self._head()
        line = None if head is not None and seq > head else JournalTail(self.dir).line_at(seq)
        ours = False
        if is_head(msg, self.table_id):
            # Our signed head for line `seq`, published after it on the same connection: the
            # stream holds what it vouches for if its hash is our line's.
            digest, ours = _head_of(msg.data or b"", self.key)
            same = line is not None and digest == hashlib.sha256(line).hexdigest()
        else:
            same = line == msg.data
        if not same and self.key is not None and not ours:
            # Not this journal's, and not signed by this table: anyone on the broker may have
            # published it. Nothing is skipped for it: the lines are sent from the cursor, and
            # one whose id it took goes out on the conflict subject (the floor takes the line
            # this table's heads prove).
            self._log.warning(
                "feed.foreign_last_message", seq=seq, subject=str(getattr(msg, "subject", ""))
            )
            return
        if not same:
            raise FeedMismatch(
                f"stream {self.feed.stream} holds {self.table_id}:{seq} with other bytes than "
                f"this journal's line {seq} (is another table configured as {self.table_id}, "
                f"or was this journal started anew?); nothing more is shipped"
            )
        self._advance_to(seq)
        self._resend = deque(x for x in self._resend if x.seq > seq)
        if self._tail_ready and self._tail.next_seq <= seq and not self._resend:
            self._tail.position(seq + 1)

    def _advance_to(self, seq: int) -> None:
        if seq <= self._acked:
            return
        self._status.acked_total += seq - self._acked
        self._acked = seq
        self._status.cursor = seq
        if self.on_acked is not None:
            self.on_acked(seq)

    async def _pump(self, nc: Client) -> bool:
        """Ship until stopped (True) or a failure (raises)."""
        inbox = nc.new_inbox()
        js = nc.jetstream(timeout=self.feed.ack_timeout_seconds)
        self._problem = None
        self._duplicates.clear()
        subscription = await nc.subscribe(inbox + ".*")
        self._take_acks_of(nc, subscription._id)
        self._ensure_tail()
        self._recovered()
        await self._head_after_connect(nc)
        window = self.feed.window
        while True:
            self._wake.clear()
            if self._problem is not None:
                problem, self._problem = self._problem, None
                raise problem
            await self._answers(nc, js)
            room = (1 if self._probing else window) - len(self._inflight)
            hold = self._hold() if room > 0 else 0.0
            if hold > 0:
                await asyncio.sleep(hold)
                continue
            sent = await self._send(nc, inbox, room) if room > 0 else 0
            self._update_oldest()
            if self._acked > self._written:
                self._write_cursor_soon()
            idle = not self._inflight and not self._resend
            caught_up = idle and self._caught_up()
            head_wait = await self._head_if_due(nc, final=caught_up and not self.follow)
            if self._stopping() and (caught_up or self._past_deadline()):
                await self._head_if_due(nc, final=True)
                return True
            if not self.follow and caught_up:
                return True
            if self._inflight:
                first = next(iter(self._inflight))
                sent_at = self._sent_at.get(first, time.monotonic())
                if time.monotonic() - sent_at > self.feed.ack_timeout_seconds:
                    raise FeedError(
                        f"no acknowledgement for {self.table_id}:{first} within "
                        f"{self.feed.ack_timeout_seconds:g} s"
                        + (f" ({self._server_errors[-1]})" if self._server_errors else "")
                    )
            timeout: float = self.feed.ack_timeout_seconds / 4
            if self.journal is None and idle:
                timeout = POLL_SECONDS
            if head_wait is not None:
                timeout = min(timeout, head_wait)
            if not sent or self._inflight:
                # Woken by the journal's new lines, by the acknowledgement of the last line
                # sent (or of many), by a problem; `asyncio.timeout`, not `wait_for`: no task
                # made a wait.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._wake.wait()

    def _hold(self) -> float:
        """How long to let a small batch of durable lines wait for more (0: send now)."""
        head = self._head()
        waiting = 0 if head is None else head - self._tail.next_seq + 1
        if waiting <= 0:
            self._unsent_since = None
            return 0.0
        if self._stopping() or self._probing or self._resend or waiting >= LINGER_LINES:
            return 0.0
        now = time.monotonic()
        if self._flowing:
            # Lines keep coming (the watcher polls every LINGER_SECONDS): one batch a linger,
            # whatever woke the pump (an acknowledgement, the watcher).
            return self._batch_at + LINGER_SECONDS - now
        if self._unsent_since is None:
            self._unsent_since = now
        return self._unsent_since + LINGER_SECONDS - now

    def _caught_up(self) -> bool:
        head = self._head()
        if head is not None:
            return self._acked >= head
        return not self._tail.has_more()

    async def _send(self, nc: Client, inbox: str, room: int) -> int:
        # The connection is checked before a line is taken: a line taken from the resend queue
        # or the tail is in flight from then on, else a failure here would lose it (the tail has
        # passed it and `_requeue` would not know it).
        if nc.is_closed or not nc.is_connected:
            raise FeedError("the connection to the NATS server was lost")
        now = time.monotonic()
        lines: list[Line] = []
        while self._resend and len(lines) < room:
            line = self._resend.popleft()
            self._inflight[line.seq] = line
            self._sent_at[line.seq] = now
            lines.append(line)
        if len(lines) < room:
            lines.extend(self._read(room - len(lines)))
        if not lines:
            return 0
        # The HPUB frames of the whole batch are built here and handed to the client at once:
        # the client's per-message publish (header checks, one buffer append each) cost more
        # CPU than everything else the shipper does per line.
        frames: list[bytes] = []
        append = frames.append
        reply = inbox.encode()
        inflight, sent_at, subjects = self._inflight, self._sent_at, self._subjects
        table, tail = self._table_bytes, self._header_tail
        # The header's length less its seq's digits: NATS/1.0, the id, the other headers.
        fixed = len(b"NATS/1.0\r\nNats-Msg-Id: :\r\n\r\n") + len(table) + len(tail)
        max_payload = nc.max_payload
        for line in lines:
            seq, event, data = line
            inflight[seq] = line
            sent_at[seq] = now
            if len(data) > max_payload:
                self._refuse(line, f"larger than the server's max_payload ({max_payload} B)")
                continue
            subject = subjects.get(event)
            if subject is None:
                subject = subjects[event] = (self._prefix + event).encode()
            size = fixed + len(str(seq))
            # One frame, one formatting: HPUB subject reply hdr_len total_len, headers, body.
            append(
                b"HPUB %s %s.%d %d %d\r\nNATS/1.0\r\nNats-Msg-Id: %s:%d\r\n%s\r\n%s\r\n" % (
                    subject, reply, seq, size, size + len(data), table, seq, tail, data,
                )
            )  # fmt: skip
        self._last_sent = lines[-1]
        self._sent_max = max(self._sent_max, lines[-1].seq)
        self._last_ack_subject = b".%d" % lines[-1].seq
        self._batch_at = now
        if frames:
            self._status.sent_total += len(frames)
            await nc._send_command(b"".join(frames))
            await nc._flush_pending()
        return len(lines)

    def _read(self, limit: int) -> list[Line]:
        """Up to `limit` durable lines from where the tail stands: from the journal's memory
        (the records it made durable, their bytes and hashes) while it holds them, else from
        the files (after an outage longer than memory, or a stopped table's)."""
        tail, journal = self._tail, self.journal
        if journal is not None:
            records = journal.durable_records(tail.next_seq, limit)
            if records is not None:
                if not records:
                    return []
                first, last = records[0], records[-1]
                known = tail.prev_hash
                if known is not None and first.prev.encode() != known:
                    raise JournalCorrupt(
                        f"{self.dir}: seq {first.seq} in the journal's memory does not follow the "
                        f"line shipped before it; run `tabled verify-log {self.dir}`"
                    )
                tail.position(last.seq + 1, last.hash.encode())
                return [Line(r.seq, r.event, r.line) for r in records]
        return tail.read(self._head(), limit)

    async def _publish_head(self, nc: Client, seq: int, data: bytes) -> None:
        if self.key is None:
            return
        body = self.key.head(self.table_id, seq, hashlib.sha256(data).hexdigest())
        headers = {**self._headers_base, "Nats-Msg-Id": f"{self.table_id}:head:{seq}"}
        await nc.publish(f"{self._prefix}head", body, headers=headers)
        self._head_seq, self._head_at = seq, time.monotonic()
        self._status.heads_total += 1

    async def _head_if_due(self, nc: Client, *, final: bool = False) -> float | None:
        """Publish a head for the last line sent if one is owed and due (or `final`); the
        seconds until the next is due, None when none is owed."""
        last = self._last_sent
        if self.key is None or last is None or last.seq <= self._head_seq:
            return None
        if self._probing and not final:
            return None  # the first line after a (re)connection: its head follows the window's
        wait = self._head_at + HEAD_SECONDS - time.monotonic()
        if wait > 0 and not final and last.seq - self._head_seq < HEAD_LINES:
            return wait
        await self._publish_head(nc, last.seq, last.data)
        if final:  # before a stop: on the wire, not in the client's buffer
            with contextlib.suppress(Exception):
                await nc.flush(timeout=max(1, round(self.feed.ack_timeout_seconds)))
        return None

    async def _head_after_connect(self, nc: Client) -> None:
        """A head for the last acknowledged line: one published before a lost connection may
        never have reached the stream."""
        self._head_seq = 0
        if self.key is None or self._acked < 1:
            return
        data = JournalTail(self.dir).line_at(self._acked)
        if data is not None:
            self._last_sent = Line(self._acked, "", data)
            await self._publish_head(nc, self._acked, data)
            # The next head, for the lines resent once the first is acknowledged, is due at
            # once: the floor proves a backlog as soon as it is stored, not a second later.
            self._head_at = 0.0

    def _take_acks_of(self, nc: Client, sid: int) -> None:
        """The acknowledgements (on this connection's inbox subscription `sid`) are taken from
        the client's protocol parser as they come, into a list the pump reads in one go: the
        client's own path (headers parsed, a `Msg` built, a queue and a task, a callback) cost
        more CPU than everything else the shipper does per line."""
        process_msg = nc._process_msg
        acks, wake = self._acks, self._wake

        async def take(
            msg_sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes
        ) -> None:
            # `headers` is None for a message without (nats-py's own annotation says bytes).
            if msg_sid != sid:
                await process_msg(msg_sid, subject, reply, data, headers)
                return
            acks.append((subject, data, headers))
            # The pump is woken once the last line sent is answered (acknowledgements come in
            # order), or many are waiting, or an answer is not a plain PubAck: one turn of the
            # loop a batch, not one an answer.
            if (
                subject.endswith(self._last_ack_subject)
                or len(acks) >= ACKS_WAKE
                or headers is not None
                or b'"duplicate"' in data
            ):
                wake.set()

        nc._process_msg = take  # type: ignore[method-assign,assignment]

    async def _answers(self, nc: Client, js: JetStreamContext) -> None:
        """Take the acknowledgements come since, check the duplicates, move the cursor."""
        if self._acks:
            await self._take_acks(nc)
        if self._duplicates:
            await self._check_duplicates(js)
        self._collect()

    async def _take_acks(self, nc: Client) -> None:
        acks = self._acks[:]
        self._acks.clear()
        inflight, done = self._inflight, self._done
        for subject, data, headers in acks:
            try:
                seq = int(subject[subject.rindex(b".") + 1 :])
            except ValueError:
                continue
            if (
                headers is None
                and data.startswith(b'{"stream"')
                and b'"error"' not in data
                and b'"duplicate"' not in data
            ):
                if seq in inflight:
                    done.add(seq)  # a PubAck: {"stream":"TABLED","seq":N}
                continue
            # Anything else (a duplicate, an error, a status), rarely: read as the client would.
            ack = Ack(subject.decode(), data, await nc._process_headers(headers))
            try:
                self._take_ack(ack)
            except Exception as exc:
                raise FeedError(f"handling an acknowledgement: {exc!r}") from exc

    def _take_ack(self, msg: Ack) -> None:
        try:
            seq = int(msg.subject.rpartition(".")[2])
        except ValueError:
            return
        line = self._inflight.get(seq)
        if line is None:
            return
        data = msg.data
        if msg.headers is None and data.startswith(b'{"stream"') and b'"error"' not in data:
            if b'"duplicate"' in data:  # {"stream":"TABLED","seq":N,"duplicate":true}
                self._duplicate(line, data)
            else:
                self._done.add(seq)  # a PubAck: {"stream":"TABLED", "seq":N}
            return
        status = (msg.headers or {}).get("Status")
        if status == "503":
            self._broker_refused = True
            self._problem = FeedError(
                f"no JetStream stream takes {self._prefix}{line.event} (is stream "
                f"{self.feed.stream} there?)"
            )
        else:
            try:
                body = json.loads(msg.data)
            except ValueError:
                body = {}
            error = body.get("error") if isinstance(body, dict) else {"description": data}
            if error is None and "seq" in body:
                if body.get("duplicate"):
                    self._duplicate(line, data)
                else:
                    self._done.add(seq)
            elif not isinstance(error, dict):
                self._broker_refused = True
                self._problem = FeedError(f"an answer that is not a JetStream ack: {data[:80]!r}")
            else:
                code = error.get("err_code")
                text = str(error.get("description", error))
                if code in REFUSED_FOR_GOOD:
                    self._refuse(line, text)
                else:
                    self._broker_refused = True
                    self._problem = FeedError(f"JetStream refused {self.table_id}:{seq}: {text}")

    def _collect(self) -> None:
        """Move the cursor over every seq acknowledged (or refused for good) in order."""
        seq = self._acked
        while seq + 1 in self._done:
            seq += 1
            self._done.discard(seq)
            self._inflight.pop(seq, None)
            self._sent_at.pop(seq, None)
        if seq > self._acked:
            if self._probing:
                self._probing = False
                self._backoff = BACKOFF_FIRST
            self._advance_to(seq)

    # -- a duplicate: the stream's message under this line's id must be this line ---------

    def _duplicate(self, line: Line, ack: bytes) -> None:
        """JetStream dropped this line as a duplicate of the message it stored under the same
        id: it is acknowledged only once that message is read and found to be this line (a
        resend after a reconnection); otherwise it is a conflict (`_check_duplicates`)."""
        try:
            stored = int(json.loads(ack)["seq"])
        except (ValueError, KeyError, TypeError):
            stored = 0  # no seq to read: the line goes out as a conflict all the same
        self._duplicates[line.seq] = stored

    async def _check_duplicates(self, js: JetStreamContext) -> None:
        """Read the stored message of each line answered `duplicate` and compare; a line whose
        id another message holds is journaled as a conflict and published on the conflict
        subject, where the floor takes it beside the other."""
        while self._duplicates:
            pending = sorted(self._duplicates.items())
            self._duplicates.clear()
            held_at = await self._own_messages_at([stored for _, stored in pending if stored], js)
            for seq, stored in pending:
                await self._check_duplicate(js, seq, stored, held_at.get(stored))

    async def _own_messages_at(self, seqs: list[int], js: JetStreamContext) -> dict[int, Stored]:
        """This table's messages at these stream seqs, in one read of its own consumer (after a
        reconnection, a window of resends is answered `duplicate` at once)."""
        if not seqs:
            return {}
        low, high = min(seqs), max(seqs)
        found = await own_messages(
            js, self.feed, self.table_id, start=low, limit=min(high - low + 1, 10_000)
        )
        held = {msg.seq: msg for msg in found}
        last = found[-1].seq if found else high
        for seq in seqs:
            if seq > last and seq not in held:  # past what one read brought: read it alone
                one = await stored_message(js, self.feed, self.table_id, seq)
                if one is not None:
                    held[seq] = one
        return held

    async def _check_duplicate(
        self, js: JetStreamContext, seq: int, stored: int, held: Stored | None
    ) -> None:
        line = self._inflight.get(seq)
        if line is not None:
            expected = self._prefix + line.event
            if (
                held is not None
                and held.subject == expected
                and held.data == line.data
                and ((held.headers or {}).get(MSG_ID) == f"{self.table_id}:{seq}")
            ):
                self._done.add(seq)  # the stream holds this very line: a resend, dropped
                return
            await self._conflict(js, line, stored, held)
            self._done.add(seq)

    async def _conflict(
        self, js: JetStreamContext, line: Line, stored: int, held: Stored | None
    ) -> None:
        """Journal the conflict (the supervisor sees it; /api/health counts it) and publish the
        table's own line on ``<prefix>.<table>.conflict`` with its own id (docs/floor.md)."""
        digest = hashlib.sha256(line.data).hexdigest()
        msg_id = conflict_msg_id(self.table_id, line.seq, line.data)
        headers = {**self._headers_base, MSG_ID: msg_id}
        ack = await js.publish(self._prefix + CONFLICT_EVENT, line.data, headers=headers)
        taken = False
        if ack.duplicate:
            again = await stored_message(js, self.feed, self.table_id, ack.seq)
            taken = again is None or again.data != line.data
        if line.seq in self._conflicted:
            return  # published again after a reconnection: journaled once
        self._conflicted.add(line.seq)
        self._status.conflicts_total += 1
        self._status.last_conflict = line.seq
        # No digest of either message in the journal: the line may hold a card a reader of the
        # journal may not see, and its SHA-256 (or the id's 16 hex) would let them try the 52
        # (docs/security.md). The floor has both messages; the operator's log has the digests.
        record: dict[str, Any] = {
            "seq": line.seq,
            "event": line.event,
            "stream_seq": stored or None,
            # The message that holds the id, when it is on this table's subjects (a table reads
            # no other table's messages: then only its stream seq is known, and the floor has it).
            "stored_on_own_subjects": held is not None,
            "stored_subject": held.subject if held is not None else None,
            "stored_msg_id": (held.headers or {}).get(MSG_ID) if held is not None else None,
            "published_on": self._prefix + CONFLICT_EVENT,
        }
        if taken:
            record["conflict_id_taken"] = True  # another message holds even this id
        self._log.error(
            "feed.conflict",
            **{k: v for k, v in record.items() if k != "event"},
            line_event=line.event,
            line_sha256=digest,
            stored_sha256=hashlib.sha256(held.data).hexdigest() if held is not None else None,
            published_as=msg_id,
        )
        self._journal("feed.conflict", record)

    def _refuse(self, line: Line, reason: str) -> None:
        """A line the broker will never take: journaled, counted, passed over (not silently)."""
        self._done.add(line.seq)
        self._status.refused_total += 1
        self._log.error("feed.refused", seq=line.seq, line_event=line.event, reason=reason)
        if self._may_journal("feed.refused"):
            self._journal(
                "feed.refused",
                {
                    "seq": line.seq,
                    "event": line.event,
                    "bytes": len(line.data),
                    "reason": reason,
                    "also_refused": self._refused_unjournaled,
                },
            )
            self._refused_unjournaled = 0
        else:
            self._refused_unjournaled += 1

    def _ensure_tail(self) -> None:
        if not self._tail_ready:
            start = self._resend[-1].seq + 1 if self._resend else self._acked + 1
            self._tail.position(start)  # the files are read only if memory cannot serve
            self._tail_ready = True

    def _update_oldest(self) -> None:
        with contextlib.suppress(JournalCorrupt, OSError):
            self._ensure_tail()
        first: Line | None = None
        if self._inflight:
            first = next(iter(self._inflight.values()))
        elif self._resend:
            first = self._resend[0]
        elif self._tail_ready and (self.journal is None or self.status().lag_lines > 0):
            records = None
            if self.journal is not None:
                records = self.journal.durable_records(self._tail.next_seq, 1)
            if records:
                first = Line(records[0].seq, records[0].event, records[0].line)
            elif records is None:
                data = self._tail.peek()
                first = Line(0, "", data) if data is not None else None
        if first is None:
            self._status.oldest_unacked_wall = None
            self._oldest_of = -1
        elif first.seq != self._oldest_of or not first.seq:  # read once a line
            self._oldest_of = first.seq
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                self._status.oldest_unacked_wall = _wall(line_ts(first.data))
        if self.journal is None:
            self._status.head = max(self._status.head, self._acked, self._tail.next_seq - 1)

    # -- the cursor file -----------------------------------------------------------------

    def _write_cursor_soon(self) -> None:
        if self._cursor_writing is not None and not self._cursor_writing.done():
            return
        wait = self._last_cursor_write + CURSOR_WRITE_SECONDS - time.monotonic()
        self._cursor_writing = asyncio.ensure_future(self._write_cursor_after(max(0.0, wait)))

    async def _write_cursor_after(self, wait: float) -> None:
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_cursor_write = time.monotonic()
        await self._write_cursor(self._acked)

    async def _write_cursor(self, seq: int) -> None:
        try:
            await asyncio.to_thread(self._write_cursor_file, seq)
        except OSError as exc:
            self._degraded(f"cannot write the cursor file: {exc}")

    def _write_cursor_file(self, seq: int) -> None:
        # One writer at a time, never backwards (a cancelled write may still be running).
        with self._cursor_lock:
            if seq > self._written:
                write_cursor(self.dir, self.feed.stream, seq)
                self._written = seq

    async def _write_cursor_now(self) -> None:
        if self._cursor_writing is not None:
            self._cursor_writing.cancel()  # a write waiting for its turn: done here instead
            with contextlib.suppress(BaseException):
                await self._cursor_writing
        if self._acked > self._written:
            await self._write_cursor(self._acked)

    # -- health and the journal ----------------------------------------------------------

    def _may_journal(self, event: str) -> bool:
        now = time.monotonic()
        last = self._last_journaled.get(event)
        if last is not None and now - last < JOURNAL_EVENT_SECONDS:
            return False
        self._last_journaled[event] = now
        return True

    def _journal(self, event: str, payload: dict[str, Any]) -> None:
        if self.journal is None:
            return
        from daemon.journal import JournalError  # noqa: PLC0415

        with contextlib.suppress(JournalError, ValueError, OSError):
            self.journal.append(event, actor="feed", payload=payload, commit=True)

    def _lag(self) -> dict[str, Any]:
        status = self.status()
        return {
            "cursor": self._acked,
            "lag_lines": status.lag_lines,
            "lag_seconds": round(status.lag_seconds(), 3),
        }

    def _degraded(self, reason: str) -> None:
        status = self._status
        status.last_error = reason
        if status.state != "degraded":
            self._update_oldest()
            status.state = "degraded"
            status.degraded_since = time.time()
            self._log.warning("feed.degraded", reason=reason, **self._lag())
            if self._may_journal("feed.degraded"):
                self._degraded_journaled = True
                self._journal("feed.degraded", {"reason": reason, **self._lag()})

    def _recovered(self) -> None:
        status = self._status
        if status.state == "degraded":
            outage = time.time() - (status.degraded_since or time.time())
            self._log.info("feed.recovered", outage_seconds=round(outage, 3), **self._lag())
            if self._degraded_journaled:
                self._degraded_journaled = False
                self._journal("feed.recovered", {"outage_seconds": round(outage, 3), **self._lag()})
        status.state = "shipping"
        status.last_error = None
        status.degraded_since = None
