from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon import sdnotify


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, dict[str, str]]]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify"
    sock.bind(str(path))
    sock.settimeout(5)
    try:
        yield sock, {"NOTIFY_SOCKET": str(path)}
    finally:
        sock.close()


def test_ready_watchdog_and_stopping_reach_the_socket(
    notify_socket: tuple[socket.socket, dict[str, str]],
) -> None:
    sock, env = notify_socket
    assert sdnotify.ready("4 devices up", environ=env)
    assert sock.recv(4096).decode() == f"READY=1\nMAINPID={os.getpid()}\nSTATUS=4 devices up"
    assert sdnotify.watchdog(environ=env)
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert sdnotify.stopping(environ=env)
    assert sock.recv(4096) == b"STOPPING=1"
    assert sdnotify.watchdog_trigger("journal not writable", environ=env)
    assert sock.recv(4096) == b"WATCHDOG=trigger\nSTATUS=journal not writable"


def test_the_abstract_namespace_is_supported() -> None:
    name = f"tabled-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert sdnotify.status("replaying journal", environ={"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(4096) == b"STATUS=replaying journal"


def test_outside_systemd_nothing_is_sent_and_nothing_fails(tmp_path: Path) -> None:
    assert sdnotify.ready(environ={}) is False
    assert sdnotify.watchdog(environ={"NOTIFY_SOCKET": str(tmp_path / "gone")}) is False
    assert sdnotify.watchdog(environ={"NOTIFY_SOCKET": "vsock:2:1"}) is False


def test_the_watchdog_period_is_half_of_what_systemd_asks() -> None:
    assert sdnotify.watchdog_period({"WATCHDOG_USEC": "10000000"}) == 5.0
    assert sdnotify.watchdog_period({}) is None
    assert sdnotify.watchdog_period({"WATCHDOG_USEC": "0"}) is None
    mine = {"WATCHDOG_USEC": "4000000", "WATCHDOG_PID": str(os.getpid())}
    assert sdnotify.watchdog_period(mine) == 2.0
    assert sdnotify.watchdog_period({**mine, "WATCHDOG_PID": "1"}) is None


def test_the_watchdog_is_fed_only_while_the_daemon_is_healthy(
    notify_socket: tuple[socket.socket, dict[str, str]],
) -> None:
    sock, env = notify_socket
    env = {**env, "WATCHDOG_USEC": "2000000"}
    health = iter([True, False, True])
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 3:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(sdnotify.feed_watchdog(lambda: next(health), environ=env, sleep=fake_sleep))

    assert slept == [1.0, 1.0, 1.0]
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert sock.recv(4096) == b"WATCHDOG=1"
    sock.setblocking(False)
    with pytest.raises(BlockingIOError):
        sock.recv(4096)
