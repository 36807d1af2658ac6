"""`tabled floor demo`: the whole floor on one machine, from Debian's binaries, until Ctrl-C.

Starts a nats-server and a throwaway PostgreSQL cluster (temp folders, free loopback ports),
the floor, and three simulated tables, enrolled with their keys, that ship valid chained journal
lines and signed heads live (the demo publishes them itself, as the shipper would). Prints the
page's URL and an admin token; everything is stopped and removed on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import nats

from daemon.api.tokens import Principal, new_token, token_entry
from daemon.floor.cli import serve
from daemon.floor.config import load_floor_config
from daemon.floor.localservers import NatsServer, PostgresCluster
from daemon.floor.registry import enrol
from daemon.floor.store import Store
from daemon.floor.synthetic import SyntheticTable, ensure_stream, publish, table_key


async def _tables(url: str, dsn: str, rate: float, stop: asyncio.Event) -> None:
    tables = [
        SyntheticTable(name, seed=i, lines_per_round=60, violation_share=0.4, tilt_share=0.2)
        for i, name in enumerate(("T01", "T02", "T03"))
    ]
    # Enrolled as a floor admin would (`tabled floor enrol`), each with its own key.
    keys = {t.table: table_key(t.table) for t in tables}
    store = Store(dsn)
    try:
        await store.migrate()
        for table, key in keys.items():
            await enrol(store, Principal("demo.admin", "admin"), table, key.public, game="thirteen")
    finally:
        await store.close()
    nc = await nats.connect(url)
    js = nc.jetstream()
    await ensure_stream(js)
    try:
        while not stop.is_set():
            await publish(js, [t.next_line() for t in tables], keys=keys)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1 / rate)
    finally:
        await nc.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled floor demo",
        description="nats-server, a throwaway PostgreSQL, three simulated tables and the floor.",
    )
    parser.add_argument("--http", default="127.0.0.1:8800", metavar="HOST:PORT")
    parser.add_argument("--rate", type=float, default=5.0, help="lines per second per table")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="tabled-floor-demo-"))
    pg = PostgresCluster().init().start()
    broker = NatsServer().start()
    try:
        dsn = pg.create_database("floor")
        token = new_token()
        tokens = root / "tokens.toml"
        tokens.touch(mode=0o600)  # the floor, like the table, refuses a tokens file others read
        tokens.write_text(token_entry("demo.admin", "admin", token))
        config_file = root / "floor.toml"
        config_file.write_text(
            f'[floor]\nservers = ["{broker.url}"]\ndatabase = "{dsn}"\n'
            f'[api]\nlisten = "{args.http}"\ntokens_file = "{tokens}"\n'
            '[pits]\n"Pit A" = ["T01", "T02"]\n"Pit B" = ["T03"]\n'
        )
        print(f"nats-server {broker.url}, PostgreSQL {dsn}, config {config_file}")
        print(f"admin token (paste it into the page): {token}", flush=True)
        config = load_floor_config(config_file)

        async def run() -> int:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
            tables = asyncio.create_task(_tables(broker.url, dsn, args.rate, stop))
            code = await serve(config, stop)
            stop.set()
            await tables
            return code

        return asyncio.run(run())
    finally:
        broker.destroy()
        pg.destroy()
        print("demo stopped; servers removed", file=sys.stderr)
