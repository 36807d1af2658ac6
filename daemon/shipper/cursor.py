"""The shipper's cursor: the last seq JetStream acknowledged, kept beside the journal.

``<journal dir>/feed.cursor`` is one JSON object, ``{"stream": "TABLED", "seq": 1234,
"updated": "...Z"}``, replaced atomically (a temporary file, fsync, rename, fsync of the folder),
so after any crash it is either the old cursor or the new one. It only ever names a seq that
JetStream acknowledged, so it may lag (the lines after it are sent again and JetStream's
de-duplication drops them) but never leads. Every journal file whose last seq is at or below it
has shipped and may be archived (docs/operations.md). A running shipper replaces it through a
`CursorWriter`: off its loop, at most every `CURSOR_WRITE_SECONDS`, never backwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from daemon.journal.format import iso_utc

CURSOR_NAME = "feed.cursor"
LOCK_NAME = ".feed.lock"
# The cursor file is replaced at most this often (two fsyncs each); after a crash the lines
# acknowledged since are sent again and dropped by JetStream (or skipped by the reconcile).
CURSOR_WRITE_SECONDS = 1.0


class ShipperLocked(Exception):
    """Another shipper (a running daemon, or `tabled feed ship`) ships this journal."""


@dataclass(frozen=True)
class Cursor:
    stream: str
    seq: int
    updated: str = ""


def read_cursor(directory: Path, stream: str) -> Cursor:
    """The cursor for `stream`; seq 0 if there is none or it was kept for another stream."""
    path = directory / CURSOR_NAME
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Cursor(stream, 0)
    except (OSError, ValueError):
        return Cursor(stream, 0)  # unreadable: start over; the stream's last message decides
    seq = raw.get("seq") if isinstance(raw, dict) else None
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return Cursor(stream, 0)
    if raw.get("stream") != stream:
        return Cursor(stream, 0)
    return Cursor(stream, seq, str(raw.get("updated", "")))


def write_cursor(directory: Path, stream: str, seq: int) -> Cursor:
    cursor = Cursor(stream, seq, iso_utc(time.time()))
    body = json.dumps({"stream": stream, "seq": seq, "updated": cursor.updated}) + "\n"
    tmp = directory / f".{CURSOR_NAME}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        os.write(fd, body.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, directory / CURSOR_NAME)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return cursor


class CursorWriter:
    """A shipper's cursor file, written in a worker thread so its loop never waits on the disk.

    `written` is the seq the file holds. `soon` writes the seq acknowledged by then, at most
    every `CURSOR_WRITE_SECONDS`; `now` writes it at once (a stop). A write that fails is told
    to `on_error` (the shipper is degraded; the next write tries again).
    """

    def __init__(
        self,
        directory: Path,
        stream: str,
        acked: Callable[[], int],
        on_error: Callable[[str], None],
    ) -> None:
        self.dir = directory
        self.stream = stream
        self.written = 0
        self._acked = acked
        self._on_error = on_error
        self._writing: asyncio.Task[None] | None = None
        self._last_write = 0.0
        self._lock = threading.Lock()

    def soon(self) -> None:
        if self._writing is not None and not self._writing.done():
            return
        wait = self._last_write + CURSOR_WRITE_SECONDS - time.monotonic()
        self._writing = asyncio.ensure_future(self._write_after(max(0.0, wait)))

    async def _write_after(self, wait: float) -> None:
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_write = time.monotonic()
        await self._write(self._acked())

    async def _write(self, seq: int) -> None:
        try:
            await asyncio.to_thread(self._write_file, seq)
        except OSError as exc:
            self._on_error(f"cannot write the cursor file: {exc}")

    def _write_file(self, seq: int) -> None:
        # One writer at a time, never backwards (a cancelled write may still be running).
        with self._lock:
            if seq > self.written:
                write_cursor(self.dir, self.stream, seq)
                self.written = seq

    async def now(self) -> None:
        if self._writing is not None:
            self._writing.cancel()  # a write waiting for its turn: done here instead
            with contextlib.suppress(BaseException):
                await self._writing
        acked = self._acked()
        if acked > self.written:
            await self._write(acked)


class ShipperLock:
    """One shipper per journal: an exclusive lock on ``.feed.lock`` in the journal folder."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise ShipperLocked(f"{directory}: another shipper is shipping this journal") from None

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = -1


def journal_writer_running(directory: Path) -> bool:
    """True while a daemon holds the journal open for writing (its lock is taken)."""
    path = directory / ".journal.lock"
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
