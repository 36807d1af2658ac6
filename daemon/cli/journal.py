"""`tabled journal [--follow]`: journal events by round, event or time, from the running
daemon's operator API (daemon/cli/client.py), or from a journal folder's files when no daemon
serves it (daemon/cli/journal_files.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from daemon.cli.address import running_url
from daemon.cli.client import (
    TIMEOUT,
    Api,
    ClientError,
    api_from,
    common_options,
    print_json,
    run,
)
from daemon.cli.journal_files import FolderError, follow_folder, last_seq, read_folder
from daemon.config import ConfigError, load_config
from daemon.safetext import safe


def format_event(event: dict[str, Any]) -> str:
    """One event on one line, for a person: whatever its text holds (a reason, a device's
    words) shown with its controls escaped (daemon/safetext.py), never acting on the terminal."""
    payload = event.get("payload") or {}
    fields = " ".join(
        f"{k}={json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}"
        for k, v in payload.items()
    )
    when = event.get("ts") or event.get("time") or ""
    round_id = event.get("round", event.get("round_id"))
    where = f" r{round_id}" if round_id is not None else ""
    return safe(
        f"#{event.get('seq')} {when}{where} {event.get('actor')} {event.get('event')} {fields}"
    )


def _aware(text: str) -> str:
    """A time for the API: ISO 8601; without a zone it is this machine's local time."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ClientError(-2, f"{text!r}: expected an ISO time like 2026-11-29T20:00") from None
    if when.tzinfo is None:
        when = when.astimezone()
    return when.isoformat()


def _matches(event: dict[str, Any], args: argparse.Namespace) -> bool:
    name = str(event.get("event", ""))
    if args.event and not (
        name.startswith(args.event) if args.event.endswith(".") else name == args.event
    ):
        return False
    round_id = event.get("round", event.get("round_id"))
    return args.round is None or str(round_id) == args.round


def main(argv: Sequence[str] | None = None) -> int:
    """`tabled journal [--follow]`: journal events by round, event, time; --follow streams new
    ones as they become durable. From the running daemon's API, or with `--dir DIR` (or when
    no daemon serves the config's journal folder) from the folder's files, no daemon needed."""
    parser = argparse.ArgumentParser(prog="tabled journal", description=main.__doc__)
    parser.add_argument("--round", help="only this round id")
    parser.add_argument("--event", help="only this event, or a prefix ending in '.' (shoe.)")
    parser.add_argument("--since", help="ISO time (local if no zone)")
    parser.add_argument("--until", help="ISO time (local if no zone)")
    parser.add_argument("--limit", type=int, default=100, help="at most this many (1-1000)")
    parser.add_argument("--follow", "-f", action="store_true", help="then stream new events")
    parser.add_argument(
        "--dir",
        type=Path,
        metavar="DIR",
        help="read this journal folder's files (no daemon needed; every line whole)",
    )
    common_options(parser)
    args = parser.parse_args(argv)

    def show(event: dict[str, Any]) -> None:
        if args.json:
            print_json(event)
        else:
            print(format_event(event))
        sys.stdout.flush()

    def work() -> int:
        folder = args.dir if args.dir is not None else _idle_folder(args)
        if folder is not None:
            return _journal_folder(folder, args, show)
        api = api_from(args)
        events = api.get(
            "/api/journal",
            round=args.round,
            event=args.event,
            since=_aware(args.since) if args.since else None,
            until=_aware(args.until) if args.until else None,
            limit=args.limit,
        )["events"]
        for event in events:
            show(event)
        if not args.follow:
            return 0
        last = events[-1]["seq"] if events else None
        if last is None:
            # Nothing matched: follow from the journal's end, not from its beginning.
            latest = api.get("/api/journal", limit=1)["events"]
            last = latest[-1]["seq"] if latest else 0
        _follow(api, last, lambda e: _matches(e, args), show)
        return 0

    return run(work)


def _idle_folder(args: argparse.Namespace) -> Path | None:
    """The journal folder to read from its files: none was named (`--url`, `$TABLED_URL`) and
    no live daemon published its address in the config's (or `--journal`) folder."""
    if args.url or os.environ.get("TABLED_URL"):
        return None
    try:
        folder: Path = args.journal or load_config(args.config).journal.dir
    except ConfigError as exc:
        raise ClientError(-2, str(exc)) from None
    return folder if running_url(folder) is None else None


def _journal_folder(folder: Path, args: argparse.Namespace, show: Callable[..., None]) -> int:
    """`tabled journal` from a folder's files (daemon/cli/journal_files.py)."""

    since = datetime.fromisoformat(_aware(args.since)) if args.since else None
    until = datetime.fromisoformat(_aware(args.until)) if args.until else None
    if not 1 <= args.limit <= 1000:
        raise ClientError(-2, "--limit takes 1 to 1000")
    try:
        events = read_folder(
            folder, lambda e: _matches(e, args), since=since, until=until, limit=args.limit
        )
        for event in events:
            show(event)
        if args.follow:
            after = last_seq(folder)
            follow_folder(folder, after, lambda e: _matches(e, args), show)
    except FolderError as exc:
        raise ClientError(-2, str(exc)) from None
    return 0


# The push feed's refusals, as the HTTP statuses the exit codes are chosen by.
WS_ERROR_STATUS = {"unauthorized": 401, "rate_limited": 429, "forbidden_origin": 403}


def _follow(
    api: Api, last: int, wanted: Callable[[dict[str, Any]], bool], show: Callable[..., None]
) -> NoReturn:
    delay = 0.5
    while True:
        try:
            with connect(api.ws_url(), open_timeout=TIMEOUT, max_size=2**22) as ws:
                ws.send(json.dumps({"token": api.token, "after": last}))
                for raw in ws:
                    message = json.loads(raw)
                    if message.get("type") == "error":
                        raise ClientError(
                            WS_ERROR_STATUS.get(str(message.get("error")), 400),
                            message.get("message", "refused"),
                        )
                    if message.get("type") != "event":
                        delay = 0.5
                        continue
                    event = message["event"]
                    if event.get("seq", 0) <= last:
                        continue
                    last = event["seq"]
                    if wanted(event):
                        show(event)
        except (ConnectionClosed, OSError, TimeoutError) as exc:
            print(f"tabled: connection lost ({safe(exc)}); reconnecting", file=sys.stderr)
        time.sleep(delay)  # reconnect backoff for a person watching a terminal
        delay = min(delay * 2, 10.0)
