"""The API's doors: which names it answers to, which pages may open its push feed, and whether
it may listen beyond the PC in plain HTTP.

- **Host names.** A page on any site can make the dealer's browser resolve its own name to
  127.0.0.1 (DNS rebinding) and then read the API as if it were the console. The browser still
  sends the attacker's name in `Host`, so every HTTP request and WebSocket is refused unless its
  Host is one this table answers to: the loopback names (`localhost`, `127.0.0.1`, `::1`), the
  address it listens on (`[api] listen` or `--http`), the address the connection arrived on
  (an IP literal: the PC's own), and the names in `[api] allowed_hosts`. The port is not
  compared (a proxy or port forward may change it).
- **Origins.** A browser says which page opened a WebSocket (`Origin`). Only the console's own
  page may open `/api/events`: an origin whose host is one of the names above and whose port is
  the one the daemon serves on, or one listed in `[api] allowed_origins`. Clients that are not
  browsers send no Origin; their token decides.
- **TLS.** Beyond loopback, tokens would cross the pit network in clear: `tabled run` refuses to
  listen there unless `[api] tls_cert` and `tls_key` are set (uvicorn serves TLS itself) or
  `[api] plain_http_behind_proxy = true` says a TLS-terminating proxy on the PC is in front;
  that opt-out is logged and journaled at every start.

Everything refused here is counted in `tabled_api_refused_total{reason}` and journaled in the
rate-limited `api.input_refused` summaries (`daemon.api.gate`), as are bodies that are not JSON,
unknown fields and unknown paths, whose 4xx answers pass through here on their way out.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from daemon.api.gate import Gate, Journal, RefusalLog
from daemon.api.ratelimit import AuthFailureLimiter
from daemon.api.tokens import TokenStore, check_tokens_file
from daemon.config import parse_listen

if TYPE_CHECKING:
    from fastapi import FastAPI

    from daemon.config import ApiConfig

log = structlog.get_logger("tabled.api")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("", "0.0.0.0", "::")  # noqa: S104 - names of the wildcard address, not a binding
# Answers refused for their form, counted and summarised on their way out.
INPUT_STATUSES = {400: "malformed", 404: "not_found", 405: "method_not_allowed",
                  413: "body_too_large", 422: "invalid_input"}  # fmt: skip
# An answer whose refusal the table journaled as a violation (daemon.api.routes.act).
JOURNALED = b"x-tabled-journaled"
WS_INVALID_INPUT = 4400
WS_FORBIDDEN = 4403


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a Host header (`Table07.Casino:8700`, `[::1]:8700`), lower case, no port."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    name, sep, port = header.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        header = name
    return header.rstrip(".")


def _origin_key(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


@dataclass
class DoorsPolicy:
    """What the doors let in: names, origins, and how the socket is served."""

    hosts: set[str] = field(default_factory=lambda: set(LOOPBACK_NAMES))
    origins: frozenset[str] = frozenset()
    tls_cert: Path | None = None
    tls_key: Path | None = None
    plain_http_behind_proxy: bool = False
    journal: Journal | None = None

    @classmethod
    def from_config(cls, api: ApiConfig, origins: Iterable[str] | None = None) -> DoorsPolicy:
        policy = cls(
            origins=frozenset(
                _origin_key(o) for o in (api.allowed_origins if origins is None else origins)
            ),
            tls_cert=api.tls_cert,
            tls_key=api.tls_key,
            plain_http_behind_proxy=api.plain_http_behind_proxy,
        )
        policy.hosts.update(host_name(h) for h in api.allowed_hosts)
        # A listen address that does not parse never serves (`serving_problem` says why).
        with contextlib.suppress(ValueError):
            policy.serving_at(parse_listen(api.listen)[0])
        return policy

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    def serving_at(self, host: str) -> None:
        """Answer to the address the API listens on (unless it is the wildcard)."""
        if host not in WILDCARDS:
            self.hosts.add(host_name(host))

    def _names(self, server: Any) -> set[str]:
        if server and server[0]:
            return self.hosts | {host_name(str(server[0]))}
        return self.hosts

    def host_allowed(self, host: str | None, server: Any) -> bool:
        return host is not None and host_name(host) in self._names(server)

    def origin_allowed(self, origin: str | None, server: Any) -> bool:
        if origin is None:
            return True
        key = _origin_key(origin)
        if key in self.origins:
            return True
        try:
            parts = urlsplit(key)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        return (
            parts.scheme in ("http", "https")
            and server is not None
            and port == server[1]
            and (parts.hostname or "") in self._names(server)
        )


def tls_problem(cert: Path | None, key: Path | None) -> str | None:
    """Why the certificate and key cannot serve TLS, in words; None when they can."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        return "set both [api] tls_cert and [api] tls_key (one without the other serves nothing)"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except FileNotFoundError as exc:
        # ssl does not always say which file (exc.filename is None): name the missing one.
        missing = exc.filename or next((p for p in (cert, key) if not p.exists()), cert)
        return f"[api] tls_cert/tls_key: {missing}: no such file"
    except PermissionError as exc:
        return f"[api] tls_cert/tls_key: {exc.filename or cert}: not readable by this user"
    except (ssl.SSLError, OSError) as exc:
        return (
            f"[api] tls_cert {cert} and tls_key {key} are not a PEM certificate and its key: {exc}"
        )
    return None


