"""Reading the journal's files forward from a seq, as the shipper needs them: exact line bytes.

The shipper never decodes a whole line: the journal writes its keys in a fixed order
(`daemon.journal.format`), so the seq is the number after ``{"seq":``, the event is the string
after the first ``,"event":"`` (a quote inside an earlier string is always escaped, so that
marker cannot occur before the real key) and ``prev`` is the 64 hex digits before the closing
``"}``. Each line's ``prev`` is checked against the SHA-256 of the line before it, so the
shipper never sends a line that is not the next link of the chain it has been shipping.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from pathlib import Path
from typing import NamedTuple

from daemon.journal.format import JournalCorrupt, journal_files, parse_file_name

SEQ_PREFIX = b'{"seq":'
EVENT_MARKER = b',"event":"'
PREV_MARKER = b',"prev":"'
READ_BYTES = 1 << 20


class Line(NamedTuple):
    """A line to ship: its seq, its event and its exact bytes (a tuple: made for every line
    shipped, it costs a third of a frozen dataclass)."""

    seq: int
    event: str
    data: bytes


def line_seq(data: bytes) -> int:
    """The seq of one journal line; ValueError if the line does not start like one."""
    if not data.startswith(SEQ_PREFIX):
        raise ValueError("not a journal line")
    return int(data[len(SEQ_PREFIX) : data.index(b",", len(SEQ_PREFIX))])


def line_event(data: bytes) -> str:
    at = data.index(EVENT_MARKER) + len(EVENT_MARKER)
    return data[at : data.index(b'"', at)].decode("ascii")


def line_prev(data: bytes) -> bytes:
    # ...,"prev":"<64 hex>"}\n
    if data[-76:-67] != PREV_MARKER:
        raise ValueError("no prev at the end of the line")
    return data[-67:-3]


def line_ts(data: bytes) -> str:
    at = data.index(b'"ts":"') + 6
    return data[at : data.index(b'"', at)].decode("ascii")


class JournalTail:
    """The journal's complete lines from a seq on, file after file, as they are written."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.next_seq = 1
        self._file: Path | None = None
        self._fd = -1
        self._partial = b""
        self._lines: deque[bytes] = deque()
        self._prev_hash: bytes | None = None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._file = None
        self._lines.clear()
        self._partial = b""

    @property
    def prev_hash(self) -> bytes | None:
        """The SHA-256 (hex) of line `next_seq` - 1, when known: the next line's `prev`."""
        return self._prev_hash

    def position(self, seq: int, prev_hash: bytes | None = None) -> None:
        """Stand at `seq` without reading: the files are opened (and the line before read, for
        the chain check) by the first `read` that needs them. `prev_hash`: the SHA-256 (hex) of
        line seq - 1, when known (it came from the journal's memory)."""
        self.close()
        self.next_seq = seq
        self._prev_hash = prev_hash

    def seek(self, seq: int) -> None:
        """Position at `seq` (the next line `read` returns), skipping the lines before it."""
        self.close()
        self.next_seq = seq
        self._prev_hash = None
        files = journal_files(self.dir) if self.dir.is_dir() else []
        chosen: tuple[int, Path] | None = None
        for path in files:
            parsed = parse_file_name(path.name)
            if parsed is not None and parsed[0] <= seq:
                chosen = (parsed[0], path)
        if chosen is None:
            if files:
                first = parse_file_name(files[0].name)
                raise JournalCorrupt(
                    f"{self.dir}: seq {seq} is before the first file ({files[0].name}, "
                    f"seq {first[0] if first else '?'}): its file was removed before it shipped"
                )
            return  # no journal yet: wait for its first file
        first_seq, path = chosen
        self._open(path)
        skip = seq - first_seq
        while skip > 0:
            if not self._lines and not self._fill():
                raise JournalCorrupt(f"{path.name}: ends before seq {seq}")
            data = self._lines.popleft()
            skip -= 1
            if skip == 0:
                self._prev_hash = hashlib.sha256(data).hexdigest().encode()

    def _open(self, path: Path) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self._file = path
        self._partial = b""

    def _fill(self) -> bool:
        """Read more complete lines from the current file (or the next one); False if none."""
        if self._fd < 0:
            files = journal_files(self.dir) if self.dir.is_dir() else []
            if not files:
                return False
            first = parse_file_name(files[0].name)
            if first is None or first[0] > self.next_seq:
                raise JournalCorrupt(
                    f"{self.dir}: seq {self.next_seq} is not in any file (the first is "
                    f"{files[0].name}): its file was removed before it shipped"
                )
            prev_hash = self._prev_hash
            self.seek(self.next_seq)
            if self._prev_hash is None:
                self._prev_hash = prev_hash  # a file's first line: `read` checks its link
            elif prev_hash is not None and prev_hash != self._prev_hash:
                raise JournalCorrupt(
                    f"{self.dir}: the line before seq {self.next_seq} in the files is not the one "
                    f"shipped; run `tabled verify-log {self.dir}`"
                )
            return bool(self._lines) or self._fill_current()
        return self._fill_current()

    def _fill_current(self) -> bool:
        while True:
            chunk = os.read(self._fd, READ_BYTES)
            if chunk:
                data = self._partial + chunk
                end = data.rfind(b"\n") + 1
                self._partial = data[end:]
                if end:
                    self._lines.extend(data[:end].splitlines(keepends=True))
                    return True
                continue
            if self._partial:
                return False  # a line being written (or a torn tail): wait for its end
            # The end of this file: go on to the next one if the journal has rotated.
            nxt = self._next_file()
            if nxt is None:
                return False
            self._open(nxt)

    def _next_file(self) -> Path | None:
        for path in journal_files(self.dir):
            parsed = parse_file_name(path.name)
            if parsed is not None and parsed[0] == self.next_seq + len(self._lines):
                return path
        return None

    def read(self, upto: int | None, limit: int) -> list[Line]:
        """Up to `limit` lines from `next_seq`, none past seq `upto` (None: no bound)."""
        out: list[Line] = []
        while len(out) < limit and (upto is None or self.next_seq <= upto):
            if not self._lines and not self._fill():
                break
            data = self._lines[0]
            try:
                seq = line_seq(data)
                prev = line_prev(data)
                event = line_event(data)
            except (ValueError, UnicodeDecodeError) as exc:
                raise JournalCorrupt(
                    f"{self._file}: the line after seq {self.next_seq - 1} is not a journal "
                    f"line ({exc}); run `tabled verify-log {self.dir}`"
                ) from None
            if seq != self.next_seq or (self._prev_hash is not None and prev != self._prev_hash):
                raise JournalCorrupt(
                    f"{self._file}: seq {seq} does not follow seq {self.next_seq - 1} in the "
                    f"chain; run `tabled verify-log {self.dir}`"
                )
            self._lines.popleft()
            self._prev_hash = hashlib.sha256(data).hexdigest().encode()
            self.next_seq = seq + 1
            out.append(Line(seq, event, data))
        return out

    def peek(self) -> bytes | None:
        """The next complete line's bytes without taking it (unchecked), or None."""
        if not self._lines and not self._fill():
            return None
        return self._lines[0]

    def has_more(self) -> bool:
        """True if a complete line after the last one read is in the files."""
        return bool(self._lines) or self._fill()

    def line_at(self, seq: int) -> bytes | None:
        """The bytes of line `seq` (this tail is left positioned after it), or None."""
        self.seek(seq)
        lines = self.read(seq, 1)
        return lines[0].data if lines else None
