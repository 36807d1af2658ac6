"""The floor store's shared parts (daemon/floor/store.py is the store): a batch's messages and
result, the limits and bounds of the ingest, a table's keys as the registry holds them, the
batch sorted (`_Work`), and `_StoreBase`: the state the store's parts share (the registry, the
tables with lines waiting, the partitions made) and the one way an alert is written.

The store is one class made of four parts, each in its module: the intake (the registry, each
message decoded and sorted, the quarantine: daemon/floor/intake.py), the proof (lines waiting
for a signed head, key rotations, the `unproven` alert: daemon/floor/proving.py), the writing
of a batch's lines and derived rows (daemon/floor/writing.py) and the store itself
(connections, migrations, the batch's transaction, the queries: daemon/floor/store.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import psycopg
import structlog
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from psycopg.types.json import Jsonb

from daemon.floor.custody import Alert
from daemon.floor.proof import Candidate, Verdicts
from daemon.journal.format import Record
from daemon.journal.provenance import (
    Head,
    parse_public,
)

log = structlog.get_logger("tabled.floor")


class Incoming(NamedTuple):
    """One stream message: its subject, body (the journal line) and stream sequence (a tuple:
    one is made a message)."""

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
    stamps: dict[str, datetime] = field(default_factory=dict)  # table -> that line's ts
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
# Subjects split into table and event, kept for the next batches: a table's events are a few
# dozen subjects, so 800 tables fill tens of thousands; beyond this many, the dict starts anew.
SUBJECTS_KEPT = 100_000
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
# The lines a floor wrote to `pending_lines` are kept decoded in memory (by table, seq and
# SHA-256, so an entry is the stored line's bytes whatever happened since), up to this many:
# a line proven in a later batch is not decoded a second time. Beyond it (or after a restart)
# a waiting line is read whole from the database and decoded there.
DECODED_WAITING = 20_000
REGISTRY_SECONDS = 2.0  # the registry is read again this often (enrolments, revocations)


WaitingKey = tuple[str, int, bytes]  # a line in `pending_lines`: table, seq, SHA-256
Decoded = tuple[Record, datetime]  # its record and ts, as the intake decoded them
Parsed = Decoded | ValueError  # a message's body decoded: a line, or why it is not one


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
    # Lines written to / deleted from `pending_lines`, their decoded records (`Decoded`): the
    # store's `_decoded` once the batch commits.
    waited: list[tuple[WaitingKey, Decoded]] = field(default_factory=list)
    unwaited: list[WaitingKey] = field(default_factory=list)
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


# A batch's work is Python between queries: a catch-up batch of 5,000 lines is a quarter of a
# second of it at least. The history hands the event loop back every TURN_LINES lines of it, so
# the live view (daemon/floor/live.py), the API and the push feed are served meanwhile.
TURN_LINES = 100


class _StoreBase:
    """What the store's parts share (set by `Store.__init__`)."""

    _turn_lines = 0

    async def _turn(self, lines: int) -> None:
        """`lines` more lines' work done: the event loop handed back every TURN_LINES."""
        self._turn_lines += lines
        if self._turn_lines >= TURN_LINES:
            self._turn_lines = 0
            await asyncio.sleep(0)

    dsn: str
    prefix: str
    max_line_bytes: int
    backlog: set[str]
    _keys: dict[str, list[TableKeyRow]]
    _keys_at: float
    _parsed: dict[str, Ed25519PublicKey]
    _pending_tables: set[str] | None
    _pending_checked: float
    _months: set[datetime]
    _months_new: set[datetime]
    _decoded: dict[WaitingKey, Decoded]
    _subjects: dict[str, tuple[str, str, bool]]  # subject -> table, event, a table id it takes
    _devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]]

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
