"""The journal as the API reads it: `TableFacade.subscribe` and `journal_query` over
`daemon.journal.Journal`, so the table runtime answers both with one line each.

A console that reconnects with `after=SEQ` gets every durable event after SEQ from the files,
then the live ones, with no gap and no duplicate: the live subscription is opened *before* the
files are read (so nothing committed meanwhile is missed) and events are passed on by seq. A
subscriber that falls behind (the journal never waits for it) catches up from the files the
same way.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from daemon.journal import Journal, JournalClosed, Record, SubscriberLagged, record_dict
from daemon.journal.format import journal_files, parse_file_name

CATCH_UP_BATCH = 500
PREV_KEY = b',"prev":"'
PREV_TAIL = len(PREV_KEY) + 64 + len(b'"}\n')  # the line's last bytes, from `,"prev"` on


class FeedRecord(dict[str, Any]):
    """A journal record as the push feed reads it: `record_dict`'s keys, with the journal's own
    payload (its top level copied, nothing below it: the feed redacts into new objects and
    never changes a record, so the deep copy `record_dict` makes for its callers is not needed)
    and its JSON text made from the line's own bytes (`text`), not encoded again."""

    __slots__ = ("_hash", "_line")

    def __init__(self, record: Record) -> None:
        super().__init__(
            seq=record.seq,
            ts=record.ts,
            mono=record.mono,
            table=record.table,
            round=record.round_id,
            actor=record.actor,
            event=record.event,
            payload=dict(record.payload),
            prev=record.prev,
            hash=record.hash,
        )
        self._line, self._hash = record.line, record.hash

    def text(self) -> str:
        """The record's JSON text, as `json.dumps` of it writes it (compact, UTF-8): the line
        (its keys in the same order, `"prev"` last) with `"hash"` after it."""
        line = self._line
        if not line.endswith(b"}\n"):  # not a line as the journal writes it: encode the record
            return json.dumps(self, default=str, separators=(",", ":"), ensure_ascii=False)
        return f'{line[:-2].decode()},"hash":"{self._hash}"}}'

    def text_without_digests(self) -> str:
        """The record's JSON text without `"prev"` and `"hash"` (what a reader shown it through
        the redaction is sent when nothing in it was hidden: `visibility.without_digests`)."""
        line = self._line
        # The line ends `,"prev":"<64 hex digits>"}\n`.
        if line.endswith(b'"}\n') and line[-PREV_TAIL:].startswith(PREV_KEY):
            return line[:-PREV_TAIL].decode() + "}"
        shown = {key: value for key, value in self.items() if key not in ("hash", "prev")}
        return json.dumps(shown, default=str, separators=(",", ":"), ensure_ascii=False)


def _ts(record: Record) -> datetime | None:
    try:
        return datetime.fromisoformat(record.ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _first_seq_needed(
    journal: Journal, durable: int, *, recent_only: bool, since: datetime | None, limit: int
) -> int:
    files = [
        parsed for parsed in (parse_file_name(p.name) for p in journal_files(journal.dir)) if parsed
    ]
    start = files[0][0] if files else 1
    if recent_only and since is None:
        return max(start, durable - max(1, limit) + 1)
    if since is not None:
        # A file's events all come before the first event of the next file, whose day (UTC)
        # names it: a next file started on a day before `since`'s leaves this one wholly before.
        day = since.astimezone(UTC).date().isoformat()
        for (_first, _day), (next_first, next_day) in itertools.pairwise(files):
            if next_day < day:
                start = max(start, next_first)
    return start


def query(
    journal: Journal,
    *,
    round: str | None = None,
    event: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """`TableFacade.journal_query` over the journal's files (durable events only). It reads the
    files: call it from a worker thread, not the table's event loop.

    Only the files a query needs are read: from the oldest file still on the PC (older ones
    are archived off it, docs/operations.md), for the recent events only their last lines,
    and with `since` only the files that can hold events at or after it."""
    durable = journal.durable_seq
    start = _first_seq_needed(
        journal,
        durable,
        recent_only=round is None and event is None and until is None,
        since=since,
        limit=limit,
    )
    kept: deque[dict[str, Any]] = deque(maxlen=max(1, limit))
    if start > durable:
        return []
    for record in journal.replay(start):
        if record.seq > durable:
            break
        if round is not None and str(record.round_id) != round:
            continue
        if event is not None and not (
            record.event.startswith(event) if event.endswith(".") else record.event == event
        ):
            continue
        if since is not None or until is not None:
            when = _ts(record)
            if when is None or (since and when < since) or (until and when > until):
                continue
        kept.append(record_dict(record))
    return list(kept)


class JournalSubscription:
    """`TableFacade.subscribe(after_seq)` over a `Journal`."""

    def __init__(self, journal: Journal, after_seq: int | None, maxsize: int = 4096) -> None:
        self._journal = journal
        self._maxsize = maxsize
        self._live = journal.subscribe(maxsize)
        self._last = journal.durable_seq if after_seq is None else after_seq
        self._closed = False

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _catch_up(self) -> list[Record]:
        durable, start = self._journal.durable_seq, self._last + 1

        def read() -> list[Record]:
            out: list[Record] = []
            for record in self._journal.replay(start):
                if record.seq > durable or len(out) >= CATCH_UP_BATCH:
                    break
                out.append(record)
            return out

        return await asyncio.to_thread(read) if durable >= start else []

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        while not self._closed:
            backlog = await self._catch_up()
            for record in backlog:
                self._last = record.seq
                yield FeedRecord(record)
            if len(backlog) >= CATCH_UP_BATCH:
                continue
            try:
                async for record in self._live:
                    if record.seq <= self._last:
                        continue
                    if record.seq > self._last + 1:
                        break  # a gap (cannot happen with one journal): read it from the files
                    self._last = record.seq
                    yield FeedRecord(record)
                return  # the journal closed
            except SubscriberLagged:
                self._live = self._journal.subscribe(self._maxsize)
            except JournalClosed:
                return

    async def aclose(self) -> None:
        self._closed = True
        self._live.close()


def subscribe(journal: Journal, after_seq: int | None = None) -> JournalSubscription:
    return JournalSubscription(journal, after_seq)
