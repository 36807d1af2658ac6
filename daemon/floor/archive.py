"""`tabled floor archive`: a month of raw journal lines out of PostgreSQL into a file and its
SHA-256 manifest, and back (docs/floor-service.md, "Retention and archives").

- **Archive** (a floor admin): a month's partition of `journal_lines` whose whole month is
  older than `[floor] retention_months` is read in one snapshot, in (table, seq) order, into
  `<partition>-<when>.lines.gz` (the lines' exact bytes, gzip) beside its manifest
  `<...>.manifest.json`. The file is fsynced, read back from disk and checked against what was
  read (every line decoded, each table's seqs, chain and head); only then, in one short
  transaction that first checks no line of that month came in meanwhile, the partition is
  detached and dropped (an empty one takes its place, so a line of that month shipped again
  has somewhere to go) and `floor_archives` records the file's and the manifest's SHA-256.
- **Verify** (anyone, no database): the file's SHA-256 and size against the manifest, every
  line decoded and within the month, each table's first and last seq, count, holes, the links
  that do not chain, the `prev` of its first line and the hash of its last, as the manifest
  says. This is what a lab or an auditor re-checks.
- **Restore** (a floor admin): the same checks, then the database's own record of the archive
  (the manifest's SHA-256 as written at archiving: an edited manifest is refused even if it
  agrees with an edited file), then the chain's joins with the lines the floor holds (the line
  before each table's first, the line after its last, the signed heads of its seqs); then the
  lines go back in one transaction, and each is checked again as the database holds it before it
  commits. A refusal is one line and exit 2, and changes nothing.

The file and its manifest, and the checks that need no database, are in
`daemon/floor/archive_file.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from daemon.api.tokens import Principal
from daemon.floor.admin import Refused, fail, load, on_store, parser, principal
from daemon.floor.archive_file import (
    FORMAT,
    Hashing,
    Month,
    TableSpan,
    Tally,
    Tampered,
    file_sha256,
    read_archive,
    retention_cutoff,
    verify_archive,
    write_json,
)
from daemon.floor.config import FloorConfig
from daemon.floor.storebase import next_month, partition_name
from daemon.journal.format import GENESIS, fsync_dir

PROG = "tabled floor archive"
PARTITION = "journal_lines_y{year:04d}m{month:02d}"
LOCK_TIMEOUT = "30s"  # how long the last step waits for the floor's writers to let go


def months_held(conn: psycopg.Connection[Any]) -> list[Month]:
    """The monthly partitions of `journal_lines`, oldest first."""
    rows = conn.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'journal_lines'::regclass"
    ).fetchall()
    found = []
    for (name,) in rows:
        with contextlib.suppress(ValueError):
            start = datetime.strptime(name, "journal_lines_y%Ym%m").replace(tzinfo=UTC)
            if partition_name(start) == name:
                found.append(Month(start, next_month(start)))
    return sorted(found, key=lambda m: m.start)


def _write(conn: psycopg.Connection[Any], month: Month, data: Path) -> Tally:
    """The month's lines, in one snapshot, into `data` (fsynced); each table's span."""
    tally = Tally()
    part = data.with_name(data.name + ".part")
    with part.open("xb") as raw:
        hashing = Hashing(raw)
        with gzip.GzipFile(fileobj=hashing, mode="wb", compresslevel=1, mtime=0) as out:
            query = sql.SQL(
                "COPY (SELECT table_id, seq, hash, prev, line FROM {} ORDER BY table_id, seq) "
                "TO STDOUT (FORMAT BINARY)"
            ).format(sql.Identifier(month.partition))
            with conn.cursor().copy(query) as copy:
                copy.set_types(["text", "int8", "bytea", "bytea", "bytea"])
                for table, seq, digest, prev, stored in copy.rows():
                    line = bytes(stored)
                    if hashlib.sha256(line).digest() != bytes(digest):
                        raise Refused(
                            f"{table} seq {seq}: the stored line does not hash to its stored hash "
                            "(the database was altered); nothing archived"
                        )
                    if not line.endswith(b"\n") or b"\n" in line[:-1]:
                        raise Refused(
                            f"{table} seq {seq}: the stored line is not one line ending in a "
                            "newline, which the archive's format keeps lines as; nothing archived"
                        )
                    tally.add(table, seq, bytes(digest).hex(), bytes(prev).hex())
                    out.write(line)
        raw.flush()
        os.fsync(raw.fileno())
    part.rename(data)
    fsync_dir(data.parent)
    return tally


def _unchanged(conn: psycopg.Connection[Any], month: Month, spans: list[TableSpan]) -> str | None:
    """Under the lock: what the partition holds that the archive does not (a line of that month
    stored since the snapshot), as index probes: a seq outside a table's span or in its holes,
    a table of the floor the archive has no line of. None if nothing."""
    part = sql.Identifier(month.partition)
    known = {span.table for span in spans}
    for span in spans:
        ranges = [[0, span.first_seq - 1], *span.holes, [span.last_seq + 1, 2**62]]
        for low, high in ranges:
            found = conn.execute(
                sql.SQL("SELECT seq FROM {} WHERE table_id = %s AND seq BETWEEN %s AND %s LIMIT 1")
                .format(part), (span.table, low, high),
            ).fetchone()  # fmt: skip
            if found is not None:
                return f"{span.table} seq {found[0]}"
    others = [
        t for (t,) in conn.execute("SELECT table_id FROM floor_tables").fetchall() if t not in known
    ]
    for table in others:
        found = conn.execute(
            sql.SQL("SELECT seq FROM {} WHERE table_id = %s LIMIT 1").format(part), (table,)
        ).fetchone()
        if found is not None:
            return f"{table} seq {found[0]}"
    return None


def _record(
    conn: psycopg.Connection[Any], who: Principal, action: str, target: str, *, outcome: str,
    note: str,
) -> None:  # fmt: skip
    conn.execute(
        "INSERT INTO floor_actions (actor, role, action, target, outcome, note) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (who.actor, who.role, action, target, outcome[:500], note[:500]),
    )


def archive_month(
    conn: psycopg.Connection[Any], month: Month, out: Path, *, retention_months: int,
    who: Principal, now: datetime | None = None,
) -> str:  # fmt: skip
    """Archive one month (the module's docstring); the line that says what was done."""
    cutoff = retention_cutoff(now or datetime.now(UTC), retention_months)
    if month.end > cutoff:
        raise Refused(
            f"{month.start:%Y-%m} is within the retention ({retention_months} months: lines "
            f"since {cutoff:%Y-%m-%d} stay in the database)"
        )
    if month not in months_held(conn):
        raise Refused(f"{month.start:%Y-%m}: the floor holds no partition of that month")
    done = conn.execute(
        "SELECT archived_at, file, restored_at FROM floor_archives WHERE partition = %s",
        (month.partition,),
    ).fetchone()
    if done is not None and done[2] is None:
        raise Refused(
            f"{month.start:%Y-%m} was archived at {done[0]:%Y-%m-%d %H:%M} ({done[1]}); "
            "restore it (--restore) before archiving it again"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{month.partition}-{stamp}"
    data, manifest_path = out / f"{base}.lines.gz", out / f"{base}.manifest.json"
    written: list[Path] = []
    try:
        written.append(data)
        with conn.transaction():  # one snapshot of the month, however long it takes
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            tally = _write(conn, month, data)
        if tally.lines == 0:
            raise Refused(f"{month.start:%Y-%m}: its partition holds no line; nothing archived")
        digest, size = file_sha256(data)
        manifest = {
            "format": FORMAT, "partition": month.partition, "from": month.start.isoformat(),
            "to": month.end.isoformat(), "file": data.name, "file_sha256": digest,
            "file_bytes": size, "compression": "gzip", "order": "table_id, seq",
            "lines": tally.lines, "retention_months": retention_months,
            "archived_at": datetime.now(UTC).isoformat(), "archived_by": who.actor,
            "tables": tally.tables(),
        }  # fmt: skip
        written.append(manifest_path)
        manifest_sha = write_json(manifest_path, manifest)
        verify_archive(manifest_path)  # read back from disk: the file is what was read
        with conn.transaction():
            conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
            conn.execute("LOCK TABLE journal_lines IN ACCESS EXCLUSIVE MODE")
            came = _unchanged(conn, month, tally.spans)
            if came is not None:
                raise Refused(
                    f"{month.start:%Y-%m}: a line of that month was stored while archiving "
                    f"({came}); nothing dropped, run it again"
                )
            part = sql.Identifier(month.partition)
            conn.execute(sql.SQL("ALTER TABLE journal_lines DETACH PARTITION {}").format(part))
            conn.execute(sql.SQL("DROP TABLE {}").format(part))
            conn.execute(
                sql.SQL("CREATE TABLE {} PARTITION OF journal_lines FOR VALUES FROM ({}) TO ({})")
                .format(part, sql.Literal(month.start), sql.Literal(month.end))
            )  # fmt: skip
            conn.execute(
                "INSERT INTO floor_archives (partition, month_from, month_to, file, file_sha256, "
                "manifest_sha256, lines, tables, archived_by) VALUES (%s, %s, %s, %s, %s, %s, "
                "%s, %s, %s) ON CONFLICT (partition) DO UPDATE SET file = excluded.file, "
                "file_sha256 = excluded.file_sha256, manifest_sha256 = excluded.manifest_sha256, "
                "lines = excluded.lines, tables = excluded.tables, archived_at = now(), "
                "archived_by = excluded.archived_by, restored_at = NULL, restored_by = NULL",
                (month.partition, month.start, month.end, data.name, digest, manifest_sha,
                 tally.lines, len(tally.spans), who.actor),
            )  # fmt: skip
            note = f"{data.name} sha256 {digest}; manifest sha256 {manifest_sha}"
            _record(conn, who, "archive", month.partition, outcome="done", note=note)
    except BaseException:
        for path in written:  # not recorded, not the month's archive: nothing points to it
            with contextlib.suppress(OSError):
                path.unlink()
            with contextlib.suppress(OSError):
                path.with_name(path.name + ".part").unlink()
        raise
    return (
        f"archived {month.partition}: {tally.lines} lines of {len(tally.spans)} tables -> "
        f"{data} (sha256 {digest}), manifest {manifest_path.name} (sha256 {manifest_sha})"
    )


def _joins(conn: psycopg.Connection[Any], month: Month, spans: Sequence[dict[str, Any]]) -> None:
    """The archive's chain against the one the floor holds: Tampered if they do not join."""
    for span in spans:
        table, first, last = span["table"], int(span["first_seq"]), int(span["last_seq"])
        before = conn.execute(
            "SELECT hash FROM journal_lines WHERE table_id = %s AND seq = %s LIMIT 1",
            (table, first - 1),
        ).fetchone()
        want = GENESIS if first == 1 else (bytes(before[0]).hex() if before else None)
        if want is not None and want != span["first_prev"]:
            raise Tampered(f"{table} seq {first}: its prev is not the hash of seq {first - 1} held")
        after = conn.execute(
            "SELECT prev FROM journal_lines WHERE table_id = %s AND seq = %s AND NOT (ts >= %s "
            "AND ts < %s) LIMIT 1",
            (table, last + 1, month.start, month.end),
        ).fetchone()
        if after is not None and bytes(after[0]).hex() != span["last_hash"]:
            raise Tampered(f"{table} seq {last}: seq {last + 1} held names another hash as prev")


def _check_stored(conn: psycopg.Connection[Any], manifest: dict[str, Any]) -> None:
    """After the insert, before the commit: every line of the archive is stored, its bytes
    hashing (in the database) to the hash the file's line has."""
    row = conn.execute(
        "SELECT count(*) FROM restoring r JOIN journal_lines l USING (table_id, seq, ts) "
        "WHERE l.hash = r.hash AND sha256(l.line) = r.hash"
    ).fetchone()
    stored = int(row[0]) if row else 0
    if stored != int(manifest["lines"]):
        raise Tampered(
            f"{manifest['partition']}: {stored} of the archive's {manifest['lines']} lines are "
            "stored as they hash after the insert"
        )


def restore(conn: psycopg.Connection[Any], path: Path, who: Principal) -> str:
    manifest, manifest_sha, month = verify_archive(path)
    data = path if path.name.endswith(".lines.gz") else path.with_name(manifest["file"])
    done = conn.execute(
        "SELECT manifest_sha256, file_sha256, restored_at FROM floor_archives WHERE partition = %s",
        (month.partition,),
    ).fetchone()
    if done is None:
        raise Refused(
            f"this database has no record of archiving {month.partition}; an archive is "
            "restored into the floor that wrote it (--verify checks it anywhere)"
        )
    if done[0] != manifest_sha or done[1] != manifest["file_sha256"]:
        raise Tampered(
            f"{path}: the manifest's SHA-256 {manifest_sha[:16]}... is not the one recorded at "
            f"archiving ({str(done[0])[:16]}...)"
        )
    if done[2] is not None:
        raise Refused(f"{month.partition} was restored already, at {done[2]:%Y-%m-%d %H:%M}")
    spans = manifest["tables"]
    _joins(conn, month, spans)
    heads = conn.execute(
        "SELECT h.table_id, h.seq, h.hash FROM signed_heads h JOIN unnest(%s::text[], "
        "%s::bigint[], %s::bigint[]) AS s(table_id, first_seq, last_seq) USING (table_id) "
        "WHERE h.seq BETWEEN s.first_seq AND s.last_seq",
        ([s["table"] for s in spans], [s["first_seq"] for s in spans],
         [s["last_seq"] for s in spans]),
    ).fetchall()  # fmt: skip
    signed = {(t, int(seq)): bytes(h) for t, seq, h in heads}
    part = sql.Identifier(month.partition)
    with conn.transaction():
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} PARTITION OF journal_lines FOR VALUES FROM ({}) "
                "TO ({})"
            ).format(part, sql.Literal(month.start), sql.Literal(month.end))
        )
        conn.execute(
            "CREATE TEMP TABLE restoring (LIKE journal_lines INCLUDING DEFAULTS) ON COMMIT DROP"
        )
        with conn.cursor().copy(
            "COPY restoring (table_id, seq, ts, event, round, actor, hash, prev, line) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(
                ["text", "int8", "timestamptz", "text", "text", "text", "bytea", "bytea", "bytea"]
            )
            for row in read_archive(data, month):
                if signed.get((row[0], row[1]), row[6]) != row[6]:
                    raise Tampered(f"{row[0]} seq {row[1]}: its signed head names another hash")
                copy.write_row(row)
        other = conn.execute(
            "SELECT r.table_id, r.seq FROM restoring r JOIN journal_lines l USING (table_id, seq) "
            "WHERE l.hash <> r.hash LIMIT 1"
        ).fetchone()
        if other is not None:
            raise Tampered(f"{other[0]} seq {other[1]}: the floor holds other bytes at that seq")
        cur = conn.execute(
            "INSERT INTO journal_lines SELECT * FROM restoring ON CONFLICT DO NOTHING"
        )
        inserted = cur.rowcount
        _check_stored(conn, manifest)
        conn.execute(
            "UPDATE floor_archives SET restored_at = now(), restored_by = %s WHERE partition = %s",
            (who.actor, month.partition),
        )
        _record(conn, who, "restore", month.partition, outcome="done",
                note=f"{manifest['file']}; manifest sha256 {manifest_sha}")  # fmt: skip
    again = int(manifest["lines"]) - inserted
    return (
        f"restored {month.partition}: {manifest['lines']} lines of {len(spans)} tables from "
        f"{data.name}, hashes and chain verified"
        + (f" ({again} of them were held already)" if again else "")
    )


