"""An archive of a month of raw journal lines as files (`tabled floor archive`, daemon/floor/
archive.py): the gzip of the lines' exact bytes, its manifest (per table the first and last seq,
count, holes, the links that do not chain, the `prev` of its first line and the hash of its
last), and the checks of one against the other that need no database: what a lab or an auditor
re-runs (`--verify`)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from daemon.floor.admin import Refused
from daemon.floor.derived import _round_text
from daemon.floor.storebase import month_start, next_month, parse_ts, partition_name
from daemon.journal.format import decode_line, fsync_dir

FORMAT = "tabled-floor-archive/1"
CHUNK = 1 << 20


class Tampered(ValueError):
    """An archive (file or manifest) that is not what was written, or does not join the chain
    the floor holds; the message says what."""


@dataclass
class TableSpan:
    """One table's lines in an archive."""

    table: str
    first_seq: int
    last_seq: int
    lines: int
    first_prev: str  # the `prev` of its first line: the hash of the line before (elsewhere)
    last_hash: str  # the SHA-256 of its last line: the next line's `prev`
    holes: list[list[int]] = field(default_factory=list)  # seq ranges not in this month
    unlinked: list[int] = field(default_factory=list)  # seqs whose prev is not the line before


class Tally:
    """Each table's span, from its lines in (table, seq) order."""

    def __init__(self) -> None:
        self.spans: list[TableSpan] = []
        self.lines = 0

    def add(self, table: str, seq: int, digest: str, prev: str) -> None:
        span = self.spans[-1] if self.spans else None
        if span is None or span.table != table:
            if span is not None and table <= span.table:
                raise Tampered(f"table {table} after {span.table}: not in order")
            self.spans.append(TableSpan(table, seq, seq, 1, prev, digest))
            self.lines += 1
            return
        if seq <= span.last_seq:
            raise Tampered(f"table {table} seq {seq} after seq {span.last_seq}: not in order")
        if seq > span.last_seq + 1:
            span.holes.append([span.last_seq + 1, seq - 1])
        elif prev != span.last_hash:
            span.unlinked.append(seq)
        span.last_seq, span.last_hash = seq, digest
        span.lines += 1
        self.lines += 1

    def tables(self) -> list[dict[str, Any]]:
        return [asdict(span) for span in self.spans]


@dataclass(frozen=True)
class Month:
    start: datetime
    end: datetime

    @property
    def partition(self) -> str:
        return partition_name(self.start)

    @classmethod
    def parse(cls, text: str) -> Month:
        try:
            start = datetime.strptime(text, "%Y-%m").replace(tzinfo=UTC)
        except ValueError:
            raise Refused(f"--month {text!r}: expected YYYY-MM") from None
        return cls(start, next_month(start))


