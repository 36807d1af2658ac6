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

import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from importlib.resources import files
from typing import Any

import psycopg
import structlog
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from daemon.floor.custody import Alert, Custody
from daemon.floor.derived import _Derived, _round_text, _TableState
from daemon.floor.facts import Facts
from daemon.floor.proof import Candidate, Verdicts, prove
from daemon.journal.format import MAX_LINE_BYTES, Record, decode_line
from daemon.journal.provenance import (
    CONFLICT_SUBJECT,
    HEAD_SUBJECT,
    KEY_ROTATED,
    BadHead,
    Head,
    fingerprint,
    parse_head,
    parse_public,
    verify_head,
    verify_rotation,
)

log = structlog.get_logger("tabled.floor")

MIGRATIONS = files("daemon.floor") / "migrations"
MIGRATION_LOCK = 0x7AB1ED_F1  # pg_advisory_lock key: one floor migrates at a time


@dataclass(frozen=True)
class Incoming:
    """One stream message: its subject, body (the journal line) and stream sequence."""

    subject: str
    data: bytes
    stream_seq: int = 0
    # Its Nats-Msg-Id as received ("" without one); None: not known (lines given in process),
    # not checked. A line's must be the shipper's: "<table>:<seq>" ("...:conflict:<sha16>").
    msg_id: str | None = None


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
    quarantined: int = 0  # messages kept as evidence, not as any table's lines


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


TABLE_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a table id the floor takes (a subject token)
EVIDENCE_BYTES = 65536  # what the quarantine keeps of one message
# Lines waiting for a signed head (`pending_lines`; docs/floor-service.md, "Lines waiting for a
# head"). A table's shipper signs a head every second or 1,000 lines, so a few wait a second or
# two: more than PENDING_ALERT_LINES of a table's, or its oldest waiting PENDING_ALERT_SECONDS,
# is an open `unproven` alert (its counts kept current, checked every PENDING_CHECK_SECONDS),
# resolved once they are proven. A batch reads at most PENDING_WINDOW of a table's waiting lines
# (its lowest seqs), so memory stays bounded whatever waits: the others stay in the database,
# none is lost, and are read as those below them are proven.
PENDING_ALERT_LINES = 5_000
PENDING_ALERT_SECONDS = 30.0
PENDING_CHECK_SECONDS = 5.0
PENDING_WINDOW = 20_000
REGISTRY_SECONDS = 2.0  # the registry is read again this often (enrolments, revocations)


@dataclass(frozen=True)
class TableKeyRow:
    """One of a table's keys, as the registry holds it."""

    id: int
    public: str
    parsed: Ed25519PublicKey
    fingerprint: str
    from_seq: int
    until_seq: int | None
    status: str


@dataclass
class _Held:
    """A message for the quarantine."""

    table: str
    seq: int | None
    kind: str
    reason: str
    subject: str
    body: bytes
    size: int
    digest: str
    want: str | None = None
    from_alert: bool = False

    def row(self, alert_id: int | None) -> tuple[Any, ...]:
        return (self.table, self.seq, self.kind, self.reason, self.subject[:300], self.digest,
                self.body, self.size, alert_id)  # fmt: skip


@dataclass
class _Work:
    """A batch sorted: each table's candidate lines and heads, and what goes to quarantine."""

    lines: dict[str, list[Candidate]] = field(default_factory=dict)
    heads: dict[str, list[tuple[Head, Incoming]]] = field(default_factory=dict)
    alerts: list[Alert] = field(default_factory=list)
    held: list[_Held] = field(default_factory=list)
    new_heads: list[tuple[str, int, bytes, int]] = field(default_factory=list)
    now_pending: set[str] = field(default_factory=set)
    cleared: set[str] = field(default_factory=set)
    rotated: bool = False

    def quarantine(
        self, msg: Incoming, table: str, seq: int | None, kind: str, reason: str
    ) -> None:
        self.held.append(
            _Held(table[:64] or "?", seq, kind, reason, msg.subject, msg.data[:EVIDENCE_BYTES],
                  len(msg.data), hashlib.sha256(msg.data).hexdigest(),
                  from_alert=kind == "malformed" and bool(self.alerts)
                  and self.alerts[-1].evidence == msg.data[:EVIDENCE_BYTES])
        )  # fmt: skip

    def forge(self, table: str, cand: Candidate, want: str, why: str) -> None:
        rec = cand.rec
        self.held.append(
            _Held(table, rec.seq, "forged", why, cand.subject, rec.line[:EVIDENCE_BYTES],
                  len(rec.line), rec.hash, want=want)
        )  # fmt: skip


