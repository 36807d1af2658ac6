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
stream too. With the table's signing key it also publishes **signed heads** of the chain.

This module is the pump: the thread, the connections, what is sent when. Its parts, one job a
module: `window` (the lines between the cursor and the journal's durable head), `answers`
(the broker's acknowledgements), `stored` (what the stream holds, checked against the journal:
the reconcile, the duplicates, the conflicts), `heads` (the signed heads), `health` (the status
and the feed's own events), `cursor` (the cursor file).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from daemon import eventloop
from daemon.journal.format import JournalCorrupt
from daemon.logging import get_logger
from daemon.shipper.answers import Answers
from daemon.shipper.broker import (
    EXPECTED_STREAM,
    SITE_HEADER,
    FeedError,
    FeedStatus,
    connect,
    describe,
    ensure_stream,
    stream_answers,
)
from daemon.shipper.config import FeedConfig
from daemon.shipper.cursor import CursorWriter, ShipperLock, ShipperLocked, read_cursor
from daemon.shipper.frames import Frames, write_frames
from daemon.shipper.heads import Heads
from daemon.shipper.health import FeedHealth
from daemon.shipper.stored import Duplicates, last_line_stored
from daemon.shipper.tail import Line
from daemon.shipper.window import LINGER_LINES, Linger, Window, watch_journal

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.js.client import JetStreamContext

    from daemon.journal import Journal
    from daemon.journal.provenance import TableKey

POLL_SECONDS = 0.05  # without a journal to wake it (shipping files of a stopped table)
BACKOFF_FIRST = 0.1  # seconds before the first reconnection; doubles to backoff_max_seconds


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
        self._sent_max = 0  # the highest seq this shipper has sent (on any connection)
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
        self._frames = Frames(table_id, self._prefix, self._headers_base)
        self._window = Window(self.dir, journal)
        self._health = FeedHealth(self._status, journal, self._log)
        self._answers = Answers(
            self._window,
            table_id=table_id,
            stream=feed.stream,
            subject_prefix=self._prefix,
            on_refused=self._refuse,
            on_failure=self._refused_by_broker,
        )
        self._answers.on_acks = self._acks_read
        self._duplicates = Duplicates(
            feed,
            table_id,
            subject_prefix=self._prefix,
            headers=self._headers_base,
            window=self._window,
            health=self._health,
        )
        self._heads = Heads(
            key,
            table_id=table_id,
            subject_prefix=self._prefix,
            headers=self._headers_base,
            status=self._status,
            journal_dir=self.dir,
        )
        self._cursor = CursorWriter(
            self.dir, feed.stream, lambda: self._window.acked, self._degraded
        )
        self._linger = Linger()
        self._problem: BaseException | None = None
        self._server_errors: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._stop_requested = threading.Event()
        self._drain_deadline: float | None = None
        self._thread: threading.Thread | None = None
        self._probing = True
        # The wait before the next reconnection: doubles while they fail, back to the first
        # once a connection has stored a line (a cluster's next failover starts afresh).
        self._backoff = BACKOFF_FIRST
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
        return self._health.current()

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
            self._window.acked = self._cursor.written = cursor.seq
            self._status.cursor = cursor.seq
            if self.journal is not None:
                watcher = asyncio.ensure_future(
                    watch_journal(self.journal, self._wake, self._linger)
                )
            await self._loop_connections()
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher
            await self._cursor.now()
            self._window.tail.close()
            lock.release()
            self._status.state = "stopped"
            self._status.connected = False

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
        self._window.requeue()
        self._answers.waiting.clear()  # the lost connection's: its lines are sent again
        self._probing = True

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
        window = self._window
        seq = await last_line_stored(
            js,
            self.feed,
            self.table_id,
            self.dir,
            key=self.key,
            acked=window.acked,
            head=window.head(),
            log=self._log,
        )
        if seq is not None:
            self._advance_to(seq)
            window.stored_up_to(seq)

    def _advance_to(self, seq: int) -> None:
        if seq <= self._window.acked:
            return
        self._status.acked_total += seq - self._window.acked
        self._window.acked = seq
        self._status.cursor = seq
        if self.on_acked is not None:
            self.on_acked(seq)

    async def _pump(self, nc: Client) -> bool:
        """Ship until stopped (True) or a failure (raises)."""
        inbox = nc.new_inbox()
        js = nc.jetstream(timeout=self.feed.ack_timeout_seconds)
        self._problem = None
        self._answers.duplicates.clear()
        subscription = await nc.subscribe(inbox + ".*")
        self._answers.listen(nc, subscription._id, self._wake)
        self._window.ensure_tail()
        self._health.recovered(self._window.acked)
        await self._heads.after_connect(nc, self._window.acked)
        window, lines = self.feed.window, self._window
        while True:
            self._wake.clear()
            if self._problem is not None:
                problem, self._problem = self._problem, None
                raise problem
            await self._answers_since(nc, js)
            room = (1 if self._probing else window) - len(lines.inflight)
            hold = self._hold() if room > 0 else 0.0
            if 0 < hold < math.inf:
                await asyncio.sleep(hold)
                continue
            sent = await self._send(nc, inbox, room) if room > 0 and hold <= 0 else 0
            self._update_oldest()
            if lines.acked > self._cursor.written:
                self._cursor.soon()
            idle = not lines.inflight and not lines.resend
            caught_up = idle and lines.caught_up()
            head_wait = await self._head_if_due(nc, final=caught_up and not self.follow)
            if self._stopping() and (caught_up or self._past_deadline()):
                await self._head_if_due(nc, final=True)
                return True
            if not self.follow and caught_up:
                return True
            if lines.inflight:
                first = next(iter(lines.inflight))
                now = time.monotonic()
                if now - lines.oldest_sent(now) > self.feed.ack_timeout_seconds:
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
            if not sent or lines.inflight:
                # Woken by the journal's new lines, by the acknowledgement of the last line
                # sent (or of many), by a problem; `asyncio.timeout`, not `wait_for`: no task
                # made a wait.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._wake.wait()

    def _hold(self) -> float:
        """How long to let a small batch of durable lines wait for more (0: send now)."""
        at_once = self._stopping() or self._probing or bool(self._window.resend)
        return self._linger.hold(self._window.unsent(), at_once=at_once)

    async def _send(self, nc: Client, inbox: str, room: int) -> int:
        # The connection is checked before a line is taken: a line taken from the resend queue
        # or the tail is in flight from then on, else a failure here would lose it (the tail has
        # passed it and `_requeue` would not know it).
        if nc.is_closed or not nc.is_connected:
            raise FeedError("the connection to the NATS server was lost")
        now = time.monotonic()
        lines = self._window.take(room, now)
        if not lines:
            return 0
        max_payload = nc.max_payload
        frames, too_large = self._frames.build(lines, inbox, max_payload)
        for line in too_large:
            self._refuse(line, f"larger than the server's max_payload ({max_payload} B)")
        self._heads.last_sent = lines[-1]
        self._sent_max = max(self._sent_max, lines[-1].seq)
        self._answers.last_subject = b".%d" % lines[-1].seq
        self._linger.batch_at = now
        if frames:
            self._status.sent_total += len(frames)
            await write_frames(nc, frames)
        return len(lines)

    async def _head_if_due(self, nc: Client, *, final: bool = False) -> float | None:
        return await self._heads.if_due(
            nc, probing=self._probing, flush_seconds=self.feed.ack_timeout_seconds, final=final
        )

    async def _answers_since(self, nc: Client, js: JetStreamContext) -> None:
        """Take the acknowledgements come since, check the duplicates, move the cursor."""
        if self._answers.waiting:
            await self._answers.take(nc)
        if self._answers.duplicates:
            await self._duplicates.check(js, self._answers.duplicates)
        seq = self._window.collect()
        if seq > self._window.acked:
            if self._probing:
                self._probing = False
                self._backoff = BACKOFF_FIRST
            self._advance_to(seq)

    def _acks_read(self, last: bool) -> bool:
        """PubAcks just read off the wire marked their lines done (`last`: the last line sent
        is among them); True if the pump must wake. While lines flow, the cursor moves here and
        the pump sleeps on to the watcher's next tick, which sends the next batch, writes the
        cursor file and checks the timeouts: a wake-up for the acknowledgements would do nothing
        else, and it cost a turn of the loop a batch. Otherwise (the flow paused, a probe, a
        stop, anything for the pump to read) the pump wakes on the last line's, as it did."""
        lines = self._window
        if (
            not self._linger.flowing
            or self._probing
            or self._stopping()
            or not self.follow
            or self._problem is not None
            or self._answers.duplicates
            or self._answers.waiting
        ):
            return last
        seq = lines.collect()
        if seq > lines.acked:
            self._advance_to(seq)
        # The window half full, or a batch's worth waiting: the pump sends without the tick.
        return len(lines.inflight) * 2 >= self.feed.window or lines.unsent() >= LINGER_LINES

    def _refused_by_broker(self, problem: FeedError) -> None:
        """An answer after which the connection starts again; the stream may hold later lines
        without this one, so the next reconnection must not move the cursor over it."""
        self._broker_refused = True
        self._problem = problem

    def _refuse(self, line: Line, reason: str) -> None:
        """A line the broker will never take: journaled, counted, passed over (not silently)."""
        self._window.done.add(line.seq)
        self._health.refused(line, reason)

    def _update_oldest(self) -> None:
        self._health.update_oldest(self._window)

    def _degraded(self, reason: str) -> None:
        if self._status.state != "degraded":
            self._update_oldest()
        self._health.degraded(reason, self._window.acked)
