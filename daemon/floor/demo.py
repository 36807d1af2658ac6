"""`tabled floor demo`: a whole floor on one machine, from Debian's binaries, until Ctrl-C.

Starts a nats-server and a throwaway PostgreSQL cluster (temp folders, free loopback ports),
the floor, and real tables: each is a `tabled run --autoplay` process (simulated devices, the
autoplay's dealer, players and supervisor, its injected device faults and attempted violations)
whose own shipper sends its journal and its signed heads through JetStream to the floor, as a
table in a pit does (each has its key and is enrolled on the floor first).
The tables differ in game, rule set and pace, so the page shows them in different phases at
any moment. Prints the page's URL and an admin token.

On Ctrl-C (or SIGTERM) the tables are stopped first (their last lines ship), then the floor,
the broker and the database; the demo's folder is removed. A table whose process ends on its
own (its autoplay gave up on a fault) is started again on its journal, as a pit restarts one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from daemon.api.tokens import Principal, new_token, token_entry
from daemon.config import default_config_path
from daemon.floor.cli import serve
from daemon.floor.config import load_floor_config
from daemon.floor.localservers import NatsServer, PostgresCluster, ServerError
from daemon.floor.registry import enrol
from daemon.floor.store import Store
from daemon.journal.provenance import TableKey, write_key

ROUNDS = 1_000_000  # `--autoplay N` with N that no demo reaches: the tables play until stopped
RESTARTS = 5  # a table that keeps ending on its own is left stopped after this many starts
STOP_SECONDS = 20.0  # a table given SIGTERM that has not stopped by then is killed


@dataclass(frozen=True)
class DemoTable:
    """One table of the demo: its game, rule set, and the dealer's pace (seconds a step)."""

    table: str
    config: str  # the embedded config it starts from: table.toml (Thirteen) or paigow.toml
    ruleset: str
    pace: float  # the scripted dealer's pause before each step
    speed: float  # the simulated devices' mechanical delays (1: a real device's)
    seed: int  # the autoplay's and devices' seed: the first rounds meet a fault or a violation
    pit: str

    @property
    def game(self) -> str:
        return "paigow" if self.config == "paigow.toml" else "thirteen"


TABLES = (
    DemoTable("T01", "table.toml", "macau-1989", pace=0.3, speed=0.05, seed=3, pit="Pit A"),
    DemoTable("T02", "paigow.toml", "macau-1990", pace=1.0, speed=0.1, seed=1, pit="Pit A"),
    DemoTable("T03", "table.toml", "hk-common", pace=0.7, speed=0.1, seed=4, pit="Pit B"),
)


def table_config(demo: DemoTable, folder: Path, broker: str) -> str:
    """The table's config: the embedded one of its game with its id, rule set, journal folder,
    device speed and a `[feed]` to the demo's broker."""
    text = (default_config_path().parent / demo.config).read_text(encoding="utf-8")

    def key(name: str, value: object, text: str) -> str:
        line = f"{name} = {json.dumps(value)}"
        return re.sub(rf'(?m)^{name} = "[^"\n]*"', lambda _m: line, text, count=1)

    text = key("id", demo.table, text)
    text = key("ruleset", demo.ruleset, text)
    text = key("dir", str(folder / "journal"), text)
    # A simulation: no fsync per commit (three tables on a laptop, not a table PC).
    text = key("durability", "none", text)

    def slowed(match: re.Match[str]) -> str:
        url, query = match.group(1), match.group(2) or ""
        query = (query + "&" if query else "?") + f"speed={demo.speed}"
        return f'port = "{url}{query}"'

    text = re.sub(r'(?m)^port = "(sim://[^"?\n]*)(\?[^"\n]*)?"', slowed, text)
    return text + f'\n[feed]\nservers = ["{broker}"]\ndrain_seconds = 2.0\n'


class TableProcess:
    """A `tabled run --autoplay` of the demo, in a session of its own (a terminal's Ctrl-C
    reaches the demo, which stops the tables in order)."""

    def __init__(self, demo: DemoTable, root: Path, broker: str) -> None:
        self.demo = demo
        self.folder = root / demo.table
        self.folder.mkdir()
        self.config = self.folder / "table.toml"
        self.config.write_text(table_config(demo, self.folder, broker), encoding="utf-8")
        # Its signing key where `tabled keys init` puts it (beside var/tokens.toml): a table with
        # a [feed] does not start without one, and the floor takes only what it proves.
        self.key = TableKey.generate()
        write_key(self.folder / "var" / "table.key", self.key)
        self.log_path = self.folder / "run.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
                [
                    sys.executable, "-m", "daemon", "run", "--config", str(self.config),
                    "--autoplay", str(ROUNDS), "--seed", str(self.demo.seed),
                    "--pace", str(self.demo.pace), "--fault-share", "0.3",
                    "--violation-share", "0.5", "--progress",
                    # No player late at the bell: the autoplay would jump the table's clock
                    # five minutes, and its lines' times would run ahead of the floor's.
                    "--late-share", "0",
                ],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.folder, start_new_session=True,
            )  # fmt: skip

    def ended(self) -> int | None:
        """The exit status if the process ended on its own (None while it runs)."""
        return None if self.proc is None else self.proc.poll()

    def last_lines(self, n: int = 3) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in lines[-n:] if line.strip())

    def terminate(self) -> None:
        """SIGTERM: the table stops cleanly and its shipper drains."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)

    def wait(self) -> None:
        """Until the process has ended; SIGKILL (its whole session) if it lingers."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def stop_tables(tables: Sequence[TableProcess]) -> None:
    """Every table at once: SIGTERM to each, then wait for each."""
    for table in tables:
        table.terminate()
    for table in tables:
        table.wait()


