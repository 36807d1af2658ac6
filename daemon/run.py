"""`tabled run`: run one table until SIGTERM/SIGINT, or play N scripted rounds and exit.

    tabled run [--config FILE] [--journal DIR] [--http HOST:PORT] [--autoplay N] [--seed N]

The config (default: the embedded `config/table.toml`, every device simulated) names the game,
the devices' ports and the journal. The table replays its journal first: a table restarted
mid-round comes back in HOLD with the round as it was, for a supervisor to clear. With
`--http` the operator API and dealer console are served from a process of their own, and
its address is printed once it serves (`{"http": URL}` for a program reading stdout,
`console and API: URL` on a terminal). Without `--autoplay` the daemon runs until SIGTERM
or SIGINT, tells systemd it is ready and feeds its watchdog while the table is healthy, and on
the signal closes the devices and the journal.

Exit status: 0 done; 1 the table could not start or the autoplay could not go on; 2 bad
arguments or config.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import signal
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from daemon import eventloop, sdnotify
from daemon.api.user import user_problem
from daemon.cli.address import publish, withdraw
from daemon.cli.progress import Progress
from daemon.config import ConfigError, TableConfig, load_config
from daemon.journal import JournalError, JournalLocked
from daemon.logging import LEVELS, configure_logging, get_logger
from daemon.shipper.config import secrets_problem
from daemon.shipper.runtime import start_feed, stop_feed
from daemon.table import Fed, Table, TableError
from daemon.table.publish import served
from drivers.clock import MonotonicClock, SimulationClock

if TYPE_CHECKING:
    from daemon.api.process import ApiProcess
    from daemon.autoplay import Summary
    from daemon.journal.provenance import TableKey


# The collector's youngest generation is collected after this many container objects are made
# (and not freed) since the last collection; Python's default is 700. What a round keeps (its
# journal records and payloads, the procedure's state) forms no cycles, so a young pass finds
# next to nothing to free: over 100 unpaced Thirteen rounds, 32 young passes at 700 and 4 at
# 5,000, the collector's CPU from 0.11 to 0.04 ms a round and its longest pass no longer.
GC_YOUNG = 5_000


def freeze_startup() -> None:
    """Out of the collector's sight what start-up built, and the young generation collected
    less often (`GC_YOUNG`)."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tabled run", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, help="table config (default: the embedded one)")
    p.add_argument("--journal", type=Path, help="journal directory (overrides the config's)")
    p.add_argument(
        "--http",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help="serve the operator API and console (alone: at the config's [api] listen)",
    )
    p.add_argument("--autoplay", type=int, metavar="N", help="play N scripted rounds, then exit")
    p.add_argument("--seed", type=int, help="seed the script and the unseeded simulators")
    p.add_argument("--control", type=Path, metavar="SOCKET", help="`tabled sim`'s control channel")
    p.add_argument("--fault-share", type=float, default=0.25, help="share of faulty rounds")
    p.add_argument(
        "--violation-share", type=float, default=0.3, help="share of rounds with violations"
    )
    p.add_argument(
        "--late-share",
        type=float,
        default=0.1,
        help="share of rounds with a player late at the bell (the table's clock jumps the "
        "five minutes, so its journal's times run ahead of the wall's)",
    )
    p.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="autoplay: the dealer's pause before each step (0: as fast as the table answers)",
    )
    p.add_argument("--json", action="store_true", help="print the autoplay summary as JSON")
    p.add_argument("--progress", action="store_true", help="print a line per autoplay round")
    p.add_argument(
        "--trace",
        action="store_true",
        help="print `ack SEQ ACTION` as each accepted input (operator or device) is durable",
    )
    p.add_argument("--log-level", choices=LEVELS, help="operational log level (stderr)")
    return p


