"""Opening a journal for writing: lock it, check its chain, then find where it resumes.

`open_for_writing` takes the folder's lock (one writer), makes the folder private
(`daemon.journal.private`), loads the anchor key and does the two steps below. `check_chain`
refuses a broken chain before anything is appended to it, fast through the anchor
(`daemon.journal.anchor`), else line by line; `resume` reads the last complete line of
the newest files, after cutting off a torn tail (a write cut by a power loss: never an
acknowledged event), and returns what the writer needs to go on.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from daemon.journal.anchor import chain_unchanged, load_key, read_anchor
from daemon.journal.format import (
    GENESIS,
    JournalCorrupt,
    JournalError,
    decode_line,
    fsync_dir,
    journal_files,
    last_complete_line,
    parse_file_name,
)
from daemon.journal.private import FOLDER_MODE, make_private
from daemon.journal.reader import TornTail
from daemon.journal.verifier import TORN, verify
from daemon.logging import get_logger


def check_chain(directory: Path, key: bytes, files: list[Path]) -> None:
    """Append only to a chain checked end to end: against the anchor where it vouches for the
    files, else line by line. A break is refused, naming the first bad line; a torn tail is
    not a break (`resume` cuts it)."""
    anchor = read_anchor(directory, key)
    if anchor is None and not files:
        return
    if anchor is not None and chain_unchanged(files, anchor):
        return
    expect = None if anchor is None else (anchor.seq, anchor.hash)
    problem = verify(directory, expect=expect, archived=True).problem
    if problem is not None and problem.kind != TORN:
        raise JournalCorrupt(
            f"{directory}: the chain is broken, nothing is appended to it: "
            f"{problem.describe()}; run `tabled verify-log {directory}`: a supervisor decides"
        )


@dataclass(frozen=True)
class ResumePoint:
    last_seq: int  # 0 for a new journal
    head: str  # the hash of that line (the genesis value for a new journal)
    torn: TornTail | None  # what was cut off the newest file, to journal


def resume(directory: Path, files: list[Path], table_id: str, *, durable: bool) -> ResumePoint:
    """The chain's end, after cutting a torn tail off the newest file."""
    torn = None
    for path in reversed(files):
        last, end = last_complete_line(path)
        size = path.stat().st_size
        if path == files[-1] and end < size:
            torn = _cut_torn_tail(path, end, size, durable=durable)
        if last is None:
            continue
        try:
            record = decode_line(last)
        except ValueError as exc:
            raise JournalCorrupt(f"{path}: last line is not a journal event: {exc}") from None
        if record.table != table_id:
            raise JournalError(
                f"{directory}: the journal of table {record.table!r}, not {table_id!r}"
            )
        point = ResumePoint(record.seq, record.hash, torn)
        break
    else:
        point = ResumePoint(0, GENESIS, torn)
    if files:
        first_seq = (parse_file_name(files[-1].name) or (0, ""))[0]
        if files[-1].stat().st_size == 0 and first_seq != point.last_seq + 1:
            raise JournalCorrupt(
                f"{files[-1].name}: empty, but the chain's next seq is {point.last_seq + 1}"
            )
    return point


def _cut_torn_tail(path: Path, end: int, size: int, *, durable: bool) -> TornTail:
    with path.open("r+b") as fh:
        fh.seek(end)
        data = fh.read(size - end)
        fh.truncate(end)
        fh.flush()
        if durable:
            os.fsync(fh.fileno())
    get_logger("daemon.journal").warning(
        "journal.torn_tail_truncated", file=str(path), offset=end, bytes=len(data)
    )
    return TornTail(path, end, data)


LOCK_NAME = ".journal.lock"


class JournalLocked(JournalError):
    """Another process has this journal open for writing."""


@dataclass(frozen=True)
class Opening:
    """A journal folder locked for writing, its chain checked and its end found."""

    lock_fd: int  # holds the folder's exclusive lock while open
    key: bytes  # the anchor key
    files: list[Path]  # its line files, oldest first
    point: ResumePoint
    tightened: list[str]  # the modes `make_private` changed
    # New lines go to a new file: the last one was open to others, who may hold it open.
    fresh: bool


def open_for_writing(directory: Path, table_id: str, *, durable: bool) -> Opening:
    """Create the folder if need be, lock it, make it private, check the chain and find where
    it resumes. JournalLocked if another process holds it; the lock is let go on any error."""
    created = not directory.exists()
    directory.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if created and durable:
        fsync_dir(directory.parent)
    lock_fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalLocked(f"{directory}: the journal is open in another process") from None
        tightened = make_private(directory)  # hidden cards: the daemon's user's alone
        if tightened:
            get_logger("daemon.journal").warning("journal.tightened", changed=tightened)
        key = load_key(directory, create=True)
        files = journal_files(directory)
        check_chain(directory, key, files)
        point = resume(directory, files, table_id, durable=durable)
        # A line file that was open to others (0644) may be held open by one of them: its
        # descriptor reads whatever is appended after the tightening. So new lines then go to
        # a fresh segment (the first append rotates), made private when created.
        loosened = {change.split(": ", 1)[0] for change in tightened}
        fresh = bool(files) and files[-1].name in loosened
        if fresh and files[-1].stat().st_size == 0:
            # An empty one holds no line, but its name is the one the fresh segment takes: it
            # is replaced (a new file, so a descriptor held on the old one reads nothing).
            files.pop().unlink()
            if durable:
                fsync_dir(directory)
    except BaseException:
        os.close(lock_fd)
        raise
    return Opening(lock_fd, key, files, point, tightened, fresh)