async def _watch(tables: list[TableProcess], stop: asyncio.Event, out: IO[str]) -> None:
    """Start a table again when its process ends on its own (at most RESTARTS times)."""
    while not stop.is_set():
        for table in tables:
            status = table.ended()
            if status is None or stop.is_set():
                continue
            if table.starts >= RESTARTS:
                print(f"{table.demo.table}: ended (exit {status}) again; left stopped", file=out)
                table.wait()
                continue
            print(
                f"{table.demo.table}: ended (exit {status}): {table.last_lines()}; restarting",
                file=out,
                flush=True,
            )
            table.start()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)


async def enrol_tables(dsn: str, tables: Sequence[TableProcess]) -> None:
    """Each demo table in the floor's registry with its key (`tabled floor enrol`)."""
    store = Store(dsn)
    try:
        await store.migrate()
        for table in tables:
            d = table.demo
            await enrol(store, Principal("demo.admin", "admin"), d.table, table.key.public,
                        game=d.game, pit=d.pit)  # fmt: skip
    finally:
        await store.close()


def floor_config(root: Path, broker: str, dsn: str, listen: str) -> tuple[Path, str]:
    """The floor's config file (its pits are the demo's) and an admin token for the page."""
    token = new_token()
    tokens = root / "tokens.toml"
    tokens.touch(mode=0o600)  # the floor, like the table, refuses a tokens file others read
    tokens.write_text(token_entry("demo.admin", "admin", token))
    pits: dict[str, list[str]] = {}
    for demo in TABLES:
        pits.setdefault(demo.pit, []).append(demo.table)
    config_file = root / "floor.toml"
    config_file.write_text(
        f'[floor]\nservers = ["{broker}"]\ndatabase = "{dsn}"\n'
        f'[api]\nlisten = "{listen}"\ntokens_file = "{tokens}"\n[pits]\n'
        + "".join(f"{json.dumps(pit)} = {json.dumps(ids)}\n" for pit, ids in pits.items())
    )
    return config_file, token


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    """While the demo tears down, a second Ctrl-C does not leave half of it behind."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled floor demo",
        description="nats-server, a throwaway PostgreSQL, the floor and three real tables "
        "(`tabled run --autoplay`: Thirteen and Pai Gow at different paces) shipping to it.",
    )
    parser.add_argument("--http", default="127.0.0.1:8800", metavar="HOST:PORT")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="tabled-floor-demo-"))
    root.chmod(0o711)  # PostgreSQL's folder is inside; as root it runs as `postgres`
    pg: PostgresCluster | None = None
    broker: NatsServer | None = None
    tables: list[TableProcess] = []
    # A SIGTERM during start-up cleans up as a Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda _sig, _frame: _raise_interrupt())
    try:
        try:
            pg = PostgresCluster(base=root).init().start()
            broker = NatsServer(base=root).start()
            dsn = pg.create_database("floor")
        except (ServerError, OSError, subprocess.SubprocessError) as exc:
            print(f"tabled floor demo: {exc}", file=sys.stderr)
            return 1
        config_file, token = floor_config(root, broker.url, dsn, args.http)
        print(f"nats-server {broker.url}, PostgreSQL {dsn}, folder {root}")
        print(f"admin token (paste it into the page): {token}", flush=True)
        config = load_floor_config(config_file)
        tables = [TableProcess(demo, root, broker.url) for demo in TABLES]

        async def run() -> int:
            stop, floor_stop = asyncio.Event(), asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
            await enrol_tables(dsn, tables)  # as a floor admin would, each with its key
            floor = asyncio.create_task(serve(config, floor_stop))
            for table in tables:
                table.start()
                d = table.demo
                print(
                    f"{d.table} ({d.pit}): {d.game} {d.ruleset}, a step every {d.pace:g} s, "
                    f"`tabled run --autoplay` pid {table.proc.pid if table.proc else '?'}",
                    flush=True,
                )
            watching = asyncio.create_task(_watch(tables, stop, sys.stdout))
            # Until a signal, or the floor ends on its own (it could not listen, say).
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait({floor, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stop.set()
            await watching
            # The tables first, so their last lines ship while the floor still reads them.
            await asyncio.to_thread(stop_tables, tables)
            floor_stop.set()
            return await floor

        return asyncio.run(run())
    except KeyboardInterrupt:
        return 130
    finally:
        with _signals_ignored():
            stop_tables(tables)
            if broker is not None:
                broker.destroy()
            if pg is not None:
                pg.destroy()
            shutil.rmtree(root, ignore_errors=True)
        print("demo stopped; tables, servers and folder removed", file=sys.stderr)


def _raise_interrupt() -> None:
    raise KeyboardInterrupt
