"""The floor's hourly integrity update for 800 tables: one pass over an hour of new lines on top
of a loaded history, beside the peer the issue names (a plain pandas read of the same data).

    .venv/bin/python bench/bench_floor_integrity.py [--tables 800] [--rounds 21]
        [--history-rounds 21] [--repeat 3]

Its own throwaway PostgreSQL 15 (daemon.floor.localservers), the floor's schema (migrations).

- History: each table's previous hour of lines (`--history-rounds` rounds) read by a first
  pass, which also builds the audit's cached designs; then the sums the passes keep are set to
  a year of play (the dice's and decks' counts, the CUSUM states, as after 8,760 hours) and
  `integrity_hold` gets a year of shift and dealer rows per table (3 shifts a day and 20
  dealers: ~1,100 rows a table, 880,000 for 800 tables), so the pass upserts into a year's sums.
- The hour: `--rounds` Thirteen rounds a table (21 rounds of 140 lines: 2,940 lines, a year
  of one table being ~25 M lines, 2,854 an hour), in the journal's exact line format
  (daemon.journal.format.encode_line), fair dice, a random shuffle, three bets a round; their
  `settlements` rows as the floor's ingest derives them; `contiguous_seq` moved on.
- The pass: `daemon.floor.integrity.run_pass` (what `tabled floor` runs each period), timed
  alone; repeated `--repeat` times on fresh copies of the hour (a pass moves the cursors, so
  each repeat deletes the hour's cursors' advance: the sums and cursors are restored from a
  snapshot before each).
- The peer: `pandas.read_sql_query` of the same rows the pass reads (the audited events'
  lines of the hour, and the settlements with their line's dealer), into data frames, nothing
  computed.

Goal: the pass <= 5 s for 800 tables. Figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import time
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from daemon.floor.facts import COPY_FACTS, COPY_ROUNDS, Facts
from daemon.floor.integrity import run_pass
from daemon.floor.localservers import PostgresCluster
from daemon.floor.store import Store, parse_ts
from daemon.journal.format import decode_line, encode_line

GOAL_SECONDS = 5.0
YEAR_HOURS = 8760
RANKS = "A23456789TJQK"
CARDS = [r + s for s in "shdc" for r in RANKS]
DEALERS = 20
# A player wins 0.49 a unit (half less 2 %) or loses 1: at this chance the house advantage is
# macau-1989's 24.80 % and the variance its 0.555 (daemon/analytics/gamemath.json).
P_WIN = 0.752 / 1.49
ZERO = "0" * 64
DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
# The lines the audit reads (the facts stand for them): the raw peer reads these.
LINE_EVENTS = (
    "device.identified",
    "dice.landed",
    "deck.machine_shuffled",
    "card.dealt",
    "deal.voided",
    "shoe.loaded",
    "table.tilted",
)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _settlement(rng: random.Random) -> list[dict[str, object]]:
    entries = []
    for seat in (1, 2, 3):
        amount = 100 * rng.randint(1, 3)
        won = rng.random() < P_WIN
        entries.append(
            {
                "seat": seat,
                "player": f"P{seat}",
                "amount": amount,
                "outcome": "player" if won else "banker",
                "net": f"{amount * 0.49:.2f}" if won else f"-{amount}",
                "rules": {
                    "ruleset": "macau-1989",
                    "bet": amount // 100,
                    "commission": f"{0.01 * amount / 100:.2f}" if won else "0",
                },
            }
        )
    return entries


class Table:
    """One table's lines, round after round, in the journal's format (hashes not chained: the
    pass reads events and bytes, not the chain)."""

    def __init__(self, table: str, start: datetime, seed: int) -> None:
        self.table = table
        self.rng = random.Random(seed)
        self.seq = 0
        self.round = 0
        self.when = start
        self.cards = list(CARDS)
        self.rows: list[tuple[Any, ...]] = []
        self.settlements: list[tuple[Any, ...]] = []

    def put(self, event: str, actor: str, payload: dict[str, Any]) -> None:
        self.seq += 1
        self.when += timedelta(seconds=1.2)
        ts = self.when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        # The journal's bytes (FIELDS in order, compact, ensure_ascii off), by the C encoder:
        # encode_line's own output for the same line, checked on the first lines.
        line = (
            DUMPS(
                {"seq": self.seq, "ts": ts, "mono": float(self.seq), "table": self.table,
                 "round": self.round, "actor": actor, "event": event, "payload": payload,
                 "prev": ZERO}
            ) + "\n"
        ).encode()  # fmt: skip
        if self.seq <= 200:
            assert line == encode_line(
                seq=self.seq, ts=ts, mono=float(self.seq), table=self.table,
                round_id=self.round, actor=actor, event=event, payload=payload, prev=ZERO,
            ), line  # fmt: skip
        self.rows.append(
            (self.table, self.seq, self.when, event, str(self.round), actor, b"\0" * 32,
             b"\0" * 32, line)
        )  # fmt: skip
        if event == "round.settled":
            for item, entry in enumerate(payload["settlement"]):
                self.settlements.append(
                    (self.table, self.seq, item, self.when, str(self.round), entry["seat"],
                     entry["player"], entry["amount"], entry["outcome"], entry["net"],
                     Jsonb(entry))
                )  # fmt: skip

    def start(self) -> None:
        for device in ("shuffler", "dice_shaker", "shoe_reader"):
            serial = f"{self.table}-{device}"
            self.put("device.identified", f"device:{device}", {"device": device, "serial": serial})

    def play(self, rounds: int) -> None:
        rng = self.rng
        for _ in range(rounds):
            self.round += 1
            dealer = f"dealer:D{rng.randrange(DEALERS)}"
            self.put("table.input", dealer, {"action": "confirm_hand_shuffle", "payload": {}})
            self.put("deck.hand_shuffled", dealer, {})
            rng.shuffle(self.cards)
            self.put("deck.machine_shuffled", "device:shuffler", {"count": 52, "mode": "random"})
            self.put("deck.cut", dealer, {"by": "dealer", "player": None, "cards": 20})
            self.put("shoe.loaded", dealer, {"redeal": False})
            for seat in (1, 2, 3):
                bet = {"player": f"P{seat}", "seat": seat, "amount": 100, "units": 1}
                self.put("table.input", dealer, {"action": "place_bet", "payload": bet})
                self.put("bet.placed", dealer, {"replaced": False, **bet})
            self.put("bets.closed", dealer, {"seats": [1, 2, 3]})
            throw = [rng.randint(1, 6) for _ in range(4)]
            self.put("dice.landed", "device:dice_shaker", {"dice": throw, "total": sum(throw)})
            for index, card in enumerate(self.cards, start=1):
                read = {"action": "card_read", "payload": {"card": card, "index": index}}
                self.put("table.input", "device:shoe_reader", read)
                dealt = {"card": card, "seat": index % 4, "index": index, "face_up": False}
                self.put("card.dealt", "device:shoe_reader", dealt)
            for seat in (0, 1, 2, 3):
                self.put("arrangement.entered", dealer, {"seat": seat})
            self.put("table.input", dealer, {"action": "settle_round", "payload": {}})
            self.put("round.settled", dealer, {"settlement": _settlement(rng)})
            while self.seq < 140 * self.round + 3:  # 140 lines a round, as bench_audit's
                self.put("table.input", dealer, {"action": "noop", "payload": {}})

    def take(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        rows, settlements = self.rows, self.settlements
        self.rows, self.settlements = [], []
        return rows, settlements


def load(conn: psycopg.Connection[Any], tables: list[Table], rounds: int) -> tuple[int, float]:
    """Play `rounds` more rounds at each table into journal_lines, settlements and the facts
    the floor's ingest writes (daemon.floor.facts.Facts, given each line as the ingest decodes
    it, in batches of 500 lines a table, as the consumer's). The lines, and the CPU seconds
    the facts took (their extraction and rows, not the decoding the ingest does anyway)."""
    lines, spent = 0, 0.0
    with conn.cursor() as cur:
        for table in tables:
            table.play(rounds)
            rows, settlements = table.take()
            lines += len(rows)
            decoded = [(rec, parse_ts(rec.ts)) for rec in (decode_line(r[8]) for r in rows)]
            facts = Facts()
            started = time.process_time()
            fact_rows: list[tuple[Any, ...]] = []
            round_rows: list[tuple[Any, ...]] = []
            for at in range(0, len(decoded), 500):
                for rec, ts in decoded[at : at + 500]:
                    facts.add(rec, ts)
                more, more_rounds = facts.take()
                fact_rows += more
                round_rows += more_rounds
            spent += time.process_time() - started
            for statement, items in ((COPY_FACTS, fact_rows), (COPY_ROUNDS, round_rows)):
                with cur.copy(statement) as copy:
                    for item in items:
                        copy.write_row(item)
            with cur.copy(
                "COPY journal_lines (table_id, seq, ts, event, round, actor, hash, prev, line) "
                "FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row)
            cur.executemany(
                "INSERT INTO settlements (table_id, seq, item, ts, round, seat, player, amount, "
                "outcome, net, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                settlements,
            )
            cur.execute(
                "INSERT INTO floor_tables (table_id, game, last_seq, contiguous_seq, lines) "
                "VALUES (%s, 'thirteen', %s, %s, %s) ON CONFLICT (table_id) DO UPDATE SET "
                "last_seq = excluded.last_seq, contiguous_seq = excluded.contiguous_seq, "
                "lines = floor_tables.lines + excluded.lines",
                (table.table, table.seq, table.seq, len(rows)),
            )
    conn.commit()
    return lines, spent


def a_year(conn: psycopg.Connection[Any]) -> None:
    """The kept sums as after a year of fair play: each table's dice and decks those of a year
    of fair throws and random decks (simulated once, numpy; the same for every table), and a
    year of hold rows a table (each shift, and the table's and dealers' totals) at theory."""
    import numpy as np  # noqa: PLC0415 - the analytics extra

    from daemon.analytics.dice import DiceStats  # noqa: PLC0415
    from daemon.analytics.shuffle import ShuffleStats, random_decks  # noqa: PLC0415

    rng = np.random.default_rng(2026)
    rounds = YEAR_HOURS * 21
    throws = DiceStats.of(rng.integers(1, 7, (rounds, 4)).astype(np.int8))
    # A fair year raises ~1.8 alarms (one per 100,000 throws, by design); a table with one has
    # its alert open already, and a pass only updates it: the year here is one without.
    throws.alarms, throws.alarm_count = [], 0
    decks = ShuffleStats()
    for _ in range(rounds // 20_000 + 1):
        decks.add(random_decks(rng, 20_000))
    with conn.cursor() as cur:
        cur.execute(
            "UPDATE integrity_devices SET samples = %s, stats = %s WHERE kind = 'dice'",
            (throws.throws, Jsonb(throws.json())),
        )
        cur.execute(
            "UPDATE integrity_devices SET samples = %s, stats = %s WHERE kind = 'shuffle'",
            (decks.decks, Jsonb(decks.json())),
        )
        # A round: three bets of 100-300, drop ~600; a shift ~170 rounds.
        cur.execute(
            "INSERT INTO integrity_hold (table_id, grouping, key, ruleset, rounds, drop, win, "
            "commission, squares, cross_sum) "
            "SELECT t.table_id, 'shift', to_char(d, 'YYYY-MM-DD') || ' ' || s, 'macau-1989', "
            "170, 102000, 102000 * 0.248, 300, 170 * 140000, 170 * 220000 "
            "FROM floor_tables t, generate_series(now() - interval '366 days', "
            "now() - interval '2 days', interval '1 day') d, "
            "unnest(ARRAY['night', 'day', 'swing']) s "
            "ON CONFLICT DO NOTHING"
        )
        cur.execute(
            "UPDATE integrity_hold SET rounds = rounds * %s, drop = drop * %s, "
            "win = drop * %s * 0.248, commission = commission * %s, squares = squares * %s, "
            "cross_sum = cross_sum * %s WHERE grouping <> 'shift'",
            (YEAR_HOURS * 7,) * 6,
        )
    conn.commit()


def peer_facts(conn: psycopg.Connection[Any], windows: list[tuple[str, int, int]]) -> float:
    """pandas.read_sql_query of the rows the pass reads: the hour's facts and rounds."""
    import pandas as pd  # noqa: PLC0415 - the bench's extra

    params = ([w[0] for w in windows], [w[1] for w in windows], [w[2] for w in windows])
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pandas prefers SQLAlchemy; plain DBAPI
        facts = pd.read_sql_query(
            "SELECT f.* FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS w(table_id, "
            "after, upto) JOIN integrity_facts f ON f.table_id = w.table_id AND f.seq > w.after "
            "AND f.seq <= w.upto ORDER BY f.table_id, f.seq",
            conn,
            params=params,
        )
        rounds = pd.read_sql_query(
            "SELECT r.* FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS w(table_id, "
            "after, upto) JOIN integrity_rounds r ON r.table_id = w.table_id AND r.seq > w.after "
            "AND r.seq <= w.upto",
            conn,
            params=params,
        )
    seconds = time.perf_counter() - started
    print(f"  peer (facts) read {len(facts):,} fact rows and {len(rounds):,} rounds")
    return seconds


