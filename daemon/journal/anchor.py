"""The anchor: a keyed record of the chain the writer last made durable, so opening a long journal
checks what changed since instead of every line.

The writer appends only to a chain it has checked end to end. Checking 10⁶ lines at each start
would take seconds, so at each anchor point (opening, rotation, every `ANCHOR_EVERY` lines, a
checkpoint, closing) it writes ``.journal.anchor``: the head (seq and hash of the last durable
line) and, for every file, its identity on disk (size, inode, modification and change times)
and the seq and hash of its last line, signed with HMAC-SHA256 under ``.journal.key``, a key
only the daemon's user may read. At the next open:

- a file whose identity is unchanged holds what the writer wrote and checked: it is trusted
  (any write to it, even one that puts its size and modification time back, moves its change
  time);
- any other file is walked line by line (SHA-256 and the ``seq``/``prev`` link of each line,
  no JSON decoding), from the last trusted hash, and must pass through the anchored line of
  each file, so lines cut from the end are caught too;
- an anchor that fails its HMAC, or a key others can read, is refused.

When the walk finds anything it does not expect, the full verifier (`verifier.verify`, the one
`tabled verify-log` runs) decides, and names the first bad line. Opening after a clean stop
reads no journal line; after a crash, only the newest file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from daemon.journal.format import (
    GENESIS,
    JournalCorrupt,
    JournalError,
    decode_line,
    last_complete_line,
    parse_file_name,
)

ANCHOR_NAME = ".journal.anchor"
KEY_NAME = ".journal.key"
# An anchor at least this often (durable lines): a crash leaves at most this many lines past it.
ANCHOR_EVERY = 4096
_VERSION = 1
# The writer's layout (format.encode_line): a line ends `"prev":"<hash>"}` and its newline.
_PREV_AT = slice(-67, -3)
_PREV_KEY_AT = slice(-75, -67)
_CHUNK = 1 << 22


class AnchorRefused(JournalCorrupt):
    """The anchor is not the writer's: edited, or signed with another key."""


@dataclass(frozen=True)
class FileStamp:
    """One file as the writer left it: its identity on disk and the seq and hash of its last
    line (0 and the previous file's hash for an empty file)."""

    name: str
    size: int
    ino: int
    mtime_ns: int
    ctime_ns: int
    last_seq: int
    last_hash: str

    def same_file(self, st: os.stat_result) -> bool:
        return (self.size, self.ino, self.mtime_ns, self.ctime_ns) == (
            st.st_size,
            st.st_ino,
            st.st_mtime_ns,
            st.st_ctime_ns,
        )


@dataclass(frozen=True)
class Anchor:
    seq: int
    hash: str
    files: tuple[FileStamp, ...]


def load_key(directory: Path, *, create: bool) -> bytes:
    """The anchor key: created (0600) if absent and `create`; refused if others may read it."""
    path = directory / KEY_NAME
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        if not create:
            raise
        key = secrets.token_hex(32).encode()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, key + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        return key
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o077 or st.st_uid != os.geteuid():
            raise JournalError(
                f"{path}: the anchor key must be readable by the daemon's user only "
                f"(mode {st.st_mode & 0o777:o}, owner uid {st.st_uid}): chmod 600, chown"
            )
        key = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(key) < 32:
        raise JournalError(f"{path}: not an anchor key (too short)")
    return key


