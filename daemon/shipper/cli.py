"""`tabled feed`: the journal's shipping to NATS JetStream, seen and repaired from the table PC.

    tabled feed status [--config FILE] [--journal DIR] [--json]
    tabled feed ship   [--config FILE] [--journal DIR]       # a stopped table's backlog, then exit
    tabled feed replay --from SEQ [--to SEQ] [--config FILE] [--journal DIR]
    tabled feed nkey   [--config FILE]    # the table's broker key: made once, its public key shown

`status` reads the cursor and the journal's files and asks the broker about the stream: which
files have shipped (and so may be archived), the lag, whether the broker answers. `ship` sends
what the cursor has not yet covered, from the files, for a table whose daemon is stopped (the
daemon ships by itself while it runs). `replay` sends the lines of a range that the stream does
not hold (it asks the stream which of this table's seqs it has), so it never stores a line
twice. It never sends past the cursor while the daemon runs (those lines are the daemon's).
`nkey` makes the table's nkey seed at `[feed] creds` (mode 0600) if there is none, and prints its
public key on the last line: the floor puts it in the broker's config (`tabled floor broker-key`).

Exit status: 0 done (status: the broker answers and the stream takes our subjects); 1 the
broker does not answer or refused; 2 bad arguments or config, or no [feed] in the config.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from daemon.cli.progress import Progress
from daemon.config import ConfigError, TableConfig, load_config
from daemon.journal.format import (
    JournalCorrupt,
    journal_files,
    last_complete_line,
    parse_file_name,
)
from daemon.safetext import safe
from daemon.shipper.config import FeedConfig
from daemon.shipper.cursor import (
    ShipperLocked,
    journal_writer_running,
    read_cursor,
)
from daemon.shipper.tail import JournalTail, line_seq, line_ts

EXIT_OK, EXIT_FEED, EXIT_USAGE = 0, 1, 2


class _Usage(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tabled feed", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--config", type=Path, help="table config (default: the embedded one)")
        q.add_argument("--journal", type=Path, help="journal directory (overrides the config's)")

    status = sub.add_parser("status", help="cursor, journal head, lag, broker, stream, files")
    common(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    ship = sub.add_parser("ship", help="ship a stopped table's unshipped lines, then exit")
    common(ship)
    replay = sub.add_parser("replay", help="send a range of lines again (idempotent)")
    common(replay)
    replay.add_argument("--from", dest="first", type=int, required=True, metavar="SEQ")
    replay.add_argument("--to", dest="last", type=int, metavar="SEQ", help="default: the end")
    nkey = sub.add_parser("nkey", help="make the table's broker key ([feed] creds), show it")
    nkey.add_argument("--config", type=Path, help="table config (default: the embedded one)")
    return p


def _nkey(args: argparse.Namespace) -> int:
    from daemon.shipper.nkey import NkeyError, make_seed  # noqa: PLC0415 - nkeys for this only

    config = load_config(args.config)
    if config.feed is None:
        raise _Usage(f"{config.source}: no [feed] section: this table ships nothing")
    if config.feed.creds is None:
        raise _Usage(
            f"{config.source}: set [feed] creds to the file for the table's nkey seed "
            '(e.g. creds = "feed.nk", beside the config), then run this again'
        )
    try:
        public, made = make_seed(config.feed.creds, "feed.creds")
    except NkeyError as exc:
        raise _Usage(str(exc)) from None
    said = "made" if made else "already there"
    print(f"table {config.table_id}: nkey seed {config.feed.creds} ({said}, mode 0600)")
    print(
        f"on the floor: tabled floor broker-key {config.table_id} --nkey {public} "
        "--config floor.toml"
    )
    print(public)
    return EXIT_OK


def _setup(args: argparse.Namespace) -> tuple[TableConfig, FeedConfig, Path]:
    config = load_config(args.config)
    if config.feed is None:
        raise _Usage(f"{config.source}: no [feed] section: this table ships nothing")
    directory = args.journal or config.journal.dir
    return config, config.feed, Path(directory)


def journal_head(directory: Path) -> int:
    """The seq of the last complete line in the journal's files (0 if none)."""
    for path in reversed(journal_files(directory) if directory.is_dir() else []):
        last, _ = last_complete_line(path)
        if last is not None:
            return line_seq(last)
    return 0


def file_report(directory: Path, cursor: int, head: int) -> list[dict[str, Any]]:
    files = journal_files(directory) if directory.is_dir() else []
    firsts = [(parse_file_name(p.name) or (0, ""))[0] for p in files]
    out = []
    for i, path in enumerate(files):
        last = firsts[i + 1] - 1 if i + 1 < len(files) else head
        out.append(
            {
                "file": path.name,
                "first_seq": firsts[i],
                "last_seq": last,
                "shipped": last <= cursor,
            }
        )
    return out


