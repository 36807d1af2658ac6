"""`tabled floor audit`: the integrity audit of every table, from the floor's PostgreSQL.

    tabled floor audit dice|shuffle|reader|hold [--config FLOOR.toml] [--table T]
        [--serial S] [--since T] [--json] [--misread-limit N] [--by table|shift|dealer]
        [--stored]

The floor keeps each table's journal lines byte for byte (`journal_lines`); each table's lines of
the audited events are streamed in seq order through a server-side cursor into the very pass a
journal folder goes through (`source.read_events`), so the floor and the table give the same
answer on the same data. Devices are audited per table and serial (`"table"` beside the
serial); the hold over all tables. `--stored` gives the same findings from the sums the floor's
integrity update keeps (daemon/floor/integrity.py), as of its last pass, reading no line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import psycopg

from daemon.analytics.cli import FLAGGED_STATUS, findings_of, report_json, text_report
from daemon.analytics.common import Finding
from daemon.config import ConfigError
from daemon.floor.config import load_floor_config
from daemon.floor.integrity import stored_findings

if TYPE_CHECKING:
    from daemon.analytics.source import AuditData, Round

FETCH = 20_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabled floor audit",
        description="The integrity audit (docs/integrity.md) of every table in the floor's "
        "PostgreSQL. Exit status: 0 nothing flagged, 4 something flagged, 2 bad input.",
    )
    parser.add_argument("kind", choices=("dice", "shuffle", "reader", "hold"))
    parser.add_argument("--config", help="the floor's config (default: the embedded one)")
    parser.add_argument("--table", action="append", help="only this table (repeatable)")
    parser.add_argument("--serial", help="only this device serial")
    parser.add_argument("--since", help="from this time on (ISO, UTC: 2027-01-15)")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    parser.add_argument("--misread-limit", type=int, default=1000, metavar="N")
    parser.add_argument("--by", choices=("table", "shift", "dealer"), default="shift")
    parser.add_argument(
        "--stored",
        action="store_true",
        help="from the sums the floor's integrity update keeps (no line read; as of its last "
        "pass; --since does not apply)",
    )
    return parser


def table_lines(
    conn: psycopg.Connection[Any], table: str, since: datetime | None, kind: str
) -> Iterator[tuple[str, bytes]]:
    """(event, line) of the events audit `kind` reads of one table, in seq order, FETCH rows
    at a time."""
    from daemon.analytics.source import EVENTS_BY_KIND  # noqa: PLC0415 - numpy: when auditing

    with conn.transaction(), conn.cursor(name="audit_lines") as cursor:
        cursor.itersize = FETCH
        cursor.execute(
            "SELECT event, line FROM journal_lines WHERE table_id = %s AND event = ANY(%s) "
            "AND ts >= %s ORDER BY seq",
            (table, list(EVENTS_BY_KIND[kind]), since or EPOCH),
        )
        for event, line in cursor:
            yield event, bytes(line)


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.removesuffix("Z"))
    except ValueError:
        raise ValueError(f"--since {text!r}: an ISO time such as 2027-01-15T08:00") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)  # as the journal writes it


def audit(args: argparse.Namespace, dsn: str) -> tuple[list[Finding], int]:
    from daemon.analytics.source import AuditData, read_events  # noqa: PLC0415 - numpy

    if args.stored:
        if args.since is not None:
            raise ValueError("--stored is as of the last pass: --since does not apply")
        with psycopg.connect(dsn) as conn:
            return stored_findings(
                conn,
                args.kind,
                tables=args.table,
                serial=args.serial,
                misread_limit=args.misread_limit,
                by=args.by,
            )
    since = _since(args.since)
    findings: list[Finding] = []
    rounds: list[Round] = []
    lines = 0
    with psycopg.connect(dsn) as conn:
        tables = args.table or [
            row[0] for row in conn.execute("SELECT table_id FROM floor_tables ORDER BY table_id")
        ]
        for table in tables:
            data: AuditData = read_events(
                table_lines(conn, table, since, args.kind), serial=args.serial
            )
            lines += data.lines
            if args.kind == "hold":
                rounds += data.rounds
                continue
            for finding in findings_of(args.kind, data, misread_limit=args.misread_limit):
                finding.extra["table"] = table
                findings.append(finding)
    if args.kind == "hold":
        held = AuditData()
        held.rounds = rounds
        findings = findings_of("hold", held, by=args.by)
    return findings, lines


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.misread_limit < 1:
        print("tabled floor audit: --misread-limit is one card in N, N >= 1", file=sys.stderr)
        return 2
    try:
        config = load_floor_config(args.config)
        findings, lines = audit(args, config.floor.database)
    except (ConfigError, ValueError) as exc:
        print(f"tabled floor audit: {exc}", file=sys.stderr)
        return 2
    except psycopg.Error as exc:
        print(f"tabled floor audit: the floor's database: {exc}".strip(), file=sys.stderr)
        return 2
    except ImportError:
        print(
            "tabled floor audit: needs numpy and scipy: pip install '.[analytics]'", file=sys.stderr
        )
        return 2
    if args.json:
        report = report_json(args.kind, "floor", findings, lines)
        print(json.dumps(report, indent=2, default=str))
    else:
        print(text_report(args.kind, "the floor's database", findings, lines))
    return FLAGGED_STATUS if any(f.flagged for f in findings) else 0
