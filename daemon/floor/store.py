"""The floor's PostgreSQL store: migrations, the ingest of a batch, and the queries.

`ingest` takes a batch of stream messages and, in ONE transaction: locks the rows of the tables
it touches (so two floors on one database cannot interleave a table), judges every line with
`Custody`, copies the new lines into `journal_lines`, writes the derived rows (violations,
overrides, device faults, settlements, rounds, each table's current state), the chain alerts and
the stream cursor. The consumer acks the messages only after that commit. A message delivered
again is judged a duplicate (same seq, same bytes) and writes nothing, so redelivery is harmless.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from importlib.resources import files
from typing import Any

import psycopg
import structlog
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from daemon.floor.custody import Alert, Custody
from daemon.floor.derived import _Derived, _round_text, _TableState
from daemon.journal.format import Record, decode_line

log = structlog.get_logger("tabled.floor")

MIGRATIONS = files("daemon.floor") / "migrations"
MIGRATION_LOCK = 0x7AB1ED_F1  # pg_advisory_lock key: one floor migrates at a time


@dataclass(frozen=True)
class Incoming:
    """One stream message: its subject, body (the journal line) and stream sequence."""

    subject: str
    data: bytes
    stream_seq: int = 0


@dataclass
class BatchResult:
    inserted: int = 0
    duplicates: int = 0
    alerts: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[dict[str, Any]] = field(default_factory=list)
    tables: dict[str, int] = field(default_factory=dict)  # table -> last seq after the batch
    violations: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)


HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")  # goes into COPY as it is
NULL = "\\N"  # COPY text format's NULL
_COPY_SPECIAL = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value: str) -> str:
    """A text value in COPY's text format (backslash, tab, newline and return escaped)."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(_COPY_SPECIAL)
    return value


def month_start(ts: datetime) -> datetime:
    return ts.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month(start: datetime) -> datetime:
    return (start + timedelta(days=32)).replace(day=1)


def partition_name(start: datetime) -> str:
    return f"journal_lines_y{start.year:04d}m{start.month:02d}"


def parse_ts(text: str) -> datetime:
    ts = datetime.fromisoformat(text)
    if ts.tzinfo is None:
        raise ValueError("ts has no time zone")
    return ts


