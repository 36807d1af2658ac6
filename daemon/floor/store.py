"""The floor's PostgreSQL store: migrations, the ingest of a batch, and the queries.

`ingest` takes a batch of stream messages and, in ONE transaction: locks the rows of the tables
it touches (so two floors on one database cannot interleave a table), judges every line with
`Custody`, copies the new lines into `journal_lines`, writes the derived rows (violations,
overrides, device faults, settlements, rounds, each table's current state), the audited fields
the integrity pass reads (daemon/floor/facts.py), the chain alerts and the stream cursor. The
consumer acks the messages only after that commit. A message delivered again is judged a
duplicate (same seq, same bytes) and writes nothing, so redelivery is harmless.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from importlib.resources import files
from typing import Any

import psycopg
import structlog
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from psycopg import sql
from psycopg.rows import dict_row

from daemon.floor.intake import _Intake
from daemon.floor.proving import _Proving
from daemon.floor.storebase import (
    DECODED_WAITING,
    PENDING_ALERT_LINES,
    PENDING_WINDOW,
    TURN_LINES,
    BatchResult,
    Decoded,
    Incoming,
    Parsed,
    TableKeyRow,
    WaitingKey,
    _Work,
    month_start,
    next_month,
    parse_ts,
    partition_name,
)
from daemon.floor.writing import _Writing
from daemon.journal.format import MAX_LINE_BYTES

log = structlog.get_logger("tabled.floor")

__all__ = [
    "PENDING_ALERT_LINES",
    "PENDING_WINDOW",
    "BatchResult",
    "Incoming",
    "Store",
    "dumps",
    "month_start",
    "parse_ts",
    "partition_name",
]

MIGRATIONS = files("daemon.floor") / "migrations"
MIGRATION_LOCK = 0x7AB1ED_F1  # pg_advisory_lock key: one floor migrates at a time


class Store(_Intake, _Proving, _Writing):
    """One writer connection (the consumer's) and one reader connection (the API's)."""

    def __init__(
        self, dsn: str, subject_prefix: str = "tabled", max_line_bytes: int = MAX_LINE_BYTES
    ) -> None:
        self.dsn = dsn
        self.prefix = subject_prefix
        self._writer: psycopg.AsyncConnection[Any] | None = None
        self._reader: psycopg.AsyncConnection[dict[str, Any]] | None = None
        self._months: set[datetime] = set()
        self._devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]] = {}
        self.max_line_bytes = max_line_bytes
        self._keys: dict[str, list[TableKeyRow]] = {}  # the registry: table -> its keys
        self._keys_at = 0.0
        self._parsed: dict[str, Ed25519PublicKey] = {}
        self._pending_tables: set[str] | None = None  # tables with lines in pending_lines
        self._pending_checked = 0.0  # monotonic time of the last `unproven` check
        # Tables with more lines waiting than a batch reads (PENDING_WINDOW): read on by the
        # next batch, an idle one too (`check_unproven`).
        self.backlog: set[str] = set()
        self._months_new: set[datetime] = set()
        self._decoded: dict[WaitingKey, Decoded] = {}  # lines waiting, decoded (DECODED_WAITING)
        self._subjects: dict[str, tuple[str, str, bool]] = {}  # split (SUBJECTS_KEPT)

    # --- connections ---------------------------------------------------------------------

    async def writer(self) -> psycopg.AsyncConnection[Any]:
        if self._writer is None or self._writer.closed or self._writer.broken:
            self._writer = await psycopg.AsyncConnection.connect(self.dsn)
            self._months.clear()
            self._devices.clear()
        return self._writer

    async def reader(self) -> psycopg.AsyncConnection[dict[str, Any]]:
        if self._reader is None or self._reader.closed or self._reader.broken:
            self._reader = await psycopg.AsyncConnection.connect(
                self.dsn, autocommit=True, row_factory=dict_row
            )
        return self._reader

    async def close(self) -> None:
        for conn in (self._writer, self._reader):
            if conn is not None and not conn.closed:
                await conn.close()
        self._writer = self._reader = None

    # --- migrations ----------------------------------------------------------------------

    async def migrate(self) -> list[str]:
        """Apply the migration files not yet applied, in order; the names applied."""
        conn = await self.writer()
        applied: list[str] = []
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
                "name text NOT NULL, sha256 text NOT NULL, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            )
            cur = await conn.execute("SELECT version, name, sha256 FROM schema_migrations")
            done = {row[0]: (row[1], row[2]) for row in await cur.fetchall()}
            scripts = sorted(
                (p for p in MIGRATIONS.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name
            )
            for script in scripts:
                version = int(script.name.split("_", 1)[0])
                sql = script.read_text(encoding="utf-8")
                digest = hashlib.sha256(sql.encode()).hexdigest()
                if version in done:
                    if done[version][1] != digest:
                        raise RuntimeError(
                            f"migration {script.name} was changed after it was applied "
                            "(write a new migration instead)"
                        )
                    continue
                await conn.execute(sql.encode())
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, sha256) VALUES (%s, %s, %s)",
                    (version, script.name, digest),
                )
                applied.append(script.name)
        for name in applied:
            log.info("floor.migrated", migration=name)
        return applied

    async def _ensure_partitions(
        self, conn: psycopg.AsyncConnection[Any], months: Iterable[datetime]
    ) -> None:
        for start in sorted(set(months) - self._months):
            await conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} PARTITION OF journal_lines "
                    "FOR VALUES FROM ({}) TO ({})"
                ).format(
                    sql.Identifier(partition_name(start)),
                    sql.Literal(start),
                    sql.Literal(next_month(start)),
                )
            )
            await conn.commit()
            self._months.add(start)

    async def stream_cursor(self, stream: str) -> int:
        conn = await self.writer()
        cur = await conn.execute(
            "SELECT stream_seq FROM stream_cursor WHERE stream = %s", (stream,)
        )
        row = await cur.fetchone()
        await conn.commit()
        return int(row[0]) if row else 0

    # --- ingest --------------------------------------------------------------------------

    # --- the registry ----------------------------------------------------------------------

    async def ingest(
        self,
        batch: Sequence[Incoming],
        stream: str = "TABLED",
        parsed: Sequence[Parsed | None] = (),
    ) -> BatchResult:
        """`parsed`: the batch's lines as `parse_ahead` decoded them, or nothing (decoded here)."""
        result = BatchResult()
        conn = await self.writer()
        prefix = self.prefix + "."
        # A batch's subjects are a few hundred (a table's events): each split once.
        names = {s.removeprefix(prefix).partition(".")[0] for s in {m.subject for m in batch}}
        await self._registry(conn, names)
        work = _Work()
        for start in range(0, len(batch), TURN_LINES):
            self._sort(batch[start : start + TURN_LINES], work, parsed[start : start + TURN_LINES])
            await self._turn(TURN_LINES)
        stream_seq = max((m.stream_seq for m in batch), default=0)
        pending_before = set(self._pending_tables or ())
        try:
            async with conn.transaction():
                by_table = await self._prove(conn, work)
                await self._ensure_partitions_tx(conn, _months(by_table))
                await self._ingest_tx(conn, by_table, work.alerts, result)
                await self._quarantine(conn, work, result)
                await self._unproven_tx(conn, result)
                if stream_seq:
                    await conn.execute(
                        "INSERT INTO stream_cursor (stream, stream_seq) VALUES (%s, %s) "
                        "ON CONFLICT (stream) DO UPDATE SET stream_seq = greatest("
                        "stream_cursor.stream_seq, excluded.stream_seq), updated_at = now()",
                        (stream, stream_seq),
                    )
        except BaseException:
            self._pending_tables = None  # reloaded: the rolled-back batch may have changed it
            self._months_new.clear()
            if work.rotated:
                self._keys_at = 0.0
            raise
        self._months |= self._months_new
        self._months_new.clear()
        decoded = self._decoded
        for key in work.unwaited:
            decoded.pop(key, None)
        for key, value in work.waited:
            if len(decoded) >= DECODED_WAITING:
                break
            decoded[key] = value
        if work.rotated:
            self._keys_at = 0.0  # the new keys are read at the next batch
        if self._pending_tables is not None:
            self._pending_tables = (pending_before | work.now_pending) - work.cleared
        result.quarantined = len(work.held)
        return result

    async def check_unproven(self) -> BatchResult:
        """What an idle floor (no message this second) still does: a window more of each
        backlog read and proven, and the `unproven` alerts brought up to date (lines that
        stopped coming still age): a batch of no message."""
        return await self.ingest([])

    async def query(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[dict[str, Any]]:
        for attempt in (1, 2):
            conn = await self.reader()
            try:
                cur = await conn.execute(sql.encode(), params)
                return await cur.fetchall()
            except psycopg.OperationalError:
                # A restarted server leaves the connection broken: one fresh try.
                if attempt == 2 or not conn.broken:
                    raise
                self._reader = None
        raise AssertionError("unreachable")


def _months(by_table: Mapping[str, Sequence[Decoded]]) -> set[datetime]:
    """The months of a batch's lines (their partitions): one when its earliest and latest
    line are in the same month (a batch is seconds of play, or minutes of a backlog)."""
    stamps = [ts for lines in by_table.values() for _, ts in lines]
    if not stamps:
        return set()
    first = month_start(min(stamps))
    if first == month_start(max(stamps)):
        return {first}
    return {month_start(ts) for ts in stamps}


def dumps(value: Any) -> str:
    def default(v: Any) -> Any:
        if isinstance(v, datetime):
            return v.isoformat()
        if isinstance(v, Decimal):
            return str(v)
        if isinstance(v, bytes | memoryview):
            return bytes(v).hex()
        raise TypeError(type(v).__name__)

    return json.dumps(value, default=default, ensure_ascii=False)
