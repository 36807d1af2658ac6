"""The floor's audit report: every record of a time range (lines, alerts, violations, faults,
overrides, the floor's own actions) read a chunk at a time and written as JSON or CSV as it
is read (`tabled floor report`, `GET /api/report`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.rows import dict_row

from daemon.floor.queries import (
    ALERT_COLUMNS,
    judged,
)
from daemon.floor.redact import (
    blotted,
    visible_alert,
    visible_row,
)
from daemon.floor.store import Store, dumps

REPORT_CHUNK = 2000


def _shown_action(row: dict[str, Any]) -> dict[str, Any]:
    # A person's acknowledgement note may name a card; of no known round: as in play.
    if row["action"] == "acknowledge" and isinstance(row["note"], str):
        row["note"] = blotted(row["note"])
    return row


def _audit_row(row: dict[str, Any]) -> dict[str, Any]:
    return visible_row(row, "audit")


def _audit_alert(row: dict[str, Any]) -> dict[str, Any]:
    return visible_alert(row, "audit")


# The audit report's sections in order: (name, its query over [since, until), what each row
# becomes). Its readers (audit, admin, and whoever reads the database) see closed rounds whole:
# a card named in a round still in play, nobody; an alert's digests once its line's round is
# closed.
Chunks = AsyncIterator[tuple[str, list[dict[str, Any]]]]
Shown = Callable[[dict[str, Any]], dict[str, Any]] | None
REPORT_SECTIONS: tuple[tuple[str, str, Shown], ...] = (
    ("violations",
     "SELECT table_id AS table, seq, ts, round, actor, article, action, phase, reason, "  # noqa: S608
     f"{judged('violations')} FROM violations WHERE ts >= %s AND ts < %s "
     "ORDER BY ts, table_id, seq", _audit_row),
    ("overrides",
     "SELECT table_id AS table, seq, ts, round, status, kind, article, proposed_by, "  # noqa: S608
     f"decided_by, reason, {judged('overrides')} FROM overrides WHERE ts >= %s AND ts < %s "
     "ORDER BY ts, table_id, seq", _audit_row),
    ("device_faults",
     "SELECT table_id AS table, seq, ts, round, device, fault, kind, make, model, serial, "  # noqa: S608
     f"{judged('device_faults')} FROM device_faults WHERE ts >= %s AND ts < %s "
     "ORDER BY ts, table_id, seq", _audit_row),
    ("settlements",
     "SELECT table_id AS table, seq, item, ts, round, seat, player, amount, outcome, net "
     "FROM settlements WHERE ts >= %s AND ts < %s ORDER BY ts, table_id, seq, item", None),
    ("rounds",
     "SELECT table_id AS table, round, first_seq, last_seq, started_at, ended_at, status, lines "
     "FROM rounds WHERE started_at >= %s AND started_at < %s ORDER BY started_at, table_id",
     None),
    ("floor_actions",
     "SELECT id, at, actor, role, action, target, outcome, note FROM floor_actions "
     "WHERE at >= %s AND at < %s ORDER BY id", _shown_action),
    ("chain_alerts",
     f"SELECT {ALERT_COLUMNS} FROM chain_alerts "  # noqa: S608
     "WHERE detected_at >= %s AND detected_at < %s ORDER BY id", _audit_alert),
)  # fmt: skip


async def report_chunks(dsn: str, since: datetime, until: datetime) -> Chunks:
    """The audit report of a period, section by section in `REPORT_SECTIONS`' order, each as
    (section, rows) chunks of at most `REPORT_CHUNK` rows (at least one chunk a section, empty
    when it has no rows): read through a server-side cursor on a connection of its own, in one
    read-only repeatable-read transaction (every section as of one moment), so an export of
    any length holds one chunk in memory."""
    async with await psycopg.AsyncConnection.connect(dsn, row_factory=dict_row) as conn:
        await conn.set_read_only(True)
        await conn.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
        async with conn.transaction():
            for name, sql, shown in REPORT_SECTIONS:
                async with conn.cursor(name=f"report_{name}") as cur:
                    await cur.execute(sql.encode(), (since, until))
                    first = True
                    while rows := await cur.fetchmany(REPORT_CHUNK):
                        yield name, rows if shown is None else [shown(row) for row in rows]
                        first = False
                    if first:
                        yield name, []


async def report(store: Store, since: datetime, until: datetime) -> dict[str, list[dict[str, Any]]]:
    """The audit report of a period whole (`report_chunks` gathered): every violation,
    override, fault, settlement, round, floor action and alert."""
    sections: dict[str, list[dict[str, Any]]] = {}
    async for name, rows in report_chunks(store.dsn, since, until):
        sections.setdefault(name, []).extend(rows)
    return sections


def _plain(value: Any) -> Any:
    """A value JSON has no type for, as `dumps` writes it: times ISO 8601, numerics their exact
    text, bytes in hex."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    raise TypeError(type(value).__name__)


# A chunk's rows encoded in one call (the C encoder; `_plain` for what it has no type for).
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=_plain).encode


async def report_json(chunks: Chunks) -> AsyncIterator[str]:
    """The report as one JSON object of lists (what `dumps` writes of `report`'s dict), written
    a chunk at a time."""
    current = None
    async for name, rows in chunks:
        parts = []
        if name != current:
            parts.append(("{" if current is None else "], ") + _ENCODE(name) + ": [")
            lead = ""
            current = name
        else:
            lead = ", "
        if rows:
            parts.append(lead + _ENCODE(rows)[1:-1])  # the list's items, without its brackets
        yield "".join(parts)
    yield "{}" if current is None else "]}"


async def report_json_indented(chunks: Chunks) -> AsyncIterator[str]:
    """The report as `json.dumps(..., indent=1)` writes it (the CLI's), a chunk at a time."""
    current = None
    opened = False  # the current section has a row written
    async for name, rows in chunks:
        parts = []
        if name != current:
            head = "{\n" if current is None else ("\n ],\n" if opened else "],\n")
            parts.append(f"{head} {json.dumps(name)}: [")
            current, opened = name, False
        for row in rows:
            text = json.dumps(row, indent=1, default=_plain).replace("\n", "\n  ")
            parts.append(("\n  " if not opened else ",\n  ") + text)
            opened = True
        yield "".join(parts)
    if current is None:
        yield "{}"
    else:
        yield ("\n ]" if opened else "]") + "\n}"


async def report_csv_chunks(chunks: Chunks) -> AsyncIterator[str]:
    """The report as one CSV (`report_csv`), written a chunk at a time."""
    current = None
    for_header = False
    async for name, rows in chunks:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if name != current:
            if current is not None and for_header:
                writer.writerow([current])  # the section before had no rows
            current, for_header = name, True
        for row in rows:
            if for_header:
                writer.writerow(["section", *row.keys()])
                for_header = False
            writer.writerow([name, *(_cell(v) for v in row.values())])
        yield out.getvalue()
    if current is not None and for_header:
        yield f"{current}\n"


def report_csv(sections: dict[str, list[dict[str, Any]]]) -> str:
    """One CSV: a `section` column first, then each section's own columns under a header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for name, rows in sections.items():
        if not rows:
            writer.writerow([name])
            continue
        writer.writerow(["section", *rows[0].keys()])
        for row in rows:
            writer.writerow([name, *(_cell(v) for v in row.values())])
    return out.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return dumps(value)
    return value


# --- the push hub ------------------------------------------------------------------------------


# --- the routes' queries -------------------------------------------------------------------------
