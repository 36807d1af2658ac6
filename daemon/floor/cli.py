"""`tabled floor`: run the floor; `tabled floor report`: the audit report of a period;
`tabled floor enrol`: a table and its key into the floor's registry (a floor admin);
`tabled floor tables`: the registry; `tabled floor nkey`, `broker-key`, `broker-config`: the
broker's identities and its accounts (daemon/floor/brokerkeys.py); `tabled floor audit`: the
integrity audit of every table (daemon/analytics/floor.py); `tabled floor demo`: nats-server, a
throwaway PostgreSQL, the floor and three real tables.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import psycopg
import structlog

from daemon.api.doors import serving_problem
from daemon.api.server import ApiServer
from daemon.config import ConfigError
from daemon.floor.api import Hub, create_app
from daemon.floor.config import FloorConfig, load_floor_config
from daemon.floor.consumer import Consumer
from daemon.floor.export import report_chunks, report_csv_chunks, report_json_indented
from daemon.floor.integrity import run_every
from daemon.floor.live import LiveView
from daemon.floor.live_consumer import LiveConsumer
from daemon.floor.store import BatchResult, Store
from daemon.logging import configure_logging
from daemon.safetext import safe_lines
from daemon.shipper.broker import FeedError, auth_options

log = structlog.get_logger("tabled.floor")

# The collector's youngest generation is collected after this many container objects are made
# (and not freed) since the last collection; Python's default is 700. A batch of a catch-up
# holds 5,000 decoded lines (a record, its payload and their dicts each), so at 700 the
# collector ran hundreds of times a batch and found nothing to free (the lines form no cycles):
# 8-20 us of the floor's CPU a line, measured. At 50,000 it runs once or twice a batch.
GC_YOUNG = 50_000


def _config(path: str | None, http: str | None) -> FloorConfig:
    config = load_floor_config(path)
    if http is not None:
        config = replace(config, api=replace(config.api, listen=http))
    return config


async def serve(config: FloorConfig, stop: asyncio.Event, *, ack_wait: float = 30.0) -> int:
    """Migrate, consume and serve until `stop` is set."""

    store = Store(config.floor.database, config.floor.subject_prefix)
    try:
        await store.migrate()
    except psycopg.Error as exc:
        print(f"tabled floor: database {config.floor.database}: {exc}".strip(), file=sys.stderr)
        return 1
    await store.close()  # the history's thread connects on its own loop
    # What the start made (modules, config, the app) stays: out of the collector's passes.
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    hub = Hub()
    reader = Store(config.floor.database, config.floor.subject_prefix)
    # The live view (daemon/floor/live.py): the newest lines on the page while the history
    # catches up; it reads the registry through the API's connection and writes nothing.
    live = LiveView(config.pits, hub.publish, config.floor.subject_prefix)
    watching = LiveConsumer(config.floor, live, reader) if config.floor.live else None
    main = asyncio.get_running_loop()

    def deliver(result: BatchResult) -> None:  # on this loop
        live.committed(result)
        hub.committed(result)

    async def committed(result: BatchResult) -> None:  # on the history's loop
        main.call_soon_threadsafe(deliver, result)

    consumer = Consumer(config.floor, store, committed, ack_wait=ack_wait)
    history = _History(consumer, store)

    def health() -> dict[str, object]:
        s = consumer.stats
        return {"connected": s.connected, "lines": s.lines, "batches": s.batches}

    app = create_app(
        reader, config, hub, health=health, live=live if watching is not None else None
    )
    server = ApiServer(app, config.api.listen)
    try:
        server.bind()
    except OSError as exc:
        print(f"tabled floor: cannot listen on {config.api.listen}: {exc}", file=sys.stderr)
        return 1
    print(f"floor: {server.url()}/", flush=True)
    serving = asyncio.create_task(server.serve())
    consuming = asyncio.create_task(asyncio.to_thread(history.run))
    # Not awaited before the history: the two consume side by side, each on its connection.
    watching_task = asyncio.create_task(watching.run(stop)) if watching is not None else None
    # The integrity update (docs/integrity.md): a pass over each table's new lines a period.
    auditing = asyncio.create_task(
        run_every(
            config.floor.database,
            float(config.integrity.period_seconds),
            stop,
            hub.publish,
            misread_limit=config.integrity.misread_limit,
        )
    )
    try:
        await stop.wait()
    finally:
        server.stop()
        await asyncio.to_thread(history.stop)
        await consuming
        if watching_task is not None:
            await watching_task
        await auditing
        with contextlib.suppress(Exception):
            await asyncio.wait_for(serving, 5)
        await reader.close()
    return 0


class _History:
    """The history (the durable consumer into PostgreSQL) on a thread and event loop of its
    own: a catch-up's batches are seconds of Python, and on the API's loop every page read,
    push and live line would wait behind them. The thread holds the interpreter only between
    the switches Python makes every few milliseconds for the API's loop when it has work."""

    def __init__(self, consumer: Consumer, store: Store) -> None:
        self.consumer, self.store = consumer, store
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    def run(self) -> None:
        async def main() -> None:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            self._ready.set()
            try:
                await self.consumer.run(self._stop)
            finally:
                await self.consumer.close()
                await self.store.close()

        try:
            asyncio.run(main())
        finally:
            self._ready.set()

    def stop(self) -> None:
        """Ask the history to stop (from any thread) once it is running."""
        self._ready.wait()
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # its loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)