def seeded(config: TableConfig, seed: int) -> TableConfig:
    """Give every `sim://` port without a seed one derived from `seed` (a reproducible run)."""
    devices = {}
    for number, (name, device) in enumerate(sorted(config.devices.items())):
        parts = urlsplit(device.port)
        query = parse_qsl(parts.query)
        if parts.scheme == "sim" and not any(k == "seed" for k, _ in query):
            query.append(("seed", str(seed * 10 + number)))
            port = urlunsplit(parts._replace(query=urlencode(query)))
            devices[name] = replace(device, port=port)
        else:
            devices[name] = device
    return replace(config, devices=devices)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.autoplay is not None and args.autoplay < 0:
        print("tabled run: --autoplay takes a number of rounds >= 0", file=sys.stderr)
        return 2
    shares = (args.fault_share, args.violation_share, args.late_share)
    if not all(0 <= share <= 1 for share in shares):
        print("tabled run: a --...-share is a fraction from 0 to 1", file=sys.stderr)
        return 2
    if not 0 <= args.pace <= 60:
        print("tabled run: --pace takes seconds from 0 to 60", file=sys.stderr)
        return 2
    # Faults the autoplay injects are expected; its summary reports them.
    level = args.log_level or ("critical" if args.autoplay is not None else "info")
    configure_logging(level)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"tabled run: {exc}", file=sys.stderr)
        return 2
    # The broker secrets ([feed] creds, tls_key) private, like the tokens file: before the
    # table starts or journals anything.
    if config.feed is not None and (problem := secrets_problem(config.feed, "feed")):
        print(f"tabled run: {problem}", file=sys.stderr)
        return 2
    if args.http is not None:
        # The address and the API's doors: before the table starts or journals anything.
        # The web stack only when serving: its doors added 1.9-2.9 s to a 3.0-6.7 s
        # `import daemon.run` (python -X importtime, best of 3 on a loaded machine); a plain run
        # loads none of it (tests/daemon/test_startup.py).
        from daemon.cli.http import http_problem, http_warning  # noqa: PLC0415

        listen = args.http or config.api.listen
        problem = http_problem(config.api, listen) or user_problem(config, args.journal)
        if problem:
            print(f"tabled run: --http {listen}: {problem}", file=sys.stderr)
            return 2
        if warning := http_warning(config.api):
            print(f"tabled run: warning: {warning}", file=sys.stderr)
    signing_key = None
    if config.feed is not None:
        # A table that ships its journal signs its chain (docs/security.md): no key, no start.
        # Its crypto with a [feed] only: +4-5 % on `import daemon.run` (-X importtime).
        from daemon.journal.provenance import KeyFileError, load_key  # noqa: PLC0415

        try:
            signing_key = load_key(config.signing_key_path())
        except KeyFileError as exc:
            where = f" --config {args.config}" if args.config else ""
            print(
                f"tabled run: [feed] needs the table's signing key: {exc}; make one with "
                f"`tabled keys init{where}`, then enrol it on the floor",
                file=sys.stderr,
            )
            return 2
    if args.seed is not None:
        config = seeded(config, args.seed)
    try:
        status = eventloop.run(_run(config, args, signing_key))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Whoever read our output went away (`| head`); nothing more to say to them.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    _exit_now(status)
    return status  # not reached