def retention_cutoff(now: datetime, months: int) -> datetime:
    """The first instant still within the retention: months wholly before it may be archived."""
    start = month_start(now)
    index = start.year * 12 + start.month - 1 - months
    return start.replace(year=index // 12, month=index % 12 + 1)


# --- reading and checking an archive file ---------------------------------------------------


class Hashing:
    """A binary file that hashes what is written through it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw, self.sha, self.size = raw, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


def file_sha256(path: Path) -> tuple[str, int]:
    sha, size = hashlib.sha256(), 0
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            sha.update(chunk)
            size += len(chunk)
    return sha.hexdigest(), size


def read_archive(path: Path, month: Month) -> Iterator[tuple[Any, ...]]:
    """Each line of an archive file as the row `journal_lines` holds it (its columns derived as
    the floor's ingest derives them); Tampered on a line that is not a journal line of `month`."""
    with gzip.open(path, "rb") as fh:
        try:
            for number, line in enumerate(fh, start=1):
                try:
                    rec = decode_line(line)
                    ts = parse_ts(rec.ts)
                except ValueError as exc:
                    raise Tampered(f"line {number} is not a journal line ({exc})") from None
                if not month.start <= ts < month.end:
                    raise Tampered(f"line {number} ({rec.table} seq {rec.seq}) is not of the month")
                yield (rec.table, rec.seq, ts, rec.event, _round_text(rec.round_id), rec.actor,
                       bytes.fromhex(rec.hash), bytes.fromhex(rec.prev), line)  # fmt: skip
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise Tampered(f"not a whole gzip file ({exc})") from None


def load_manifest(path: Path) -> tuple[Path, Path, dict[str, Any], str]:
    """(manifest, data file, the manifest's content, its SHA-256) from either file's path."""
    manifest = path
    if not path.name.endswith(".manifest.json"):
        manifest = path.with_name(path.name.removesuffix(".lines.gz") + ".manifest.json")
    try:
        raw = manifest.read_bytes()
    except OSError as exc:
        raise Refused(f"{manifest}: {exc.strerror}") from None
    try:
        content = json.loads(raw)
        if not isinstance(content, dict) or content.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} manifest")
        data = manifest.with_name(str(content["file"]))
        if data.name != content["file"] or "/" in content["file"]:
            raise ValueError("its file is not a name in its folder")
    except (ValueError, KeyError, TypeError) as exc:
        raise Tampered(f"{manifest}: {exc}") from None
    return manifest, data, content, hashlib.sha256(raw).hexdigest()


def verify_archive(path: Path) -> tuple[dict[str, Any], str, Month]:
    """Check an archive against its manifest (no database): (the manifest, its SHA-256, the
    month); Tampered or Refused, in one line, if it does not hold."""
    manifest_path, data, manifest, manifest_sha = load_manifest(path)
    try:
        month = Month(
            datetime.fromisoformat(manifest["from"]), datetime.fromisoformat(manifest["to"])
        )
        if month.start.tzinfo is None or month.end.tzinfo is None:
            raise ValueError("its month has no time zone")
        if month.partition != manifest["partition"] or next_month(month.start) != month.end:
            raise ValueError("its month and partition do not agree")
        want_sha, want_size = str(manifest["file_sha256"]), int(manifest["file_bytes"])
        want_lines, want_tables = int(manifest["lines"]), manifest["tables"]
    except (ValueError, KeyError, TypeError) as exc:
        raise Tampered(f"{manifest_path}: {exc}") from None
    if not data.is_file():
        raise Refused(f"{data}: no such file (the manifest's data file)")
    digest, size = file_sha256(data)
    if (digest, size) != (want_sha, want_size):
        raise Tampered(
            f"{data}: SHA-256 {digest[:16]}... ({size} bytes), the manifest says "
            f"{want_sha[:16]}... ({want_size} bytes)"
        )
    tally = Tally()
    try:
        for row in read_archive(data, month):
            tally.add(row[0], row[1], row[6].hex(), row[7].hex())
    except Tampered as exc:
        raise Tampered(f"{data}: {exc}") from None
    if tally.lines != want_lines or tally.tables() != want_tables:
        found = {s["table"]: s for s in tally.tables()}
        said = {s.get("table"): s for s in want_tables if isinstance(s, dict)}
        differ = sorted(str(t) for t in set(found) | set(said) if found.get(t) != said.get(t))
        raise Tampered(
            f"{manifest_path}: {tally.lines} lines in the file, the manifest says {want_lines}; "
            f"tables that differ: {', '.join(differ[:5]) or 'none'}"
        )
    return manifest, manifest_sha, month


# --- the database side ----------------------------------------------------------------------


def write_json(path: Path, content: dict[str, Any]) -> str:
    raw = (json.dumps(content, indent=1, ensure_ascii=False) + "\n").encode()
    part = path.with_name(path.name + ".part")
    with part.open("xb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    part.rename(path)
    fsync_dir(path.parent)
    return hashlib.sha256(raw).hexdigest()
