"""`tabled journal` without a daemon: the events read straight from a journal folder's files.

`tabled journal --dir DIR` reads DIR; with no `--url`, `$TABLED_URL` or `--dir`, a folder whose
daemon is not serving (no live address in its `api.json`) is read the same way, so the command
works on a stopped table, a copy of an archived journal, or a table run without `--http`.

The files are read as they are, every line whole, face-down cards included, with no token and no
role: so only the folder's owner (the daemon's user, whose files they are: 0600 in a 0711 folder,
daemon/journal/private.py) or root reads them this way. Anyone else is refused in one line, even
where the files' modes would let them read (a folder copied or left open): they ask the running
daemon with their token (`--url`), which serves what their role may see. Each line's link to the
one before is checked as it is read (the journal's own `replay`); a broken chain stops the
reading with the line named (run `tabled verify-log DIR` for the whole report). A torn last
line, one being written, is skipped. `--follow` reads the new lines every half second.
"""

from __future__ import annotations

import os
import pwd
import time
from collections import deque
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.journal.format import JournalCorrupt, Record, journal_files, record_dict
from daemon.journal.reader import replay

POLL_SECONDS = 0.5


class FolderError(Exception):
    """The folder cannot be read as a journal; the message says why, in words."""


def _when(record: Record) -> datetime | None:
    try:
        return datetime.fromisoformat(record.ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _whole_lines_allowed(folder: Path) -> None:
    """The whole lines are the folder's owner's (or root's) to read: FolderError otherwise."""
    owner = folder.stat().st_uid
    me = os.geteuid()
    if me in (0, owner):
        return
    readers = _owner(owner) + ("" if owner == 0 else " or root")
    raise FolderError(
        f"{folder}: its files hold every line whole, face-down cards included, so only their "
        f"owner ({readers}) reads them without the daemon; you are "
        f"{_owner(me)}: ask the running daemon with your token (`tabled journal --url URL`, "
        f"served as your role may see), or run this as {_owner(owner)}"
    )


def _records(folder: Path, from_seq: int = 1) -> Iterator[Record]:
    try:
        if not folder.is_dir():
            raise FolderError(f"{folder}: no such journal folder")
        _whole_lines_allowed(folder)
        if not journal_files(folder):
            raise FolderError(f"{folder}: no journal files (journal-*.jsonl) in it")
        yield from replay(folder, from_seq=from_seq)
    except PermissionError as exc:
        raise FolderError(
            f"{folder}: user {_owner(os.geteuid())} may not read {exc.filename or folder}; the "
            "journal's files are private to the daemon's user: run this as that user, or ask "
            "the running daemon with your token (`tabled journal --url URL`)"
        ) from None
    except JournalCorrupt as exc:
        raise FolderError(f"{folder}: {exc}; `tabled verify-log {folder}` tells more") from None


def read_folder(
    folder: Path,
    wanted: Callable[[dict[str, Any]], bool],
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """The last `limit` events of the folder that `wanted` keeps, within [since, until]."""
    kept: deque[dict[str, Any]] = deque(maxlen=max(1, limit))
    for record in _records(folder):
        if since is not None or until is not None:
            when = _when(record)
            if when is None or (since and when < since) or (until and when > until):
                continue
        event = record_dict(record)
        if wanted(event):
            kept.append(event)
    return list(kept)


def last_seq(folder: Path) -> int:
    seq = 0
    for record in _records(folder):
        seq = record.seq
    return seq


def follow_folder(
    folder: Path,
    after: int,
    wanted: Callable[[dict[str, Any]], bool],
    show: Callable[[dict[str, Any]], None],
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Show each new event after seq `after` as the files grow, until interrupted."""
    while True:
        for record in _records(folder, from_seq=after + 1):
            if record.seq <= after:
                continue
            after = record.seq
            event = record_dict(record)
            if wanted(event):
                show(event)
        sleep(POLL_SECONDS)
