"""Serving the operator API inside the daemon's own event loop.

`tabled run` owns the process (its signals, its shutdown order, the systemd notifications), so
uvicorn here installs no signal handlers: the daemon calls `stop()` when it is time.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Iterator

import structlog
import uvicorn
from fastapi import FastAPI

from daemon.config import parse_listen

log = structlog.get_logger("tabled.api")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ApiServer:
    """The API on one listening socket, bound when `bind()` (or `serve()`) is called."""

    def __init__(self, app: FastAPI, listen: str, *, log_level: str = "warning") -> None:
        self.host, port = parse_listen(listen)
        self._requested_port = port
        self._server = _QuietServer(
            uvicorn.Config(
                app,
                log_level=log_level,
                access_log=False,
                lifespan="off",
                ws_max_size=64 * 1024,
                server_header=False,
            )
        )
        self._socket: socket.socket | None = None

    def bind(self) -> tuple[str, int]:
        """Open the listening socket now (so start-up fails early on a taken port)."""
        return self._bound().getsockname()[:2]  # type: ignore[no-any-return]

    def _bound(self) -> socket.socket:
        if self._socket is None:
            info = socket.getaddrinfo(
                self.host, self._requested_port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )[0]
            sock = socket.socket(info[0], socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(info[4])
            sock.listen(128)
            sock.set_inheritable(True)
            self._socket = sock
            if not is_loopback(self.host):
                log.warning("api.listening_beyond_localhost", host=self.host)
        return self._socket

    @property
    def started(self) -> bool:
        return bool(self._server.started)

    async def serve(self) -> None:
        """Serve until `stop()`; returns once open connections are closed."""
        sock = self._bound()
        host, port = sock.getsockname()[:2]
        log.info("api.listening", host=host, port=port)
        await self._server.serve(sockets=[sock])

    def stop(self) -> None:
        self._server.should_exit = True
