"""The journal: the table's append-only, hash-chained, durable record and its source of truth.

Every accepted action, device event, violation and settlement is appended here as one JSON line
(format and hash rule: `daemon.journal.format`, docs/journal.md). An append with
``commit=True`` returns only once that line and every line before it are on disk (``fdatasync``
of the file; the directory too when a file is created); other appends are buffered in memory and
written, in order, at the next commit point. Appends are thread-safe: the asyncio loop and the
driver threads may append at once, and concurrent commits share one ``fdatasync`` (group
commit). ``append_async`` stages the line on the loop and waits for its ``fdatasync`` in the
journal's commit thread (`committer`), so a slow disk never blocks the loop. A subscriber
receives each event once it is durable, from a bounded queue that never blocks the table.

Opening a journal checks its chain first and resumes it from the last complete line, after
cutting off a torn last line left by a power loss, which it journals (`recovery`); the writer
anchors what it made durable so the next open checks only what changed since (`anchor`).
"""

from __future__ import annotations

import asyncio
import fcntl
import grp
import itertools
import os
import pwd
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any, Self

from daemon import __version__
from daemon.config import JournalConfig
from daemon.journal.anchor import (
    ANCHOR_EVERY,
    Anchor,
    FileStamp,
    load_key,
    stamp_files,
    write_anchor,
)
from daemon.journal.committer import CommitThread
from daemon.journal.format import (
    EVENT_PATTERN,
    GENESIS,
    JournalError,
    Record,
    file_name,
    format_line,
    fsync_dir,
    iso_utc,
    journal_files,
    json_number,
    json_round,
    json_value,
    line_hash,
    make_record,
    parse_file_name,
)
from daemon.journal.private import FOLDER_MODE, line_file_mode, make_private, share
from daemon.journal.reader import TornTail, replay
from daemon.journal.recovery import check_chain, resume
from daemon.journal.subscription import JournalClosed, Subscription
from daemon.logging import get_logger

LOCK_NAME = ".journal.lock"
# Non-commit lines are written to the OS once this many bytes wait, even before a commit point.
BUFFER_BYTES = 64 * 1024
# The last events appended are kept in memory, so a replay from a recent seq (a subscriber
# catching up, a console reconnecting) reads no file.
RECENT_RECORDS = 4096
# Actors remembered with their JSON; more (operators come and go) start the memory afresh.
NAMES_KEPT = 1024
# Wall minus monotonic time moving by more than this between two appends is a clock step.
CLOCK_STEP_SECONDS = 1.0


def access_problem(folder: Path, exc: OSError) -> str:
    """A journal folder this process may not use, said with the folder, the user and what they
    would need (not a bare `[Errno 13]`)."""
    user = _user_name(os.geteuid())
    target = Path(exc.filename) if exc.filename else folder
    # The nearest folder that exists is the one whose permissions refused us.
    where = target if target.is_dir() else target.parent
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        st = where.stat()
        mode = stat.filemode(st.st_mode)
        owner = f"{_user_name(st.st_uid)}:{_group_name(st.st_gid)}, mode {mode}"
    except OSError:
        owner = "its owner unknown"
    return (
        f"journal folder {folder}: user {user} (uid {os.geteuid()}) may not write {target} "
        f"({where} belongs to {owner}); run as its owner or give {user} write access to it"
    )


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


class JournalLocked(JournalError):
    """Another process has this journal open for writing."""