def _exit_now(status: int) -> None:
    """End the process: the table has stopped, its journal is closed and durable, the devices
    and the API are closed. What is left, the interpreter freeing every object of a large heap
    one by one, took most of the time from SIGTERM to exit on a loaded machine (1-1.5 s of
    1.7 s); the kernel frees the memory at once."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(status)


async def _run(
    config: TableConfig, args: argparse.Namespace, signing_key: TableKey | None = None
) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    clock = SimulationClock() if args.autoplay is not None else None
    table = Table(config, journal_dir=args.journal, clock=clock, driver_clock=MonotonicClock())
    try:
        await table.start()
    except (JournalLocked, TableError, JournalError, ConfigError, OSError) as exc:
        print(f"tabled run: {exc}", file=sys.stderr)
        with contextlib.suppress(Exception):
            await table.stop()
        return 1
    # [feed]: the journal shipper, docs/floor.md; it signs the chain's heads with the key
    feed = start_feed(config, table.journal, signing_key)

    api = None
    address: Path | None = None
    if args.http is not None:
        # The API in a process of its own: its clients cannot slow the table (daemon.api.process).
        # FastAPI and uvicorn only when serving: +2.1-2.9 s on a 3.0-6.7 s `import daemon.run`
        # (python -X importtime, best of 3 on a loaded machine); a plain run loads none.
        from daemon.api.process import ApiProcess  # noqa: PLC0415

        try:
            listen = args.http or config.api.listen
            api = ApiProcess.build(served(table), config, listen, feed=feed)
            url = api.url()
        except (ValueError, OSError) as exc:
            print(f"tabled run: --http {args.http}: {exc}", file=sys.stderr)
            await table.stop()
            await stop_feed(feed)
            return 2
        address = await _serve(api, table, url, stop)

    if args.trace:
        table.on_durable = _trace
    watchdog = asyncio.ensure_future(sdnotify.feed_watchdog(table.healthy))
    # What start-up built (modules, tables, the config) lives as long as the process: out of
    # the collector's sight, so no full collection on the table's loop walks it again (one took
    # 46 ms in a round). A freeze moves a list; it collects nothing, so it costs no start-up CPU.
    freeze_startup()
    snapshot = table.procedure.snapshot()
    sdnotify.ready(f"table {config.table_id} {config.game}: {snapshot['phase']}")
    get_logger("tabled.run").info(
        "table.running", table=config.table_id, game=config.game, phase=snapshot["phase"]
    )

    status, summary = 0, None
    try:
        if args.autoplay is not None:
            status, summary = await _autoplay(table, args, clock, stop)
        else:
            status = await _until_stopped(table, stop)
    finally:
        sdnotify.stopping()
        watchdog.cancel()
        withdraw(address)
        if api is not None:
            await api.stop()
        await table.stop()
        await stop_feed(feed)  # after the table, so its last lines ship too
    if summary is not None:  # once the table stopped: its last seq is what verify-log reports
        _print_summary(summary.read(table), args.json)
    return status


def _trace(fed: Fed, received: float | None) -> None:
    if fed.accepted:
        print(f"ack {fed.seq} {fed.input.action}", flush=True)


async def _serve(api: ApiProcess, table: Table, url: str, stop: asyncio.Event) -> Path | None:
    """Start the API process; its address is published and printed once it serves (or has
    failed to), so a client given the address is answered then, not after the web stack's
    start-up (seconds on a loaded machine). A signal meanwhile ends the wait."""
    api.start()
    await _first(api.settled.wait(), stop.wait())
    address = publish(table.journal_config.dir, url)  # for `tabled status` and the others
    if sys.stdout.isatty():  # a person: words; a program (a pipe, systemd): one JSON object
        print(f"console and API: {url}/", flush=True)
    else:
        print(json.dumps({"http": url}), flush=True)
    return address


async def _first(*waits: Coroutine[Any, Any, Any]) -> None:
    """Until the first of `waits` is done; the others are cancelled."""
    tasks = {asyncio.ensure_future(wait) for wait in waits}
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()


async def _until_stopped(table: Table, stop: asyncio.Event) -> int:
    """Run until a signal (0), or until the table can take no more inputs (1)."""
    waits = {asyncio.ensure_future(stop.wait())}
    if table.failed is not None:
        waits.add(asyncio.ensure_future(table.failed.wait()))
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for waiting in waits:
        waiting.cancel()
    if table.failure is not None:
        print(f"tabled run: the table failed: {table.failure}", file=sys.stderr)
        return 1
    return 0


async def _autoplay(
    table: Table, args: argparse.Namespace, clock: object, stop: asyncio.Event
) -> tuple[int, Summary | None]:
    # Not for a cost: the production daemon does not load the scripted players at all
    # (tests/table/test_run_process.py holds it).
    from daemon.autoplay import Autoplay, AutoplayError, control_for  # noqa: PLC0415

    try:
        control = control_for(table, args.control)
    except AutoplayError as exc:
        print(f"tabled run: {exc}", file=sys.stderr)
        return 1, None
    bar = Progress(f"autoplay {table.config.game}", args.autoplay, unit=" rounds")
    player = Autoplay(
        table,
        control,
        rounds=args.autoplay,
        seed=args.seed,
        fault_share=args.fault_share,
        violation_share=args.violation_share,
        late_share=args.late_share,
        clock=clock if isinstance(clock, SimulationClock) else None,
        progress=(lambda line: print(line, flush=True)) if args.progress else bar.advanced,
        pace=args.pace,
    )
    play = asyncio.ensure_future(player.run())
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({play, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        bar.close()  # before anything else is printed
        await control.close()
    if not play.done():
        await _cancel(play)
        print("tabled run: stopped by a signal before the last round", file=sys.stderr)
        return 1, player.finish()
    try:
        return 0, play.result()
    except (AutoplayError, TableError) as exc:
        print(f"tabled run: autoplay stopped: {exc}", file=sys.stderr)
        return 1, player.finish()


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel `task` until it ends: a cancellation that meets a wait just as it completes
    can be swallowed (asyncio.wait_for on Python 3.11), so one `cancel()` is not enough."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.05)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()


def _print_summary(summary: Summary, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary.as_dict(), sort_keys=True), flush=True)
    else:
        print(summary.render(), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
