"""A JetStream cluster that loses a node (issue 25, item 4), as a casino runs one: three
nats-server nodes on loopback, each with the accounts `tabled floor broker-config` writes (each
table and the floor sign in with their own nkey), the floor as a process with `[floor] servers`
the three nodes and `replicas = 3`, and two real tables (`tabled run --autoplay` of the floor
demo: their signing keys enrolled, `[feed] servers` the three nodes) shipping while the node
that leads the stream is SIGKILLed twice (and started again). Every line of each journal is
then on the floor with its bytes, once, and no line is in the stream twice.

The figures (ten kills, how far behind the floor falls) are bench/bench_cluster.py's."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from pathlib import Path

import nats
import psycopg

from daemon.floor.demo import TABLES, TableProcess, enrol_tables, stop_tables
from daemon.floor.localcluster import (
    NatsCluster,
    cluster_accounts,
    stored_line_ids,
    stream_leader,
)
from daemon.floor.localservers import PostgresCluster
from daemon.journal.format import journal_files
from daemon.shipper.tail import line_seq
from tests.floor.floor_support import FloorProcess, write_tokens

STREAM = "TABLED"


def journal(folder: Path) -> dict[int, bytes]:
    """A table's journal lines by seq (complete lines only)."""
    lines: dict[int, bytes] = {}
    for path in journal_files(folder):
        for line in path.read_bytes().split(b"\n")[:-1]:
            lines[line_seq(line)] = line + b"\n"
    return lines


def head(folder: Path) -> int:
    """The table's newest seq (0 before its journal folder exists)."""
    return max(journal(folder), default=0) if folder.is_dir() else 0


async def _until_journaling(tables: list[TableProcess], timeout: float = 120.0) -> None:
    """Until each table has journaled lines: a table's start (imports, devices, key) takes
    well over the 3 s the test lets lines flow when the machine is loaded."""
    deadline = time.monotonic() + timeout
    while not all(head(t.folder / "journal") > 0 for t in tables):
        for table in tables:
            assert table.ended() is None, f"{table.demo.table} ended: {table.last_lines()}"
        assert time.monotonic() < deadline, "a table journaled nothing in 120 s"
        await asyncio.sleep(0.2)


def test_the_floor_keeps_every_line_once_while_the_streams_leader_is_killed(
    pg: PostgresCluster, tmp_path: Path
) -> None:
    dsn = pg.create_database(f"cluster_{secrets.token_hex(4)}")
    password = secrets.token_hex(8)
    tables = [TableProcess(d, tmp_path, "nats://127.0.0.1:1") for d in TABLES[:2]]
    accounts = cluster_accounts(
        [(t.demo.table, t.folder / "feed.nk") for t in tables],
        tmp_path / "floor.nk",
        ("reader", password),
    )
    cluster = NatsCluster(base=tmp_path, extra=accounts)
    urls = json.dumps(cluster.urls)
    for table in tables:
        text = table.config.read_text().split("\n[feed]\n", 1)[0]
        table.config.write_text(
            f'{text}\n[feed]\nservers = {urls}\ncreds = "feed.nk"\nreplicas = 3\n'
            "ack_timeout_seconds = 2.0\nbackoff_max_seconds = 1.0\ndrain_seconds = 10.0\n"
        )
    write_tokens(tmp_path / "tokens.toml")
    floor_toml = tmp_path / "floor.toml"
    floor_toml.write_text(
        f'[floor]\nservers = {urls}\ndatabase = "{dsn}"\ncreds = "floor.nk"\nreplicas = 3\n'
        f'[api]\ntokens_file = "tokens.toml"\n'
    )
    asyncio.run(enrol_tables(dsn, tables))
    cluster.start()
    floor = None
    try:
        floor = FloorProcess(floor_toml).start()
        asyncio.run(_kill_leaders(cluster, tables, password))
        stop_tables(tables)  # a clean stop: each shipper drains what is left
        want = {t.demo.table: journal(t.folder / "journal") for t in tables}
        held = _floor_holds(dsn, {t: max(lines) for t, lines in want.items()})
        for table, lines in want.items():
            # Every line the table journaled, its very bytes, proven by its signed heads.
            digests = {seq: hashlib.sha256(line).digest() for seq, line in lines.items()}
            assert held[table] == digests, f"{table}: the floor's lines differ from the journal"
        twice = asyncio.run(_stored_twice(cluster, password))
        assert twice == [], f"lines stored twice in the stream: {twice[:10]}"
    finally:
        stop_tables(tables)
        if floor is not None:
            floor.stop()
        cluster.destroy()


async def _kill_leaders(cluster: NatsCluster, tables: list[TableProcess], password: str) -> None:
    nc = await nats.connect(
        servers=cluster.urls, user="reader", password=password, max_reconnect_attempts=-1,
        reconnect_time_wait=0.2,
    )  # fmt: skip
    try:
        await stream_leader(nc, STREAM)  # the floor has made the stream, three replicas
        for table in tables:
            table.start()
        await _until_journaling(tables)
        for _kill in range(2):
            await asyncio.sleep(3)  # lines flow
            leader, current = await stream_leader(nc, STREAM)
            while not current:
                await asyncio.sleep(0.2)
                leader, current = await stream_leader(nc, STREAM)
            before = {t.demo.table: head(t.folder / "journal") for t in tables}
            cluster.kill(leader)
            new = leader
            while new == leader:
                new, _ = await stream_leader(nc, STREAM)
            # The tables played on while the stream had no leader: lines waited to ship.
            during = {t.demo.table: head(t.folder / "journal") for t in tables}
            assert all(during[t] > before[t] for t in before), (before, during)
            cluster.start(leader)
        await asyncio.sleep(3)
    finally:
        await nc.close()


def _floor_holds(
    dsn: str, want: dict[str, int], timeout: float = 120.0
) -> dict[str, dict[int, bytes]]:
    """Each table's lines in the floor's history (seq -> SHA-256), once it holds up to `want`."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as conn:
        while True:
            held: dict[str, dict[int, bytes]] = {}
            for table in want:
                rows = conn.execute(
                    b"SELECT seq, hash FROM journal_lines WHERE table_id = %s", (table,)
                ).fetchall()
                held[table] = {seq: bytes(digest) for seq, digest in rows}
            if all(len(held[t]) >= n for t, n in want.items()) or time.monotonic() > deadline:
                return held
            time.sleep(0.5)


async def _stored_twice(cluster: NatsCluster, password: str) -> list[str]:
    nc = await nats.connect(servers=cluster.urls, user="reader", password=password)
    try:
        counts = await stored_line_ids(nc, STREAM)
    finally:
        await nc.close()
    return sorted(msg_id for msg_id, n in counts.items() if n > 1)
