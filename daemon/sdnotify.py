"""systemd's notify protocol (sd_notify(3)) without libsystemd: one datagram per message to the
AF_UNIX socket named by `$NOTIFY_SOCKET` (a leading "@" is the abstract namespace).

The unit runs `Type=notify` with `WatchdogSec=`: the daemon says READY=1 once the journal is
open, the devices are identified and the API listens; it sends WATCHDOG=1 at half the interval
systemd asks for, and only while the table's event loop is responsive and the journal writable
(a hung daemon must be restarted, not kept alive by a thread that pings regardless); and
STOPPING=1 when it starts shutting down. Outside systemd every call is a no-op returning False.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable, Mapping

import structlog

log = structlog.get_logger("tabled.sdnotify")


def _address(environ: Mapping[str, str]) -> str | None:
    path = environ.get("NOTIFY_SOCKET")
    if not path:
        return None
    if path.startswith("@"):
        return "\0" + path[1:]
    if path.startswith("/"):
        return path
    return None  # vsock and other transports are not used on a table PC


def notify(message: str, environ: Mapping[str, str] | None = None) -> bool:
    """Send one notification (e.g. ``"READY=1\\nSTATUS=serving"``); True if it was sent."""
    address = _address(os.environ if environ is None else environ)
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message.encode("utf-8"))
    except OSError as exc:
        log.warning("sdnotify.send_failed", message=message.split("\n", 1)[0], error=str(exc))
        return False
    return True


def _with_status(first: str, status: str | None) -> str:
    return first if status is None else f"{first}\nSTATUS={status}"


def ready(status: str | None = None, environ: Mapping[str, str] | None = None) -> bool:
    return notify(_with_status(f"READY=1\nMAINPID={os.getpid()}", status), environ)


def stopping(status: str | None = None, environ: Mapping[str, str] | None = None) -> bool:
    return notify(_with_status("STOPPING=1", status), environ)


def status(text: str, environ: Mapping[str, str] | None = None) -> bool:
    return notify(f"STATUS={text}", environ)


def watchdog(environ: Mapping[str, str] | None = None) -> bool:
    return notify("WATCHDOG=1", environ)


def watchdog_trigger(reason: str, environ: Mapping[str, str] | None = None) -> bool:
    """Ask systemd to act as if the watchdog expired (restart per the unit's policy) now."""
    return notify(f"WATCHDOG=trigger\nSTATUS={reason}", environ)


def watchdog_period(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds between WATCHDOG=1 pings (half of `$WATCHDOG_USEC`); None when not asked for, or
    when `$WATCHDOG_PID` names another process."""
    env = os.environ if environ is None else environ
    usec = env.get("WATCHDOG_USEC", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if pid and (not pid.isdigit() or int(pid) != os.getpid()):
        return None
    return int(usec) / 2_000_000


async def feed_watchdog(
    healthy: Callable[[], bool],
    *,
    period: float | None = None,
    environ: Mapping[str, str] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Ping the watchdog while `healthy()` says so; runs until cancelled.

    Run it as a task on the table's own event loop: if the loop stalls, the pings stop and
    systemd restarts the daemon, which comes back in HOLD from its journal.
    """
    every = period if period is not None else watchdog_period(environ)
    if every is None:
        return
    while True:
        if healthy():
            watchdog(environ)
        else:
            log.warning("sdnotify.watchdog_withheld")
        await sleep(every)