def serving_problem(api: ApiConfig, listen: str) -> str | None:
    """Why `tabled run --http LISTEN` must not start with this `[api]`, in one line; None when
    it may. Checked before the table starts, so a refusal leaves no trace in the journal."""
    try:
        host, _port = parse_listen(listen)
    except ValueError as exc:
        return str(exc)
    problem = tls_problem(api.tls_cert, api.tls_key) or check_tokens_file(api.tokens_file)
    if problem:
        return problem
    if is_loopback(host) or api.tls_cert is not None or api.plain_http_behind_proxy:
        return None
    return (
        f"{listen} is beyond loopback, where tokens would cross the network in clear: set "
        "[api] tls_cert and tls_key, or [api] plain_http_behind_proxy = true when a "
        "TLS-terminating proxy on this PC is the only way in (docs/operations.md)"
    )


class Doors:
    """ASGI middleware: the Host allow-list for HTTP and WebSocket, the push feed's Origin
    check, and the count of requests refused for their form."""

    def __init__(self, app: ASGIApp, policy: DoorsPolicy, gate: Gate) -> None:
        self.app, self.policy, self.gate = app, policy, gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope["client"][0] if scope.get("client") else "unknown"
        path = str(scope.get("path", ""))
        server = scope.get("server")
        host = headers.get("host")
        if not self.policy.host_allowed(host, server):
            shown = (host or "")[:100]
            message = (
                f"this table does not answer to the name {shown!r}"
                if host
                else "no Host header: say which name this table was reached at"
            ) + "; IT: add the name to [api] allowed_hosts if it is really this table's"
            await self._refuse(
                scope, receive, send, "forbidden_host", 421, message, client, f"Host {shown}"
            )
            return
        if kind == "websocket":
            origin = headers.get("origin")
            if not self.policy.origin_allowed(origin, server):
                shown = (origin or "")[:200]
                message = (
                    f"origin {shown!r} may not open this feed; serve the console from this "
                    "daemon or list the origin in [api] allowed_origins"
                )
                await self._refuse(
                    scope, receive, send, "forbidden_origin", 403, message, client, path
                )
                return
        await self.app(scope, receive, self._watching(send, kind, client, path))

    def _watching(self, send: Send, kind: str, client: str, path: str) -> Send:
        async def watched(message: Message) -> None:
            reason = None
            if kind == "http" and message["type"] == "http.response.start":
                reason = INPUT_STATUSES.get(message["status"])
                if any(k.lower() == JOURNALED for k, _ in message.get("headers", ())):
                    reason = None  # a violation the table journaled itself, with its article
            elif message["type"] == "websocket.close" and message.get("code") == WS_INVALID_INPUT:
                reason = "invalid_hello"
            if reason is not None:
                self.gate.refused[reason] += 1
                await self.gate.refusals.input(reason, client, path)
            await send(message)

        return watched

    async def _refuse(  # noqa: PLR0917 - one refusal, said the same way for both kinds
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        error: str,
        status: int,
        message: str,
        client: str,
        detail: str,
    ) -> None:
        self.gate.refused[error] += 1
        log.warning(f"api.{error}", client=client, detail=detail)
        await self.gate.refusals.input(error, client, detail)
        body = {"error": error, "message": message}
        if scope["type"] == "http":
            raw = json.dumps(body).encode("utf-8")
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(raw)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": raw})
            return
        # A WebSocket: accepted only to say why, in the feed's own error form, then closed.
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": json.dumps({"type": "error", **body})})
        await send({"type": "websocket.close", "code": WS_FORBIDDEN})


def install(
    app: FastAPI,
    api: ApiConfig,
    journal: Journal,
    *,
    clock: Callable[[], float] = time.monotonic,
    allowed_origins: Iterable[str] | None = None,
    auth_max_failures: int = 10,
    auth_global_max_failures: int = 100,
    auth_window: float = 60.0,
    auth_lockout: float = 60.0,
    summary_interval: float = 60.0,
    tokens: TokenStore | None = None,
) -> Gate:
    """Put the doors on `app` (outermost, before anything reads a body) and return its gate.
    `journal` records the refusal summaries (the table's `journal_security`); `tokens`, the
    people as the table's process sent them (else the tokens file is read)."""
    gate = Gate(
        tokens if tokens is not None else TokenStore(api.tokens_file),
        AuthFailureLimiter(
            clock,
            max_failures=auth_max_failures,
            global_max_failures=auth_global_max_failures,
            window=auth_window,
            lockout=auth_lockout,
        ),
        RefusalLog(journal, clock, interval=summary_interval),
    )
    policy = DoorsPolicy.from_config(api, allowed_origins)
    policy.journal = journal
    app.add_middleware(Doors, policy=policy, gate=gate)
    app.state.gate = gate
    app.state.doors = policy
    return gate