def peer(conn: psycopg.Connection[Any], windows: list[tuple[str, int, int]]) -> float:
    """pandas.read_sql_query of the hour's raw data the audit reads: the audited lines of the
    window and the settlements with their line's dealer and time."""
    import pandas as pd  # noqa: PLC0415 - the bench's extra

    params = ([w[0] for w in windows], [w[1] for w in windows], [w[2] for w in windows])
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pandas prefers SQLAlchemy; plain DBAPI
        lines = pd.read_sql_query(
            "SELECT l.table_id, l.seq, l.event, l.line FROM unnest(%s::text[], %s::bigint[], "
            "%s::bigint[]) AS w(table_id, after, upto) JOIN journal_lines l ON "
            "l.table_id = w.table_id AND l.seq > w.after AND l.seq <= w.upto "
            "WHERE l.event = ANY(%s) ORDER BY l.table_id, l.seq",
            conn,
            params=(*params, list(LINE_EVENTS)),
        )
        bets = pd.read_sql_query(
            "SELECT s.table_id, s.seq, s.item, s.seat, s.amount, s.net, s.detail, l.actor, l.ts "
            "FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS w(table_id, after, upto) "
            "JOIN settlements s ON s.table_id = w.table_id AND s.seq > w.after "
            "AND s.seq <= w.upto JOIN journal_lines l ON l.table_id = s.table_id "
            "AND l.seq = s.seq AND l.ts = s.ts",
            conn,
            params=params,
        )
    seconds = time.perf_counter() - started
    print(f"  peer read {len(lines):,} lines and {len(bets):,} bets")
    return seconds


