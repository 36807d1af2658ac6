"""The line file a journal appends to (its newest segment) and the lines staged for it.

A line is staged in memory (`add`), then written to the OS in order (`write`) at a commit point
or once `BUFFER_BYTES` wait. A new file is begun (`rotate`) on a new day, at the size limit, or
when the last one may be held open by others (`fresh`): the old file is written and durable
before the new one exists, so only the newest file can ever end in a torn line. The writer
(`daemon.journal.writer`) holds its lock around every call and turns an OSError into
`JournalFailed`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from daemon.config import JournalConfig
from daemon.journal.format import file_name, fsync_dir, parse_file_name
from daemon.journal.private import line_file_mode

# Non-commit lines are written to the OS once this many bytes wait, even before a commit point.
BUFFER_BYTES = 64 * 1024


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Segment:
    """The file lines are appended to (`fd` -1: none open yet) and the lines staged for it."""

    def __init__(self, directory: Path, *, durable: bool) -> None:
        self.dir = directory
        self._durable = durable
        self.fd = -1
        self.path: Path | None = None
        self.day = ""  # the UTC day of its first line (from its name)
        self.size = 0
        # Descriptors of older files that a sync in flight may still use (`take_retired`).
        self.retired: list[int] = []
        self.fresh = False  # the next line starts a new file
        self.pending: list[bytes] = []
        self.pending_bytes = 0

    def resume(self, path: Path, *, append: bool) -> None:
        """Go on from the newest file: appended to, or (not `append`) followed by a new one."""
        self.path, self.day = path, (parse_file_name(path.name) or (0, ""))[1]
        if append:
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
            self.size = path.stat().st_size

    def full_for(self, line: bytes, day: str, config: JournalConfig) -> bool:
        """`line`, of UTC `day`, must begin a new file."""
        return (
            self.fd < 0
            or self.fresh
            or (config.rotate_daily and day != self.day)
            or (self.size > 0 and self.size + len(line) > config.rotate_bytes)
        )

    def add(self, line: bytes) -> None:
        self.pending.append(line)
        self.pending_bytes += len(line)
        self.size += len(line)

    def write(self) -> bool:
        """Write the staged lines to the OS, in order; False if none were staged."""
        pending = self.pending
        if not pending:
            return False
        _write_all(self.fd, pending[0] if len(pending) == 1 else b"".join(pending))
        pending.clear()
        self.pending_bytes = 0
        return True

    def rotate(self, first_seq: int, day: str, fdatasync: Callable[[int], None]) -> Path | None:
        """Begin the file whose first line is `first_seq`; the file before it (returned) made
        durable first. Its staged lines must be written (`write`) before."""
        path = self.dir / file_name(first_seq, day)
        if self.fd >= 0:
            if self._durable:
                fdatasync(self.fd)
            # A sync in flight may still hold this descriptor; the next sync closes it.
            self.retired.append(self.fd)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        self.fd = os.open(path, flags, line_file_mode(self.dir))
        if self._durable:
            fsync_dir(self.dir)
        old = self.path
        self.path, self.day, self.size = path, day, 0
        self.fresh = False
        return old

    def take_retired(self) -> list[int]:
        retired, self.retired = self.retired, []
        return retired

    def release(self) -> None:
        """Close its descriptors (the retired ones first)."""
        for fd in (*self.retired, self.fd):
            if fd >= 0:
                os.close(fd)
        self.retired, self.fd = [], -1
