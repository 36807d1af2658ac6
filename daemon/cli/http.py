"""`tabled run --http HOST:PORT`, checked before the table starts or journals anything: the
address parses, resolves, is this PC's and free, the API's doors allow it (TLS beyond loopback, a
private tokens file). A tokens file that does not exist yet is not a refusal: the table serves,
and the warning says which command makes the file."""

from __future__ import annotations

import errno
import socket

from daemon.api.doors import serving_problem
from daemon.api.tokens import missing_tokens_notice
from daemon.config import ApiConfig, parse_listen


def http_problem(api: ApiConfig, listen: str) -> str | None:
    """Why the API cannot serve at `listen`, in one line; None when it can (now)."""
    problem = serving_problem(api, listen)
    if problem:
        return problem
    host, port = parse_listen(listen)
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        return f"{host!r} does not resolve to an address ({exc.strerror})"
    # A trial bind, as the server binds (SO_REUSEADDR): a port another program listens on, an
    # address that is not this PC's, a privileged port are refused here, not after the start.
    with socket.socket(info[0], socket.SOCK_STREAM) as trial:
        trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            trial.bind(info[4])
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is taken by another program (another tabled?); "
                    f"`ss -ltnp 'sport = :{port}'` names it, or choose another port"
                )
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"{host} is not an address of this PC"
            if exc.errno == errno.EACCES:
                return f"port {port} is below 1024 and needs privileges: choose one above 1023"
            return f"cannot listen at {listen}: {exc.strerror}"
    return None


def http_warning(api: ApiConfig) -> str | None:
    """What the person starting the API should know but that does not stop it."""
    return missing_tokens_notice(api.tokens_file)