async def broker_report(feed: FeedConfig, table_id: str) -> dict[str, Any]:
    from daemon.shipper.broker import (  # noqa: PLC0415 - nats only when asked
        connect,
        describe,
        last_stored,
        stored_seq,
        subjects_cover,
    )

    report: dict[str, Any] = {"reachable": False, "servers": list(feed.servers)}
    try:
        nc = await connect(feed, table_id)
    except Exception as exc:
        report["error"] = describe(exc)
        return report
    try:
        report["reachable"] = True
        report["server"] = nc.connected_url.geturl() if nc.connected_url else None
        js = nc.jetstream(timeout=feed.ack_timeout_seconds)
        try:
            info = await js.stream_info(feed.stream)
        except Exception as exc:
            report["stream"] = None
            report["error"] = f"stream {feed.stream}: {describe(exc)}"
            return report
        subjects = list(info.config.subjects or [])
        takes = subjects_cover(subjects, [*feed.subject_prefix.split("."), table_id])
        stream: dict[str, Any] = {
            "name": feed.stream,
            "subjects": subjects,
            "takes_our_subjects": takes,
            "messages": info.state.messages,
            "bytes": info.state.bytes,
            "duplicate_window_seconds": info.config.duplicate_window,
            "storage": str(getattr(info.config.storage, "value", info.config.storage)),
            "replicas": info.config.num_replicas,
        }
        msg = await last_stored(js, feed, table_id, purpose="cli")
        stream["last_seq_of_table"] = None if msg is None else stored_seq(msg, table_id)
        report["stream"] = stream
        if not takes:
            report["error"] = (
                f"stream {feed.stream} has subjects {subjects}, which do not take "
                f"{feed.subject_prefix}.{table_id}.>"
            )
    except Exception as exc:
        report["error"] = describe(exc)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 2.0)
    return report


def _status(args: argparse.Namespace) -> int:
    config, feed, directory = _setup(args)
    cursor = read_cursor(directory, feed.stream)
    head = journal_head(directory)
    lag_seconds = 0.0
    if head > cursor.seq:
        try:
            line = JournalTail(directory).line_at(cursor.seq + 1)
        except (JournalCorrupt, OSError):
            line = None
        if line is not None:
            from datetime import datetime  # noqa: PLC0415

            lag_seconds = max(0.0, time.time() - datetime.fromisoformat(line_ts(line)).timestamp())
    broker = asyncio.run(broker_report(feed, config.table_id))
    files = file_report(directory, cursor.seq, head)
    report: dict[str, Any] = {
        "table": config.table_id,
        "journal": str(directory),
        "daemon_running": journal_writer_running(directory),
        "cursor": cursor.seq,
        "cursor_updated": cursor.updated or None,
        "head": head,
        "lag_lines": max(0, head - cursor.seq),
        "lag_seconds": round(lag_seconds, 3),
        "subject": f"{feed.subject_prefix}.{config.table_id}.<event>",
        "broker": broker,
        "files": files,
    }
    ok = broker["reachable"] and "error" not in broker
    if args.json:
        print(json.dumps(report, sort_keys=True))
        return EXIT_OK if ok else EXIT_FEED
    print(f"feed of table {config.table_id}: {report['subject']} -> stream {feed.stream}")
    print(
        f"cursor {cursor.seq}, journal head {head}: lag {report['lag_lines']} lines "
        f"({lag_seconds:.1f} s); daemon {'running' if report['daemon_running'] else 'stopped'}"
    )
    if broker["reachable"]:
        print(f"broker: reachable at {broker.get('server')}")
        stream = broker.get("stream")
        if stream:
            print(
                f"stream {stream['name']}: {stream['messages']} messages, {stream['bytes']} B, "
                f"subjects {', '.join(stream['subjects'])}; last of {config.table_id}: "
                f"{stream['last_seq_of_table']}"
            )
    else:
        print(f"broker: NOT reachable ({', '.join(feed.servers)})")
    if "error" in broker:
        print(f"problem: {safe(broker['error'])}")
    for f in files:
        mark = "shipped, safe to archive" if f["shipped"] else "NOT fully shipped: keep"
        print(f"  {f['file']}  seq {f['first_seq']}..{f['last_seq']}  {mark}")
    return EXIT_OK if ok else EXIT_FEED


def _ship(args: argparse.Namespace) -> int:
    from daemon.shipper.engine import Shipper  # noqa: PLC0415

    config, feed, directory = _setup(args)
    if journal_writer_running(directory):
        raise _Usage(f"{directory}: the table's daemon is running and ships by itself")
    from daemon.journal.provenance import KeyFileError, load_key  # noqa: PLC0415

    try:
        key = load_key(config.signing_key_path())
    except KeyFileError as exc:
        raise _Usage(f"the table's signing key: {exc}; `tabled keys init` makes one") from None
    shipper = Shipper(feed, config.table_id, directory, follow=False, key=key)
    done = asyncio.run(_ship_until_done(shipper))
    status = shipper.status()
    if done:
        print(f"shipped: cursor {status.cursor}, journal head {journal_head(directory)}")
        return EXIT_OK
    print(f"tabled feed ship: {safe(status.last_error or 'stopped')}", file=sys.stderr)
    return EXIT_FEED


