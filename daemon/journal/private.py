"""Who may read a journal's files: the daemon's user alone (and the API process's group).

A journal holds every card face down as it was dealt; whoever reads its files reads them all. So
the folder and its files are private to the daemon's user, set when the journal opens:

- the folder 0711: its owner lists and writes it; anyone else may only pass through it to
  `api.json` (the running daemon's address, which `tabled status`/`act`/`journal` look up), by
  name, and lists nothing;
- every file in it 0600 (`api.json` excepted: an address, no secret).

A folder, or a file in it, with more than that is tightened when the journal opens: the bits
beyond those are taken away, none is given (a folder its owner may not write stays so, and is
refused as before). Each change is logged and listed in that opening's `journal.opened` line as
`tightened`; a mode the daemon's user may not change (another user's file) stops the start in one
line naming the `chown`/`chmod` that fixes it. The anchor key (`.journal.key`) is not mended: one
others could read is refused (`anchor`). A mode is only changed when it differs: a chmod moves a
file's change time, and the anchor then re-reads that file once.

When `tabled run --http` runs as root, its API process runs as a user of its own (`[api] user`,
daemon/api/user.py) and reads older lines through a descriptor of the folder: the folder is then
**shared** with that user's group alone, read-only: setgid to that group with group `r-x`
(02751), and the line files (`journal-*.jsonl`) group-readable (0640, new ones too: the setgid
folder gives them its group). The anchor key, the lock and the feed's cursor stay 0600. Opening
keeps a sharing as it is (setgid, group `r-x` and nothing more), so a table restarted with and
without `--http` does not flip modes. Shared with another group than before, the newest line file
changes group while a member of the old one may hold it open: the writer's `Journal.share` then
starts a new file for the next line.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

from daemon.journal.format import JournalError, parse_file_name

FOLDER_MODE = 0o711
SHARED_FOLDER_MODE = 0o2751
FILE_MODE = 0o600
SHARED_LINES_MODE = 0o640
LEFT_TO_THEIR_CHECK = frozenset({
    "api.json",  # daemon.cli.address.ADDRESS_FILE: an address, no secret
    ".journal.key",  # anchor.KEY_NAME: one others could read is refused, never quietly mended
})  # fmt: skip


def is_shared(mode: int) -> bool:
    """The folder (its `st_mode`) is shared with its group, as `share` leaves it."""
    return bool(mode & stat.S_ISGID) and mode & 0o070 == 0o050


def line_file_mode(folder: Path) -> int:
    """The mode a new journal file is created with: group-readable in a shared folder."""
    try:
        shared = is_shared(folder.stat().st_mode)
    except OSError:
        shared = False
    return SHARED_LINES_MODE if shared else FILE_MODE


def _wanted(path: Path, mode: int, shared: bool) -> int | None:
    """The mode `path` (of `st_mode` `mode`) must have: bits taken away, never given (a folder
    its owner may not write stays so), but the group's read when shared; None: left as it is."""
    bits = stat.S_IMODE(mode)
    if stat.S_ISDIR(mode):
        return (bits & 0o701) | (0o2050 if shared else bits & 0o010)
    if not stat.S_ISREG(mode) or path.name in LEFT_TO_THEIR_CHECK:
        return None
    if shared and parse_file_name(path.name) is not None:
        return (bits & 0o600) | 0o040
    return bits & 0o600


def _set(path: Path, mode: int, gid: int | None, changed: list[str]) -> None:
    st = path.lstat()
    now = stat.S_IMODE(st.st_mode)
    try:
        if gid is not None and st.st_gid != gid:
            os.chown(path, -1, gid, follow_symlinks=False)
            changed.append(f"{path.name}: group {st.st_gid} -> {gid}")
            now = stat.S_IMODE(path.lstat().st_mode)  # a chown may clear setgid
        if now != mode:
            os.chmod(path, mode, follow_symlinks=False)
            changed.append(f"{path.name}: {now:04o} -> {mode:04o}")
    except PermissionError:
        owner = st.st_uid
        raise JournalError(
            f"{path}: mode {now:04o}, owner uid {owner}: the journal's files are private to the "
            f"daemon's user (uid {os.geteuid()}), which may not change this one: "
            f"chown {os.geteuid()} {path} && chmod {mode:o} {path}"
        ) from None


def _walk(folder: Path, shared: bool, gid: int | None) -> list[str]:
    changed: list[str] = []
    for entry in [folder, *sorted(folder.iterdir())]:
        mode = entry.lstat().st_mode
        if stat.S_ISDIR(mode) and entry != folder:
            continue  # the journal has no sub-folders; another's are left as they are
        wanted = _wanted(entry, mode, shared)
        if wanted is not None:
            group = gid if shared and wanted & 0o040 else None
            _set(entry, wanted, group, changed)
    return changed


def make_private(folder: Path) -> list[str]:
    """Tighten `folder` and its files to the modes above, keeping a sharing; what changed, as
    `name: old -> new`. JournalError when a mode cannot be changed (with the fix)."""
    st = folder.stat()
    shared = is_shared(st.st_mode)
    return _walk(folder, shared, st.st_gid if shared else None)


def share(folder: Path, gid: int) -> list[str]:
    """Share `folder`'s lines with group `gid` (read-only); what changed."""
    return _walk(folder, True, gid)


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
