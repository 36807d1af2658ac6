"""The integrity pass's findings and alerts (daemon/floor/integrity.py runs the pass): each
device's and hold group's finding from the sums the passes keep, by the very functions `tabled
audit` calls (`dice.audit`, `shuffle.audit`, `reader.audit`, `hold.judge`); the one alert per
(table, kind, subject) they open, update or resolve in `chain_alerts`; and `stored_findings`,
what `tabled floor audit --stored` reads of those sums without reading a line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

if TYPE_CHECKING:
    from daemon.analytics.common import Finding
    from daemon.floor.integrity_sums import Sums

log = structlog.get_logger("tabled.floor.integrity")

ALERT_OF = {
    "dice": "dice_bias",
    "shuffle": "shuffle_bias",
    "reader": "reader_misreads",
    "hold": "hold_outlier",
}
INTEGRITY_KINDS = tuple(ALERT_OF.values())
# The hold's new rounds, summed per table, group and rule set: one statement over the rounds
# of each table's window (after, upto] (`integrity_rounds`, written at ingest: a round's rule
# set, dealer and sums; a round whose bets name no rule set, Pai Gow's, is the table's last
# table.started's). Its shift is Macau time (UTC+8): night 00-08, day 08-16, swing 16-24
# (daemon.analytics.hold.shift_of).
HOLD_SUMS = """
WITH rounds AS (
    SELECT r.table_id, r.dealer,
           to_char(r.ts AT TIME ZONE 'UTC' + interval '8 hours', 'YYYY-MM-DD') || ' ' ||
           CASE WHEN extract(hour FROM r.ts AT TIME ZONE 'UTC' + interval '8 hours') < 8
                THEN 'night'
                WHEN extract(hour FROM r.ts AT TIME ZONE 'UTC' + interval '8 hours') < 16
                THEN 'day' ELSE 'swing' END AS shift,
           CASE WHEN r.ruleset <> '' THEN r.ruleset ELSE coalesce((
               SELECT f.value FROM integrity_facts f WHERE f.table_id = r.table_id
                   AND f.kind = 'started' AND f.seq < r.seq ORDER BY f.seq DESC LIMIT 1), '')
           END AS ruleset,
           r.drop, r.win, r.commission, r.squares, r.cross_sum
    FROM unnest(%(tables)s::text[], %(after)s::bigint[], %(upto)s::bigint[])
        AS w(table_id, after, upto)
    JOIN integrity_rounds r ON r.table_id = w.table_id AND r.seq > w.after AND r.seq <= w.upto
), sums AS (
    SELECT r.table_id,
           CASE WHEN GROUPING(r.shift) = 0 THEN 'shift'
                WHEN GROUPING(r.dealer) = 0 THEN 'dealer' ELSE 'table' END AS grouping,
           coalesce(r.shift, r.dealer, r.table_id) AS key, r.ruleset,
           count(*) AS rounds, sum(r.drop) AS drop, sum(r.win) AS win,
           sum(r.commission) AS commission, sum(r.squares) AS squares,
           sum(r.cross_sum) AS cross_sum
    FROM rounds r
    GROUP BY GROUPING SETS ((r.table_id, r.ruleset), (r.table_id, r.shift, r.ruleset),
                            (r.table_id, r.dealer, r.ruleset))
)
INSERT INTO integrity_hold AS h
    (table_id, grouping, key, ruleset, rounds, drop, win, commission, squares, cross_sum)
SELECT * FROM sums
ON CONFLICT (table_id, grouping, key, ruleset) DO UPDATE SET
    rounds = h.rounds + excluded.rounds, drop = h.drop + excluded.drop,
    win = h.win + excluded.win, commission = h.commission + excluded.commission,
    squares = h.squares + excluded.squares, cross_sum = h.cross_sum + excluded.cross_sum