async def _ship_until_done(shipper: Any) -> bool:
    """Ship; a failure is retried with backoff for a short while, then reported."""
    task = asyncio.ensure_future(shipper.run())
    deadline = time.monotonic() + max(shipper.feed.drain_seconds, 1.0)
    while not task.done():
        await asyncio.wait({task}, timeout=0.1)
        status = shipper.status()
        if status.state == "degraded" and time.monotonic() > deadline:
            shipper.request_stop(0)
    await task
    head = journal_head(shipper.dir)
    return bool(shipper.status().cursor >= head)


def _replay(args: argparse.Namespace) -> int:
    config, feed, directory = _setup(args)
    if args.first < 1 or (args.last is not None and args.last < args.first):
        raise _Usage("--from must be >= 1 and --to >= --from")
    last = journal_head(directory)
    if journal_writer_running(directory):
        # Lines past the cursor may not be durable yet and are the daemon's to ship.
        last = min(last, read_cursor(directory, feed.stream).seq)
    if args.last is not None:
        last = min(last, args.last)
    if last < args.first:
        print(f"nothing to replay: the journal (or the shipped part) ends at {last}")
        return EXIT_OK
    with Progress("feed replay", last - args.first + 1, unit=" lines") as bar:
        result = asyncio.run(
            replay(feed, config.table_id, directory, args.first, last, progress=bar.update)
        )
    print(
        f"replayed {config.table_id} seq {args.first}..{last}: {result['stored']} stored, "
        f"{result['duplicates']} already in the stream, {result['refused']} refused"
    )
    for reason in result["reasons"]:
        print(f"  refused: {safe(reason)}", file=sys.stderr)
    return EXIT_OK if not result["refused"] else EXIT_FEED


async def stored_seqs(js: Any, feed: FeedConfig, table_id: str) -> set[int]:
    """The seqs of this table the stream holds (read from the headers only, through the
    table's own filtered consumer)."""
    from daemon.shipper.broker import own_messages, stored_seq  # noqa: PLC0415

    found = await own_messages(
        js, feed, table_id, start=1, limit=10**12, headers_only=True, purpose="cli"
    )
    return {seq for msg in found if (seq := stored_seq(msg, table_id)) is not None}


async def replay(
    feed: FeedConfig,
    table_id: str,
    directory: Path,
    first: int,
    last: int,
    *,
    progress: Callable[[int], object] | None = None,
) -> dict[str, Any]:
    """Publish the lines `first`..`last` the stream does not hold, `feed.window` in flight.

    The stream is asked which of this table's seqs it holds, so a replay stores no line twice
    even past the de-duplication window; JetStream's de-duplication covers a line shipped
    meanwhile by the daemon.
    """
    from daemon.shipper.broker import (  # noqa: PLC0415
        EXPECTED_STREAM,
        MSG_ID,
        SITE_HEADER,
        FeedError,
        connect,
        ensure_stream,
    )

    nc = await connect(feed, table_id)
    result: dict[str, Any] = {"stored": 0, "duplicates": 0, "refused": 0, "reasons": []}
    try:
        js = nc.jetstream(timeout=feed.ack_timeout_seconds)
        await ensure_stream(js, feed, table_id)
        held = await stored_seqs(js, feed, table_id)
        tail = JournalTail(directory)
        tail.seek(first)
        headers = {EXPECTED_STREAM: feed.stream}
        if feed.site:
            headers[SITE_HEADER] = feed.site
        while tail.next_seq <= last:
            read = tail.read(last, feed.window)
            if not read:
                raise FeedError(f"the journal ends at seq {tail.next_seq - 1}")
            lines = [line for line in read if line.seq not in held]
            result["duplicates"] += len(read) - len(lines)
            futures = [
                nc.request(
                    f"{feed.subject_prefix}.{table_id}.{line.event}",
                    line.data,
                    timeout=feed.ack_timeout_seconds,
                    headers={MSG_ID: f"{table_id}:{line.seq}", **headers},
                )
                for line in lines
            ]
            for line, answer in zip(lines, await asyncio.gather(*futures), strict=True):
                body = json.loads(answer.data or b"{}")
                if "error" in body:
                    result["refused"] += 1
                    result["reasons"].append(f"seq {line.seq}: {body['error'].get('description')}")
                elif body.get("duplicate"):
                    result["duplicates"] += 1
                else:
                    result["stored"] += 1
            if progress is not None:
                progress(tail.next_seq - first)  # lines of the range done
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 2.0)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    name = f"tabled feed {args.command}"
    if args.command in ("ship", "replay"):
        # The shipper logs as `tabled run`'s does (feed.degraded...): text on a terminal, JSON
        # lines in a pipe or under systemd, not structlog's unconfigured default.
        from daemon.logging import configure_logging  # noqa: PLC0415 - structlog only here

        configure_logging("info")
    try:
        if args.command == "status":
            return _status(args)
        if args.command == "ship":
            return _ship(args)
        if args.command == "nkey":
            return _nkey(args)
        return _replay(args)
    except (ConfigError, _Usage) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ShipperLocked as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except JournalCorrupt as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FEED
    except Exception as exc:
        from daemon.shipper.broker import describe  # noqa: PLC0415

        print(f"{name}: {describe(exc)}", file=sys.stderr)
        return EXIT_FEED