# --- the command line ---------------------------------------------------------------------------


def list_months(conn: psycopg.Connection[Any], retention_months: int) -> Iterable[dict[str, Any]]:
    cutoff = retention_cutoff(datetime.now(UTC), retention_months)
    archives = {
        row[0]: row[1:]
        for row in conn.execute(
            "SELECT partition, file, archived_at, restored_at FROM floor_archives"
        ).fetchall()
    }
    for month in months_held(conn):
        rows = conn.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE relname = %s", (month.partition,)
        ).fetchone()
        file, at, back = archives.get(month.partition, (None, None, None))
        yield {
            "partition": month.partition, "month": f"{month.start:%Y-%m}",
            "rows_estimate": max(int(rows[0]), 0) if rows else 0,
            "past_retention": month.end <= cutoff, "archived_at": at and at.isoformat(),
            "file": file, "restored_at": back and back.isoformat(),
        }  # fmt: skip


def _admin(config: FloorConfig, token_file: Path | None) -> Principal:
    who = principal(config.api.tokens_file, token_file)
    if who.role != "admin":
        raise Refused(f"{who.actor} is {who.role}; archiving and restoring take a floor admin")
    return who


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    if args.verify is not None:
        try:
            manifest, sha, _ = verify_archive(args.verify)
        except (Tampered, Refused) as exc:
            return fail(PROG, f"refused: {exc}", 2)
        print(
            f"verified {manifest['file']}: {manifest['lines']} lines of "
            f"{len(manifest['tables'])} tables, as its manifest says (manifest sha256 {sha})"
        )
        return 0
    config = load(PROG, args.config)
    try:
        who = None if args.list else _admin(config, args.token_file)
        months = [Month.parse(m) for m in args.month or ()]
        if args.restore is None and not args.list and args.out is None:
            raise Refused("--out DIR is needed to archive (or --list, --restore, --verify)")
    except Refused as exc:
        return fail(PROG, str(exc), 2)
    try:
        asyncio.run(on_store(config, _nothing))  # the migrations, floor_archives among them
        with psycopg.connect(config.floor.database, autocommit=True) as conn:
            if args.list:
                for row in list_months(conn, config.floor.retention_months):
                    print(json.dumps(row))
                return 0
            if who is None:
                raise AssertionError("archiving without an admin")
            if args.restore is not None:
                try:
                    print(restore(conn, args.restore, who))
                except (Tampered, Refused) as exc:
                    _refused(conn, who, "restore", str(args.restore), str(exc))
                    return fail(PROG, f"refused: {exc}; nothing was restored", 2)
                return 0
            return _archive_all(conn, config, args.out, months, who)
    except psycopg.Error as exc:
        return fail(PROG, f"database: {str(exc).strip()}", 1)
    except OSError as exc:
        return fail(PROG, f"{exc.filename or ''}: {exc.strerror}", 1)


