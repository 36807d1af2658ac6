"""The journal: the table's append-only, hash-chained, durable record and its source of truth.

Every accepted action, device event, violation and settlement is appended here as one JSON line
(format and hash rule: `daemon.journal.format`, docs/journal.md). An append with
``commit=True`` returns only once that line and every line before it are on disk (``fdatasync``
of the file; the directory too when a file is created); other appends are buffered in memory and
written, in order, at the next commit point. Appends are thread-safe: the asyncio loop and the
driver threads may append at once, and concurrent commits share one ``fdatasync`` (group
commit). ``append_async`` stages the line on the loop and waits for its ``fdatasync`` in the
journal's commit thread (`committer`), so a slow disk never blocks the loop. A subscriber
receives each event once it is durable, from a bounded queue that never blocks the table; the
last records stay in memory for the readers (`live`). Each line is made by the chain (`chain`).

Opening a journal checks its chain first and resumes it from the last complete line, after
cutting off a torn last line left by a power loss, which it journals (`recovery`); the writer
anchors what it made durable so the next open checks only what changed since (`anchor`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from daemon import __version__
from daemon.config import JournalConfig
from daemon.journal.anchor import ANCHOR_EVERY, Anchor, FileStamp, stamp_files, write_anchor
from daemon.journal.chain import Chain
from daemon.journal.committer import CommitThread
from daemon.journal.format import JournalError, Record, file_name, journal_files
from daemon.journal.live import LiveRecords
from daemon.journal.private import access_problem, share
from daemon.journal.reader import TornTail, replay
from daemon.journal.recovery import open_for_writing
from daemon.journal.segment import BUFFER_BYTES, Segment
from daemon.journal.subscription import JournalClosed, Subscription
from daemon.logging import get_logger


class JournalFailed(JournalError):
    """A write or fsync failed: nothing more can be made durable; the table must stop."""


class Journal:
    """An open journal directory, appended to by this process only (an exclusive lock)."""

    # How a file is made durable; a benchmark wraps it to play a slow disk.
    fdatasync: Callable[[int], None] = staticmethod(os.fdatasync)

    def __init__(
        self,
        config: JournalConfig,
        table_id: str,
        *,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        on_sync: Callable[[float], None] | None = None,
    ) -> None:
        if config.durability not in ("fsync", "none"):
            raise ValueError(f"journal durability {config.durability!r}: 'fsync' or 'none'")
        self.config = config
        self.dir = Path(config.dir)
        self.table_id = table_id
        self.torn: TornTail | None = None
        self._wall = wall
        self._monotonic = monotonic
        self._on_sync = on_sync
        self._durable = config.durability == "fsync"
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._chain = Chain(table_id)
        self._lock_fd = -1
        self._file = Segment(self.dir, durable=self._durable)
        self._written_seq = 0
        self._durable_seq = 0
        self._syncs = 0
        self._live = LiveRecords(self._lock)
        self._failure: BaseException | None = None
        self._closed = False
        self._key = b""
        self._anchored_seq = 0
        self._stamps: dict[str, FileStamp] = {}
        self._committer = CommitThread(self._sync, name=f"journal-commit-{table_id}")

    # -- opening and recovery -------------------------------------------------------------

    @classmethod
    def open(
        cls,
        config: JournalConfig,
        table_id: str,
        *,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        on_sync: Callable[[float], None] | None = None,
    ) -> Journal:
        """Open (or create) the journal, resume its chain, and journal `journal.opened`.

        A torn last line is cut off first and journaled as `journal.torn_tail_truncated`
        (also left in `journal.torn`). Raises JournalLocked if another process holds it and
        JournalCorrupt if the last complete line is not a journal event. `on_sync(seconds)` is
        told how long each fdatasync took (for the fsync-latency metric); it runs under the
        sync lock, one call at a time, must be quick and must not append to the journal.
        """
        journal = cls(config, table_id, wall=wall, monotonic=monotonic, on_sync=on_sync)
        try:
            journal._start()
        except PermissionError as exc:
            journal._release()
            raise JournalError(access_problem(journal.dir, exc)) from None
        except BaseException:
            journal._release()
            raise
        return journal

    def _start(self) -> None:
        opening = open_for_writing(self.dir, self.table_id, durable=self._durable)
        self._lock_fd, self._key = opening.lock_fd, opening.key
        files, point, tightened = opening.files, opening.point, opening.tightened
        self.torn = point.torn
        self._chain = Chain(self.table_id, point.last_seq + 1, point.head)
        if files:  # when fresh, the first append rotates to a new file
            self._file.resume(files[-1], append=not opening.fresh)
        self._written_seq = self._durable_seq = point.last_seq
        if self.torn is not None:
            self.append(
                "journal.torn_tail_truncated",
                actor="journal",
                payload=self.torn.payload(),
                commit=False,
            )
        self.append(
            "journal.opened",
            actor="journal",
            payload={
                "resumed_after_seq": point.last_seq,
                "files": len(files),
                "durability": self.config.durability,
                "pid": os.getpid(),
                "version": __version__,
                **({"tightened": tightened} if tightened else {}),
            },
            commit=True,
        )
        self.anchor()

    def share(self, gid: int) -> list[str]:
        """Share the journal's lines with group `gid`, read-only (`private.share`); what
        changed. When the file being appended to changes group, a member of its old group
        may hold it open: what is staged is written first, and the next line goes to a new
        file, so that descriptor reads nothing written after the change."""
        with self._lock:
            self._write_pending()
            changed = share(self.dir, gid)
            path = self._file.path
            held = f"{path.name}: group " if path is not None else None
            if held is not None and any(change.startswith(held) for change in changed):
                self._file.fresh = True
        return changed

    def anchor(self) -> None:
        """Make the chain durable and anchor it: the next open checks only what changed since.

        The writer anchors at open, at each rotation, every `ANCHOR_EVERY` lines and at
        close; a checkpoint anchors too, so a restart walks only the lines after it.
        """
        with self._sync_lock, self._lock:
            if self._closed or self._failure is not None or self._file.fd < 0:
                return
            self._anchor_locked()

    def _anchor_locked(self) -> None:
        # Caller holds self._lock; no line is staged past what the anchor covers.
        self._write_pending()
        try:
            if self._durable and self._durable_seq < self._written_seq:
                self.fdatasync(self._file.fd)
            current = self._file.path.name if self._file.path is not None else ""
            # A complete file once stamped keeps its stamp, so a later write to it by anyone
            # else is never vouched for.
            stamps = stamp_files(journal_files(self.dir), self._stamps)
            head = Anchor(self._written_seq, self._chain.prev, stamps)
            write_anchor(self.dir, self._key, head, durable=self._durable)
        except OSError as exc:
            self._fail(exc)
            raise JournalFailed(f"journal anchor failed: {exc}") from exc
        # The file being appended to is stamped afresh each time; the others never change.
        self._stamps = {stamp.name: stamp for stamp in stamps if stamp.name != current}
        self._anchored_seq = self._written_seq

    # -- appending ------------------------------------------------------------------------

    def append(
        self,
        event: str,
        *,
        actor: str,
        round_id: str | int | None = None,
        payload: Mapping[str, Any] | None = None,
        commit: bool,
    ) -> Record:
        """Journal one event; with `commit`, return only once it (and all before it) is durable.

        `event` is a dotted fact (`shoe.card_read`). Raises TypeError/ValueError for a payload
        that is not JSON (nothing is journaled then), JournalFailed after an I/O failure and
        JournalClosed after `close()`.
        """
        record = self.stage(event, actor, round_id, payload, commit)
        if commit:
            self._sync(record.seq)
        return record

    async def append_async(
        self,
        event: str,
        *,
        actor: str,
        round_id: str | int | None = None,
        payload: Mapping[str, Any] | None = None,
        commit: bool,
    ) -> Record:
        """`append` for the asyncio loop: the line is staged at once (its seq taken, in the
        order of the calls), and its fdatasync waited for in the commit thread, off the loop."""
        record = self.stage(event, actor, round_id, payload, commit)
        if commit:
            await self.commit_async(record.seq)
        return record

    def commit(self, seq: int) -> None:
        """A commit point for lines appended with ``commit=False``: returns once every line up
        to `seq` is durable (written, and with durability fsync on disk)."""
        self._sync(seq)

    async def commit_async(self, seq: int) -> None:
        """`commit` for the asyncio loop: the lines are written to the OS on the loop, their
        fdatasync waited for in the commit thread, off the loop. Lines staged while a sync is in
        flight share the next one (group commit)."""
        if self._durable_seq >= seq:
            return
        if self._durable:
            with self._lock:
                if self._failure is not None:
                    raise JournalFailed(f"journal unusable after: {self._failure!r}")
                if self._written_seq < seq:
                    self._write_pending()
            await self._committer.wait(seq)
        else:
            self._sync(seq)  # a write(2) to the page cache: no disk wait
            # Still a suspension point, as a commit always was: the table's device
            # handlers let the other tasks run between an append and its return.
            await asyncio.sleep(0)

    def stage(
        self,
        event: str,
        actor: str,
        round_id: str | int | None,
        payload: Mapping[str, Any] | None,
        commit: bool,
    ) -> Record:
        """`append` without its wait, its arguments in order (the table's hot path: the lines of
        an input are staged with ``commit`` False, then made durable by one commit point). With
        ``commit`` the lines are written to the OS now; durable only after `commit`."""
        chain = self._chain
        if event not in chain.events_json or not actor:  # `check`'s own test first: a call less
            chain.check(event, actor)
        data = dict(payload) if payload else {}
        with self._lock:
            if self._failure is not None:
                raise JournalFailed(f"journal unusable after: {self._failure!r}")
            if self._closed or self._lock_fd < 0:
                raise JournalClosed("journal closed (or never opened: use Journal.open)")
            wall = self._wall()
            mono = self._monotonic()
            step = chain.clock_step(wall, mono)
            if step is not None:
                # R8: a wall clock set or stepped (NTP, an operator) is on the record, between
                # the last event at the old time and this one at the new.
                self._stage_locked("clock.wall_stepped", "journal", None, step, wall, mono)
            # `_stage_locked`, inline (the line of every input and event)
            record = chain.line(event, actor, round_id, data, wall, mono)
            file, line, day = self._file, record.line, record.ts[:10]
            if file.full_for(line, day, self.config):
                self._rotate(record.seq, day)
            file.add(line)
            chain.advance(record)
            self._live.add(record)
            if commit or file.pending_bytes >= BUFFER_BYTES:
                self._write_pending()
            return record

    def _stage_locked(  # noqa: PLR0917 - once a line: positional
        self,
        event: str,
        actor: str,
        round_id: str | int | None,
        data: dict[str, Any],
        wall: float,
        mono: float,
    ) -> Record:
        record = self._chain.line(event, actor, round_id, data, wall, mono)
        day = record.ts[:10]
        if self._file.full_for(record.line, day, self.config):
            self._rotate(record.seq, day)
        self._file.add(record.line)
        self._chain.advance(record)
        self._live.add(record)
        return record

    def _write_pending(self) -> None:
        # Caller holds self._lock.
        try:
            if not self._file.write():
                return
        except OSError as exc:
            self._fail(exc)
            raise JournalFailed(f"journal write failed: {exc}") from exc
        self._written_seq = self._chain.next_seq - 1

    def _rotate(self, first_seq: int, day: str) -> None:
        # Caller holds self._lock. The old file is complete and durable before the new exists,
        # so only the newest file can ever end in a torn line.
        if self._file.fd >= 0:
            self._write_pending()
        try:
            old = self._file.rotate(first_seq, day, self.fdatasync)
        except OSError as exc:
            self._fail(exc)
            name = file_name(first_seq, day)
            raise JournalFailed(f"journal rotation to {name} failed: {exc}") from exc
        self._anchor_locked()  # the old file is complete: stamped once and for all
        if old is not None:
            get_logger("daemon.journal").info(
                "journal.rotated", old=old.name, new=file_name(first_seq, day), first_seq=first_seq
            )

    def _sync(self, seq: int) -> None:
        """Make everything up to `seq` durable; one fdatasync serves every waiting committer."""
        with self._sync_lock:
            if self._durable_seq >= seq:
                return
            with self._lock:
                if self._failure is not None:
                    raise JournalFailed(f"journal unusable after: {self._failure!r}")
                if self._written_seq < seq:
                    self._write_pending()
                upto = self._written_seq
                fd = self._file.fd
                retired = self._file.take_retired()
                deliver = self._live.due(upto)
            for old_fd in retired:
                os.close(old_fd)
            if self._durable:
                try:
                    started = time.perf_counter()
                    self.fdatasync(fd)
                    if self._on_sync is not None:
                        self._on_sync(time.perf_counter() - started)
                except OSError as exc:
                    # After a failed fsync the kernel may have dropped the dirty pages: a retry
                    # could "succeed" without the data, so the journal stops here for good.
                    with self._lock:
                        self._fail(exc)
                    raise JournalFailed(f"journal fsync failed: {exc}") from exc
            self._durable_seq = upto
            self._syncs += 1
            if deliver:
                self._live.deliver(deliver)
        if self._durable_seq - self._anchored_seq >= ANCHOR_EVERY:
            self.anchor()

    def _fail(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
            get_logger("daemon.journal").critical(
                "journal.failed", error=repr(exc), dir=str(self.dir)
            )

    def flush(self) -> None:
        """Make every event appended so far durable (a commit point without an event)."""
        with self._lock:
            last = self._chain.next_seq - 1
        self._sync(last)

    # -- reading --------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The seq of the last event appended (durable or not)."""
        return self._chain.next_seq - 1

    @property
    def durable_seq(self) -> int:
        """The seq up to which every event is durable (acknowledged)."""
        return self._durable_seq

    @property
    def syncs(self) -> int:
        """How many commit points reached the disk: fewer than commits when they were grouped."""
        return self._syncs

    @property
    def head(self) -> str:
        """The hash of the last line appended: the `prev` of the next one."""
        return self._chain.prev

    def replay(self, from_seq: int = 1) -> Iterator[Record]:
        """Every event from `from_seq` in order across files, the chain checked on the way.

        It includes the events still buffered. Recent events come from memory, older ones from
        the files (read lazily: call it from a worker thread for a long replay).
        """
        with self._lock:
            if self._file.fd >= 0:
                self._write_pending()
            last = self._chain.next_seq - 1
            recent = self._live.since(from_seq)
        if recent is not None:
            return iter(recent)
        return self._replay_files(from_seq, last)

    def durable_records(self, from_seq: int, limit: int) -> list[Record] | None:
        """Up to `limit` durable records from `from_seq` on, from memory (the last
        `RECENT_RECORDS` appended), none past `durable_seq`: what a feed ships without reading
        a file. None when `from_seq` is older than memory holds (read the files then)."""
        return self._live.durable(from_seq, limit, self._durable_seq)

    def _replay_files(self, from_seq: int, last: int) -> Iterator[Record]:
        for record in replay(self.dir, from_seq=from_seq):
            if record.seq > last:
                return
            yield record

    # -- subscribing ----------------------------------------------------------------------

    def subscribe(self, maxsize: int = 4096) -> Subscription:
        """A feed of every event that becomes durable from now on (see `Subscription`)."""
        subscription = Subscription(self._live.drop, maxsize)
        with self._lock:
            if self._closed:
                raise JournalClosed("journal closed")
            self._live.join(subscription)
        return subscription

    # -- closing --------------------------------------------------------------------------

    def close(self) -> None:
        """Flush and make durable what is buffered, close the files and subscriptions."""
        with self._lock:
            if self._closed:
                return
            # Refuse new appends first, so nothing slips in between the flush and the close.
            self._closed = True
            last = self._chain.next_seq - 1
            subscriptions = self._live.subscribers
        self._committer.close()  # its waiters served first
        try:
            if self._failure is None and self._file.fd >= 0:
                self._sync(last)
        finally:
            for subscription in subscriptions:
                subscription.close()
            with self._sync_lock, self._lock:
                try:
                    if self._failure is None and self._file.fd >= 0:
                        self._anchor_locked()
                finally:
                    self._release()

    def _release(self) -> None:
        self._file.release()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
        self._lock_fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
