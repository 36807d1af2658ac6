"""The shipper's health: its status, what it logs, and its own events in the journal.

`FeedHealth` keeps the `FeedStatus` that /metrics, /api/health and `tabled status` read and says
each change of health once: `feed.degraded` when shipping stops working (with the lag then),
`feed.recovered` when it works again, `feed.refused` for a line the broker will never take. Its
events go to the journal (and so to the stream too), each at most every
`JOURNAL_EVENT_SECONDS`; every one is logged. It also keeps the lag in seconds: the time of
the oldest line not yet acknowledged (`update_oldest`).
"""

from __future__ import annotations

import contextlib
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from daemon.journal import JournalError
from daemon.journal.format import JournalCorrupt
from daemon.shipper.broker import FeedStatus
from daemon.shipper.tail import Line, line_ts
from daemon.shipper.window import Window

if TYPE_CHECKING:
    from daemon.journal import Journal

JOURNAL_EVENT_SECONDS = 30.0  # feed.degraded / feed.refused at most this often


def _wall(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


class FeedHealth:
    """One shipper's status and the events it journals (`journal` None: a stopped table's)."""

    def __init__(self, status: FeedStatus, journal: Journal | None, log: Any) -> None:
        self.status = status
        self.journal = journal
        self.log = log
        self._degraded_journaled = False
        self._last_journaled: dict[str, float] = {}
        self._refused_unjournaled = 0
        self._oldest_of = -1  # the seq `oldest_unacked_wall` was last read from

    def current(self) -> FeedStatus:
        """The status, its head the journal's durable seq now."""
        if self.journal is not None:
            self.status.head = self.journal.durable_seq
        return self.status

    def update_oldest(self, window: Window) -> None:
        """`oldest_unacked_wall` (and the lag in seconds): the time of the first line not
        acknowledged, read once a line; without a journal, the head as far as the files go."""
        status = self.status
        with contextlib.suppress(JournalCorrupt, OSError):
            window.ensure_tail()
        first = window.oldest_unacked(lambda: self.current().lag_lines > 0)
        if first is None:
            status.oldest_unacked_wall = None
            self._oldest_of = -1
        elif first.seq != self._oldest_of or not first.seq:  # read once a line
            self._oldest_of = first.seq
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                status.oldest_unacked_wall = _wall(line_ts(first.data))
        if self.journal is None:
            status.head = max(status.head, window.acked, window.tail.next_seq - 1)

    def may_journal(self, event: str) -> bool:
        now = time.monotonic()
        last = self._last_journaled.get(event)
        if last is not None and now - last < JOURNAL_EVENT_SECONDS:
            return False
        self._last_journaled[event] = now
        return True

    def journal_event(self, event: str, payload: dict[str, Any]) -> None:
        """Journal one of the feed's own events (made durable); a journal that cannot take
        it is not the feed's failure."""
        if self.journal is None:
            return
        with contextlib.suppress(JournalError, ValueError, OSError):
            self.journal.append(event, actor="feed", payload=payload, commit=True)

    def lag(self, cursor: int) -> dict[str, Any]:
        status = self.current()
        return {
            "cursor": cursor,
            "lag_lines": status.lag_lines,
            "lag_seconds": round(status.lag_seconds(), 3),
        }

    def degraded(self, reason: str, cursor: int) -> None:
        """Shipping failed: the reason kept; once degraded, logged and journaled (rate-limited).
        The caller brings `oldest_unacked_wall` up to date first."""
        status = self.status
        status.last_error = reason
        if status.state != "degraded":
            status.state = "degraded"
            status.degraded_since = time.time()
            self.log.warning("feed.degraded", reason=reason, **self.lag(cursor))
            if self.may_journal("feed.degraded"):
                self._degraded_journaled = True
                self.journal_event("feed.degraded", {"reason": reason, **self.lag(cursor)})

    def recovered(self, cursor: int) -> None:
        """Shipping works (again): the outage logged, and journaled if its start was."""
        status = self.status
        if status.state == "degraded":
            outage = time.time() - (status.degraded_since or time.time())
            self.log.info("feed.recovered", outage_seconds=round(outage, 3), **self.lag(cursor))
            if self._degraded_journaled:
                self._degraded_journaled = False
                self.journal_event(
                    "feed.recovered", {"outage_seconds": round(outage, 3), **self.lag(cursor)}
                )
        status.state = "shipping"
        status.last_error = None
        status.degraded_since = None

    def refused(self, line: Line, reason: str) -> None:
        """A line the broker will never take: counted, logged, journaled (not silently); the
        caller passes over it."""
        self.status.refused_total += 1
        self.log.error("feed.refused", seq=line.seq, line_event=line.event, reason=reason)
        if self.may_journal("feed.refused"):
            self.journal_event(
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
