"""The drivers over each kind of pyserial port: a pseudo-terminal and a TCP socket (watched
file descriptors) and `spy://` (reader and writer threads), each with a simulator at the far
end, on asyncio's loop and on uvloop's; a port that goes away; and a port whose write blocks."""

from __future__ import annotations

import asyncio
import fcntl
import os
import socket
import struct
import threading
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drivers.clock import MonotonicClock
from drivers.link import LinkTiming
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from drivers.transport import FdTransport, ThreadTransport, open_transport
from simulators.pty_host import PtyHost
from simulators.shuffler import ShufflerModel
from simulators.spec import SimSpec
from tests.drivers.conftest import LoopRun

TIMING = LinkTiming(poll_interval=3600.0)
TIOCVHANGUP = 0x5437  # Linux's ioctl (termios does not name it): hang up a tty


async def shuffle_once(driver: ShufflerDriver) -> None:
    assert await driver.start()
    await driver.shuffle()
    while not isinstance(await asyncio.wait_for(driver.next_event(), 10), ShuffleCompleted):
        pass


@pytest.mark.parametrize("spy", [False, True], ids=["pty", "spy-pty"])
def test_a_pseudo_terminal_directly_and_through_spy(
    table: Any, tmp_path: Path, spy: bool, on_loop: LoopRun
) -> None:
    log = tmp_path / "spy.txt"

    async def body() -> None:
        host = PtyHost(asyncio.get_running_loop())
        device = host.add(SimSpec("shuffler", seed=1), table.world)
        url = f"spy://{device.port}?file={log}" if spy else device.port
        driver = ShufflerDriver(url, timing=TIMING)
        try:
            await shuffle_once(driver)
            expected = ThreadTransport if spy else FdTransport
            assert isinstance(driver._transport, expected)
        finally:
            await driver.close()
            host.close()

    on_loop(body())
    if spy:
        assert "TX   0000  02 01 01 00 11 43 94 03" in log.read_text()  # IDENTIFY, SEQ 1


def test_a_tcp_socket_like_a_serial_device_server(table: Any, on_loop: LoopRun) -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        models: list[ShufflerModel] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            model = ShufflerModel(
                world=table.world, scheduler=MonotonicClock(loop), output=writer.write, seed=2
            )
            models.append(model)
            while data := await reader.read(4096):
                model.receive_data(data)
            model.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        driver = ShufflerDriver(f"socket://127.0.0.1:{port}", timing=TIMING)
        try:
            await shuffle_once(driver)
            assert isinstance(driver._transport, FdTransport) and models
        finally:
            await driver.close()
            server.close()
            await server.wait_closed()

    on_loop(body())


async def reported_lost(url: str, cut: Callable[[], None]) -> str:
    """Open `url`, `cut()` the far end, and return the reason the transport reports."""
    loop = asyncio.get_running_loop()
    lost: asyncio.Future[str] = loop.create_future()
    transport = await open_transport(
        url, 115200, lambda _: None, lambda why: lost.done() or lost.set_result(why)
    )
    try:
        cut()
        return await asyncio.wait_for(lost, 10)
    finally:
        transport.close()


def test_a_pty_whose_far_end_closes_is_reported_lost(on_loop: LoopRun) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        reason = on_loop(reported_lost(os.ttyname(slave), lambda: os.close(master)))
    finally:
        os.close(slave)
    assert reason == "end of file"


def test_a_hung_up_tty_is_reported_lost(on_loop: LoopRun) -> None:
    """What a USB-serial adapter pulled out does to its tty: the kernel hangs it up, and epoll
    reports an error on it (uvloop, unlike asyncio, closes a watch that reports an error
    without calling its reader: the reader must run all the same)."""
    master, slave = os.openpty()
    tty.setraw(slave)

    def hang_up() -> None:
        try:
            fcntl.ioctl(slave, TIOCVHANGUP)
        except PermissionError:
            pytest.skip("hanging up a tty takes CAP_SYS_ADMIN")

    try:
        reason = on_loop(reported_lost(os.ttyname(slave), hang_up))
    finally:
        os.close(slave)
        os.close(master)
    assert reason == "end of file"


def test_a_device_server_that_resets_the_connection_is_reported_lost(on_loop: LoopRun) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def reset() -> None:
            connection, _ = server.accept()
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()  # RST, not FIN

        reason = on_loop(reported_lost(f"socket://127.0.0.1:{port}", reset))
    assert reason.startswith("read failed") and "reset" in reason.lower()


class StalledPort:
    """A pyserial port (say rfc2217:// to a device server whose TCP connection stalled) whose
    write blocks until released."""

    port = "stalled://"
    in_waiting = 0

    def __init__(self) -> None:
        self.release = threading.Event()
        self.written = bytearray()
        self.closed = threading.Event()

    def read(self, size: int) -> bytes:
        self.closed.wait(0.05)
        return b""

    def write(self, data: bytes) -> int:
        self.release.wait(5)
        self.written += data
        return len(data)

    def close(self) -> None:
        self.closed.set()


def test_a_blocking_port_write_never_blocks_the_event_loop() -> None:
    async def body() -> None:
        port = StalledPort()
        lost: list[str] = []
        transport = ThreadTransport(asyncio.get_running_loop(), port, lambda _: None, lost.append)
        transport.write(b"\x02\x01")
        transport.write(b"\x03")
        assert not port.release.is_set() and port.written == b""  # returned while it waits
        port.release.set()
        for _ in range(100):
            if port.written == b"\x02\x01\x03":
                break
            await asyncio.sleep(0.01)
        assert port.written == b"\x02\x01\x03" and lost == []
        transport.close()

    asyncio.run(body())