def _sign(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def anchored_head(directory: Path) -> tuple[int, str] | None:
    """The seq and hash the anchor vouches for, for `tabled verify-log` run as the daemon's user:
    a journal re-chained after an edit is whole to its own hashes, but not to the anchor's head.
    None when there is no anchor or its key cannot be read here; AnchorRefused when the anchor
    is not the writer's."""
    try:
        key = load_key(directory, create=False)
    except (OSError, JournalError):
        return None
    anchor = read_anchor(directory, key)
    return None if anchor is None else (anchor.seq, anchor.hash)


def read_anchor(directory: Path, key: bytes) -> Anchor | None:
    """The anchor, checked against its HMAC; None when there is none yet."""
    path = directory / ANCHOR_NAME
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    body, _, mac = data.rstrip(b"\n").rpartition(b"\n")
    if not hmac.compare_digest(_sign(key, body), mac.decode("ascii", "replace")):
        raise AnchorRefused(
            f"{path}: does not match its HMAC (edited, or written under another key); run "
            f"`tabled verify-log {directory}`: a supervisor decides"
        )
    try:
        raw = json.loads(body)
        if raw.get("version") != _VERSION:
            raise ValueError(f"version {raw.get('version')!r}")
        files = tuple(FileStamp(**item) for item in raw["files"])
        return Anchor(int(raw["seq"]), str(raw["hash"]), files)
    except (ValueError, TypeError, KeyError) as exc:
        raise AnchorRefused(f"{path}: signed but not readable: {exc}") from None


def stamp_files(
    files: Sequence[Path], known: dict[str, FileStamp] | None = None
) -> tuple[FileStamp, ...]:
    """Stamps of `files` as they are now (the caller wrote and synced them), reusing `known`."""
    stamps: list[FileStamp] = []
    last_seq, last_hash = 0, GENESIS
    for path in files:
        stamp = (known or {}).get(path.name)
        if stamp is None:
            st = os.stat(path)
            line, _ = last_complete_line(path)
            if line is not None:
                record = decode_line(line)
                last_seq, last_hash = record.seq, record.hash
            stamp = FileStamp(
                path.name,
                st.st_size,
                st.st_ino,
                st.st_mtime_ns,
                st.st_ctime_ns,
                last_seq,
                last_hash,
            )
        stamps.append(stamp)
        last_seq, last_hash = stamp.last_seq, stamp.last_hash
    return tuple(stamps)


def write_anchor(directory: Path, key: bytes, anchor: Anchor, *, durable: bool) -> None:
    """Replace the anchor atomically: a crash leaves the old one or the new one, both true of
    the journal (the old one only older), so the directory itself needs no fsync."""
    body = json.dumps(
        {
            "version": _VERSION,
            "seq": anchor.seq,
            "hash": anchor.hash,
            "files": [asdict(stamp) for stamp in anchor.files],
        },
        separators=(",", ":"),
    ).encode()
    tmp = directory / (ANCHOR_NAME + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, body + b"\n" + _sign(key, body).encode() + b"\n")
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, directory / ANCHOR_NAME)


class _Mismatch(Exception):
    """The fast check cannot vouch for the chain: the full verifier decides."""


def _walk(path: Path, prev: str | None, last: bool, through: str | None) -> str | None:
    """Walk one file's lines: each must name the hash of the line before as its ``prev``
    (None: unknown, for the first file left after older ones were archived), and the line
    hashed `through` must be among them. Returns the hash of the last line.

    Only hashes are compared: an inserted, removed, reordered or changed line breaks a link,
    and the anchored hash pins the chain's end. SHA-256 and a slice a line, no JSON decoding.
    """
    want = prev.encode() if prev is not None else None
    stop = through.encode() if through is not None else None
    seen = stop is None or stop == want  # an empty file ends where it starts
    with path.open("rb") as fh:
        rest = b""
        while chunk := fh.read(_CHUNK):
            lines = (rest + chunk).splitlines(keepends=True)
            rest = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
            for line in lines:
                if line[_PREV_KEY_AT] != b'"prev":"' or (
                    want is not None and line[_PREV_AT] != want
                ):
                    raise _Mismatch  # a stray "\r" too: it is no line of the writer's
                want = hashlib.sha256(line).hexdigest().encode()
                if want == stop:
                    seen = True
    if rest and not last:  # a torn tail is only ever the newest file's (cut at open)
        raise _Mismatch
    if not seen:
        raise _Mismatch  # the anchored line is gone: lines were cut from the end
    return None if want is None else want.decode()


def chain_unchanged(files: Sequence[Path], anchor: Anchor) -> bool:
    """True when the files hold the anchored chain, grown only by whole lines since; False when
    only the full verifier can tell (anything else: an edit, a copy, a restore)."""
    try:
        _check(files, anchor)
    except _Mismatch:
        return False
    return True


def _check(files: Sequence[Path], anchor: Anchor) -> None:
    on_disk = {path.name: path for path in files}
    stamps = list(anchor.files)
    # The oldest files may have been archived off the PC (docs/operations.md): only those.
    while stamps and stamps[0].name not in on_disk:
        stamps.pop(0)
    if not stamps or [p.name for p in files[: len(stamps)]] != [s.name for s in stamps]:
        raise _Mismatch
    later = files[len(stamps) :]
    first = parse_file_name(stamps[0].name)
    # The first file's first prev: the genesis, or a file archived off the PC (unknown).
    prev: str | None = GENESIS if first is not None and first[0] == 1 else None
    for index, stamp in enumerate(stamps):
        path = on_disk[stamp.name]
        if stamp.same_file(os.stat(path)):
            prev = stamp.last_hash
            continue
        newest = index == len(stamps) - 1 and not later
        prev = _walk(path, prev, newest, stamp.last_hash)
    for index, path in enumerate(later):
        prev = _walk(path, prev, index == len(later) - 1, None)
    if anchor.hash not in {stamp.last_hash for stamp in stamps}:
        raise _Mismatch  # the head the anchor names is not the end of any file it lists