def _archive_all(conn: psycopg.Connection[Any], config: FloorConfig, out: Path,
                 months: list[Month], who: Principal) -> int:  # fmt: skip
    retention = config.floor.retention_months
    if not out.is_dir():
        return fail(PROG, f"--out {out}: not a folder", 2)
    if not months:  # every month past the retention, not archived yet, that holds lines
        cutoff = retention_cutoff(datetime.now(UTC), retention)
        archived = {
            row[0]
            for row in conn.execute(
                "SELECT partition FROM floor_archives WHERE restored_at IS NULL"
            ).fetchall()
        }
        months = [m for m in months_held(conn) if m.end <= cutoff and m.partition not in archived]
        if not months:
            print(f"nothing to archive: no month before {cutoff:%Y-%m-%d} holds lines")
            return 0
    for month in months:
        try:
            print(archive_month(conn, month, out, retention_months=retention, who=who), flush=True)
        except Refused as exc:
            if "holds no line" in str(exc) and len(months) > 1:
                continue
            _refused(conn, who, "archive", month.partition, str(exc))
            return fail(PROG, f"refused: {exc}", 2)
    return 0


def _refused(conn: psycopg.Connection[Any], who: Principal, action: str, target: str,
             why: str) -> None:  # fmt: skip
    """A refusal recorded in `floor_actions`, as every floor admin act is."""
    with contextlib.suppress(psycopg.Error), conn.transaction():
        _record(conn, who, action, target[:200], outcome=f"refused: {why}", note="")


async def _nothing(_: Any) -> None:
    return None


def _parser() -> argparse.ArgumentParser:
    made = parser(
        PROG,
        "Archive months of raw journal lines older than [floor] retention_months into a file "
        "and its SHA-256 manifest, restore one, or verify one. Archiving and restoring take a "
        "floor admin's token ($TABLED_TOKEN or --token-file).",
        "its database, tokens file and retention_months",
    )
    what = made.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="the months held, one JSON line each")
    what.add_argument("--restore", type=Path, metavar="FILE", help="an archive's manifest or file")
    what.add_argument("--verify", type=Path, metavar="FILE",
                      help="check an archive against its manifest (no database)")  # fmt: skip
    made.add_argument("--out", type=Path, metavar="DIR", help="the folder the archives go to")
    made.add_argument(
        "--month", action="append", metavar="YYYY-MM",
        help="this month (repeatable); else each month past the retention",
    )  # fmt: skip
    made.add_argument("--token-file", type=Path, help="read the token here (else $TABLED_TOKEN)")
    return made
