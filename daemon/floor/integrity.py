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
import time
from collections import defaultdict
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
from psycopg.types.json import Jsonb

from daemon.floor.integrity_findings import (
    ALERT_OF,
    INTEGRITY_KINDS,
    PassResult,
    _alert,
    _device_findings,
    _hold_findings,
    _open_alerts,
    _readers,
    stored_findings,
)

if TYPE_CHECKING:
    from daemon.analytics.source import AuditData

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
