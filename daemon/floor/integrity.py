"""The floor's integrity update: every `[integrity] period_seconds` (default an hour), one pass
over each table's journal lines since the last pass, the same audit `tabled audit` makes of a
journal folder (docs/integrity.md), and the `dice_bias`, `shuffle_bias`, `reader_misreads` and
`hold_outlier` alerts in the floor's alert stream.

A pass reads no journal line: the ingest writes the few fields the audit needs of each line
(daemon/floor/facts.py, migration 0022: dice faces, shuffles, runs of cards, the reader's
misreads and manual entries, each round's hold sums), and a pass reads those narrow rows since
the last pass. Nor does it read a table's history again: each table's sufficient statistics are
kept in floor tables (migration 0020) and each pass adds to them.

- `integrity_cursor`: the last seq read (never beyond `contiguous_seq`: the lines are read in
  seq order with none missing) and the reading's state (each device's serial, the dealer at the
  shoe, the deck being dealt and the deck before it: `daemon.analytics.source.Pass`).
- `integrity_devices`: per table, dice | shuffle and serial, the running sums of
  `dice.DiceStats` (face counts per position, the totals' sums for runs and serial
  correlation, repeats, the 30 CUSUM states and alarms) and `shuffle.ShuffleStats` (the rising
  sequences' histogram, the guessing score, the card x position table). The CUSUM, rising
  sequences and the guessing game follow the order of the lines: numpy, on the new lines.
- `integrity_reader`: reads, misreads and manual entries per table, serial and dealer.
- `integrity_hold`: the hold's sums per table, group (the table, each shift, each dealer) and
  rule set, summed by PostgreSQL from `integrity_rounds` in one statement (GROUPING SETS).

Verdicts come from the very functions `tabled audit` calls (`dice.audit`, `shuffle.audit`,
`reader.audit`, `hold.judge`) given those sums: the same data gives the same verdicts.

An alert is one per (table, kind, subject) while open: a later pass that still flags the
subject updates that alert's details (the verdict, statistic, p-value and power statement) and
its seq (the last line read), one that no longer does resolves it. They are `chain_alerts` rows
of those kinds, so the page lists them and people acknowledge them as they do chain alerts.

numpy and scipy (the analytics extra) are imported by the pass only: a floor without them
logs that the integrity update is off, once, and runs on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

if TYPE_CHECKING:
    from daemon.analytics.common import Finding
    from daemon.analytics.source import AuditData

log = structlog.get_logger("tabled.floor.integrity")

ALERT_OF = {
    "dice": "dice_bias",
    "shuffle": "shuffle_bias",
    "reader": "reader_misreads",
    "hold": "hold_outlier",
}
INTEGRITY_KINDS = tuple(ALERT_OF.values())
FETCH = 20_000

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


def _windows(conn: psycopg.Connection[Any]) -> list[tuple[str, int, int, dict[str, Any] | None]]:
    """Each table with lines not yet read: (table, after, upto, the reading's state)."""
    rows = conn.execute(
        "SELECT t.table_id, coalesce(c.last_seq, 0), t.contiguous_seq, c.state "
        "FROM floor_tables t LEFT JOIN integrity_cursor c USING (table_id) "
        "WHERE t.contiguous_seq > coalesce(c.last_seq, 0) ORDER BY t.table_id"
    ).fetchall()
    return [(r[0], int(r[1]), int(r[2]), r[3] or None) for r in rows]


# Each table's facts of its window (daemon/floor/facts.py), in seq order, table after table.
FACTS = """
SELECT f.table_id, f.kind, f.device, f.value, f.cards, f.idx, f.entered, f.dice,
       CASE WHEN f.kind = 'cards' THEN length(f.cards) ELSE 1 END
FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) WITH ORDINALITY AS w(table_id, after, upto, n)
JOIN integrity_facts f ON f.table_id = w.table_id AND f.seq > w.after AND f.seq <= w.upto
ORDER BY w.n, f.seq
"""


def _facts(
    conn: psycopg.Connection[Any], windows: list[tuple[str, int, int, Any]]
) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """(table, its facts since the last pass), table by table, through a server-side cursor."""
    with conn.cursor(name="integrity_facts") as cursor:
        cursor.itersize = FETCH
        cursor.execute(
            FACTS,
            ([w[0] for w in windows], [w[1] for w in windows], [w[2] for w in windows]),
        )
        for table, rows in groupby(cursor, key=itemgetter(0)):
            yield table, [row[1:] for row in rows]


def _details(finding: Finding) -> dict[str, Any]:
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


def _open_alerts(
    conn: psycopg.Connection[Any], tables: list[str]
) -> dict[tuple[str, str, str], int]:
    """The open integrity alerts of these tables: (table, kind, subject) -> id."""
    rows = conn.execute(
        "SELECT table_id, kind, details->>'subject', id FROM chain_alerts "
        "WHERE table_id = ANY(%s) AND kind = ANY(%s) AND resolved_at IS NULL",
        (tables, list(INTEGRITY_KINDS)),
    ).fetchall()
    return {(r[0], r[1], r[2]): int(r[3]) for r in rows}


def _alert(
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
                (seq, Jsonb(_details(finding)), known),
            )
            result.updated += cur.fetchall()
        elif known is not None:
            cur.execute(
                "UPDATE chain_alerts SET resolved_at = now(), seq = %s, details = %s "  # noqa: S608 - constant columns
                f"WHERE id = %s RETURNING {ALERT_RETURNS}",
                (seq, Jsonb(_details(finding)), known),
            )
            result.resolved += cur.fetchall()
        else:
            cur.execute(
                "INSERT INTO chain_alerts (table_id, seq, kind, details) "  # noqa: S608 - constant columns
                f"VALUES (%s, %s, %s, %s) RETURNING {ALERT_RETURNS}",
                (table, seq, kind, Jsonb(_details(finding))),
            )
            result.opened += cur.fetchall()
            log.warning("floor.integrity_alert", table=table, kind=kind, subject=finding.subject)


class _Sums:
    """The stored sums of the tables in a pass, loaded at once, written back at once."""

    def __init__(self, conn: psycopg.Connection[Any], tables: list[str]) -> None:
        from daemon.analytics.dice import DiceStats  # noqa: PLC0415 - numpy: in the pass only
        from daemon.analytics.shuffle import ShuffleStats  # noqa: PLC0415

        self.dice: dict[tuple[str, str], DiceStats] = {}
        self.shuffle: dict[tuple[str, str], ShuffleStats] = {}
        self.skipped: dict[tuple[str, str], int] = defaultdict(int)
        self.touched: set[tuple[str, str, str]] = set()
        rows = conn.execute(
            "SELECT table_id, kind, serial, stats, skipped FROM integrity_devices "
            "WHERE table_id = ANY(%s)",
            (tables,),
        ).fetchall()
        for table, kind, serial, stats, skipped in rows:
            if kind == "dice":
                self.dice[(table, serial)] = DiceStats.from_json(stats)
            else:
                self.shuffle[(table, serial)] = ShuffleStats.from_json(stats)
                self.skipped[(table, serial)] = int(skipped)

    def write(self, conn: psycopg.Connection[Any]) -> None:
        rows = []
        for table, kind, serial in sorted(self.touched):
            if kind == "dice":
                dice = self.dice[(table, serial)]
                rows.append((table, kind, serial, dice.throws, 0, Jsonb(dice.json())))
            else:
                deck = self.shuffle[(table, serial)]
                skipped = self.skipped[(table, serial)]
                rows.append((table, kind, serial, deck.decks, skipped, Jsonb(deck.json())))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO integrity_devices (table_id, kind, serial, samples, skipped, stats) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (table_id, kind, serial) DO UPDATE "
                "SET samples = excluded.samples, skipped = excluded.skipped, "
                "stats = excluded.stats, updated_at = now()",
                rows,
            )


