"""A year on the floor (issue 25, item 5): the floor's derived data for 800 tables over a year,
written straight into PostgreSQL, then every floor page and API query timed at p99 against the
200 ms goal.

    .venv/bin/python bench/bench_floor_year.py [--tables 800] [--days 365]
        [--rounds-per-hour 40] [--seats 3] [--settlement-days 31] [--repeat 60] [--compare]
        [--dsn URL --skip-load] [--keep]

Its own throwaway PostgreSQL 15 (daemon.floor.localservers) with the floor's schema (its
migrations), unless `--dsn` names one (`--skip-load`: already loaded by an earlier run, kept
with `--keep`).

**What is loaded** (`generate_series`, one INSERT ... SELECT per chunk of tables; the volumes
per table, every one a flag):

- `rounds`: `--rounds-per-hour` (40: a Thirteen or Pai Gow round every 90 s, the sizing of
  docs/floor-service.md) around the clock for `--days`, each of 150 lines (seqs), 1 % voided,
  the last one open;
- `settlements`: `--seats` rows a settled round (3), for the last `--settlement-days` days
  (31) only: the report is their only reader, by time range, so its cost is the span's rows,
  not the year's (a year of them for 800 tables, 840 M rows, is past this machine's disk);
- `violations`: 4 a table a day; `device_faults` (tilts and holds): 2; `overrides`: 1; each
  acknowledged by a person but those of the last two days and one in ten;
- `chain_alerts`: a resolved gap a table a month, open gaps on 1 % of the tables, the
  integrity alerts of 1 %; `devices` (3 a table), `floor_tables`, `enrolled_tables` (pits of
  20 tables);
- `integrity_hold`: a row a table, shift and day; `integrity_devices`: a shaker and a
  shuffler a table, with a year's sums;
- `journal_lines` (the raw lines, the drill-down's only source): each table's last
  `--raw-lines` lines (3,000: 20 rounds) and 300 lines in each of the three months before
  (the retention keeps four months' partitions), valid journal lines with their SHA-256, but
  `prev` not chained (no query reads the chain).

**What is timed**: each route the floor serves, through the floor's own app
(`daemon.floor.api.create_app`, in process, over httpx's ASGI transport: the query, the
redaction, the sentences and the JSON, not the network), `--repeat` calls each (a table drawn
at random each call where the route takes one), p50 and p99 (nearest rank), beside the goal.
The two exports (a year of violations at `limit=5000`, the audit report of an hour: ~128,000
rows) are judged by rows a second against their targets (`EXPORT_ROWS_PER_S`), printed beside
their p50 and p99: their time is their rows' (docs/floor.md, "Exports").
`--compare` first times the tree as it was before migration 0041 (its indexes dropped, the
charts read from the derived rows), then as it is.

The machine's load average is printed beside the figures: they move with it.
"""

# ruff: noqa: S608 - the SQL is built from the bench's own constants; every value is a parameter

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from daemon.api.tokens import new_token, token_entry
from daemon.floor import queries
from daemon.floor.api import create_app
from daemon.floor.config import FloorApi, FloorConfig
from daemon.floor.hub import Hub
from daemon.floor.localservers import PostgresCluster
from daemon.floor.store import Store, month_start, partition_name
from daemon.floor.storebase import next_month

GOAL_MS = 200.0
# The exports: their time is their rows', so their goal is rows a second (and ms per 1,000 rows),
# printed beside their p99. The audit report: a day of 800 tables (~3 M rows) in about a minute;
# the violation list at its limit of 5,000 rows, each with its sentence in two languages and its
# redaction, within half a second (docs/floor.md, "Exports").
EXPORT_ROWS_PER_S = {
    "GET /api/violations?since=a year": 10_000.0,
    "GET /api/report (1 hour, audit)": 50_000.0,
}
EXPORTS_SEEN: dict[str, str] = {}  # each export's figures, as last printed
LINES_PER_ROUND = 150
CHUNK = 20  # tables an INSERT
ARTICLES = (
    "Portaria 51/89/M Art. 2(a)", "Portaria 51/89/M Art. 2(c)", "Portaria 51/89/M Art. 3",
    "Portaria 51/89/M Art. 5(b)", "Regulamento 13/90 Art. 7",
)  # fmt: skip
DEVICES = (("shoe_reader", "SHOE-R8", "misread"), ("dice_shaker", "DICE-4", "die out of the cup"),
           ("shuffler", "SHUF-52", "jam"))  # fmt: skip
# Migration 0041's indexes and aggregates: dropped by --compare's "before".
NEW_INDEXES = ("rounds_table_seq", "violations_table_ts", "device_faults_table_ts",
               "overrides_table_ts", "device_faults_model_ts")  # fmt: skip


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def table_ids(n: int) -> list[str]:
    return [f"T{t:03d}" for t in range(1, n + 1)]


