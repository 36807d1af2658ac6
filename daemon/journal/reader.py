"""Reading a journal without opening it for writing: `replay` (the chain checked link by link),
`last_event` (found from the end), and `TornTail`, the partial last line a power loss leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.journal.format import (
    GENESIS,
    JournalCorrupt,
    Record,
    decode_line,
    journal_files,
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
    it are not read and the lines before it in its file are only counted, not decoded.
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
    for index, file in enumerate(files):
        last_file = index == len(files) - 1
        for raw in read_lines(file):
            if not raw.complete:
                if last_file:
                    if on_torn is not None:
                        on_torn(TornTail(file, raw.offset, raw.data))
                    return
                raise JournalCorrupt(f"{file.name} line {raw.number}: no end of line")
            if skip:
                skip -= 1
                if not skip:  # the line just before from_seq: the next one must link to it
                    prev_seq, prev_hash = from_seq - 1, line_hash(raw.data)
                continue
            try:
                record = decode_line(raw.data)
            except ValueError as exc:
                raise JournalCorrupt(f"{file.name} line {raw.number}: {exc}") from None
            if (prev_seq is not None and record.seq != prev_seq + 1) or (
                prev_hash is not None and record.prev != prev_hash
            ):
                raise JournalCorrupt(
                    f"{file.name} line {raw.number} (seq {record.seq}) does not follow seq "
                    f"{prev_seq}; run `tabled verify-log {root}`"
                )
            prev_seq, prev_hash = record.seq, record.hash
            if record.seq >= from_seq:
                yield record


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
            end = fh.seek(0, 2)
            pos, carry = end, b""
            while pos > 0:
                step = min(block, pos)
                pos -= step
                fh.seek(pos)
                chunk = fh.read(step) + carry
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