class _Decks:
    """Decks of many tables (keyed), their rising sequences and guessing scores computed in
    one numpy batch: the guessing game steps through the 52 positions, and 20 decks a table
    are too few to carry those steps' cost alone."""

    def __init__(self) -> None:
        self.parts: list[tuple[tuple[str, str], Any]] = []

    def add(self, key: tuple[str, str], decks: Any) -> None:
        if len(decks):
            self.parts.append((key, decks))

    def scored(self) -> dict[tuple[str, str], tuple[Any, Any, Any]]:
        """key -> (decks, rising sequences, scores)."""
        import numpy as np  # noqa: PLC0415 - numpy: in the pass only

        from daemon.analytics.shuffle import guess_scores, rising_sequences  # noqa: PLC0415

        if not self.parts:
            return {}
        every = np.concatenate([decks for _, decks in self.parts])
        rising, scores = rising_sequences(every), guess_scores(every)
        found: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
        at = 0
        for key, decks in self.parts:
            end = at + len(decks)
            found[key] = (decks, rising[at:end], scores[at:end])
            at = end
        return found


def _fold(
    sums: _Sums,
    table: str,
    data: AuditData,
    decks: _Decks,
    reader_rows: list[tuple[Any, ...]],
) -> None:
    """Add what one table's new lines hold to its sums (the decks: once `decks` is scored)."""
    from daemon.analytics.dice import DiceStats  # noqa: PLC0415 - numpy: in the pass only
    from daemon.analytics.shuffle import permutations  # noqa: PLC0415

    for serial in data.dice:
        stats = sums.dice.get((table, serial))
        if stats is None:
            stats = sums.dice[(table, serial)] = DiceStats.of(data.throws(serial)[:0])
        stats.add(data.throws(serial))
        sums.touched.add((table, "dice", serial))
    for serial in set(data.deck_outputs) | set(data.decks_skipped):
        decks.add((table, serial), permutations(*data.decks(serial)))
        sums.skipped[(table, serial)] += data.decks_skipped.get(serial, 0)
        sums.touched.add((table, "shuffle", serial))
    for (serial, dealer), counts in data.reader_by_dealer.items():
        reader_rows.append((table, serial, dealer, counts.reads, counts.misreads, counts.entered))