RETURNING table_id, grouping, key
"""

ALERT_RETURNS = (
    "id, table_id AS table, seq, kind, expected_hash, actual_hash, gap_to, details, "
    "detected_at, resolved_at, acknowledged_at, acknowledged_by, acknowledged_role, ack_note"
)


@dataclass
class PassResult:
    """What one pass did: tables and lines read, findings, and the alerts it opened, updated
    and resolved (rows as `/api/alerts` gives them)."""

    tables: int = 0
    lines: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)  # seconds, by part of the pass
    opened: list[dict[str, Any]] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[dict[str, Any]] = field(default_factory=list)


def details(finding: Finding) -> dict[str, Any]:
    """What an integrity alert carries: the finding in words and figures."""
    details: dict[str, Any] = {
        "subject": finding.subject,
        "audit": finding.kind,
        "flagged": finding.flagged,
        "verdict": finding.verdict,
        "statistic": finding.statistic,
        "p_value": finding.p_value,
        "power": finding.power,
        "samples": finding.samples,
        "tests": [
            {"name": t.name, "statistic": t.statistic, "p_value": t.p_value, "detail": t.detail}
            for t in finding.tests
        ],
    }
    for key in ("alarm_count", "equivalent_riffles", "decks_not_audited", "hold", "drop"):
        if key in finding.extra:
            details[key] = finding.extra[key]
    plain: dict[str, Any] = json.loads(json.dumps(details, default=str))  # numpy's floats
    return plain


def open_alerts(
    conn: psycopg.Connection[Any], tables: list[str]
) -> dict[tuple[str, str, str], int]:
    """The open integrity alerts of these tables: (table, kind, subject) -> id."""
    rows = conn.execute(
        "SELECT table_id, kind, details->>'subject', id FROM chain_alerts "
        "WHERE table_id = ANY(%s) AND kind = ANY(%s) AND resolved_at IS NULL",
        (tables, list(INTEGRITY_KINDS)),
    ).fetchall()
    return {(r[0], r[1], r[2]): int(r[3]) for r in rows}


def alert(
    conn: psycopg.Connection[Any],
    table: str,
    seq: int,
    finding: Finding,
    *,
    open_ids: dict[tuple[str, str, str], int],
    result: PassResult,
) -> None:
    """Open, update or resolve the one alert of (table, kind, subject) as `finding` says."""
    kind = ALERT_OF[finding.kind]
    known = open_ids.get((table, kind, finding.subject))
    if known is None and not finding.flagged:
        return
    with conn.cursor(row_factory=dict_row) as cur:
        if known is not None and finding.flagged:
            cur.execute(
                f"UPDATE chain_alerts SET seq = %s, details = %s WHERE id = %s "  # noqa: S608 - constant columns
                f"RETURNING {ALERT_RETURNS}",
                (seq, Jsonb(details(finding)), known),
            )
            result.updated += cur.fetchall()
        elif known is not None:
            cur.execute(
                "UPDATE chain_alerts SET resolved_at = now(), seq = %s, details = %s "  # noqa: S608 - constant columns
                f"WHERE id = %s RETURNING {ALERT_RETURNS}",
                (seq, Jsonb(details(finding)), known),
            )
            result.resolved += cur.fetchall()
        else:
            cur.execute(
                "INSERT INTO chain_alerts (table_id, seq, kind, details) "  # noqa: S608 - constant columns
                f"VALUES (%s, %s, %s, %s) RETURNING {ALERT_RETURNS}",
                (table, seq, kind, Jsonb(details(finding))),
            )
            result.opened += cur.fetchall()
            log.warning("floor.integrity_alert", table=table, kind=kind, subject=finding.subject)


def device_findings(
    sums: Sums,
    table: str,
    *,
    open_decks: dict[tuple[str, str], tuple[Any, Any, Any]],
    open_skipped: dict[str, int],
    misread_limit: int,
    readers: dict[str, Any],
) -> list[Finding]:
    """The findings of one table's devices touched by this pass, from their sums (a deck being
    dealt when the lines stop counts as a pass over all of them counts it: `Pass.pending`)."""
    from daemon.analytics import dice, reader, shuffle  # noqa: PLC0415 - numpy, in the pass
    from daemon.analytics.shuffle import ShuffleStats  # noqa: PLC0415

    found: list[Finding] = []
    for _, kind, serial in sorted(k for k in sums.touched if k[0] == table):
        if kind == "dice":
            found.append(dice.audit(serial, sums.dice[(table, serial)]))
            continue
        stats = sums.shuffle.get((table, serial)) or ShuffleStats()
        if (table, serial) in open_decks:
            stats = stats.copy()
            stats.add(*open_decks[(table, serial)])
        finding = shuffle.audit(serial, stats)
        skipped = sums.skipped[(table, serial)] + open_skipped.get(serial, 0)
        finding.extra["decks_not_audited"] = skipped
        found.append(finding)
    for serial, (total, by_dealer) in sorted(readers.items()):
        found.append(reader.audit(serial, total, by_dealer, 1 / misread_limit))
    return found


def reader_totals(
    conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]]
) -> dict[str, dict[str, Any]]:
    """Add the pass's reader counts; the touched serials' totals, by table then serial."""
    from daemon.analytics.source import ReaderCounts  # noqa: PLC0415 - numpy, in the pass

    if not rows:
        return {}
    conn.execute(  # one statement, not one a row: ~20 dealers a table
        "INSERT INTO integrity_reader AS r (table_id, serial, dealer, reads, misreads, entered) "
        "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::bigint[], "
        "%s::bigint[]) ON CONFLICT (table_id, serial, dealer) "
        "DO UPDATE SET reads = r.reads + excluded.reads, "
        "misreads = r.misreads + excluded.misreads, entered = r.entered + excluded.entered",
        [list(column) for column in zip(*rows, strict=True)],
    )
    touched = sorted({(r[0], r[1]) for r in rows})
    found = conn.execute(
        "SELECT r.table_id, r.serial, r.dealer, r.reads, r.misreads, r.entered "
        "FROM integrity_reader r JOIN unnest(%s::text[], %s::text[]) AS t(table_id, serial) "
        "USING (table_id, serial)",
        ([t for t, _ in touched], [s for _, s in touched]),
    ).fetchall()
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    for table, serial, dealer, reads, misreads, entered in found:
        total, by_dealer = out[table].setdefault(serial, (ReaderCounts(), {}))
        counts = ReaderCounts(int(reads), int(misreads), int(entered))
        by_dealer[dealer] = counts
        total.reads += counts.reads
        total.misreads += counts.misreads
        total.entered += counts.entered
    return out


def hold_findings(
    conn: psycopg.Connection[Any], windows: list[tuple[str, int, int, Any]]
) -> dict[str, list[Finding]]:
    """Sum the new rounds into `integrity_hold` (SQL) and judge each group they touched."""
    from daemon.analytics.hold import HoldSums, game_math, judge  # noqa: PLC0415 - numpy

    touched = conn.execute(
        HOLD_SUMS,
        {
            "tables": [w[0] for w in windows],
            "after": [w[1] for w in windows],
            "upto": [w[2] for w in windows],
        },
    ).fetchall()
    if not touched:
        return {}
    groups = sorted(set(touched))
    rows = conn.execute(
        "SELECT h.table_id, h.grouping, h.key, h.ruleset, h.rounds, h.drop::float8, "
        "h.win::float8, h.commission::float8, h.squares::float8, h.cross_sum::float8 "
        "FROM integrity_hold h JOIN unnest(%s::text[], %s::text[], %s::text[]) "
        "AS g(table_id, grouping, key) USING (table_id, grouping, key)",
        ([g[0] for g in groups], [g[1] for g in groups], [g[2] for g in groups]),
    ).fetchall()
    sums: dict[tuple[str, str, str], dict[str, HoldSums]] = defaultdict(dict)
    for table, grouping, key, ruleset, rounds, drop, win, commission, squares, cross in rows:
        sums[(table, grouping, key)][ruleset] = HoldSums(
            int(rounds), drop, win, commission, squares, cross
        )
    figures = game_math()
    out: dict[str, list[Finding]] = defaultdict(list)
    for (table, grouping, key), by_ruleset in sorted(sums.items()):
        out[table].append(judge(f"{grouping} {key}", by_ruleset, grouping, figures))
    return out


def stored_findings(
    conn: psycopg.Connection[Any],
    kind: str,
    *,
    tables: list[str] | None = None,
    serial: str | None = None,
    misread_limit: int = 1000,
    by: str = "shift",
) -> tuple[list[Finding], int]:
    """The findings of `kind` from the sums the passes keep, without reading a line: devices
    per table and serial; the hold over the tables asked for, grouped by `by` (the groups'
    sums added across tables in SQL). And the lines the passes have read of those tables."""
    from daemon.analytics import dice, reader, shuffle  # noqa: PLC0415 - numpy
    from daemon.analytics.hold import HoldSums, game_math, judge  # noqa: PLC0415
    from daemon.analytics.shuffle import ShuffleStats, permutations  # noqa: PLC0415
    from daemon.analytics.source import Pass, ReaderCounts  # noqa: PLC0415

    cursors = conn.execute(
        "SELECT table_id, lines FROM integrity_cursor WHERE %s::text[] IS NULL "
        "OR table_id = ANY(%s) ORDER BY table_id",
        (tables, tables),
    ).fetchall()
    known = [r[0] for r in cursors]
    lines = sum(int(r[1]) for r in cursors)
    found: list[Finding] = []
    if kind == "hold":
        rows = conn.execute(
            "SELECT key, ruleset, sum(rounds), sum(drop)::float8, sum(win)::float8, "
            "sum(commission)::float8, sum(squares)::float8, sum(cross_sum)::float8 "
            "FROM integrity_hold WHERE grouping = %s AND table_id = ANY(%s) "
            "GROUP BY key, ruleset ORDER BY key, ruleset",
            (by, known),
        ).fetchall()
        groups: dict[str, dict[str, HoldSums]] = defaultdict(dict)
        for key, ruleset, rounds, drop, win, commission, squares, cross in rows:
            groups[key][ruleset] = HoldSums(int(rounds), drop, win, commission, squares, cross)
        figures = game_math()
        return [judge(f"{by} {key}", groups[key], by, figures) for key in sorted(groups)], lines
    for table in known:
        if kind in ("dice", "shuffle"):
            rows = conn.execute(
                "SELECT serial, stats, skipped FROM integrity_devices WHERE table_id = %s "
                "AND kind = %s AND (%s::text IS NULL OR serial = %s) ORDER BY serial",
                (table, kind, serial, serial),
            ).fetchall()
            state = conn.execute(
                "SELECT state FROM integrity_cursor WHERE table_id = %s", (table,)
            ).fetchone()
            open_deck = Pass(state[0] if state and state[0] else None).pending()
            for name, stats, skipped in rows:
                if kind == "dice":
                    finding = dice.audit(name, dice.DiceStats.from_json(stats))
                else:
                    decks = ShuffleStats.from_json(stats)
                    if name in open_deck.deck_outputs:
                        decks.add(permutations(*open_deck.decks(name)))
                    finding = shuffle.audit(name, decks)
                    finding.extra["decks_not_audited"] = int(skipped) + (
                        open_deck.decks_skipped.get(name, 0)
                    )
                finding.extra["table"] = table
                found.append(finding)
        else:
            readers: dict[str, tuple[ReaderCounts, dict[str, ReaderCounts]]] = {}
            for name, dealer, reads, misreads, entered in conn.execute(
                "SELECT serial, dealer, reads, misreads, entered FROM integrity_reader "
                "WHERE table_id = %s AND (%s::text IS NULL OR serial = %s)",
                (table, serial, serial),
            ).fetchall():
                total, by_dealer = readers.setdefault(name, (ReaderCounts(), {}))
                by_dealer[dealer] = ReaderCounts(int(reads), int(misreads), int(entered))
                total.reads += int(reads)
                total.misreads += int(misreads)
                total.entered += int(entered)
            for name in sorted(readers):
                total, by_dealer = readers[name]
                finding = reader.audit(name, total, by_dealer, 1 / misread_limit)
                finding.extra["table"] = table
                found.append(finding)
    return found, lines
