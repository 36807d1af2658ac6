"""Serving the operator API inside the daemon's own event loop.

`tabled run` owns the process (its signals, its shutdown order, the systemd notifications), so
uvicorn here installs no signal handlers: the daemon calls `stop()` when it is time.

The socket is served as the app's doors say (`daemon.api.doors`): TLS with `[api] tls_cert` and
`tls_key`; beyond loopback only with TLS or the named opt-out `plain_http_behind_proxy`, which is
logged and journaled at every start.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import structlog
import uvicorn
from fastapi import FastAPI

from daemon.api.doors import DoorsPolicy, is_loopback, tls_problem
from daemon.api.gate import Gate
from daemon.config import parse_listen

__all__ = ["ApiServer", "is_loopback", "parse_listen"]

log = structlog.get_logger("tabled.api")


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ApiServer:
    """The API on one listening socket, bound when `bind()` (or `serve()`) is called."""

    def __init__(
        self,
        app: FastAPI,
        listen: str,
        *,
        log_level: str = "warning",
        sock: socket.socket | None = None,
    ) -> None:
        """`sock`: a socket already listening (the API process is handed the one its table's
        process bound, `daemon.api.process`)."""
        self.host, port = parse_listen(listen)
        self._requested_port = port
        doors: DoorsPolicy = getattr(app.state, "doors", None) or DoorsPolicy()
        self._doors, self._gate = doors, getattr(app.state, "gate", None)
        problem = tls_problem(doors.tls_cert, doors.tls_key)
        if problem:
            raise ValueError(problem)
        if not (is_loopback(self.host) or doors.tls or doors.plain_http_behind_proxy):
            raise ValueError(
                f"{listen} is beyond loopback: serve TLS ([api] tls_cert, tls_key) or set "
                "[api] plain_http_behind_proxy = true behind a TLS-terminating proxy"
            )
        doors.serving_at(self.host)
        self._server = _QuietServer(
            uvicorn.Config(
                app,
                log_level=log_level,
                # uvicorn's own logging config would take its loggers off the operational log's
                # JSON lines (daemon.logging), for the whole process: leave logging to us.
                log_config=None,
                access_log=False,
                lifespan="off",
                ws_max_size=64 * 1024,
                # No per-message compression on the push feed: each console's copy of a shared
                # message would be compressed for it alone (half the API thread's time with 50
                # consoles, bench_api_load); the consoles are on the table's network.
                ws_per_message_deflate=False,
                server_header=False,
                ssl_certfile=doors.tls_cert,
                ssl_keyfile=doors.tls_key,
            )
        )
        self._socket: socket.socket | None = sock

    def bind(self) -> tuple[str, int]:
        """Open the listening socket now (so start-up fails early on a taken port)."""
        return self._bound().getsockname()[:2]  # type: ignore[no-any-return]

    def listening(self) -> socket.socket:
        """The listening socket (bound now if it was not)."""
        return self._bound()

    def _bound(self) -> socket.socket:
        if self._socket is None:
            info = socket.getaddrinfo(
                self.host, self._requested_port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )[0]
            sock = socket.socket(info[0], socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # Accepted connections inherit it: an answer's headers and body go out as they are
            # written, not the body held back until the client's delayed ACK (40 ms a read).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind(info[4])
            sock.listen(128)
            sock.set_inheritable(True)
            self._socket = sock
        return self._socket

    @property
    def scheme(self) -> str:
        return "https" if self._doors.tls else "http"

    def url(self) -> str:
        """Where the API is served, e.g. `https://10.0.7.21:8700` (binds if not yet bound)."""
        host, port = self.bind()
        return f"{self.scheme}://{'[' + host + ']' if ':' in host else host}:{port}"

    @property
    def started(self) -> bool:
        return bool(self._server.started)

    async def serve(self) -> None:
        """Serve until `stop()`; returns once open connections are closed."""
        sock = self._bound()
        host, port = sock.getsockname()[:2]
        names = sorted(self._doors.hosts)
        log.info("api.listening", host=host, port=port, tls=self._doors.tls, host_names=names)
        if self._doors.plain_http_behind_proxy and not self._doors.tls:
            # The opt-out, said loudly at every start (wherever it listens: the key says a TLS
            # proxy is the way in): in the operational log and in the table's journal.
            fact = {"host": host, "port": port, "host_names": names}
            log.warning("api.plain_http_behind_proxy", **fact)
            if self._doors.journal is not None:
                await self._doors.journal("api.plain_http_behind_proxy", fact)
        try:
            await self._server.serve(sockets=[sock])
        finally:
            if isinstance(self._gate, Gate):
                # What was refused since the last summary goes on record before the journal
                # closes.
                with contextlib.suppress(Exception):
                    await self._gate.refusals.close()

    def stop(self) -> None:
        self._server.should_exit = True