def _device_findings(
    sums: _Sums,
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


def _readers(
    conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]]
) -> dict[str, dict[str, Any]]:
    """Add the pass's reader counts; the touched serials' totals, by table then serial."""
    from daemon.analytics.source import ReaderCounts  # noqa: PLC0415 - numpy, in the pass

    if not rows:
        return {}
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO integrity_reader AS r (table_id, serial, dealer, reads, misreads, "
            "entered) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (table_id, serial, dealer) "
            "DO UPDATE SET reads = r.reads + excluded.reads, "
            "misreads = r.misreads + excluded.misreads, entered = r.entered + excluded.entered",
            rows,
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


def _hold_findings(
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


def run_pass(  # noqa: PLR0915 - the pass's steps in the order they commit
    conn: psycopg.Connection[Any], *, misread_limit: int = 1000, tables: list[str] | None = None
) -> PassResult:
    """One pass over every table's (or `tables`') lines since the last, in one transaction:
    the sums, the cursor and the alerts commit together."""
    from daemon.analytics.shuffle import ShuffleStats, permutations  # noqa: PLC0415 - numpy
    from daemon.analytics.source import Pass  # noqa: PLC0415

    started = time.perf_counter()
    result = PassResult()
    with conn.transaction():
        # One pass at a time on a floor (two floors on one database take turns).
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (0x1A7E6217,))
        windows = _windows(conn)
        if tables is not None:
            windows = [w for w in windows if w[0] in tables]
        if not windows:
            result.seconds = time.perf_counter() - started
            return result
        upto = {w[0]: w[2] for w in windows}
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            result.phases[name] = result.phases.get(name, 0.0) + now - clock
            clock = now

        sums = _Sums(conn, [w[0] for w in windows])
        lap("load sums")
        reader_rows: list[tuple[Any, ...]] = []
        states: dict[str, dict[str, Any]] = {}
        read: dict[str, int] = defaultdict(int)
        saved = {w[0]: w[3] for w in windows}
        batch, open_batch = _Decks(), _Decks()
        open_skipped: dict[str, dict[str, int]] = {}
        for table, facts in _facts(conn, windows):
            reading = Pass(saved[table])
            data = reading.read_facts(facts)
            result.lines += data.lines
            read[table] = data.lines
            _fold(sums, table, data, batch, reader_rows)
            states[table] = reading.json()
            pending = reading.pending()
            for serial in pending.deck_outputs:
                open_batch.add((table, serial), permutations(*pending.decks(serial)))
            open_skipped[table] = dict(pending.decks_skipped)
        for key, scored in batch.scored().items():
            sums.shuffle.setdefault(key, ShuffleStats()).add(*scored)
        open_decks = open_batch.scored()
        lap("read and fold lines")
        sums.write(conn)
        lap("write sums")
        readers = _readers(conn, reader_rows)
        lap("reader counts (SQL)")
        holds = _hold_findings(conn, windows)
        lap("hold sums (SQL) and z")
        open_ids = _open_alerts(conn, list(upto))
        for table, _, last, _state in windows:
            findings = _device_findings(
                sums,
                table,
                open_decks=open_decks,
                open_skipped=open_skipped.get(table, {}),
                misread_limit=misread_limit,
                readers=readers.get(table, {}),
            )
            findings += holds.get(table, [])
            for finding in findings:
                finding.extra["table"] = table
                _alert(conn, table, last, finding, open_ids=open_ids, result=result)
            result.findings += findings
        lap("device findings and alerts")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO integrity_cursor AS c (table_id, last_seq, lines, state) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (table_id) DO UPDATE SET "
                "last_seq = excluded.last_seq, lines = c.lines + excluded.lines, "
                "state = excluded.state, updated_at = now()",
                [
                    (t, upto[t], read[t], Jsonb(states.get(t) or saved[t] or Pass().json()))
                    for t in upto
                ],
            )
        result.tables = len(windows)
    result.seconds = time.perf_counter() - started
    return result