SNAPSHOT = ("integrity_cursor", "integrity_devices", "integrity_reader", "integrity_hold")


def vacuum(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def snapshot(conn: psycopg.Connection[Any]) -> None:
    for name in SNAPSHOT:
        conn.execute(f"CREATE TABLE bench_{name} AS SELECT * FROM {name}")  # noqa: S608
    conn.commit()


def restore(conn: psycopg.Connection[Any], dsn: str) -> None:
    for name in SNAPSHOT:
        conn.execute(f"DELETE FROM {name}")  # noqa: S608
        conn.execute(f"INSERT INTO {name} SELECT * FROM bench_{name}")  # noqa: S608
    conn.execute("DELETE FROM chain_alerts")
    conn.commit()
    vacuum(dsn)


def backend_cpu(conn: psycopg.Connection[Any]) -> float:
    """CPU seconds the connection's PostgreSQL backend has used (it runs on this machine)."""
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare(dsn: str, args: argparse.Namespace) -> tuple[int, float, list[tuple[str, int, int]]]:
    """The history, its first pass, a year's sums, then the hour: (its lines, the windows)."""
    start = datetime.now(UTC) - timedelta(hours=2)
    tables = [Table(f"T{i:04d}", start, seed=i) for i in range(args.tables)]
    with psycopg.connect(dsn, autocommit=False) as conn:
        conn.execute("CREATE TABLE journal_lines_all PARTITION OF journal_lines DEFAULT")
        for table in tables:
            table.start()
        made = time.perf_counter()
        history, _ = load(conn, tables, args.history_rounds)
        print(f"history: {history:,} lines ({time.perf_counter() - made:.0f} s to write)")
        vacuum(dsn)
        first = run_pass(conn)
        print(
            f"  first pass (history, and the designs' one-off cache): {first.seconds:.2f} s, "
            f"{first.lines:,} audited lines, {first.tables} tables"
        )
        a_year(conn)
        made = time.perf_counter()
        hour, extract = load(conn, tables, args.rounds)
        print(
            f"the hour: {hour:,} lines ({time.perf_counter() - made:.0f} s to write); the facts "
            f"at ingest: {extract:.2f} s CPU, {extract / hour * 1e6:.2f} us a line"
        )
        windows = [
            (r[0], int(r[1]), int(r[2]))
            for r in conn.execute(
                "SELECT t.table_id, c.last_seq, t.contiguous_seq FROM floor_tables t "
                "JOIN integrity_cursor c USING (table_id) ORDER BY t.table_id"
            ).fetchall()
        ]
        snapshot(conn)
    vacuum(dsn)
    return hour, extract, windows


def passes(dsn: str, repeat: int) -> tuple[list[float], list[float]]:
    """The pass `repeat` times on the same hour: (wall seconds, CPU seconds here + server)."""
    walls, cpus = [], []
    with psycopg.connect(dsn, autocommit=False) as conn:
        for attempt in range(repeat):
            if attempt:
                restore(conn, dsn)
            server, here = backend_cpu(conn), time.process_time()
            done = run_pass(conn)
            cpu = time.process_time() - here + backend_cpu(conn) - server
            walls.append(done.seconds)
            cpus.append(cpu)
            print(
                f"  pass {attempt + 1}: {done.seconds:.2f} s wall, {cpu:.2f} s CPU (this "
                f"process and its PostgreSQL backend), {done.tables} tables, "
                f"{done.lines:,} audited lines, {len(done.findings):,} findings, "
                f"{len(done.opened)} alerts opened"
            )
            print("    " + ", ".join(f"{k} {v:.2f} s" for k, v in done.phases.items()))
    return walls, cpus


def peers(
    dsn: str, windows: list[tuple[str, int, int]], repeat: int, read: Any = peer
) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    with psycopg.connect(dsn) as conn:
        for _ in range(repeat):
            server, here = backend_cpu(conn), time.process_time()
            walls.append(read(conn, windows))
            cpus.append(time.process_time() - here + backend_cpu(conn) - server)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=21, help="rounds a table in the hour")
    parser.add_argument("--history-rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    cluster = PostgresCluster().init().start()
    try:
        dsn = cluster.create_database("integrity")

        async def migrate() -> None:
            store = Store(dsn)
            await store.migrate()
            await store.close()

        asyncio.run(migrate())
        hour, extract, windows = prepare(dsn, args)
        walls, cpus = passes(dsn, args.repeat)
        peer_walls, peer_cpus = peers(dsn, windows, args.repeat)
        fact_walls, fact_cpus = peers(dsn, windows, args.repeat, peer_facts)
    finally:
        cluster.destroy()
    load_avg = os.getloadavg()[0]
    median = statistics.median
    print()
    print(f"{'':<46} {'wall s':>8} {'CPU s':>7}  goal <= {GOAL_SECONDS:.0f} s (CPU)")
    print(
        f"{'integrity pass, ' + str(args.tables) + ' tables, an hour':<46} "
        f"{median(walls):>8.2f} {median(cpus):>7.2f}  {verdict(median(cpus) <= GOAL_SECONDS)}"
    )
    for name, pw, pc in (
        ("peer: pandas read of the hour's raw lines", peer_walls, peer_cpus),
        ("peer: pandas read of the facts the pass reads", fact_walls, fact_cpus),
    ):
        print(f"{name:<46} {median(pw):>8.2f} {median(pc):>7.2f}  {verdict(median(pc) <= 5)}")
    print(
        f"{'the facts at ingest (extra ingest CPU)':<46} {'':>8} {extract:>7.2f}  "
        f"{extract / hour * 1e6:.2f} us a line"
    )
    print(
        f"(medians of {args.repeat}; CPU: this process and its PostgreSQL backend; wall on a "
        f"machine at load average {load_avg:.1f} on {os.cpu_count()} cores is the run queue's)"
    )
    print(json.dumps({"pass_wall": walls, "pass_cpu": cpus, "peer_wall": peer_walls,
                      "peer_cpu": peer_cpus, "facts_peer_wall": fact_walls,
                      "facts_peer_cpu": fact_cpus, "ingest_facts_cpu": extract,
                      "lines": hour}))  # fmt: skip


if __name__ == "__main__":
    main()