class Store:
    """One writer connection (the consumer's) and one reader connection (the API's)."""

    def __init__(self, dsn: str, subject_prefix: str = "tabled") -> None:
        self.dsn = dsn
        self.prefix = subject_prefix
        self._writer: psycopg.AsyncConnection[Any] | None = None
        self._reader: psycopg.AsyncConnection[dict[str, Any]] | None = None
        self._months: set[datetime] = set()
        self._devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]] = {}

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

    def _decode(self, msg: Incoming) -> tuple[Record | None, datetime | None, Alert | None]:
        subject_table = msg.subject.removeprefix(self.prefix + ".").split(".", 1)[0]
        try:
            rec = decode_line(msg.data)
            ts = parse_ts(rec.ts)
            if HEX_DIGEST.fullmatch(rec.prev) is None:
                raise ValueError("prev is not a SHA-256 hex digest")
        except ValueError as exc:
            return (
                None,
                None,
                Alert(
                    subject_table or "?",
                    0,
                    "malformed",
                    details={"subject": msg.subject, "problem": str(exc)},
                    evidence=msg.data[:65536],
                ),
            )
        if rec.table != subject_table:
            return (
                None,
                None,
                Alert(
                    subject_table or "?",
                    rec.seq,
                    "malformed",
                    actual_hash=rec.hash,
                    details={
                        "subject": msg.subject,
                        "problem": f"the subject names table {subject_table!r}, "
                        f"the line {rec.table!r}",
                    },
                    evidence=msg.data[:65536],
                ),
            )
        return rec, ts, None

    async def ingest(self, batch: Sequence[Incoming], stream: str = "TABLED") -> BatchResult:
        result = BatchResult()
        by_table: dict[str, list[tuple[Record, datetime]]] = {}
        alerts: list[Alert] = []
        for msg in batch:
            rec, ts, bad = self._decode(msg)
            if bad is not None:
                alerts.append(bad)
            elif rec is not None and ts is not None:
                by_table.setdefault(rec.table, []).append((rec, ts))
        conn = await self.writer()
        await self._ensure_partitions(
            conn, (month_start(ts) for lines in by_table.values() for _, ts in lines)
        )
        stream_seq = max((m.stream_seq for m in batch), default=0)
        async with conn.transaction():
            await self._ingest_tx(conn, by_table, alerts, result)
            if stream_seq:
                await conn.execute(
                    "INSERT INTO stream_cursor (stream, stream_seq) VALUES (%s, %s) "
                    "ON CONFLICT (stream) DO UPDATE SET stream_seq = "
                    "greatest(stream_cursor.stream_seq, excluded.stream_seq), updated_at = now()",
                    (stream, stream_seq),
                )
        return result

    async def _ingest_tx(  # noqa: PLR0915 - one pass over a batch, in the order it commits
        self,
        conn: psycopg.AsyncConnection[Any],
        by_table: dict[str, list[tuple[Record, datetime]]],
        alerts: list[Alert],
        result: BatchResult,
    ) -> None:
        tables = sorted(by_table)
        heads: dict[str, tuple[Any, ...]] = {}
        if tables:
            await conn.execute(
                "INSERT INTO floor_tables (table_id) SELECT unnest(%s::text[]) "
                "ON CONFLICT DO NOTHING",
                (tables,),
            )
            cur = await conn.execute(
                "SELECT table_id, last_seq, head_hash, contiguous_seq, game, phase, state, "
                "reason, round, pending_overrides FROM floor_tables "
                "WHERE table_id = ANY(%s) ORDER BY table_id FOR UPDATE",
                (tables,),
            )
            heads = {row[0]: row for row in await cur.fetchall()}
        copy_rows: list[str] = []
        derived = _Derived()
        table_updates: list[tuple[Any, ...]] = []
        filled_tables: list[str] = []
        for table in tables:
            recs = sorted(by_table[table], key=lambda item: item[0].seq)
            head = heads[table]
            last_seq, head_hash, contiguous = int(head[1]), head[2], int(head[3])
            game, phase, state, reason, rnd, pending = head[4:10]
            custody = Custody(table, int(last_seq), head_hash.hex() if head_hash else None)
            table_text = _copy_text(table)
            below = {r.seq for r, _ in recs if r.seq <= last_seq}
            if below:
                wanted = sorted({s + d for s in below for d in (-1, 0, 1)} - {0})
                cur = await conn.execute(
                    "SELECT seq, hash, prev FROM journal_lines WHERE table_id = %s "
                    "AND seq = ANY(%s)",
                    (table, wanted),
                )
                for seq, digest, prev in await cur.fetchall():
                    custody.known[int(seq)] = (bytes(digest).hex(), bytes(prev).hex())
            now_state = _TableState(game, phase, state, reason, rnd, int(pending))
            last_ts: datetime | None = None
            last_event: str | None = None
            inserted_here = 0
            for rec, ts in recs:
                verdict, found = custody.judge(rec)
                alerts.extend(found)
                if verdict in ("duplicate", "fork"):
                    result.duplicates += verdict == "duplicate"
                    continue
                inserted_here += 1
                rnd_text = _round_text(rec.round_id)
                copy_rows.append(
                    f"{table_text}\t{rec.seq}\t{ts.isoformat()}\t{_copy_text(rec.event)}\t"
                    f"{NULL if rnd_text is None else _copy_text(rnd_text)}\t"
                    f"{_copy_text(rec.actor)}\t\\\\x{rec.hash}\t\\\\x{rec.prev}\t"
                    f"\\\\x{rec.line.hex()}\n"
                )
                derived.add(rec, ts, self._devices)
                if verdict == "new":
                    now_state.apply(rec)
                    last_ts, last_event = ts, rec.event
                else:
                    filled_tables.append(table)
            if inserted_here == 0 and custody.last_seq == last_seq:
                continue
            new_gap = any(a.kind == "gap" and a.table == table for a in alerts)
            if new_gap:
                contiguous = min(int(contiguous), min(a.seq for a in alerts if a.kind == "gap") - 1)
            elif int(contiguous) == int(last_seq):
                contiguous = custody.last_seq
            result.inserted += inserted_here
            result.tables[table] = custody.last_seq
            table_updates.append(
                (
                    now_state.game,
                    now_state.phase,
                    now_state.state,
                    now_state.reason,
                    now_state.round,
                    custody.last_seq,
                    bytes.fromhex(custody.head_hash) if custody.head_hash else None,
                    contiguous,
                    last_event,
                    last_ts,
                    now_state.pending,
                    inserted_here,
                    table,
                )
            )
        if copy_rows:
            # The rows are formatted here in COPY's text format and sent as one buffer: the
            # hashes are already hex (bytea's input form), so nothing is converted twice.
            async with conn.cursor().copy(
                "COPY journal_lines (table_id, seq, ts, event, round, actor, hash, prev, line) "
                "FROM STDIN"
            ) as copy:
                await copy.write("".join(copy_rows).encode())
        await derived.write(conn, self._devices)
        result.violations, result.overrides, result.faults = (
            derived.violation_dicts(),
            derived.override_dicts(),
            derived.fault_dicts(),
        )
        if table_updates:
            await conn.execute(
                "UPDATE floor_tables t SET game = u.game, phase = u.phase, state = u.state, "
                "reason = u.reason, round = u.round, last_seq = u.last_seq, "
                "head_hash = u.head_hash, contiguous_seq = u.contiguous_seq, "
                "last_event = coalesce(u.last_event, t.last_event), "
                "last_ts = coalesce(u.last_ts, t.last_ts), "
                "pending_overrides = u.pending, lines = t.lines + u.lines, received_at = now() "
                "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::bigint[], %s::bytea[], %s::bigint[], %s::text[], %s::timestamptz[], "
                "%s::int[], %s::bigint[], %s::text[]) AS u(game, phase, state, reason, round, "
                "last_seq, head_hash, contiguous_seq, last_event, last_ts, pending, lines, "
                "table_id) WHERE t.table_id = u.table_id",
                [list(column) for column in zip(*table_updates, strict=True)],
            )
        for alert in alerts:
            cur = await conn.execute(
                "INSERT INTO chain_alerts (table_id, seq, kind, expected_hash, actual_hash, "
                "gap_to, details, evidence) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "RETURNING id, detected_at",
                (
                    alert.table,
                    alert.seq,
                    alert.kind,
                    alert.expected_hash,
                    alert.actual_hash,
                    alert.gap_to,
                    Jsonb(alert.details),
                    alert.evidence,
                ),
            )
            made = await cur.fetchone()
            if made is None:
                raise psycopg.DataError("INSERT ... RETURNING returned no row")
            result.alerts.append(_alert_dict(alert, int(made[0]), made[1]))
            log.warning("floor.chain_alert", table=alert.table, seq=alert.seq, kind=alert.kind)
        for table in sorted(set(filled_tables)):
            cur = await conn.execute(
                "UPDATE chain_alerts a SET resolved_at = now() WHERE a.table_id = %s "
                "AND a.kind = 'gap' AND a.resolved_at IS NULL AND (SELECT count(*) "
                "FROM journal_lines l WHERE l.table_id = a.table_id AND l.seq BETWEEN a.seq "
                "AND a.gap_to) = a.gap_to - a.seq + 1 RETURNING id, table_id, seq, gap_to",
                (table,),
            )
            for row in await cur.fetchall():
                result.resolved.append(
                    {"id": row[0], "table": row[1], "seq": row[2], "gap_to": row[3]}
                )
            await conn.execute(
                "UPDATE floor_tables t SET contiguous_seq = coalesce((SELECT min(seq) - 1 "
                "FROM chain_alerts a WHERE a.table_id = t.table_id AND a.kind = 'gap' "
                "AND a.resolved_at IS NULL), t.last_seq) WHERE t.table_id = %s",
                (table,),
            )

    # --- queries (the API's) ---------------------------------------------------------------

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


def _alert_dict(alert: Alert, alert_id: int, detected_at: datetime) -> dict[str, Any]:
    return {
        "id": alert_id,
        "table": alert.table,
        "seq": alert.seq,
        "kind": alert.kind,
        "expected_hash": alert.expected_hash,
        "actual_hash": alert.actual_hash,
        "gap_to": alert.gap_to,
        "details": alert.details,
        "detected_at": detected_at.isoformat(),
        "resolved_at": None,
    }


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