def analytics_missing() -> str | None:
    """Why the pass cannot run here (numpy or scipy missing), or None."""
    try:
        import numpy  # noqa: F401, PLC0415
        import scipy.stats  # noqa: F401, PLC0415
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install '.[analytics]')"
    return None


async def run_every(
    dsn: str,
    period: float,
    stop: asyncio.Event,
    publish: Any,
    *,
    misread_limit: int = 1000,
) -> None:
    """The floor service's loop: a pass every `period` seconds (the first after one period)
    until `stop`; each alert opened, updated or resolved is published (`publish(message)`)."""
    if period <= 0:
        return
    missing = analytics_missing()
    if missing:
        log.warning("floor.integrity_off", reason=missing)
        return

    def one() -> PassResult:
        with psycopg.connect(dsn) as conn:
            return run_pass(conn, misread_limit=misread_limit)

    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=period)
            return
        except TimeoutError:
            pass
        try:
            done = await asyncio.to_thread(one)
        except (psycopg.Error, OSError) as exc:  # the database away: the next period retries
            log.warning("floor.integrity_pass_failed", error=str(exc))
            continue
        except Exception:  # a defect: said whole in the log, and the floor runs on
            log.exception("floor.integrity_pass_failed")
            continue
        log.info(
            "floor.integrity_pass",
            tables=done.tables,
            lines=done.lines,
            seconds=round(done.seconds, 3),
            opened=len(done.opened),
            resolved=len(done.resolved),
        )
        for row in done.opened:  # an update stays the alert the page already lists
            publish({"type": "alert", "alert": row})
        for row in done.resolved:
            publish({"type": "resolved", "alert": row})


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
