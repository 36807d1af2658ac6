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


def _iso(column: str, name: str) -> str:
    """A timestamptz column as PostgreSQL's text of what `datetime.isoformat` writes of it as
    psycopg reads it (in the session's time zone): its microseconds only when not 0, its
    offset as +HH:MM. Made by the server, so the floor neither parses nor formats the time."""
    return (
        f"replace(to_char({column}, 'YYYY-MM-DD\"T\"HH24:MI:SS.USTZH:TZM'), '.000000', '') "
        f"AS {name}"
    )


def _exact(column: str, name: str) -> str:
    """A numeric column as the text `str(Decimal)` writes of it (what `dumps` and the CSV
    wrote): PostgreSQL's own text, but for a value under 10^-6 with more than six decimals
    (0.0000001, 0.0000000), which Decimal writes with an exponent (1E-7, 0E-7)."""
    frac = f"split_part({column}::text, '.', 2)"
    digits = f"ltrim({frac}, '0')"
    return (
        f"CASE WHEN abs({column}) < 0.000001 AND scale({column}) > 6 THEN "
        f"CASE WHEN {digits} = '' THEN '0E-' || length({frac}) ELSE "
        f"CASE WHEN {column} < 0 THEN '-' ELSE '' END || left({digits}, 1) || "
        f"CASE WHEN length({digits}) > 1 THEN '.' || substr({digits}, 2) ELSE '' END || "
        f"'E-' || (length({frac}) - length({digits}) + 1) END "
        f"ELSE {column}::text END AS {name}"
    )


# The audit report's sections in order: (name, its query over [since, until), what each row
# becomes). Its readers (audit, admin, and whoever reads the database) see closed rounds whole:
# a card named in a round still in play, nobody; an alert's digests once its line's round is
# closed. Times and numerics are selected as the text the report writes of them (`_iso`,
# `_exact`): turning them into text was half the report's time in Python. The ORDER BY names
# its relation's column, not the text of the same name.
Chunks = AsyncIterator[tuple[str, list[dict[str, Any]]]]
Shown = Callable[[dict[str, Any]], dict[str, Any]] | None
Section = tuple[str, str, Shown]
Column = Callable[[str, str], str]  # (the relation's column, its name in the report) -> SQL


def report_sections(iso: Column = _iso, exact: Column = _exact) -> tuple[Section, ...]:
    """`REPORT_SECTIONS`, its times written by `iso` and its numerics by `exact`."""
    return (
        ("violations",
         f"SELECT table_id AS table, seq, {iso('v.ts', 'ts')}, round, actor, article, action, "  # noqa: S608
         f"phase, reason, {judged('v')} FROM violations v WHERE v.ts >= %s AND v.ts < %s "
         "ORDER BY v.ts, table_id, seq", _audit_row),
        ("overrides",
         f"SELECT table_id AS table, seq, {iso('o.ts', 'ts')}, round, status, kind, article, "  # noqa: S608
         f"proposed_by, decided_by, reason, {judged('o')} FROM overrides o "
         "WHERE o.ts >= %s AND o.ts < %s ORDER BY o.ts, table_id, seq", _audit_row),
        ("device_faults",
         f"SELECT table_id AS table, seq, {iso('d.ts', 'ts')}, round, device, fault, kind, make, "  # noqa: S608
         f"model, serial, {judged('d')} FROM device_faults d WHERE d.ts >= %s AND d.ts < %s "
         "ORDER BY d.ts, table_id, seq", _audit_row),
        ("settlements",
         f"SELECT table_id AS table, seq, item, {iso('s.ts', 'ts')}, round, seat, player, "  # noqa: S608
         f"{exact('amount', 'amount')}, outcome, {exact('net', 'net')} FROM settlements s "
         "WHERE s.ts >= %s AND s.ts < %s ORDER BY s.ts, table_id, seq, item", None),
        ("rounds",
         f"SELECT table_id AS table, round, first_seq, last_seq, {iso('r.started_at', 'started_at')}, "  # noqa: S608, E501
         f"{iso('r.ended_at', 'ended_at')}, status, lines FROM rounds r "
         "WHERE r.started_at >= %s AND r.started_at < %s ORDER BY r.started_at, table_id", None),
        ("floor_actions",
         f"SELECT id, {iso('a.at', 'at')}, actor, role, action, target, outcome, note "  # noqa: S608
         "FROM floor_actions a WHERE a.at >= %s AND a.at < %s ORDER BY id", _shown_action),
        ("chain_alerts",
         f"SELECT {ALERT_COLUMNS} FROM chain_alerts "  # noqa: S608
         "WHERE detected_at >= %s AND detected_at < %s ORDER BY id", _audit_alert),
    )  # fmt: skip


REPORT_SECTIONS = report_sections()


async def report_chunks(
    dsn: str, since: datetime, until: datetime, sections: tuple[Section, ...] = REPORT_SECTIONS
) -> Chunks:
    """The audit report of a period, section by section in `REPORT_SECTIONS`' order, each as
    (section, rows) chunks of at most `REPORT_CHUNK` rows (at least one chunk a section, empty
    when it has no rows): read through a server-side cursor on a connection of its own, in one
    read-only repeatable-read transaction (every section as of one moment), so an export of
    any length holds one chunk in memory."""
    async with await psycopg.AsyncConnection.connect(dsn, row_factory=dict_row) as conn:
        await conn.set_read_only(True)
        await conn.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
        async with conn.transaction():
            for name, sql, shown in sections:
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
        if rows and for_header:
            writer.writerow(["section", *rows[0].keys()])
            for_header = False
        # A chunk of only text, numbers and nulls (the server wrote its times and numerics:
        # every section's but an alert's) is written as it is; else each value by `_cell`.
        kinds = {type(v) for row in rows for v in row.values()}
        if any(issubclass(kind, _CELLED) for kind in kinds):
            writer.writerows([name, *map(_cell, row.values())] for row in rows)
        else:
            writer.writerows([name, *row.values()] for row in rows)
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


_CELLED = (datetime, dict, list)  # what `_cell` changes


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return dumps(value)
    return value


# --- the push hub ------------------------------------------------------------------------------


# --- the routes' queries -------------------------------------------------------------------------
