"""Reading a journal without opening it for writing: `replay` (the chain checked link by link),
`last_event` (found from the end), `scan` (a few events out of a long journal, by their bytes),
and `TornTail`, the partial last line a power loss leaves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from daemon.journal.format import (
    GENESIS,
    JournalCorrupt,
    RawLine,
    Record,
    blocks_from_end,
    decode_line,
    journal_files,
    last_complete_line,
    line_hash,
    parse_file_name,
    read_lines,
)

TORN_PREVIEW_BYTES = 512


@dataclass(frozen=True)
class TornTail:
    """A partial last line cut off at open: bytes that were never an acknowledged event."""

    path: Path
    offset: int
    data: bytes = field(repr=False)

    def payload(self) -> dict[str, Any]:
        return {
            "file": self.path.name,
            "offset": self.offset,
            "bytes": len(self.data),
            "sha256": line_hash(self.data),
            "preview": self.data[:TORN_PREVIEW_BYTES].decode("utf-8", errors="replace"),
        }


def replay(
    path: Path | str,
    *,
    from_seq: int = 1,
    on_torn: Callable[[TornTail], None] | None = None,
) -> Iterator[Record]:
    """Read a journal (a directory, or one file) in order, checking each link of the chain.

    A torn last line is not an event: it is skipped, and reported to `on_torn` if given (a
    reader without the lock may also see the line being written). Raises JournalCorrupt at the
    first broken
    link; `verify()` names the line and what was done to it. From a later seq, the files before
    it are not read; in its file, a line in the second half is found from the end (a restart
    from its last checkpoint reads only the lines after it), one in the first half by counting
    the lines before it. Either way the link into `from_seq` is checked.
    """
    root = Path(path)
    files = [root] if root.is_file() else journal_files(root)
    skip = 0
    if from_seq > 1:
        keep, first = 0, 1
        for i, file in enumerate(files):
            parsed = parse_file_name(file.name)
            if parsed is not None and parsed[0] <= from_seq:
                keep, first = i, parsed[0]
        files = files[keep:]
        skip = from_seq - first
    prev_seq: int | None = 0 if root.is_dir() and from_seq <= 1 else None
    prev_hash: str | None = GENESIS if prev_seq == 0 else None
    start = 0
    found = _from_the_end(files[0], from_seq, from_seq - skip) if skip and files else None
    if found is not None:
        start, before = found
        prev_seq, prev_hash, skip = from_seq - 1, line_hash(before), 0
    for index, file in enumerate(files):
        last_file = index == len(files) - 1
        for raw in read_lines(file, start if index == 0 else 0):
            if not raw.complete:
                if last_file:
                    if on_torn is not None:
                        on_torn(TornTail(file, raw.offset, raw.data))
                    return
                raise JournalCorrupt(f"{_where(raw)}: no end of line")
            if skip:
                skip -= 1
                if not skip:  # the line just before from_seq: the next one must link to it
                    prev_seq, prev_hash = from_seq - 1, line_hash(raw.data)
                continue
            try:
                record = decode_line(raw.data)
            except ValueError as exc:
                raise JournalCorrupt(f"{_where(raw)}: {exc}") from None
            if (prev_seq is not None and record.seq != prev_seq + 1) or (
                prev_hash is not None and record.prev != prev_hash
            ):
                raise JournalCorrupt(
                    f"{_where(raw)} (seq {record.seq}) does not follow seq "
                    f"{prev_seq}; run `tabled verify-log {root}`"
                )
            prev_seq, prev_hash = record.seq, record.hash
            if record.seq >= from_seq:
                yield record


def _where(raw: RawLine) -> str:
    if raw.number:
        return f"{raw.path.name} line {raw.number}"
    return f"{raw.path.name} at byte {raw.offset}"


def _from_the_end(
    path: Path, seq: int, first: int, block: int = 1 << 20
) -> tuple[int, bytes] | None:
    """Where line `seq` of `path` starts, and the line before it, found from the end of the file
    when it is nearer the end than the start (else None: count from the start)."""
    last, _ = last_complete_line(path)
    try:
        last_seq = decode_line(last).seq if last is not None else None
    except ValueError:
        return None
    if last_seq is None or not first < seq <= last_seq or seq - first <= last_seq - seq:
        return None
    # A line starts after a newline, and JSON writes none inside a line: the marker is the line.
    marker = b'\n{"seq":%d,' % seq
    with path.open("rb") as fh:
        carry = b""
        for pos, data in blocks_from_end(fh, block):
            chunk = data + carry
            at = chunk.rfind(marker)
            if at >= 0:
                start = pos + at + 1
                return start, _line_ending_at(fh, start)
            carry = chunk[: len(marker) - 1]
    return None


def _line_ending_at(fh: BinaryIO, end: int) -> bytes:
    """The line whose newline is the byte before `end`."""
    data = b""
    for pos, block in blocks_from_end(fh, 1 << 16, end - 1):
        data = block + data
        newline = data.rfind(b"\n")
        if newline >= 0 or pos == 0:
            fh.seek(pos + newline + 1)
            return fh.read(end - (pos + newline + 1))
    return b""  # `end` is the file's first byte: no line ends before it


def last_event(path: Path | str, event: str, block: int = 1 << 20) -> Record | None:
    """The last complete line of `event` in a journal directory, found from the end without
    decoding any other line (a restart's replay starts from its last checkpoint this way).

    Only that line is decoded; its link to the chain is checked by the replay that follows it
    (`replay(from_seq=record.seq)`), and the whole chain by `tabled verify-log`.
    """
    marker = f',"event":"{event}","payload":'.encode()
    root = Path(path)
    if not root.is_dir():
        return None
    for file in reversed(journal_files(root)):
        with file.open("rb") as fh:
            carry = b""
            for pos, data in blocks_from_end(fh, block):
                chunk = data + carry
                # Lines wholly in `chunk` start after its first newline (or at the file start).
                first_nl = chunk.find(b"\n") if pos > 0 else -1
                if pos > 0 and first_nl < 0:
                    carry = chunk
                    continue
                body = chunk[first_nl + 1 :]
                at = body.rfind(marker)
                while at >= 0:
                    start = body.rfind(b"\n", 0, at) + 1
                    stop = body.find(b"\n", at)
                    if stop >= 0:
                        try:
                            record = decode_line(body[start : stop + 1])
                        except ValueError:
                            record = None
                        if record is not None and record.event == event:
                            return record
                    at = body.rfind(marker, 0, start)
                carry = chunk[: first_nl + 1]
    return None


def scan(
    path: Path | str, events: Iterable[str], *, from_time: str | None = None, block: int = 1 << 22
) -> Iterator[tuple[str, bytes]]:
    """(event, line) for each complete line of the named events in a journal (a directory or one
    file), in order, found by the line's `"event":` bytes: no other line is decoded and the
    chain is not checked (`tabled verify-log` proves it; `replay` checks it as it reads).

    For readers that want a few events out of a whole year of a table (the integrity audit):
    the files are read `block` bytes at a time, never whole. With `from_time` (an ISO time as
    the lines write it), files whose later neighbour starts before that day are skipped and a
    line is kept only from that time on.
    """
    wanted = sorted(set(events))
    if not wanted:
        return
    names = b"|".join(re.escape(name.encode()) for name in wanted)
    marker = re.compile(b',"event":"(' + names + b')","payload":')
    root = Path(path)
    files = [root] if root.is_file() else journal_files(root)
    if from_time is not None:
        day = from_time[:10].replace("-", "")
        starts = [parse_file_name(f.name) for f in files]
        keep = 0
        for i in range(1, len(files)):
            parsed = starts[i]
            if parsed is not None and parsed[1] <= day:
                keep = i - 1
        files = files[keep:]
    since = from_time.encode() if from_time is not None else None
    event_names = {name.encode(): name for name in wanted}
    for file in files:
        with file.open("rb") as fh:
            carry = b""
            while True:
                data = fh.read(block)
                if not data:
                    break
                chunk = carry + data
                end = chunk.rfind(b"\n") + 1  # lines wholly in the chunk; the rest carries
                body, carry = chunk[:end], chunk[end:]
                before, after = body.rfind, body.index
                for found in marker.finditer(body):
                    line = body[before(b"\n", 0, found.start()) + 1 : after(b"\n", found.end()) + 1]
                    if since is not None and line[line.find(b'"ts":"') + 6 :][:27] < since:
                        continue
                    yield event_names[found.group(1)], line