class Store:
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

    async def _registry(self, conn: psycopg.AsyncConnection[Any], names: Iterable[str]) -> None:
        """Load the enrolled tables' keys, again every `REGISTRY_SECONDS` (an enrolment, a
        re-enrolment's revocation, made by `tabled floor enrol` in another process) and at once
        when a batch names a table it does not know (one query a batch at most)."""
        if self._pending_tables is None:
            cur = await conn.execute("SELECT DISTINCT table_id FROM pending_lines")
            self._pending_tables = {row[0] for row in await cur.fetchall()}
            await conn.commit()
        now = time.monotonic()
        age = now - self._keys_at
        unknown = any(name not in self._keys for name in names)
        if self._keys_at and age < REGISTRY_SECONDS and not unknown:
            return
        cur = await conn.execute(
            "SELECT e.table_id, k.id, k.public_key, k.fingerprint, k.from_seq, k.until_seq, "
            "k.status FROM enrolled_tables e LEFT JOIN table_keys k USING (table_id) ORDER BY k.id"
        )
        keys: dict[str, list[TableKeyRow]] = {}
        for table, key_id, public, print_, from_seq, until_seq, status in await cur.fetchall():
            rows = keys.setdefault(table, [])
            if key_id is None:
                continue
            parsed = self._parsed.get(public)
            if parsed is None:
                parsed = self._parsed[public] = parse_public(public)
            rows.append(
                TableKeyRow(int(key_id), public, parsed, print_, int(from_seq), until_seq, status)
            )
        await conn.commit()
        self._keys, self._keys_at = keys, now

    def _key_for(self, table: str, print_: str, seq: int) -> TableKeyRow | None:
        for key in self._keys.get(table, ()):
            if (
                key.fingerprint == print_
                and key.status != "revoked"
                and (key.until_seq is None or seq <= key.until_seq)
            ):
                return key
        return None

    # --- ingest --------------------------------------------------------------------------

    def _decode(
        self, msg: Incoming, subject_table: str
    ) -> tuple[Record | None, datetime | None, Alert | None]:
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
                    details={"subject": msg.subject[:300], "problem": str(exc)[:300]},
                    evidence=msg.data[:EVIDENCE_BYTES],
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
                        "subject": msg.subject[:300],
                        "problem": f"the subject names table {subject_table!r}, "
                        f"the line {rec.table[:100]!r}",
                    },
                    evidence=msg.data[:EVIDENCE_BYTES],
                ),
            )
        return rec, ts, None

    def _sort(self, batch: Sequence[Incoming], work: _Work) -> None:
        """Each message to the table it names: a line (or the shipper's conflict line), a head,
        or the quarantine (a bad table id, an oversized line, an unknown table, not a line)."""
        prefix = self.prefix + "."
        for msg in batch:
            subject = msg.subject
            rest = subject[len(prefix) :] if subject.startswith(prefix) else subject
            table, _, kind = rest.partition(".")
            if not TABLE_TOKEN.match(table):
                work.quarantine(msg, table, None, "malformed", "the subject's table id is not one")
                continue
            if len(msg.data) > self.max_line_bytes:
                work.quarantine(
                    msg, table, None, "malformed",
                    f"{len(msg.data)} bytes, over the floor's limit of {self.max_line_bytes}",
                )  # fmt: skip
                continue
            if table not in self._keys:
                work.quarantine(msg, table, None, "unknown_table", "no table enrolled as this")
                continue
            if kind == HEAD_SUBJECT:
                try:
                    head = parse_head(msg.data)
                except BadHead as exc:
                    work.quarantine(msg, table, None, "forged", f"not a head: {exc}")
                    continue
                if head.table != table:
                    work.quarantine(msg, table, head.seq, "forged", "a head for another table")
                    continue
                work.heads.setdefault(table, []).append((head, msg))
                continue
            if kind != CONFLICT_SUBJECT and "." not in kind:
                work.quarantine(msg, table, None, "malformed", "not a line's subject")
                continue
            rec, ts, bad = self._decode(msg, table)
            if bad is not None:
                work.alerts.append(bad)
                work.quarantine(msg, table, bad.seq or None, "malformed", bad.details["problem"])
            elif rec is not None and ts is not None:
                envelope = self._envelope(msg, table, kind, rec)
                if envelope:
                    work.quarantine(msg, table, rec.seq, "replay", envelope)
                else:
                    work.lines.setdefault(table, []).append(Candidate(rec, ts, subject))

    @staticmethod
    def _envelope(msg: Incoming, table: str, kind: str, rec: Record) -> str | None:
        """Why this line's envelope is not the one its shipper gives it (None: it is)."""
        if kind == CONFLICT_SUBJECT:
            want = f"{table}:{rec.seq}:conflict:{rec.hash[:16]}"
        else:
            if kind != rec.event:
                return f"published on event {kind[:100]!r}, the line is {rec.event[:100]!r}"
            want = f"{table}:{rec.seq}"
        if msg.msg_id is not None and msg.msg_id != want:
            return f"published under Nats-Msg-Id {msg.msg_id[:100]!r}, not {want!r}"
        return None

    async def ingest(self, batch: Sequence[Incoming], stream: str = "TABLED") -> BatchResult:
        result = BatchResult()
        conn = await self.writer()
        prefix = self.prefix + "."
        names = {m.subject.removeprefix(prefix).partition(".")[0] for m in batch}
        await self._registry(conn, names)
        work = _Work()
        self._sort(batch, work)
        stream_seq = max((m.stream_seq for m in batch), default=0)
        pending_before = set(self._pending_tables or ())
        try:
            async with conn.transaction():
                by_table = await self._prove(conn, work)
                await self._ensure_partitions_tx(
                    conn, {month_start(ts) for lines in by_table.values() for _, ts in lines}
                )
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

    async def _unproven_tx(self, conn: psycopg.AsyncConnection[Any], result: BatchResult) -> None:
        """Every PENDING_CHECK_SECONDS: an `unproven` alert for each table whose lines waiting
        for a head exceed PENDING_ALERT_LINES or PENDING_ALERT_SECONDS (one open a table, its
        counts updated), resolved when they no longer do."""
        now = time.monotonic()
        if now - self._pending_checked < PENDING_CHECK_SECONDS:
            return
        self._pending_checked = now
        cur = await conn.execute(
            "SELECT table_id, count(*), min(seq), max(seq), "
            "extract(epoch FROM now() - min(received_at))::float8 FROM pending_lines "
            "GROUP BY table_id"
        )
        waiting = {row[0]: row[1:] for row in await cur.fetchall()}
        cur = await conn.execute(
            "SELECT table_id, id FROM chain_alerts WHERE kind = 'unproven' AND resolved_at IS NULL"
        )
        open_ = {row[0]: int(row[1]) for row in await cur.fetchall()}
        for table, (lines, low, high, age) in sorted(waiting.items()):
            details = {
                "lines": int(lines), "oldest_seq": int(low), "newest_seq": int(high),
                "oldest_seconds": round(float(age), 1), "bound_lines": PENDING_ALERT_LINES,
                "bound_seconds": PENDING_ALERT_SECONDS, "read_per_batch": PENDING_WINDOW,
            }  # fmt: skip
            over = lines > PENDING_ALERT_LINES or age > PENDING_ALERT_SECONDS
            if over and table not in open_:
                await self._insert_alert(conn, Alert(table, int(low), "unproven",
                                                     details=details), result)  # fmt: skip
            elif over:
                await conn.execute(
                    "UPDATE chain_alerts SET details = %s WHERE id = %s",
                    (Jsonb(details), open_.pop(table)),
                )
        for alert_id in sorted(open_.values()):  # left open: no longer over its bounds
            cur = await conn.execute(
                "UPDATE chain_alerts SET resolved_at = now() WHERE id = %s "
                "RETURNING id, table_id, seq, gap_to",
                (alert_id,),
            )
            _resolved(result, await cur.fetchall())

    async def _ensure_partitions_tx(
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
            self._months_new.add(start)

    async def _prove(  # noqa: PLR0915 - the batch's queries, then a table at a time
        self, conn: psycopg.AsyncConnection[Any], work: _Work
    ) -> dict[str, list[tuple[Record, datetime]]]:
        """Each table's lines proven by a signed head (to the custody, in seq order); the
        forged ones to the quarantine; the others wait in `pending_lines`."""
        pending_tables = self._pending_tables or set()
        tables = sorted(set(work.lines) | set(work.heads) | (self.backlog & pending_tables))
        by_table: dict[str, list[tuple[Record, datetime]]] = {}
        if not tables:
            return by_table
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('floor-table:' || t)) "
            "FROM unnest(%s::text[]) AS t ORDER BY t",
            (tables,),
        )
        cur = await conn.execute(
            "SELECT table_id, last_seq FROM floor_tables WHERE table_id = ANY(%s)", (tables,)
        )
        last = {row[0]: int(row[1]) for row in await cur.fetchall()}
        # What the batch needs from the database, a query each for all its tables (a query a
        # table cost more than the proof): lines waiting from earlier batches and the heads
        # above them, and the lines held at the seqs below a table's head.
        cands: dict[str, list[Candidate]] = {t: list(work.lines.get(t, ())) for t in tables}
        heads: dict[str, dict[int, str]] = {t: {} for t in tables}
        waiting_tables = [t for t in tables if t in pending_tables]
        if waiting_tables:
            cur = await conn.execute(
                "SELECT h.table_id, h.seq, h.hash FROM signed_heads h JOIN (SELECT table_id, "
                "min(seq) AS low FROM pending_lines WHERE table_id = ANY(%s) GROUP BY 1) p "
                "ON p.table_id = h.table_id WHERE h.seq >= p.low",
                (waiting_tables,),
            )
            for table, seq, digest in await cur.fetchall():
                heads[table][int(seq)] = bytes(digest).hex()
            for table, line, subject in await self._waiting(conn, waiting_tables, heads, work):
                rec = decode_line(bytes(line))
                cands[table].append(Candidate(rec, parse_ts(rec.ts), subject, stored=True))
        held: dict[str, dict[int, tuple[str, str]]] = {t: {} for t in tables}
        wanted = sorted(
            {
                (t, c.rec.seq + d)
                for t in tables
                for c in cands[t]
                if c.rec.seq <= last.get(t, 0)
                for d in (0, 1)
            }
        )
        if wanted:
            cur = await conn.execute(
                "SELECT table_id, seq, hash, prev FROM journal_lines WHERE (table_id, seq) IN "
                "(SELECT * FROM unnest(%s::text[], %s::bigint[]))",
                ([w[0] for w in wanted], [w[1] for w in wanted]),
            )
            for table, seq, digest, prev in await cur.fetchall():
                held[table][int(seq)] = (bytes(digest).hex(), bytes(prev).hex())
        pending_rows: list[tuple[Any, ...]] = []
        gone: list[tuple[str, Candidate]] = []
        for table in tables:
            # A key rotation announced in a line: the new key is signed by one of the table's
            # keys (not revoked), so it is the table's from here on, before the line itself is
            # proven (a head signed with the new key proves it).
            for cand in cands[table]:
                if (
                    cand.rec.event == KEY_ROTATED
                    and not cand.stored
                    and await self._rotate(conn, table, cand.rec)
                ):
                    work.rotated = True
            # The batch's heads from the highest down: a check (~150-230 us) only for a head
            # that says something the chain proven so far does not: usually the highest one,
            # whose line proves the lines below it, so the lower heads agree and cost nothing.
            verdicts = prove(cands[table], heads[table], held[table])
            known = _known(verdicts, held[table])
            for head, msg in sorted(work.heads.get(table, ()), key=lambda h: -h[0].seq):
                have = known.get(head.seq)
                if have == head.hash:
                    continue  # what the proven chain says already
                key = self._key_for(table, head.key, head.seq)
                if key is None:
                    work.quarantine(
                        msg, table, head.seq, "forged",
                        f"a head signed with key {head.key[:40]!r}, which is not one of "
                        f"{table}'s for seq {head.seq}",
                    )  # fmt: skip
                elif not verify_head(head, key.parsed):
                    work.quarantine(
                        msg, table, head.seq, "forged",
                        f"a head whose signature does not verify with key {head.key}",
                    )  # fmt: skip
                elif have is not None:
                    work.quarantine(
                        msg, table, head.seq, "forged",
                        f"a head signed with the table's key {head.key} for another line than "
                        "its proven one at this seq (a journal started anew? a stolen key?)",
                    )  # fmt: skip
                else:
                    heads[table][head.seq] = head.hash
                    work.new_heads.append((table, head.seq, bytes.fromhex(head.hash), key.id))
                    verdicts = prove(cands[table], heads[table], held[table])
                    known = _known(verdicts, held[table])
            proven = verdicts.proven
            for cand, want, why in verdicts.forged:
                work.forge(table, cand, want, why)
            gone += [(table, c) for c in (*proven, *verdicts.duplicate) if c.stored]
            gone += [(table, c) for c, _, _ in verdicts.forged if c.stored]
            for cand in verdicts.waiting:
                if not cand.stored:
                    rec = cand.rec
                    pending_rows.append(
                        (table, rec.seq, bytes.fromhex(rec.hash), bytes.fromhex(rec.prev),
                         rec.line, cand.subject)
                    )  # fmt: skip
            if verdicts.waiting or table in self.backlog:  # a backlog: more wait, unread
                work.now_pending.add(table)
            else:
                work.cleared.add(table)
            if proven:
                by_table[table] = [(c.rec, c.ts) for c in sorted(proven, key=lambda c: c.rec.seq)]
        if gone:
            await conn.execute(
                "DELETE FROM pending_lines WHERE (table_id, seq, hash) IN "
                "(SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bytea[]))",
                (
                    [t for t, _ in gone],
                    [c.rec.seq for _, c in gone],
                    [bytes.fromhex(c.rec.hash) for _, c in gone],
                ),
            )
        if pending_rows:
            await conn.execute(
                "INSERT INTO pending_lines (table_id, seq, hash, prev, line, subject) "
                "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bytea[], %s::bytea[], "
                "%s::bytea[], %s::text[]) ON CONFLICT DO NOTHING",
                [list(column) for column in zip(*pending_rows, strict=True)],
            )
        if work.new_heads:
            await conn.execute(
                "INSERT INTO signed_heads (table_id, seq, hash, key_id) SELECT * FROM "
                "unnest(%s::text[], %s::bigint[], %s::bytea[], %s::bigint[]) "
                "ON CONFLICT DO NOTHING",
                [list(column) for column in zip(*work.new_heads, strict=True)],
            )
        return by_table

    async def _waiting(
        self,
        conn: psycopg.AsyncConnection[Any],
        tables: list[str],
        heads: dict[str, dict[int, str]],
        work: _Work,
    ) -> list[tuple[Any, ...]]:
        """The waiting lines a batch reads of these tables: all of a table's, up to
        PENDING_WINDOW; beyond it (a backlog), the PENDING_WINDOW lines just below its lowest
        head (one of this batch's or stored) that the proof can link down from, else its lowest.
        A backlog is read on by the next batches, idle ones too (`backlog`), a window a batch:
        the lines above the ones proven are held, so each window links to the one above it."""
        cur = await conn.execute(
            "SELECT t.id, (SELECT min(seq) FROM pending_lines WHERE table_id = t.id) "
            "FROM unnest(%s::text[]) AS t(id) WHERE EXISTS (SELECT 1 FROM (SELECT 1 FROM "
            "pending_lines WHERE table_id = t.id ORDER BY seq OFFSET %s LIMIT 1) x)",
            (tables, PENDING_WINDOW),
        )
        backlog = {row[0]: int(row[1]) for row in await cur.fetchall()}
        self.backlog = (self.backlog - set(tables)) | set(backlog)
        cur = await conn.execute(
            "SELECT table_id, line, subject FROM pending_lines WHERE table_id = ANY(%s)",
            ([t for t in tables if t not in backlog],),
        )
        rows: list[tuple[Any, ...]] = list(await cur.fetchall())
        for table, low in backlog.items():
            batch = (h.seq for h, _ in work.heads.get(table, ()))
            anchor = min((seq for seq in (*heads[table], *batch) if seq >= low), default=None)
            if anchor is None:  # no head to link from yet: its lowest, for the duplicates
                cur = await conn.execute(
                    "SELECT table_id, line, subject FROM pending_lines WHERE table_id = %s "
                    "ORDER BY seq LIMIT %s",
                    (table, PENDING_WINDOW),
                )
            else:
                cur = await conn.execute(
                    "SELECT table_id, line, subject FROM pending_lines WHERE table_id = %s "
                    "AND seq <= %s ORDER BY seq DESC LIMIT %s",
                    (table, anchor, PENDING_WINDOW),
                )
            rows += await cur.fetchall()
        return rows

    async def _rotate(self, conn: psycopg.AsyncConnection[Any], table: str, rec: Record) -> bool:
        """A proven `table.key_rotated` line: the old key (one of the table's, not revoked)
        signed the new one: the old key covers heads up to this seq, the new one after it."""
        new = verify_rotation(table, rec.payload)
        old = rec.payload.get("old_key")
        keys = {k.public: k for k in self._keys.get(table, ()) if k.status != "revoked"}
        if new is None or old not in keys or new in keys:
            log.warning("floor.rotation_refused", table=table, seq=rec.seq)
            return False
        await conn.execute(
            "UPDATE table_keys SET status = 'retired', until_seq = %s WHERE id = %s",
            (rec.seq, keys[old].id),
        )
        cur = await conn.execute(
            "INSERT INTO table_keys (table_id, public_key, fingerprint, from_seq, status, via, "
            "added_by) VALUES (%s, %s, %s, %s, 'active', 'rotation', %s) "
            "ON CONFLICT DO NOTHING RETURNING id",
            (
                table,
                new,
                fingerprint(new),
                rec.seq + 1,
                f"{table} (signed by {keys[old].fingerprint})",
            ),
        )
        row = await cur.fetchone()
        if row is None:
            return False
        # The batch goes on with the new key (the registry is read again after the commit).
        rows = self._keys.setdefault(table, [])
        rows[rows.index(keys[old])] = dataclasses.replace(
            keys[old], status="retired", until_seq=rec.seq
        )
        rows.append(
            TableKeyRow(int(row[0]), new, parse_public(new), fingerprint(new), rec.seq + 1, None,
                        "active")
        )  # fmt: skip
        log.info("floor.key_rotated", table=table, seq=rec.seq, key=fingerprint(new))
        return True

    async def _insert_alert(self, conn: psycopg.AsyncConnection[Any], alert: Alert,
                            result: BatchResult) -> int:  # fmt: skip
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
        return int(made[0])

    async def _quarantine(
        self, conn: psycopg.AsyncConnection[Any], work: _Work, result: BatchResult
    ) -> None:
        """The quarantine's rows, each with the alert that tells of it: one `forged` alert a
        forged line or head, one `malformed` a malformed message (already made), and one open
        `unknown_table` alert a table id (its count grows while it is open)."""
        if not work.held:
            return
        unknown: dict[str, list[_Held]] = {}
        rows: list[tuple[Any, ...]] = []
        malformed = iter([a for a in result.alerts if a["kind"] == "malformed"])
        for held in work.held:
            alert_id: int | None = None
            if held.kind == "unknown_table":
                unknown.setdefault(held.table, []).append(held)
                continue
            if held.kind == "forged":
                alert_id = await self._insert_alert(
                    conn,
                    Alert(held.table, held.seq or 0, "forged", expected_hash=held.want,
                          actual_hash=held.digest,
                          details={"reason": held.reason, "subject": held.subject[:300],
                                   "bytes": held.size}, evidence=held.body),
                    result,
                )  # fmt: skip
            elif held.from_alert:
                alert_id = next(malformed)["id"]
            else:
                alert_id = await self._insert_alert(
                    conn,
                    Alert(held.table, held.seq or 0, held.kind,
                          details={"problem": held.reason, "subject": held.subject[:300],
                                   "bytes": held.size}, evidence=held.body),
                    result,
                )  # fmt: skip
            rows.append(held.row(alert_id))
        for table, items in unknown.items():
            cur = await conn.execute(
                "UPDATE chain_alerts SET details = jsonb_set(details, '{count}', "
                "to_jsonb(coalesce((details->>'count')::bigint, 0) + %s)) "
                "WHERE id = (SELECT id FROM chain_alerts WHERE table_id = %s AND "
                "kind = 'unknown_table' AND resolved_at IS NULL AND acknowledged_at IS NULL "
                "ORDER BY id DESC LIMIT 1) RETURNING id",
                (len(items), table),
            )
            found = await cur.fetchone()
            if found is not None:
                alert_id = int(found[0])
            else:
                first = items[0]
                alert_id = await self._insert_alert(
                    conn,
                    Alert(table, first.seq or 0, "unknown_table", actual_hash=first.digest,
                          details={"reason": first.reason, "subject": first.subject[:300],
                                   "count": len(items)}, evidence=first.body),
                    result,
                )  # fmt: skip
            rows += [held.row(alert_id) for held in items]
        async with conn.cursor() as cur2:
            await cur2.executemany(
                "INSERT INTO quarantine (table_id, seq, kind, reason, subject, hash, body, bytes, "
                "alert_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )

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
        facts = Facts()
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
                facts.add(rec, ts)
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
        await facts.write(conn)
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
            await self._insert_alert(conn, alert, result)
        for table in sorted(set(filled_tables)):
            cur = await conn.execute(
                "UPDATE chain_alerts a SET resolved_at = now() WHERE a.table_id = %s "
                "AND a.kind = 'gap' AND a.resolved_at IS NULL AND (SELECT count(*) "
                "FROM journal_lines l WHERE l.table_id = a.table_id AND l.seq BETWEEN a.seq "
                "AND a.gap_to) = a.gap_to - a.seq + 1 RETURNING id, table_id, seq, gap_to",
                (table,),
            )
            _resolved(result, await cur.fetchall())
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


def _known(verdicts: Verdicts, held: dict[int, tuple[str, str]]) -> dict[int, str]:
    """seq -> hash of a table's lines proven in this batch or held before it."""
    known = {seq: pair[0] for seq, pair in held.items()}
    known.update((c.rec.seq, c.rec.hash) for c in verdicts.proven)
    return known


def _resolved(result: BatchResult, rows: Iterable[Sequence[Any]]) -> None:
    """Alerts resolved (rows of id, table_id, seq, gap_to), for the push feed."""
    result.resolved += [{"id": r[0], "table": r[1], "seq": r[2], "gap_to": r[3]} for r in rows]


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
