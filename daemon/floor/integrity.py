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
import importlib.util
import time
from collections import defaultdict
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter
from typing import Any

import psycopg
import structlog

from daemon.floor.integrity_findings import (
    ALERT_OF,
    INTEGRITY_KINDS,
    PassResult,
    alert,
    device_findings,
    hold_findings,
    open_alerts,
    reader_totals,
    stored_findings,
)
from daemon.floor.integrity_sums import DUMPS, Decks, Sums, fold

__all__ = ["ALERT_OF", "INTEGRITY_KINDS", "PassResult", "run_every", "run_pass", "stored_findings"]

log = structlog.get_logger("tabled.floor.integrity")

FETCH = 20_000


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

        sums = Sums(conn, [w[0] for w in windows])
        lap("load sums")
        reader_rows: list[tuple[Any, ...]] = []
        states: dict[str, dict[str, Any]] = {}
        read: dict[str, int] = defaultdict(int)
        saved = {w[0]: w[3] for w in windows}
        batch, open_batch = Decks(), Decks()
        open_skipped: dict[str, dict[str, int]] = {}
        for table, facts in _facts(conn, windows):
            reading = Pass(saved[table])
            data = reading.read_facts(facts)
            result.lines += data.lines
            read[table] = data.lines
            fold(sums, table, data, batch, reader_rows)
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
        readers = reader_totals(conn, reader_rows)
        lap("reader counts (SQL)")
        holds = hold_findings(conn, windows)
        lap("hold sums (SQL) and z")
        open_ids = open_alerts(conn, list(upto))
        for table, _, last, _state in windows:
            findings = device_findings(
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
                alert(conn, table, last, finding, open_ids=open_ids, result=result)
            result.findings += findings
        lap("device findings and alerts")
        cursors = [
            (t, upto[t], read[t], DUMPS(states.get(t) or saved[t] or Pass().json())) for t in upto
        ]
        conn.execute(
            "INSERT INTO integrity_cursor AS c (table_id, last_seq, lines, state) "
            "SELECT t, s, n, j::jsonb FROM unnest(%s::text[], %s::bigint[], %s::bigint[], "
            "%s::text[]) AS r(t, s, n, j) ON CONFLICT (table_id) DO UPDATE SET "
            "last_seq = excluded.last_seq, lines = c.lines + excluded.lines, "
            "state = excluded.state, updated_at = now()",
            [list(column) for column in zip(*cursors, strict=True)],
        )
        result.tables = len(windows)
    result.seconds = time.perf_counter() - started
    return result


def analytics_absent() -> str | None:
    """Why the pass cannot run here (numpy or scipy not installed), or None: without importing
    them (`analytics_missing` imports them)."""
    for name in ("numpy", "scipy"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed (pip install '.[analytics]')"
    return None


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
    # Whether numpy and scipy are there is known at start without importing them: their import
    # (about a CPU-second, seconds on a loaded machine) waits for the first pass, on its thread,
    # so a floor catching up after an outage does not pay for it meanwhile.
    missing = analytics_absent()
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
            updated=len(done.updated),
            resolved=len(done.resolved),
        )
        # An update is the same alert (its id) with the pass's newer verdict and figures: the
        # page redraws the one it lists.
        for row in [*done.opened, *done.updated]:
            publish({"type": "alert", "alert": row})
        for row in done.resolved:
            publish({"type": "resolved", "alert": row})