class Plan:
    """The volumes, and where the rounds fall (every table's rounds are a formula of r)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.tables = args.tables
        self.days = args.days
        self.rph = args.rounds_per_hour
        self.interval = 3600.0 / self.rph
        self.rounds = int(args.days * 24 * self.rph)  # a table's
        self.end = args.end or datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        self.start = self.end - timedelta(days=args.days)
        self.seats = args.seats
        self.settle_rounds = min(self.rounds, int(args.settlement_days * 24 * self.rph))
        days = args.days if args.round_days is None else args.round_days
        self.round_rounds = min(self.rounds, int(days * 24 * self.rph))
        self.raw = args.raw_lines

    def sql_params(self) -> dict[str, Any]:
        return {"start": self.start, "iv": self.interval, "n": self.rounds,
                "per": LINES_PER_ROUND}  # fmt: skip


# The round r of table t (its number, 1..tables) starts at start + offset(t) + (r - 1) * iv.
STARTED = "(%(start)s::timestamptz + make_interval(secs => (t * 37 %% 90) + (r - 1) * %(iv)s))"


def _chunks(n: int) -> list[tuple[int, int]]:
    return [(a, min(a + CHUNK - 1, n)) for a in range(1, n + 1, CHUNK)]


def _timed(conn: psycopg.Connection[Any], label: str, sql: str, params: dict[str, Any],
           tables: int) -> None:  # fmt: skip
    began, rows = time.perf_counter(), 0
    for low, high in _chunks(tables):
        rows += conn.execute(sql.encode(), {**params, "t0": low, "t1": high}).rowcount
        conn.commit()
        print(f"\r  {label}: {rows:,} rows ({high}/{tables} tables)", end="", flush=True)
    took = time.perf_counter() - began
    print(f"\r  {label}: {rows:,} rows in {took:.0f} s ({rows / took:,.0f}/s)       ", flush=True)


def load(conn: psycopg.Connection[Any], plan: Plan) -> None:
    p = plan.sql_params()
    tid = "'T' || lpad(t::text, 3, '0')"
    print(f"loading {plan.tables} tables x {plan.days} days, load average {load_average()}")
    conn.execute(
        "INSERT INTO enrolled_tables (table_id, game, pit, enrolled_by) SELECT "
        f"{tid}, CASE WHEN t %% 5 < 3 THEN 'thirteen' ELSE 'paigow' END, "
        "'Pit ' || ((t - 1) / 20 + 1), 'admin.person' FROM generate_series(1, %(n)s::int) t",
        {"n": plan.tables},
    )
    conn.execute(
        "INSERT INTO floor_tables (table_id, game, phase, state, round, last_seq, head_hash, "
        "contiguous_seq, last_event, last_ts, received_at, lines) SELECT "
        f"{tid}, CASE WHEN t %% 5 < 3 THEN 'thirteen' ELSE 'paigow' END, 'DEALING', "
        "CASE WHEN t %% 97 = 0 THEN 'held' WHEN t %% 101 = 0 THEN 'tilted' ELSE 'playing' END, "
        "%(n)s::text, %(n)s::bigint * 150 - 70, sha256(t::text::bytea), %(n)s::bigint * 150 - 70, "
        "'card.dealt', %(end)s, %(end)s + interval '0.4 s', %(n)s::bigint * 150 - 70 "
        "FROM generate_series(1, %(tables)s::int) t",
        {"n": plan.rounds, "end": plan.end, "tables": plan.tables},
    )
    conn.execute(
        "INSERT INTO devices (table_id, device, make, model, serial, firmware, seq) SELECT "
        f"{tid}, d.device, 'Acme', d.model, d.model || '-' || {tid}, '2.1', 3 "
        "FROM generate_series(1, %(n)s::int) t, (VALUES ('shoe_reader', 'SHOE-R8'), "
        "('dice_shaker', 'DICE-4'), ('shuffler', 'SHUF-52')) d(device, model)",
        {"n": plan.tables},
    )
    # The rounds in bulk: their trigger off and their two secondary indexes built after (the
    # same rows and indexes as written one batch at a time; much quicker to load).
    conn.execute("ALTER TABLE rounds DISABLE TRIGGER USER")
    for name in ("rounds_started", "rounds_table_seq"):
        conn.execute(f"DROP INDEX IF EXISTS {name}")
    conn.commit()
    _timed(conn, "rounds", (
        "INSERT INTO rounds (table_id, round, first_seq, last_seq, started_at, ended_at, status, "
        f"lines) SELECT {tid}, r::text, (r - 1) * %(per)s + 1, r * %(per)s, {STARTED}, "
        f"CASE WHEN r < %(n)s THEN {STARTED} + make_interval(secs => %(iv)s * 0.9) END, "
        "CASE WHEN r = %(n)s THEN 'open' WHEN r %% 100 = 0 THEN 'voided' ELSE 'settled' END, "
        "%(per)s FROM generate_series(%(t0)s::int, %(t1)s::int) t, "
        "generate_series(%(n)s::int - %(kept)s::int + 1, %(n)s::int) r"
    ), {**p, "kept": plan.round_rounds}, plan.tables)  # fmt: skip
    began = time.perf_counter()
    conn.execute("CREATE INDEX rounds_started ON rounds (started_at)")
    conn.execute("CREATE INDEX rounds_table_seq ON rounds (table_id, first_seq)")
    conn.execute(
        "INSERT INTO rounds_hourly (table_id, hour, n) SELECT table_id, "
        "date_trunc('hour', started_at, 'UTC'), count(*) FROM rounds GROUP BY 1, 2"
    )
    conn.execute("ALTER TABLE rounds ENABLE TRIGGER USER")
    conn.commit()
    print(f"  rounds' indexes and hourly counts: {time.perf_counter() - began:.0f} s")
    _timed(conn, "settlements", (
        "INSERT INTO settlements (table_id, seq, item, ts, round, seat, player, amount, outcome, "
        f"net, detail) SELECT {tid}, r * %(per)s, s - 1, {STARTED} + make_interval(secs => "
        "%(iv)s * 0.9), r::text, s, 'P' || (t * 7 + s), a.amount, a.outcome, a.net, "
        "jsonb_build_object('seat', s, 'player', 'P' || (t * 7 + s), 'amount', a.amount, "
        "'outcome', a.outcome, 'net', a.net, 'rules', jsonb_build_object('ruleset', "
        "'macau-1989', 'bet', 100, 'commission', 5)) "
        "FROM generate_series(%(t0)s::int, %(t1)s::int) t, "
        "generate_series(%(n)s::int - %(settle)s::int, %(n)s::int - 1) r, "
        "generate_series(1, %(seats)s::int) s, "
        "LATERAL (SELECT 100 * (1 + (r * 7 + s * 13 + t) %% 50) AS amount, CASE WHEN "
        "(r + s) %% 2 = 0 THEN 'player' ELSE 'banker' END AS outcome, CASE WHEN (r + s) %% 2 = 0 "
        "THEN 0.95 ELSE -1 END * 100 * (1 + (r * 7 + s * 13 + t) %% 50) AS net) a "
        "WHERE r %% 100 <> 0"
    ), {**p, "settle": plan.settle_rounds, "seats": plan.seats}, plan.tables)  # fmt: skip
    ack = (
        "CASE WHEN {ts} < %(end)s - interval '2 days' AND i %% 10 <> 0 THEN {ts} + interval "
        "'10 min' END, CASE WHEN {ts} < %(end)s - interval '2 days' AND i %% 10 <> 0 THEN "
        "'pit.person' END, CASE WHEN {ts} < %(end)s - interval '2 days' AND i %% 10 <> 0 THEN "
        "'pit' END, CASE WHEN {ts} < %(end)s - interval '2 days' AND i %% 10 <> 0 THEN "
        "'seen; spoken to the dealer' END"
    )
    spread = "(floor((i - {shift}) * %(n)s::float8 / %(k)s))::bigint + 1"
    for name, per_day, shift, columns, values in (
        ("violations", 4, "0.5",
         "actor, article, action, phase, reason",
         "'dealer:D' || lpad(((t * 7 + r / 320) %% 400 + 1)::text, 3, '0'), "
         f"(ARRAY{list(ARTICLES)!r})[1 + i %% {len(ARTICLES)}], 'close_bets', 'BETTING', "
         "'a bet placed after the dice landed'"),
        ("device_faults", 2, "0.25",
         "device, fault, kind, make, model, serial",
         "(ARRAY['shoe_reader', 'dice_shaker', 'shuffler'])[1 + i %% 3], "
         "(ARRAY['misread', 'die out of the cup', 'jam'])[1 + i %% 3], "
         "CASE WHEN i %% 3 = 0 THEN 'hold' ELSE 'tilt' END, 'Acme', "
         f"(ARRAY['SHOE-R8', 'DICE-4', 'SHUF-52'])[1 + i %% 3], (ARRAY['SHOE-R8', 'DICE-4', "
         f"'SHUF-52'])[1 + i %% 3] || '-' || {tid}"),
        ("overrides", 1, "0.75",
         "status, kind, article, proposed_by, decided_by, reason",
         "CASE WHEN i %% 4 = 0 THEN 'rejected' ELSE 'approved' END, 'redeal', "
         f"(ARRAY{list(ARTICLES)!r})[1 + i %% {len(ARTICLES)}], 'dealer:D001', 'supervisor:S1', "
         "'card exposed by the dealer'"),
    ):  # fmt: skip
        k = max(1, round(plan.days * per_day))
        seq_at = {"violations": 3, "device_faults": 40, "overrides": 60}[name]
        acked = name != "overrides"
        ts = f"({STARTED} + make_interval(secs => {seq_at}))"
        ack_cols = (
            ", acknowledged_at, acknowledged_by, acknowledged_role, ack_note" if acked else ""
        )
        ack_vals = ", " + ack.format(ts=ts) if acked else ""
        _timed(conn, name, (
            f"INSERT INTO {name} (table_id, seq, ts, round, {columns}{ack_cols}) SELECT {tid}, "
            f"(r - 1) * %(per)s + {seq_at}, {ts}, r::text, {values}{ack_vals} FROM "
            "generate_series(%(t0)s::int, %(t1)s::int) t, generate_series(1, %(k)s::int) i, "
            f"LATERAL (SELECT {spread.format(shift=shift)} AS r) rr"
        ), {**p, "k": k, "end": plan.end}, plan.tables)  # fmt: skip
    gaps = max(1, round(plan.days * 12 / 365))
    _timed(conn, "chain_alerts", (
        "INSERT INTO chain_alerts (table_id, seq, kind, gap_to, details, detected_at, "
        f"resolved_at) SELECT {tid}, (floor((i - 0.5) * %(n)s::float8 / %(k)s))::bigint * "
        "%(per)s + 1, 'gap', (floor((i - 0.5) * %(n)s::float8 / %(k)s))::bigint * %(per)s + 40, "
        "'{}'::jsonb, r0, CASE WHEN t %% 100 = 0 AND i = %(k)s THEN NULL ELSE r0 + interval "
        "'3 min' END FROM generate_series(%(t0)s::int, %(t1)s::int) t, "
        "generate_series(1, %(k)s::int) i, "
        "LATERAL (SELECT (floor((i - 0.5) * %(n)s::float8 / %(k)s))::bigint + 1 AS r) rr, "
        f"LATERAL (SELECT {STARTED} AS r0) s"
    ), {**p, "k": gaps}, plan.tables)  # fmt: skip
    conn.execute(
        "INSERT INTO chain_alerts (table_id, seq, kind, details, detected_at) SELECT "
        f"{tid}, 0, 'dice_bias', jsonb_build_object('subject', 'DICE-4-' || {tid}, 'verdict', "
        "'biased', 'p_value', 1e-6), %(end)s - interval '3 hours' FROM generate_series(1, "
        "%(n)s::int) t WHERE t %% 100 = 50",
        {"n": plan.tables, "end": plan.end},
    )
    conn.commit()
    _integrity(conn, plan)
    _raw_lines(conn, plan)
    conn.execute("ANALYZE")
    conn.commit()


def _integrity(conn: psycopg.Connection[Any], plan: Plan) -> None:
    """The integrity passes' sums: a shift row a table a day, a shaker and a shuffler each."""
    began = time.perf_counter()
    conn.execute(
        "INSERT INTO integrity_hold (table_id, grouping, key, ruleset, rounds, drop, win, "
        "commission, squares, cross_sum) SELECT 'T' || lpad(t::text, 3, '0'), 'shift', "
        "to_char(%(start)s::timestamptz + make_interval(days => d), 'YYYY-MM-DD') || ' ' || "
        "sh, CASE WHEN t %% 5 < 3 THEN 'macau-1989' ELSE 'macau-1990' END, 320, 960000, "
        "48000 + (t * 31 + d * 7) %% 20000 - 10000, 9600, 3.2e9, 6.1e9 "
        "FROM generate_series(1, %(n)s::int) t, generate_series(0, %(days)s::int - 1) d, "
        "unnest(ARRAY['night', 'day', 'swing']) sh",
        {"start": plan.start, "n": plan.tables, "days": plan.days},
    )
    rng = random.Random(25)
    decks = plan.days * 24 * plan.rph // 2
    throws = plan.days * 24 * plan.rph * 5
    rows = []
    for table in table_ids(plan.tables):
        counts = [[throws // 6 + rng.randint(-50, 50) for _ in range(6)] for _ in range(2)]
        rows.append((table, "dice", f"DICE-4-{table}", throws,
                     Jsonb({"throws": throws, "counts": counts})))  # fmt: skip
        grid = [decks // 52 + rng.randint(-20, 20) for _ in range(52 * 52)]
        rising = [0] * 52
        for _ in range(200):
            rising[min(51, max(0, int(rng.gauss(26, 2))))] += decks // 200
        rows.append((table, "shuffle", f"SHUF-52-{table}", decks,
                     Jsonb({"decks": decks, "table": grid, "rising": rising})))  # fmt: skip
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO integrity_devices (table_id, kind, serial, samples, stats) "
            "VALUES (%s, %s, %s, %s, %s)",
            rows,
        )
    conn.commit()
    print(f"  integrity sums: {time.perf_counter() - began:.0f} s")


def _raw_lines(conn: psycopg.Connection[Any], plan: Plan) -> None:
    """Each table's last lines and 300 lines in each of the three months before."""
    start = month_start(plan.end)
    for _ in range(5):  # this month and the four before it
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {partition_name(start)} PARTITION OF journal_lines "
            f"FOR VALUES FROM ('{start.isoformat()}') TO ('{next_month(start).isoformat()}')"
        )
        start = month_start(start - timedelta(days=1))
    conn.commit()
    per_round = 3600.0 / plan.rph / LINES_PER_ROUND  # seconds a line
    blocks = [(plan.rounds * LINES_PER_ROUND - 70 - plan.raw + 1, plan.raw)]
    for k in (1, 2, 3):  # 300 lines in the middle of each month before
        r = plan.rounds - int(k * 30 * 24 * plan.rph)
        if r > 1:
            blocks.append(((r - 1) * LINES_PER_ROUND + 1, 300))
    line = (
        "json_build_object('seq', s, 'ts', to_char(ts AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'mono', s, 'table', tb, 'round', r::text, "
        "'actor', CASE WHEN k IN (0, 1, 149) THEN 'dealer:D001' ELSE 'device:shoe_reader' END, "
        "'event', CASE k WHEN 0 THEN 'round.started' WHEN 1 THEN 'bets.closed' WHEN 2 THEN "
        "'dice.landed' WHEN 149 THEN 'round.settled' ELSE 'card.dealt' END, 'payload', CASE k "
        "WHEN 0 THEN json_build_object('round', r) WHEN 1 THEN json_build_object('round', r) "
        "WHEN 2 THEN json_build_object('dice', json_build_array(3, 4)) WHEN 149 THEN "
        "json_build_object('settlement', json_build_array(json_build_object('seat', 2, "
        "'player', 'P1', 'amount', 100, 'outcome', 'player', 'net', '95.00'))) ELSE "
        "json_build_object('card', (ARRAY['2s','3h','Qd','Kc','Ah','7s','9d','Tc'])[1 + s %% 8], "
        "'seat', 1 + k %% 4, 'index', k, 'face_up', false) END, 'prev', repeat('0', 64))::text"
    )
    for first, count in blocks:
        _timed(conn, f"raw lines from seq {first}", (
            "INSERT INTO journal_lines (table_id, seq, ts, event, round, actor, hash, prev, line) "
            "SELECT tb, s, ts, j->>'event', r::text, j->>'actor', sha256(b), "
            "decode(repeat('00', 32), 'hex'), b FROM generate_series(%(t0)s::int, %(t1)s::int) t, "
            "generate_series(%(first)s::bigint, %(first)s::bigint + %(count)s::int - 1) s, "
            "LATERAL (SELECT 'T' || lpad(t::text, 3, '0') AS tb, (s - 1) / %(per)s + 1 AS r, "
            "(s - 1) %% %(per)s AS k) x, "
            "LATERAL (SELECT %(start)s::timestamptz + make_interval(secs => (t * 37 %% 90) + "
            "(s - 1) * %(step)s) AS ts) y, "
            f"LATERAL (SELECT convert_to({line} || E'\\n', 'UTF8') AS b) z, "
            "LATERAL (SELECT convert_from(b, 'UTF8')::json AS j) w"
        ), {**plan.sql_params(), "first": first, "count": count, "step": per_round},
            plan.tables)  # fmt: skip


# --- timing ----------------------------------------------------------------------------------


class Routes:
    """Each route with its realistic parameters, as the page and its users call them."""

    def __init__(self, plan: Plan, tables: list[str]) -> None:
        self.plan, self.tables = plan, tables
        self.rng = random.Random(7)
        self.violation_seq = 3

    def table(self) -> str:
        return self.rng.choice(self.tables)

    def calls(self) -> list[tuple[str, str, Callable[[], tuple[str, dict[str, Any]]]]]:
        """(label, role, a call's (path, params))."""
        end = self.plan.end
        last = self.plan.rounds * LINES_PER_ROUND - 70

        def fixed(path: str, **params: Any) -> Callable[[], tuple[str, dict[str, Any]]]:
            return lambda: (path, params)

        def per_table(path: str, **params: Any) -> Callable[[], tuple[str, dict[str, Any]]]:
            return lambda: (path.format(t=self.table()), params)

        def with_table(path: str, **params: Any) -> Callable[[], tuple[str, dict[str, Any]]]:
            return lambda: (path, {**params, "table": self.table()})

        def round_events() -> tuple[str, dict[str, Any]]:
            return f"/api/tables/{self.table()}/events", {"round": str(self.plan.rounds - 3)}

        def before_events() -> tuple[str, dict[str, Any]]:
            return f"/api/tables/{self.table()}/events", {"before": last - 500, "limit": 100}

        def hour_report() -> tuple[str, dict[str, Any]]:
            return "/api/report", {"since": (end - timedelta(hours=1)).isoformat(),
                                   "until": end.isoformat()}  # fmt: skip

        def dice() -> tuple[str, dict[str, Any]]:
            t = self.table()
            return "/api/integrity/dice", {"table": t, "serial": f"DICE-4-{t}"}

        def shuffle() -> tuple[str, dict[str, Any]]:
            t = self.table()
            return "/api/integrity/shuffle", {"table": t, "serial": f"SHUF-52-{t}"}

        return [
            ("GET / (the page)", "pit", fixed("/")),
            ("GET /api/health", "pit", fixed("/api/health")),
            ("GET /api/tables", "pit", fixed("/api/tables")),
            ("GET /api/tables?pit=&state=", "pit",
             fixed("/api/tables", pit="Pit 3", state="playing")),
            ("GET /api/tables/{t} (drill-down, 80 events)", "surveillance",
             per_table("/api/tables/{t}", events=80)),
            ("GET /api/tables/{t}/rounds", "pit", per_table("/api/tables/{t}/rounds")),
            ("GET /api/tables/{t}/events", "surveillance", per_table("/api/tables/{t}/events")),
            ("GET /api/tables/{t}/events?round=", "surveillance", round_events),
            ("GET /api/tables/{t}/events?before=", "surveillance", before_events),
            ("GET /api/alerts", "pit", fixed("/api/alerts")),
            ("GET /api/alerts?open_only=true", "pit", fixed("/api/alerts", open_only="true")),
            ("GET /api/alerts?table=", "pit", with_table("/api/alerts")),
            ("GET /api/violations (31 days, 500)", "pit", fixed("/api/violations")),
            ("GET /api/violations?table=", "pit", with_table("/api/violations")),
            ("GET /api/violations?article=", "pit",
             fixed("/api/violations", article="Portaria 51/89/M Art. 3")),
            ("GET /api/violations?dealer=", "pit", fixed("/api/violations", dealer="dealer:D123")),
            ("GET /api/violations?acknowledged=false", "pit",
             fixed("/api/violations", acknowledged="false")),
            ("GET /api/violations?since=a year", "audit", fixed(
                "/api/violations", since=(end - timedelta(days=365)).isoformat(), limit=5000)),
            ("GET /api/overrides", "pit", fixed("/api/overrides")),
            ("GET /api/overrides?table=", "pit", with_table("/api/overrides")),
            ("GET /api/faults", "pit", fixed("/api/faults")),
            ("GET /api/faults?table=", "pit", with_table("/api/faults")),
            ("GET /api/faults?serial=", "pit", lambda: (
                "/api/faults", {"serial": f"SHOE-R8-{self.table()}"})),
            ("GET /api/faults?model=", "pit", fixed("/api/faults", model="DICE-4")),
            ("GET /api/faults?kind=hold&acknowledged=false", "pit",
             fixed("/api/faults", kind="hold", acknowledged="false")),
            ("GET /api/charts?hours=1", "pit", fixed("/api/charts", hours=1)),
            ("GET /api/charts?hours=24", "pit", fixed("/api/charts", hours=24)),
            ("GET /api/charts?hours=168 (7 days)", "pit", fixed("/api/charts", hours=168)),
            ("GET /api/charts?hours=744 (31 days)", "pit", fixed("/api/charts", hours=744)),
            ("GET /api/tables/{t}/charts (24 h)", "pit",
             per_table("/api/tables/{t}/charts", hours=24)),
            ("GET /api/tables/{t}/charts?hours=744", "pit",
             per_table("/api/tables/{t}/charts", hours=744)),
            ("GET /api/integrity", "surveillance", fixed("/api/integrity")),
            ("GET /api/integrity/dice", "surveillance", dice),
            ("GET /api/integrity/shuffle", "surveillance", shuffle),
            ("GET /api/integrity/hold (a year of shifts)", "surveillance",
             with_table("/api/integrity/hold")),
            ("GET /api/report (1 hour, audit)", "audit", hour_report),
        ]  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def time_routes(
    dsn: str,
    plan: Plan,
    *,
    repeat: int,
    tokens_file: Path,
    tokens: dict[str, str],
    label: str,
    budget: float,
) -> dict[str, tuple[float, float]]:
    store = Store(dsn)
    config = FloorConfig(api=FloorApi(tokens_file=tokens_file))
    app = create_app(store, config, Hub())
    routes = Routes(plan, table_ids(plan.tables))
    results: dict[str, tuple[float, float]] = {}
    transport = httpx.ASGITransport(app=app)
    print(f"\n{label}: {repeat} calls a route, load average {load_average()}")
    print(f"  {'route':<52} {'p50 ms':>8} {'p99 ms':>8}  goal {GOAL_MS:.0f} ms")
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        for name, role, call in routes.calls():
            headers = {"Authorization": f"Bearer {tokens[role]}"}
            took: list[float] = []
            answered = 0
            spent = time.perf_counter()
            for i in range(repeat + 2):
                if i >= 12 and time.perf_counter() - spent > budget:  # 10 calls at least
                    break
                path, params = call()
                began = time.perf_counter()
                r = await client.get(path, params=params, headers=headers)
                elapsed = (time.perf_counter() - began) * 1000
                if r.status_code != 200:
                    raise SystemExit(f"{name}: {path} {params}: {r.status_code} {r.text[:300]}")
                if i >= 2:  # two warm-up calls
                    took.append(elapsed)
                if name in EXPORT_ROWS_PER_S:
                    answered = _rows(r.json())
            p50, p99 = statistics.median(took), percentile(took, 0.99)
            results[name] = (p50, p99)
            calls = "" if len(took) == repeat else f" ({len(took)} calls)"
            if name in EXPORT_ROWS_PER_S:
                EXPORTS_SEEN[name] = _export_line(name, answered, p50, p99, calls)
                print(EXPORTS_SEEN[name], flush=True)
                continue
            verdict = "met" if p99 <= GOAL_MS else "MISSED"
            print(f"  {name:<52} {p50:8.1f} {p99:8.1f}  {verdict}{calls}", flush=True)
        # The page's one write: a violation taken in hand (a different one each call).
        took = []
        rows = await store.query(
            "SELECT table_id, seq FROM violations WHERE acknowledged_at IS NULL "
            "ORDER BY ts DESC LIMIT %s", (repeat,),
        )  # fmt: skip
        for row in rows:
            began = time.perf_counter()
            r = await client.post(
                f"/api/violations/{row['table_id']}/{row['seq']}/acknowledge",
                json={"note": "seen; spoken to the dealer"},
                headers={"Authorization": f"Bearer {tokens['pit']}"},
            )
            took.append((time.perf_counter() - began) * 1000)
            if r.status_code != 200:
                raise SystemExit(f"acknowledge: {r.status_code} {r.text[:300]}")
        name = "POST /api/violations/{t}/{seq}/acknowledge"
        if took:
            p50, p99 = statistics.median(took), percentile(took, 0.99)
            results[name] = (p50, p99)
            print(f"  {name:<52} {p50:8.1f} {p99:8.1f}  "
                  f"{'met' if p99 <= GOAL_MS else 'MISSED'}")  # fmt: skip
    await store.close()
    print(f"  load average after: {load_average()}")
    return results


def _rows(body: Any) -> int:
    """The rows of an answer: a list's, or the sum of a report's sections'."""
    if isinstance(body, list):
        return len(body)
    return sum(len(rows) for rows in body.values() if isinstance(rows, list))


def _export_line(name: str, rows: int, p50: float, p99: float, calls: str) -> str:
    """An export's figures: p50 and p99, and its rows a second against its target."""
    target = EXPORT_ROWS_PER_S[name]
    rate, slowest = rows / (p50 / 1000), rows / (p99 / 1000)
    verdict = "met" if slowest >= target else "MISSED"
    return (f"  {name:<52} {p50:8.1f} {p99:8.1f}  export: {rows:,} rows, {rate:,.0f} rows/s "
            f"at p50 ({p50 / rows * 1000:.1f} ms per 1,000), {slowest:,.0f} at p99; target "
            f">= {target:,.0f} rows/s: {verdict}{calls}")  # fmt: skip


# --- before migration 0041 (--compare) ---------------------------------------------------------


async def _charts_before(store: Store, hours: int, pits: Any = None) -> dict[str, Any]:
    """`queries.charts` as it was before migration 0041: each chart from the derived rows, the
    rounds a series a table (served in today's shape: each table as its own "pit")."""
    latest = await store.query("SELECT max(last_ts) AS t FROM floor_tables")
    until = (latest[0]["t"] or datetime.now(UTC)) + timedelta(seconds=1)
    since = until - timedelta(hours=hours)
    span = (since, until)
    return {
        "since": since, "until": until,
        "violations_per_article_hour": await store.query(
            "SELECT coalesce(article, '?') AS article, date_trunc('hour', ts) AS hour, "
            "count(*)::int AS n FROM violations WHERE ts >= %s AND ts < %s "
            "GROUP BY 1, 2 ORDER BY 2, 1", span),
        "faults_per_model": await store.query(
            "SELECT coalesce(model, device, '?') AS model, kind, count(*)::int AS n "
            "FROM device_faults WHERE ts >= %s AND ts < %s GROUP BY 1, 2 ORDER BY 1, 2", span),
        "bar": "hour", "rounds_per_hour": [],
        "rounds_per_pit_hour": await store.query(
            "SELECT table_id AS pit, date_trunc('hour', started_at) AS hour, "
            "count(*)::int AS n FROM rounds WHERE started_at >= %s AND started_at < %s "
            "GROUP BY 1, 2 ORDER BY 2, 1", span),
    }  # fmt: skip


def _drop_new(conn: psycopg.Connection[Any]) -> None:
    for name in NEW_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")
    conn.commit()


def _migration_0041() -> str:
    return (Path(__file__).resolve().parents[1] / "daemon/floor/migrations/0041_floor_year.sql"
            ).read_text()  # fmt: skip


def _indexes_again(conn: psycopg.Connection[Any]) -> None:
    """0041's indexes made again (the CREATE INDEX statements of the migration)."""
    for statement in _migration_0041().split(";"):
        body = "\n".join(
            line for line in statement.splitlines() if not line.strip().startswith("--")
        ).strip()
        if body.startswith("CREATE INDEX") and any(name in body for name in NEW_INDEXES):
            conn.execute(body.encode())
    conn.execute("ANALYZE")
    conn.commit()


def sizes(conn: psycopg.Connection[Any]) -> None:
    rows = conn.execute(
        "SELECT c.relname, c.reltuples::bigint, pg_total_relation_size(c.oid) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND "
        "c.relkind IN ('r', 'p') AND c.relname NOT LIKE 'journal_lines_%%' ORDER BY 3 DESC LIMIT 12"
    ).fetchall()
    total = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    print("\nthe database: " + ", ".join(
        f"{name} {max(n, 0):,} rows {size / 2**30:.2f} GiB"
        for name, n, size in rows if size > 2**24
    ) + f"; in all {total[0] / 2**30 if total else 0:.1f} GiB")  # fmt: skip


def main() -> int:  # noqa: PLR0915 - the run's steps in order
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=800)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rounds-per-hour", type=int, default=40)
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--settlement-days", type=float, default=31)
    parser.add_argument("--round-days", type=float, help="rounds of the last days only")
    parser.add_argument("--raw-lines", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--end", type=datetime.fromisoformat,
                        help="the newest round's hour (ISO, UTC; default: this hour)")  # fmt: skip
    parser.add_argument("--compare", action="store_true", help="time before 0041, then after")
    parser.add_argument("--before-repeat", type=int, help="--compare's calls before (--repeat)")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds a route: fewer calls (10 at least) past it")  # fmt: skip
    parser.add_argument("--dsn", help="a database to use instead of a throwaway cluster")
    parser.add_argument("--skip-load", action="store_true", help="--dsn is loaded already")
    parser.add_argument("--keep", action="store_true", help="leave the throwaway cluster running")
    parser.add_argument("--pg-root", type=Path, help="the throwaway cluster's parent folder")
    args = parser.parse_args()
    plan = Plan(args)
    print(
        f"a year on the floor: {args.tables} tables x {args.days} days, "
        f"{args.rounds_per_hour} rounds an hour ({plan.rounds:,} a table, "
        f"{plan.rounds * args.tables:,} in all), settlements {args.seats} a round for the last "
        f"{args.settlement_days:g} days; uptime: load average {load_average()}"
    )
    cluster = None
    if args.dsn is None:
        cluster = PostgresCluster(base=args.pg_root).init().start()
        dsn = cluster.create_database("year")
        print(f"PostgreSQL 15 at {dsn} ({cluster.root})")
    else:
        dsn = args.dsn
    work = Path(tempfile.mkdtemp(prefix="bench-year-"))
    try:
        tokens = {role: new_token() for role in ("pit", "surveillance", "audit", "admin")}
        tokens_file = work / "tokens.toml"
        tokens_file.write_text(
            "".join(token_entry(f"{r}.person", r, t) + "\n" for r, t in tokens.items())
        )
        tokens_file.chmod(0o600)

        async def migrate() -> None:
            store = Store(dsn)
            await store.migrate()
            await store.close()

        asyncio.run(migrate())
        with psycopg.connect(dsn) as conn:
            if not args.skip_load:
                began = time.perf_counter()
                load(conn, plan)
                print(f"loaded in {time.perf_counter() - began:.0f} s")
            sizes(conn)
            if args.compare:
                _drop_new(conn)
                conn.execute("ANALYZE")
                conn.commit()
                now_charts = queries.charts
                queries.charts = _charts_before
                try:
                    before = asyncio.run(time_routes(
                        dsn, plan, repeat=args.before_repeat or args.repeat,
                        tokens_file=tokens_file, tokens=tokens,
                        label="before (no 0041 indexes, charts from the rows)",
                        budget=args.budget))  # fmt: skip
                finally:
                    queries.charts = now_charts
                _indexes_again(conn)
        after = asyncio.run(time_routes(
            dsn, plan, repeat=args.repeat, tokens_file=tokens_file, tokens=tokens, label="now",
            budget=args.budget))  # fmt: skip
        routes = [name for name in after if name not in EXPORT_ROWS_PER_S]
        missed = [name for name in routes if after[name][1] > GOAL_MS]
        if args.compare:
            print("\nbefore -> now, p99 ms, where either missed:")
            for name, (_, p99) in after.items():
                old = before.get(name, (0.0, 0.0))[1]
                if max(old, p99) > GOAL_MS:
                    print(f"  {name:<52} {old:8.1f} -> {p99:8.1f}")
        print(f"\n{len(routes) - len(missed)} of {len(routes)} routes met p99 <= {GOAL_MS:.0f} ms"
              + (f"; MISSED: {', '.join(missed)}" if missed else "")
              + f"; load average {load_average()}")  # fmt: skip
        print("the exports, judged by rows a second (their time is their rows'):")
        for line in EXPORTS_SEEN.values():
            print(line)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if cluster is not None:
            if args.keep:
                print(f"kept: {dsn} (stop: kill the postmaster of {cluster.root})")
            else:
                cluster.destroy()


if __name__ == "__main__":
    raise SystemExit(main())
