"""The shipper's cursor: the last seq JetStream acknowledged, kept beside the journal.

``<journal dir>/feed.cursor`` is one JSON object, ``{"stream": "TABLED", "seq": 1234,
"updated": "...Z"}``, replaced atomically (a temporary file, fsync, rename, fsync of the folder),
so after any crash it is either the old cursor or the new one. It only ever names a seq that
JetStream acknowledged, so it may lag (the lines after it are sent again and JetStream's
de-duplication drops them) but never leads. Every journal file whose last seq is at or below it
has shipped and may be archived (docs/operations.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from daemon.journal.format import iso_utc

CURSOR_NAME = "feed.cursor"
LOCK_NAME = ".feed.lock"


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