class JournalFailed(JournalError):
    """A write or fsync failed: nothing more can be made durable; the table must stop."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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
        # The events and actors seen so far, with their JSON (the line's text for them).
        self._known_events: dict[str, str] = {"clock.wall_stepped": '"clock.wall_stepped"'}
        self._actors: dict[str, str] = {}
        self._table_json = json_value(table_id)
        self._lock_fd = -1
        self._fd = -1
        self._path: Path | None = None
        self._day = ""
        self._size = 0
        self._retired: list[int] = []
        self._fresh_file = False  # the next line starts a new file (`share`)
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._next_seq = 1
        self._prev = GENESIS
        self._written_seq = 0
        self._durable_seq = 0
        self._syncs = 0
        self._undelivered: deque[Record] = deque()
        self._recent: deque[Record] = deque(maxlen=RECENT_RECORDS)
        self._subscribers: tuple[Subscription, ...] = ()
        self._failure: BaseException | None = None
        self._closed = False
        self._clock_offset: float | None = None
        self._last_ts: str | None = None
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
        created = not self.dir.exists()
        self.dir.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        if created and self._durable:
            fsync_dir(self.dir.parent)
        self._lock_fd = os.open(self.dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalLocked(f"{self.dir}: the journal is open in another process") from None
        tightened = make_private(self.dir)  # hidden cards: the daemon's user's alone
        if tightened:
            get_logger("daemon.journal").warning("journal.tightened", changed=tightened)
        self._key = load_key(self.dir, create=True)
        files = journal_files(self.dir)
        check_chain(self.dir, self._key, files)
        point = resume(self.dir, files, self.table_id, durable=self._durable)
        self.torn = point.torn
        self._next_seq, self._prev = point.last_seq + 1, point.head
        # A line file that was open to others (0644) may be held open by one of them: its
        # descriptor reads whatever is appended after the tightening. So new lines then go to a
        # fresh segment (the first append rotates), made private when created.
        loosened = {change.split(": ", 1)[0] for change in tightened}
        fresh = bool(files) and files[-1].name in loosened
        if fresh and files[-1].stat().st_size == 0:
            # An empty one holds no line, but its name is the one the fresh segment takes: it
            # is replaced (a new file, so a descriptor held on the old one reads nothing).
            files.pop().unlink()
            if self._durable:
                fsync_dir(self.dir)
        if fresh and files:
            last_file = files[-1]
            self._path, self._day = last_file, (parse_file_name(last_file.name) or (0, ""))[1]
        elif files:
            last_file = files[-1]
            flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(last_file, flags)
            self._path, self._day = last_file, (parse_file_name(last_file.name) or (0, ""))[1]
            self._size = last_file.stat().st_size
        self._written_seq = self._durable_seq = self._next_seq - 1
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
            held = f"{self._path.name}: group " if self._path is not None else None
            if held is not None and any(change.startswith(held) for change in changed):
                self._fresh_file = True
        return changed

    def anchor(self) -> None:
        """Make the chain durable and anchor it: the next open checks only what changed since.

        The writer anchors at open, at each rotation, every `ANCHOR_EVERY` lines and at
        close; a checkpoint anchors too, so a restart walks only the lines after it.
        """
        with self._sync_lock, self._lock:
            if self._closed or self._failure is not None or self._fd < 0:
                return
            self._anchor_locked()

    def _anchor_locked(self) -> None:
        # Caller holds self._lock; no line is staged past what the anchor covers.
        self._write_pending()
        try:
            if self._durable and self._durable_seq < self._written_seq:
                self.fdatasync(self._fd)
            current = self._path.name if self._path is not None else ""
            # A complete file once stamped keeps its stamp, so a later write to it by anyone
            # else is never vouched for.
            stamps = stamp_files(journal_files(self.dir), self._stamps)
            head = Anchor(self._written_seq, self._prev, stamps)
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
        if event not in self._known_events:
            if not EVENT_PATTERN.match(event):
                raise ValueError(
                    f"journal event {event!r} is not a dotted fact like shoe.card_read"
                )
            self._known_events[event] = json_value(event)
        if not actor:
            raise ValueError("journal event needs an actor")
        data = dict(payload) if payload else {}
        with self._lock:
            if self._failure is not None:
                raise JournalFailed(f"journal unusable after: {self._failure!r}")
            if self._closed or self._lock_fd < 0:
                raise JournalClosed("journal closed (or never opened: use Journal.open)")
            wall = self._wall()
            mono = self._monotonic()
            offset = wall - mono
            last_offset, self._clock_offset = self._clock_offset, offset
            if last_offset is not None and abs(offset - last_offset) > CLOCK_STEP_SECONDS:
                # R8: a wall clock set or stepped (NTP, an operator) is on the record, between
                # the last event at the old time and this one at the new.
                step = {"step_seconds": round(offset - last_offset, 6), "before": self._last_ts}
                self._stage_locked("clock.wall_stepped", "journal", None, step, wall, mono)
            record = self._stage_locked(event, actor, round_id, data, wall, mono)
            if commit or self._pending_bytes >= BUFFER_BYTES:
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
        seq = self._next_seq
        ts = iso_utc(wall)
        actor_json = self._actors.get(actor)
        if actor_json is None:
            if len(self._actors) >= NAMES_KEPT:
                self._actors.clear()
            actor_json = self._actors[actor] = json_value(actor)
        # One pass: the parts that repeat (table, actor, event) are JSON already.
        line = format_line(
            seq,
            ts,
            json_number(mono),
            self._table_json,
            json_round(round_id),
            actor_json,
            self._known_events[event],
            json_value(data),
            self._prev,
        )
        day = ts[:10]
        if (
            self._fd < 0
            or self._fresh_file
            or (self.config.rotate_daily and day != self._day)
            or (self._size > 0 and self._size + len(line) > self.config.rotate_bytes)
        ):
            self._rotate(seq, day)
        digest = line_hash(line)
        record = make_record(
            seq, ts, mono, self.table_id, round_id, actor, event, MappingProxyType(data),
            self._prev, digest, line,
        )  # fmt: skip
        self._pending.append(line)
        self._pending_bytes += len(line)
        self._size += len(line)
        self._next_seq = seq + 1
        self._prev = digest
        self._last_ts = ts
        self._recent.append(record)
        if self._subscribers:
            self._undelivered.append(record)
        return record

    def _write_pending(self) -> None:
        # Caller holds self._lock.
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        try:
            _write_all(self._fd, data)
        except OSError as exc:
            self._fail(exc)
            raise JournalFailed(f"journal write failed: {exc}") from exc
        self._pending.clear()
        self._pending_bytes = 0
        self._written_seq = self._next_seq - 1

    def _rotate(self, first_seq: int, day: str) -> None:
        # Caller holds self._lock. The old file is complete and durable before the new exists,
        # so only the newest file can ever end in a torn line.
        path = self.dir / file_name(first_seq, day)
        try:
            if self._fd >= 0:
                self._write_pending()
                if self._durable:
                    self.fdatasync(self._fd)
                # A sync in flight may still hold this descriptor; the next sync closes it.
                self._retired.append(self._fd)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(path, flags, line_file_mode(self.dir))
            if self._durable:
                fsync_dir(self.dir)
        except OSError as exc:
            self._fail(exc)
            raise JournalFailed(f"journal rotation to {path.name} failed: {exc}") from exc
        old = self._path
        self._path, self._day, self._size = path, day, 0
        self._fresh_file = False
        self._anchor_locked()  # the old file is complete: stamped once and for all
        if old is not None:
            get_logger("daemon.journal").info(
                "journal.rotated", old=old.name, new=path.name, first_seq=first_seq
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
                fd = self._fd
                retired, self._retired = self._retired, []
                deliver: list[Record] = []
                while self._undelivered and self._undelivered[0].seq <= upto:
                    deliver.append(self._undelivered.popleft())
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
                for subscription in self._subscribers:
                    subscription._offer(deliver)
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
            last = self._next_seq - 1
        self._sync(last)

    # -- reading --------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The seq of the last event appended (durable or not)."""
        return self._next_seq - 1

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
        return self._prev

    def replay(self, from_seq: int = 1) -> Iterator[Record]:
        """Every event from `from_seq` in order across files, the chain checked on the way.

        It includes the events still buffered. Recent events come from memory, older ones from
        the files (read lazily: call it from a worker thread for a long replay).
        """
        with self._lock:
            if self._fd >= 0:
                self._write_pending()
            last = self._next_seq - 1
            if self._recent and from_seq >= self._recent[0].seq:
                start = from_seq - self._recent[0].seq
                return iter(list(itertools.islice(self._recent, start, None)))
        return self._replay_files(from_seq, last)

    def durable_records(self, from_seq: int, limit: int) -> list[Record] | None:
        """Up to `limit` durable records from `from_seq` on, from memory (the last
        `RECENT_RECORDS` appended), none past `durable_seq`: what a feed ships without reading
        a file. None when `from_seq` is older than memory holds (read the files then)."""
        upto = self._durable_seq
        if from_seq > upto or limit < 1:
            return []
        recent = self._recent
        with self._lock:
            if not recent or from_seq < recent[0].seq:
                return None
            # Taken from the newest end: a feed that keeps up asks for the last few.
            back = recent[-1].seq - from_seq + 1
            taken = list(itertools.islice(reversed(recent), back))
        taken.reverse()
        return taken[: min(limit, upto - from_seq + 1)]

    def _replay_files(self, from_seq: int, last: int) -> Iterator[Record]:
        for record in replay(self.dir, from_seq=from_seq):
            if record.seq > last:
                return
            yield record

    # -- subscribing ----------------------------------------------------------------------

    def subscribe(self, maxsize: int = 4096) -> Subscription:
        """A feed of every event that becomes durable from now on (see `Subscription`)."""
        subscription = Subscription(self, maxsize)
        with self._lock:
            if self._closed:
                raise JournalClosed("journal closed")
            self._subscribers = (*self._subscribers, subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers = tuple(s for s in self._subscribers if s is not subscription)
            if not self._subscribers:
                self._undelivered.clear()

    # -- closing --------------------------------------------------------------------------

    def close(self) -> None:
        """Flush and make durable what is buffered, close the files and subscriptions."""
        with self._lock:
            if self._closed:
                return
            # Refuse new appends first, so nothing slips in between the flush and the close.
            self._closed = True
            last = self._next_seq - 1
            subscriptions = self._subscribers
        self._committer.close()  # its waiters served first
        try:
            if self._failure is None and self._fd >= 0:
                self._sync(last)
        finally:
            for subscription in subscriptions:
                subscription.close()
            with self._sync_lock, self._lock:
                try:
                    if self._failure is None and self._fd >= 0:
                        self._anchor_locked()
                finally:
                    self._release()

    def _release(self) -> None:
        for fd in (*self._retired, self._fd, self._lock_fd):
            if fd >= 0:
                os.close(fd)
        self._retired, self._fd, self._lock_fd = [], -1, -1

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
