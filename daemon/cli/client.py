"""What `tabled status`, `act` and `journal` share: the operator API from a shell, for IT,
surveillance and the pit (daemon/cli/status.py, act.py, journal.py).

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
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.cli.address import find_url
from daemon.cli.errors import cli_message
from daemon.config import ConfigError
from daemon.safetext import safe_json, safe_lines

EXIT_REFUSED, EXIT_INPUT, EXIT_AUTH, EXIT_UNREACHABLE = 1, 2, 3, 4
TIMEOUT = 10.0


class ClientError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def exit_code(status: int) -> int:
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
        """A refused request, in the command line's terms (daemon.cli.errors)."""
        return cli_message(status, content, self.token_source if self.token else None)

    def ws_url(self) -> str:
        parts = urllib.parse.urlsplit(self.url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        return urllib.parse.urlunsplit((scheme, parts.netloc, parts.path + "/api/events", "", ""))


def common_options(parser: argparse.ArgumentParser) -> None:
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


def api_from(args: argparse.Namespace) -> Api:
    url, found = args.url, "--url"
    if not url and os.environ.get("TABLED_URL"):
        url, found = os.environ["TABLED_URL"], "$TABLED_URL"
    if not url:
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


def run(work: Callable[[], int]) -> int:
    try:
        return work()
    except ClientError as exc:
        print(f"tabled: {safe_lines(exc.message)}", file=sys.stderr)
        return EXIT_INPUT if exc.status < 0 else exit_code(exc.status)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 0


def print_json(value: Any) -> None:
    print(safe_json(json.dumps(value, ensure_ascii=False, sort_keys=True)))