def _run(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled floor",
        description="Consume every table's journal from JetStream into PostgreSQL, check each "
        "table's hash chain, and serve the floor API and page. Subcommands: report, enrol, "
        "tables, nkey, broker-key, broker-config, demo, archive.",
    )
    parser.add_argument("--config", help="floor config (TOML with [floor], [api], [pits])")
    parser.add_argument("--http", metavar="HOST:PORT", help="listen here (default: [api] listen)")
    parser.add_argument(
        "--ack-wait",
        type=float,
        default=30.0,
        help="seconds before the broker redelivers an unacked message",
    )
    args = parser.parse_args(argv)
    try:
        config = _config(args.config, args.http)
    except ConfigError as exc:
        print(f"tabled floor: {exc}", file=sys.stderr)
        return 2
    # The table's doors: TLS beyond loopback, a private tokens file; before anything starts.
    problem = serving_problem(config.api, config.api.listen)
    if problem:
        print(f"tabled floor: --http {config.api.listen}: {problem}", file=sys.stderr)
        return 2
    # The floor's broker identity and TLS files: there, private, of the right kind.
    try:
        auth_options(config.floor, "floor")
    except FeedError as exc:
        print(f"tabled floor: {exc}", file=sys.stderr)
        return 2

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        return await serve(config, stop, ack_wait=args.ack_wait)

    return asyncio.run(main())


def _when(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO date or time") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def report_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled floor report",
        description="The audit report of a period, read from the floor's database: violations, "
        "overrides, device faults, settlements, rounds and chain alerts.",
    )
    parser.add_argument("--config", help="floor config (its [floor] database is read)")
    parser.add_argument("--since", type=_when, required=True, help="ISO time, inclusive")
    parser.add_argument("--until", type=_when, required=True, help="ISO time, exclusive")
    parser.add_argument("--format", choices=("json", "csv"), default="json")
    args = parser.parse_args(argv)
    if args.since >= args.until:
        parser.error("--since must be before --until")
    try:
        config = load_floor_config(args.config)
    except ConfigError as exc:
        print(f"tabled floor report: {exc}", file=sys.stderr)
        return 2

    async def main() -> int:
        # Written as it is read, a chunk of rows at a time (export.report_chunks): a month's
        # report is never held whole.
        chunks = report_chunks(config.floor.database, args.since, args.until)
        csv_ = args.format == "csv"
        try:
            async for text in report_csv_chunks(chunks) if csv_ else report_json_indented(chunks):
                sys.stdout.write(safe_lines(text) if csv_ else text)
        except psycopg.Error as exc:
            print(f"tabled floor report: {exc}".strip(), file=sys.stderr)
            return 1
        if not csv_:
            sys.stdout.write("\n")
        return 0

    return asyncio.run(main())


# `tabled floor WORD ...`: the subcommands, "module:function" (imported only when asked for);
# without one of these words it runs the floor. The shell completion reads them too.
SUBCOMMANDS: dict[str, str] = {
    "report": "daemon.floor.cli:report_main",
    "enrol": "daemon.floor.registry:main",
    "tables": "daemon.floor.registry:list_main",
    "nkey": "daemon.floor.brokerkeys:nkey_main",
    "broker-key": "daemon.floor.brokerkeys:key_main",
    "broker-config": "daemon.floor.brokerkeys:config_main",
    "demo": "daemon.floor.demo:main",
    "archive": "daemon.floor.archive:main",
    "audit": "daemon.analytics.floor:main",  # numpy and scipy: only for this one
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # stdout carries what a script reads; the log goes to stderr, in its one style (text on a
    # terminal, JSON lines otherwise), as `tabled run`'s.
    configure_logging("info")
    if args and args[0] in SUBCOMMANDS:
        module, _, function = SUBCOMMANDS[args[0]].partition(":")
        run: Callable[[Sequence[str]], int] = getattr(importlib.import_module(module), function)
        return run(args[1:])
    return _run(args)


if __name__ == "__main__":
    raise SystemExit(main())
