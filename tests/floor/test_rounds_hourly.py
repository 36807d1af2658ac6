"""The page's rounds chart read from `rounds_hourly` and `rounds_daily` (migrations 0041 and
0042, kept by triggers) counts what counting `rounds` itself counts, over any range, per pit
(the registry's, else the config's, else none) and for the floor, and for one table: rounds
written and moved as the ingest writes them (one INSERT ... ON CONFLICT DO UPDATE a batch, a
round's start moved earlier by a late line), deleted too. Its violations chart, from
`violations_daily` beyond 48 hours (migration 0043), counts what counting `violations` counts,
through duplicates, moves, acknowledgements and deletes."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from daemon.floor import queries
from daemon.floor.localservers import PostgresCluster
from daemon.floor.store import Store

UPSERT = (
    "INSERT INTO rounds AS r (table_id, round, first_seq, last_seq, started_at, ended_at, status, "
    "lines) SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[], "
    "%s::timestamptz[], %s::timestamptz[], %s::text[], %s::int[]) ON CONFLICT (table_id, round) "
    "DO UPDATE SET first_seq = least(r.first_seq, excluded.first_seq), "
    "last_seq = greatest(r.last_seq, excluded.last_seq), "
    "started_at = least(r.started_at, excluded.started_at), lines = r.lines + excluded.lines"
)  # as daemon/floor/derived.py writes them


def _from_rows(conn: psycopg.Connection[Any], since: datetime, until: datetime, bar: str) -> Any:
    return conn.execute(
        "SELECT table_id, date_trunc(%s, started_at, 'UTC'), count(*)::int FROM rounds "
        "WHERE started_at >= %s AND started_at < %s GROUP BY 1, 2 ORDER BY 2, 1",
        (bar, since, until),
    ).fetchall()


VIOLATION = (
    "INSERT INTO violations (table_id, seq, ts, round, actor, article, action, phase, reason) "
    "VALUES (%s, %s, %s, '1', 'dealer:D1', %s, 'close_bets', 'BETTING', 'late') "
    "ON CONFLICT DO NOTHING"
)  # as daemon/floor/derived.py writes them, a statement a row


def _violations(conn: psycopg.Connection[Any], since: datetime, until: datetime, bar: str) -> Any:
    return conn.execute(
        "SELECT coalesce(article, '?'), date_trunc(%s, ts, 'UTC'), count(*)::int FROM violations "
        "WHERE ts >= %s AND ts < %s GROUP BY 1, 2 ORDER BY 2, 1",
        (bar, since, until),
    ).fetchall()


PITS = {"T1": "Pit A", "T3": "Pit B"}  # the config's; T2 is enrolled in Pit B, T4 in none


def test_the_rounds_chart_counts_what_the_rows_count(pg: PostgresCluster) -> None:
    dsn = pg.create_database("rounds_hourly")
    store = Store(dsn)
    rng = random.Random(25)
    end = datetime(2026, 11, 20, 13, 17, 41, tzinfo=UTC)

    async def charts(hours: int) -> dict[str, Any]:
        return await queries.charts(store, hours, PITS)

    async def run() -> None:
        await store.migrate()
        with psycopg.connect(dsn) as conn:
            conn.execute(
                "INSERT INTO floor_tables (table_id, last_ts) VALUES ('T1', %s), ('T2', %s)",
                (end, end),
            )
            conn.execute(
                "INSERT INTO enrolled_tables (table_id, pit, enrolled_by) VALUES "
                "('T2', 'Pit B', 'admin.person'), ('T4', NULL, 'admin.person')"
            )
            # Batches of rounds, some of them written again with an earlier start (a gap's line
            # filled in), as the ingest's one upsert a batch does.
            for batch in range(40):
                rows = {}
                for _ in range(50):
                    table = rng.choice(("T1", "T2", "T3", "T4"))
                    number = rng.randrange(1, 600)
                    start = end - timedelta(seconds=rng.uniform(0, 9 * 86400))
                    rows[table, number] = (table, str(number), number * 150, number * 150 + 149,
                                           start, None, "open", 1)  # fmt: skip
                columns = [list(c) for c in zip(*rows.values(), strict=True)]
                conn.execute(UPSERT, columns)
                if batch % 10 == 9:
                    conn.execute("DELETE FROM rounds WHERE round = %s", (str(batch),))
                conn.commit()
            # Violations as the ingest writes them (a row a statement, a duplicate ignored),
            # some of no article, one moved, some acknowledged, some deleted.
            for i in range(300):
                ts = end - timedelta(seconds=rng.uniform(0, 40 * 86400))
                article, table = rng.choice(("Art. 2(a)", "Art. 3", None)), rng.choice(("T1", "T2"))
                for _ in range(1 + i % 2):  # every other one written twice: counted once
                    conn.execute(VIOLATION, (table, i, ts, article))
            conn.execute("UPDATE violations SET ts = ts - interval '3 days' WHERE seq % 7 = 0")
            conn.execute(
                "UPDATE violations SET acknowledged_at = now(), acknowledged_by = 'pit.person', "
                "acknowledged_role = 'pit', ack_note = 'seen' WHERE seq % 5 = 0"
            )
            conn.execute("DELETE FROM violations WHERE seq % 11 = 0")
            conn.commit()
            pit_of = {**PITS, "T2": "Pit B", "T4": queries.NO_PIT}
            for hours, bar in ((1, "hour"), (2, "hour"), (24, "hour"), (168, "day"), (744, "day")):
                got = await charts(hours)
                since, until = got["since"], got["until"]
                assert got["bar"] == bar
                # Whole bars: every one that holds any of the hours asked, the newest line's last.
                step = timedelta(**{f"{bar}s": 1})
                assert since <= end - timedelta(hours=hours) < since + step, hours
                assert until - step <= end < until, hours
                want_pits: dict[tuple[str, datetime], int] = {}
                want_floor: dict[datetime, int] = {}
                for table, at, n in _from_rows(conn, since, until, bar):
                    key = (pit_of[table], at)
                    want_pits[key] = want_pits.get(key, 0) + n
                    want_floor[at] = want_floor.get(at, 0) + n
                served = {(r["pit"], r["hour"]): r["n"] for r in got["rounds_per_pit_hour"]}
                assert served == want_pits, hours
                assert len(served) == len(got["rounds_per_pit_hour"])
                floor = [(r["hour"], r["n"]) for r in got["rounds_per_hour"]]
                assert floor == sorted(want_floor.items()), hours
                served_v = [(r["article"], r["hour"], r["n"])
                            for r in got["violations_per_article_hour"]]  # fmt: skip
                assert served_v == _violations(conn, since, until, bar), hours
                one = await queries.table_chart(store, "T2", hours)
                assert (one["since"], one["until"], one["bar"]) == (since, until, bar)
                assert [(r["hour"], r["n"]) for r in one["rounds_per_hour"]] == [
                    (at, n) for table, at, n in _from_rows(conn, since, until, bar) if table == "T2"
                ], hours
            assert sum(r[2] for r in _from_rows(conn, end - timedelta(days=30), end, "hour")) > 500
        await store.close()

    asyncio.run(run())
