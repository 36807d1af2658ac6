"""The lines between the shipper's cursor and the journal's durable head.

The cursor (`acked`) is the last seq acknowledged with every one before it. Past it stand the
lines in flight (sent, not yet acknowledged, with when each was sent), the seqs done out of
order (acknowledged, or refused for good), the lines to send again first after a failure
(`resend`, from memory: only a run without a hole), and the tail of the journal the next lines
are read from: the journal's memory (`Journal.durable_records`, the records it made durable,
their exact bytes) while it holds them, else its files (`daemon.shipper.tail`, after an outage
longer than memory, or a stopped table's). The shipper takes only lines the journal has made
durable, so a line it sends can never be rolled back by a power loss; `watch_journal` wakes it
when there are more, and `Linger` paces the batches.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.journal import JournalClosed, SubscriberLagged
from daemon.journal.format import JournalCorrupt
from daemon.shipper.tail import JournalTail, Line

if TYPE_CHECKING:
    from daemon.journal import Journal

# A durable line waits up to this long for the lines that usually follow it (a round journals
# in bursts), unless this many are waiting: fewer, larger batches cost less CPU per line, for a
# little latency. While commits keep coming, the journal's durable seq is read as often.
LINGER_SECONDS = 0.010
LINGER_LINES = 256


class Linger:
    """How long a small batch of durable lines waits for more before it is sent."""

    def __init__(self) -> None:
        self.flowing = False  # lines keep coming: the journal watcher paces the batches
        self.ticked = False  # the watcher has woken the pump since its last batch
        self.batch_at = 0.0  # when the last batch was sent (monotonic)
        self._unsent_since: float | None = None

    def hold(self, waiting: int, *, at_once: bool) -> float:
        """The seconds to hold `waiting` unsent durable lines (0: send now; infinite: until
        the watcher's next tick wakes the pump); `at_once`: a stop, the probe after a
        (re)connection or a resend does not wait."""
        if waiting <= 0:
            self._unsent_since = None
            return 0.0
        if at_once or waiting >= LINGER_LINES:
            return 0.0
        if self.ticked:
            self.ticked = False
            return 0.0
        if self.flowing:
            # Lines keep coming (the watcher wakes the pump every LINGER_SECONDS, and once more
            # when they stop): one batch a tick, whatever else woke the pump (an
            # acknowledgement). No timer of the pump's own: it would wake the thread a second
            # time for each batch.
            return math.inf
        now = time.monotonic()
        if self._unsent_since is None:
            self._unsent_since = now
        return self._unsent_since + LINGER_SECONDS - now


async def watch_journal(journal: Journal, wake: asyncio.Event, linger: Linger) -> None:
    """Set `wake` when the journal makes lines durable, `linger.flowing` while they keep coming.

    Idle, it waits on a journal subscription (one wake-up for the first commit); then,
    while commits keep coming, it reads the journal's durable seq every `LINGER_SECONDS`
    instead, so a burst of commits costs the table no wake-up per commit.
    """
    seen = journal.durable_seq
    while True:
        try:
            subscription = journal.subscribe(maxsize=64)
        except JournalClosed:
            wake.set()
            return
        try:
            if journal.durable_seq <= seen:
                await subscription.next()
        except SubscriberLagged:
            pass  # many commits at once: a wake-up all the same
        except JournalClosed:
            wake.set()
            return
        finally:
            subscription.close()
        seen = await _ticks(journal, seen, wake, linger)
        # The last tick's lines may wait for a tick (an acknowledgement woke the pump after it).
        linger.flowing, linger.ticked = False, True
        wake.set()


async def _ticks(journal: Journal, seen: int, wake: asyncio.Event, linger: Linger) -> int:
    """While commits keep coming, wake the pump every `LINGER_SECONDS` (this cadence is the
    lines' linger: the pump sends at each tick); the durable seq last seen once they stop.

    Each tick is a timer callback of the loop's own that wakes the pump itself: a task asleep
    between ticks put a turn of the loop, and a take of the interpreter lock, between the timer
    and the pump."""
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[None] = loop.create_future()
    handle: asyncio.TimerHandle | None = None

    def tick() -> None:
        nonlocal seen, handle
        durable = journal.durable_seq
        if durable <= seen:
            if not stopped.done():
                stopped.set_result(None)
            return
        seen = durable
        linger.flowing = linger.ticked = True
        wake.set()
        handle = loop.call_later(LINGER_SECONDS, tick)

    tick()
    try:
        await stopped
    finally:
        if handle is not None:
            handle.cancel()
    return seen


class Window:
    """One shipper's lines past the cursor (`journal` None: the files of a stopped table)."""

    def __init__(self, journal_dir: Path, journal: Journal | None) -> None:
        self.dir = journal_dir
        self.journal = journal
        self.acked = 0
        self.inflight: OrderedDict[int, Line] = OrderedDict()
        # When each batch in flight was sent: (its last seq, monotonic time), oldest first.
        self.batches: deque[tuple[int, float]] = deque()
        self.done: set[int] = set()
        self.resend: deque[Line] = deque()
        self.tail = JournalTail(journal_dir)
        self.tail_ready = False

    def head(self) -> int | None:
        """The journal's durable seq; None without a journal (its files are read to their end)."""
        return None if self.journal is None else self.journal.durable_seq

    def requeue(self) -> None:
        """After a failure, what was in flight is sent again first (from memory, in order)."""
        pending = {line.seq: line for line in self.resend if line.seq > self.acked}
        pending.update((seq, line) for seq, line in self.inflight.items() if seq > self.acked)
        self.inflight.clear()
        self.batches.clear()
        self.done.clear()
        # Only a run without a hole is resent from memory; from the first seq missing (or if the
        # run does not end where the tail stands) the journal is read again: a line is never
        # passed over because it was in neither place.
        resend: deque[Line] = deque()
        for seq in sorted(pending):
            if seq != self.acked + 1 + len(resend):
                break
            resend.append(pending[seq])
        self.resend = resend
        if self.tail.next_seq != self.acked + 1 + len(resend):
            self.tail_ready = False  # `ensure_tail` seeks it to the line after the run

    def stored_up_to(self, seq: int) -> None:
        """The stream already holds every line up to `seq` (the cursor has moved there): none
        of them is sent again."""
        self.resend = deque(x for x in self.resend if x.seq > seq)
        if self.tail_ready and self.tail.next_seq <= seq and not self.resend:
            self.tail.position(seq + 1)

    def ensure_tail(self) -> None:
        if not self.tail_ready:
            start = self.resend[-1].seq + 1 if self.resend else self.acked + 1
            self.tail.position(start)  # the files are read only if memory cannot serve
            self.tail_ready = True

    def take(self, room: int, now: float) -> list[Line]:
        """Up to `room` lines to send, in flight from now on: those to send again first, then
        the next durable ones."""
        lines: list[Line] = []
        inflight = self.inflight
        while self.resend and len(lines) < room:
            line = self.resend.popleft()
            inflight[line.seq] = line
            lines.append(line)
        if len(lines) < room:
            for line in self._read(room - len(lines)):
                inflight[line.seq] = line
                lines.append(line)
        if lines:
            self.batches.append((lines[-1].seq, now))
        return lines

    def oldest_sent(self, now: float) -> float:
        """When the oldest line in flight was sent (`now` if none is)."""
        return self.batches[0][1] if self.batches else now

    def _read(self, limit: int) -> list[Line]:
        """Up to `limit` durable lines from where the tail stands: from the journal's memory
        (the records it made durable, their bytes and hashes) while it holds them, else from
        the files (after an outage longer than memory, or a stopped table's)."""
        tail, journal = self.tail, self.journal
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
        return tail.read(self.head(), limit)

    def collect(self) -> int:
        """Pass over every seq done in order from the cursor: the seq the cursor may move to
        (the cursor itself if none)."""
        seq = self.acked
        done, inflight = self.done, self.inflight
        while seq + 1 in done:
            seq += 1
            done.discard(seq)
            inflight.pop(seq, None)
        batches = self.batches
        while batches and batches[0][0] <= seq:
            batches.popleft()
        return seq

    def unsent(self) -> int:
        """How many durable lines wait past the tail (0 without a journal)."""
        head = self.head()
        return 0 if head is None else head - self.tail.next_seq + 1

    def caught_up(self) -> bool:
        head = self.head()
        if head is not None:
            return self.acked >= head
        return not self.tail.has_more()

    def oldest_unacked(self, lagging: Callable[[], bool]) -> Line | None:
        """The first line not acknowledged (its seq 0 when read ahead from the files), if any:
        in flight, to send again, or (`lagging`) the next durable one."""
        if self.inflight:
            return next(iter(self.inflight.values()))
        if self.resend:
            return self.resend[0]
        if self.tail_ready and (self.journal is None or lagging()):
            records = None
            if self.journal is not None:
                records = self.journal.durable_records(self.tail.next_seq, 1)
            if records:
                return Line(records[0].seq, records[0].event, records[0].line)
            if records is None:
                data = self.tail.peek()
                return Line(0, "", data) if data is not None else None
        return None
