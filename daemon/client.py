"""`tabled status | act | journal`: the operator API from a shell, for IT, surveillance and the pit.

The token is read from `$TABLED_TOKEN` or `--token-file` (never from the command line, where
`ps` would show it to everyone on the table PC). The API address is `--url`, else `$TABLED_URL`,
else the `[api] listen` of `--config` (default: the embedded table config).

Exit status: 0 done; 1 the table refused the action (a journaled violation); 2 bad arguments or
input the API refused; 3 not allowed (no token, wrong role, rate limited); 4 the API is
unreachable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from daemon.procedures.spec import HIDDEN
from daemon.safetext import safe, safe_json, safe_lines

EXIT_REFUSED, EXIT_INPUT, EXIT_AUTH, EXIT_UNREACHABLE = 1, 2, 3, 4
TIMEOUT = 10.0


class ClientError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _exit_code(status: int) -> int:
    if status in (401, 403, 429):
        return EXIT_AUTH
    if status == 409:
        return EXIT_REFUSED
    if status == 0:
        return EXIT_UNREACHABLE
    return EXIT_INPUT


# --- talking to the API ---


class Api:
    def __init__(
        self, url: str, token: str | None, token_source: str | None = None, found: str = ""
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.token_source = token_source  # "$TABLED_TOKEN" or "--token-file F", for messages
        self.found = found  # how the URL was found, for "cannot reach"

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.url + path, data=data, method=method)  # noqa: S310 - the operator's own API URL
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 - same
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            try:
                content = json.loads(exc.read() or b"{}")
            except json.JSONDecodeError:
                content = {"error": "http_error", "message": f"HTTP {exc.code}"}
            return exc.code, content
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            found = f" ({self.found})" if self.found else ""
            raise ClientError(
                0,
                f"cannot reach the table at {self.url}{found}: {reason}; is `tabled run --http` "
                "running? --url or $TABLED_URL names another address",
            ) from None

    def get(self, path: str, **query: Any) -> dict[str, Any]:
        params = {k: v for k, v in query.items() if v is not None}
        if params:
            path += "?" + urllib.parse.urlencode(params)
        status, content = self.request("GET", path)
        if status != 200:
            raise ClientError(status, self.refusal(status, content))
        return content

    def refusal(self, status: int, content: dict[str, Any]) -> str:
        """A refused request, in the command line's terms (daemon.cli_errors)."""
        from daemon.cli_errors import cli_message  # noqa: PLC0415 - only on a refusal

        return cli_message(status, content, self.token_source if self.token else None)

    def ws_url(self) -> str:
        parts = urllib.parse.urlsplit(self.url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        return urllib.parse.urlunsplit((scheme, parts.netloc, parts.path + "/api/events", "", ""))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="the API, e.g. http://127.0.0.1:8700 ($TABLED_URL)")
    parser.add_argument(
        "--config",
        type=Path,
        help="find the table of this config: the address its running daemon published in its "
        "journal folder, else its [api] listen",
    )
    parser.add_argument(
        "--journal", type=Path, help="the running daemon's journal folder (if not the config's)"
    )
    parser.add_argument(
        "--token-file", type=Path, help="read the token from this file (else $TABLED_TOKEN)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _api(args: argparse.Namespace) -> Api:
    url, found = args.url, "--url"
    if not url and os.environ.get("TABLED_URL"):
        url, found = os.environ["TABLED_URL"], "$TABLED_URL"
    if not url:
        from daemon.cli_address import find_url  # noqa: PLC0415 - only without --url
        from daemon.config import ConfigError  # noqa: PLC0415

        try:
            url, found = find_url(args.config, args.journal)
        except ConfigError as exc:
            raise ClientError(-2, str(exc)) from None
    token, source = None, None
    if args.token_file is not None:
        source = f"--token-file {args.token_file}"
        try:
            token = args.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ClientError(-2, f"--token-file {args.token_file}: {exc.strerror}") from None
    else:
        source = "$TABLED_TOKEN"
        token = os.environ.get("TABLED_TOKEN", "").strip() or None
    return Api(url, token, source, found)


def _run(work: Callable[[], int]) -> int:
    try:
        return work()
    except ClientError as exc:
        print(f"tabled: {safe_lines(exc.message)}", file=sys.stderr)
        return EXIT_INPUT if exc.status < 0 else _exit_code(exc.status)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 0


def _print_json(value: Any) -> None:
    print(safe_json(json.dumps(value, ensure_ascii=False, sort_keys=True)))


# --- tabled status ---


def _clock(seconds: float) -> str:
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _cards(cards: Sequence[Any]) -> str:
    """A seat's cards as served: the open ones by name, the others counted (face down)."""
    shown = [str(c) for c in cards if c != HIDDEN]
    down = len(cards) - len(shown)
    return " ".join(shown + ([f"({down} face down)"] if down else []))


def format_status(state: dict[str, Any], legal: list[str], who: dict[str, Any]) -> str:
    lines = [
        f"{state.get('table', '?')} {state.get('game', '?')}  round {state.get('round') or '-'}"
        f"  phase {state.get('phase', '?')}"
        + (f"  next: {state['next']}" if state.get("next") else "")
    ]
    hold = state.get("hold")
    if hold:
        device = f"{hold['device']}: " if hold.get("device") else ""
        lines.append(
            f"{str(hold.get('kind', 'hold')).upper()}: {device}{hold.get('reason', '')}"
            "  (a supervisor clears it)"
        )
    pending = state.get("override")
    if isinstance(pending, dict):
        label = (pending.get("label") or {}).get("en") or pending.get("kind", "a proposal")
        lines.append(
            f"AWAITING A SUPERVISOR: {label}, proposed by {pending.get('proposed_by', '?')}"
            "  (approve_override or reject_override, with --reason)"
        )
    if state.get("dice"):
        dice = " ".join(str(d) for d in state["dice"])
        lines.append(f"dice: {dice} (total {state.get('dice_total', sum(state['dice']))})")
    timer = state.get("timer")
    if timer:
        left = "bell rang" if timer.get("rang") else f"{_clock(timer.get('remaining', 0))} left"
        lines.append(f"timer: {left}")
    for seat in state.get("seats") or []:
        bets = ", ".join(f"{b.get('bettor')} {b.get('amount')}" for b in seat.get("bets") or [])
        text = str(seat.get("name") or f"seat {seat.get('seat')}")
        if seat.get("holder"):
            text += f"  holder {seat['holder']}"
        if bets:
            text += f"  bets {bets}"
        if seat.get("cards"):
            text += f"  cards {_cards(seat['cards'])}"
        if seat.get("settlement"):
            s = seat["settlement"]
            text += f"  {s.get('result')} {s.get('amount', '')}"
        if seat.get("late"):
            text += "  LATE"
        lines.append(text)
    for v in (state.get("violations") or [])[-3:]:
        lines.append(
            f"violation #{v.get('seq')}: {v.get('action')} in {v.get('phase')}"
            f" ({v.get('article')}) by {v.get('actor')}"
        )
    lines.append(
        f"legal now for {who.get('actor')} ({who.get('role')}): {', '.join(legal) or 'nothing'}"
    )
    return "\n".join(lines)


def status_text(api: Api) -> str:
    """What `tabled status` prints: the table now, the legal actions, the devices, the feed."""
    state = api.get("/api/state")
    devices = api.get("/api/devices")["devices"]
    feed = api.get("/api/health").get("feed")  # the journal shipper's state, if it ships
    lines = [format_status(state["state"], state["legal"], state)]
    for d in devices:
        fault = d.get("fault")
        if isinstance(fault, dict):  # the procedure's record: {"fault", "kind", "healthy"}
            healthy = " (healthy again; a supervisor clears)" if fault.get("healthy") else ""
            fault = f"{fault.get('fault')}{healthy}"
        fault = f"  FAULT {fault}" if fault else ""
        approved = "" if d.get("approved", True) else "  NOT APPROVED"
        lines.append(f"device {d.get('name')}: link {d.get('link', '?')}{approved}{fault}")
    if feed:
        from daemon.shipper.runtime import summary  # noqa: PLC0415

        lines.append(summary(feed))
    return "\n".join(lines)


def status_main(argv: Sequence[str] | None = None) -> int:
    """`tabled status`: the table now, the actions legal for you, the devices; `--watch`: the
    same as a live view, redrawn every `--interval` seconds until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="tabled status", description=status_main.__doc__)
    _common(parser)
    parser.add_argument("--watch", "-w", action="store_true", help="a live view until Ctrl-C")
    parser.add_argument(
        "--interval", type=float, default=1.0, metavar="SECONDS", help="--watch: redraw every"
    )
    args = parser.parse_args(argv)
    if not 0.1 <= args.interval <= 3600:
        parser.error("--interval takes seconds from 0.1 to 3600")

    def work() -> int:
        api = _api(args)
        if args.watch:
            if args.json:
                parser.error("--watch shows text; --json prints one reading")
            from daemon.cli_watch import Refused, watch  # noqa: PLC0415 - only for --watch

            def read() -> str:
                try:
                    return status_text(api)
                except ClientError as exc:
                    if exc.status in (401, 403):  # the token, not the table: retrying cannot help
                        raise Refused(exc.message) from None
                    raise

            try:
                return watch(read, args.interval)
            except Refused as exc:
                raise ClientError(401, str(exc)) from None
        if args.json:
            state = api.get("/api/state")
            devices = api.get("/api/devices")["devices"]
            feed = api.get("/api/health").get("feed")
            _print_json({**state, "devices": devices, "feed": feed})
            return 0
        print(safe_lines(status_text(api)))
        return 0

    return _run(work)


# --- tabled act ---


def parse_assignment(text: str) -> tuple[str, Any]:
    """`key=value`: the value is JSON when it parses (2, true, [1,2], "2"), else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ClientError(-2, f"{text!r}: expected key=value")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def actions_help() -> str:
    """Each game's operator actions with their parameters, from the games' declarations (the
    same the table checks a request with); `tabled status` says which are legal now."""
    from daemon.procedures.diagram import describe  # noqa: PLC0415 - only for --help
    from daemon.procedures.games import GAMES  # noqa: PLC0415 - only for --help

    lines = []
    for game in GAMES.values():
        lines.append(f"{game.name} ({game.regulation}):")
        for name, action in game.actions.items():
            if not action.operator or action.params is None:
                continue
            params = " ".join(f"{k}=<{describe(p)}>" for k, p in action.params.items())
            reason = " --reason TEXT" if action.requires_reason else ""
            lines.append(f"  {name} {params}{reason}".rstrip() + f"  ({action.label_en})")
    return "\n".join(lines)


def act_main(argv: Sequence[str] | None = None) -> int:
    """`tabled act ACTION [key=value ...]`: ask the table to take a step, as you."""
    words = list(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(words) and words and not words[0].startswith("-"):
        from daemon.cli_act import action_help  # noqa: PLC0415 - only for ACTION --help

        described = action_help(words[0])
        if described is not None:
            print(described)
            return 0
    parser = argparse.ArgumentParser(
        prog="tabled act",
        description=act_main.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="e.g. tabled act place_bet player=P1 seat=2 units=1 seated=true;\n"
        "     tabled act clear_hold --reason 'lid closed, count 52'\n"
        + (
            "\nactions (`<kind?>` optional, `×N` a list of N):\n" + actions_help()
            if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv)
            else ""
        ),
    )
    parser.add_argument("action")
    parser.add_argument("params", nargs="*", metavar="key=value")
    parser.add_argument("--reason", help="required for supervisor actions; journaled")
    parser.add_argument("--request-id", help="repeat safely: the table acts once per id")
    _common(parser)
    args = parser.parse_args(argv)

    def work() -> int:
        payload = dict(parse_assignment(p) for p in args.params)
        body: dict[str, Any] = {"payload": payload}
        if args.reason is not None:
            body["reason"] = args.reason
        if args.request_id is not None:
            body["request_id"] = args.request_id
        api = _api(args)
        status, content = api.request(
            "POST", "/api/actions/" + urllib.parse.quote(args.action, safe=""), body
        )
        if args.json:
            _print_json({"status": status, **content})
        elif status == 200:
            print(
                safe(
                    f"accepted: {args.action} by {content.get('actor')}"
                    f" (seq {content.get('seq')}, now {content.get('phase')})"
                )
            )
        elif status == 409:
            print(f"refused: {safe(content.get('message'))}", file=sys.stderr)
        else:
            print(f"tabled: {safe_lines(api.refusal(status, content))}", file=sys.stderr)
        return 0 if status == 200 else _exit_code(status)

    return _run(work)


# --- tabled journal ---


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


def journal_main(argv: Sequence[str] | None = None) -> int:
    """`tabled journal [--follow]`: journal events by round, event, time; --follow streams new
    ones as they become durable. From the running daemon's API, or with `--dir DIR` (or when
    no daemon serves the config's journal folder) from the folder's files, no daemon needed."""
    parser = argparse.ArgumentParser(prog="tabled journal", description=journal_main.__doc__)
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
    _common(parser)
    args = parser.parse_args(argv)

    def show(event: dict[str, Any]) -> None:
        if args.json:
            _print_json(event)
        else:
            print(format_event(event))
        sys.stdout.flush()

    def work() -> int:
        folder = args.dir if args.dir is not None else _idle_folder(args)
        if folder is not None:
            return _journal_folder(folder, args, show)
        api = _api(args)
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

    return _run(work)


def _idle_folder(args: argparse.Namespace) -> Path | None:
    """The journal folder to read from its files: none was named (`--url`, `$TABLED_URL`) and
    no live daemon published its address in the config's (or `--journal`) folder."""
    if args.url or os.environ.get("TABLED_URL"):
        return None
    from daemon.cli_address import running_url  # noqa: PLC0415 - only without --url
    from daemon.config import ConfigError, load_config  # noqa: PLC0415

    try:
        folder: Path = args.journal or load_config(args.config).journal.dir
    except ConfigError as exc:
        raise ClientError(-2, str(exc)) from None
    return folder if running_url(folder) is None else None


def _journal_folder(folder: Path, args: argparse.Namespace, show: Callable[..., None]) -> int:
    """`tabled journal` from a folder's files (daemon.cli_journal)."""
    from daemon.cli_journal import FolderError, follow_folder, last_seq, read_folder  # noqa: PLC0415

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
    from websockets.exceptions import ConnectionClosed  # noqa: PLC0415 - only for --follow
    from websockets.sync.client import connect  # noqa: PLC0415 - only for --follow

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


COMMANDS: dict[str, Callable[[Sequence[str] | None], int]] = {
    "status": status_main,
    "act": act_main,
    "journal": journal_main,
}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m daemon.client status|act|journal ...` (what `tabled status` etc. run)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(f"usage: tabled {{{'|'.join(COMMANDS)}}} [ARGS...]", file=sys.stderr)
        return EXIT_INPUT
    return COMMANDS[args[0]](args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
