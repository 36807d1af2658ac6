"""Byte transport between a driver and its port, on the asyncio event loop.

The port is always `serial.serial_for_url(url)`: a device path, `socket://`, `rfc2217://`,
`spy://` (hexdumps) or `sim://` (an in-process simulator, registered below). Which object
pyserial returns decides only how bytes reach the loop, never what the driver does with them:

- a POSIX serial port, a pseudo-terminal or a `socket://` port: its non-blocking file
  descriptor is watched with `loop.add_reader`, so there is no thread and no hop per byte;
- a port with `attach(receiver)` (the in-process `sim://` port): the port hands over each chunk
  of bytes it produces; delivery goes through `call_soon`, never re-entering the driver;
- anything else: one reader thread per port reads whatever is waiting (a chunk, not a byte) and
  hands it to the loop, and one writer thread takes the writes (pyserial's own write on such a
  port can block: a stalled TCP connection to a device server).

`write` never blocks: what the kernel does not take at once is written when the port is ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

import serial
from serial.urlhandler import protocol_socket as socket_port

# pyserial imports `<package>.protocol_<scheme>` only when such a URL is opened:
# `simulators.protocol_sim` for `sim://`, `drivers.protocol_capture` for `capture://`.
for _package in ("simulators", "drivers"):
    if _package not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append(_package)

# Ports whose fileno() carries the device's bytes untouched: a tty or pty, a TCP socket.
_FD_PORTS: tuple[type, ...] = (serial.Serial, socket_port.Serial)

Receiver = Callable[[bytes], None]
LostCallback = Callable[[str], None]
READ_CHUNK = 4096


class Transport(Protocol):
    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


def real_line(port: str) -> bool:
    """`port` is a device's line, not a simulator's: neither `sim://` nor pyserial's `loop://`,
    nor a pseudo-terminal (`/dev/pts/N`, what `tabled sim` serves its simulators on)."""
    return not port.startswith(("sim://", "loop://", "/dev/pts/"))


def open_port(url: str, baudrate: int) -> Any:
    """Open a pyserial port (blocking; call it off the event loop for real ports)."""
    return serial.serial_for_url(url, baudrate=baudrate, timeout=0.1, write_timeout=1.0)


async def open_transport(
    url: str, baudrate: int, on_data: Receiver, on_lost: LostCallback
) -> Transport:
    """Open `url` and deliver its bytes to `on_data` on the running loop; `on_lost(reason)` is
    called once if the port goes away. Raises `serial.SerialException` or OSError if the port
    cannot be opened."""
    loop = asyncio.get_running_loop()
    if url.startswith("sim://"):
        port = open_port(url, baudrate)  # in-process: no I/O to wait for
    else:
        port = await asyncio.to_thread(open_port, url, baudrate)
    if hasattr(port, "attach"):
        return InProcessTransport(loop, port, on_data, on_lost)
    if os.name == "posix" and type(port) in _FD_PORTS:
        return FdTransport(loop, port, on_data, on_lost)
    # spy:// and rfc2217:// do their own work in read(): they get a reader thread
    return ThreadTransport(loop, port, on_data, on_lost)


class InProcessTransport:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, port: Any, on_data: Receiver, on_lost: LostCallback
    ) -> None:
        self._loop = loop
        self._port = port
        self._on_data = on_data
        self._on_lost = on_lost
        self._loop_thread = threading.get_ident()
        self._closed = False
        port.attach(self._deliver)
        if hasattr(port, "attach_lost"):  # the simulated cable can be pulled
            port.attach_lost(self._lost_elsewhere)

    def _lost_elsewhere(self, reason: str) -> None:
        if threading.get_ident() == self._loop_thread:
            self._lost(reason)
        else:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                self._loop.call_soon_threadsafe(self._lost, reason)

    def _deliver(self, data: bytes) -> None:
        if self._closed:
            return
        if threading.get_ident() == self._loop_thread:
            self._loop.call_soon(self._on_data, data)
        else:
            with contextlib.suppress(RuntimeError):  # the loop closed under a device timer
                self._loop.call_soon_threadsafe(self._on_data, data)

    def write(self, data: bytes) -> None:
        if self._closed:
            return
        try:
            self._port.write(data)
        except (serial.SerialException, OSError) as exc:
            self._lost(f"write failed: {exc}")

    def _lost(self, reason: str) -> None:
        if not self._closed:
            self.close()
            self._loop.call_soon(self._on_lost, reason)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._port.attach(None)
            if hasattr(self._port, "attach_lost"):
                self._port.attach_lost(None)
            self._port.close()


class FdTransport:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, port: Any, on_data: Receiver, on_lost: LostCallback
    ) -> None:
        self._loop = loop
        self._port = port
        self._fd: int = port.fileno()
        os.set_blocking(self._fd, False)
        self._on_data = on_data
        self._on_lost = on_lost
        self._pending = bytearray()
        self._closed = False
        loop.add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(f"read failed: {exc}")
            return
        if not data:
            self._lost("end of file")
            return
        self._on_data(data)

    def write(self, data: bytes) -> None:
        if self._closed:
            return
        if self._pending:
            self._pending += data
            return
        try:
            sent = os.write(self._fd, data)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            self._lost(f"write failed: {exc}")
            return
        if sent < len(data):
            self._pending += data[sent:]
            self._loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        try:
            sent = os.write(self._fd, self._pending)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(f"write failed: {exc}")
            return
        del self._pending[:sent]
        if not self._pending:
            self._loop.remove_writer(self._fd)

    def _lost(self, reason: str) -> None:
        if not self._closed:
            self.close()
            self._on_lost(reason)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._loop.remove_reader(self._fd)
        self._loop.remove_writer(self._fd)
        with contextlib.suppress(OSError, serial.SerialException):
            self._port.close()


class ThreadTransport:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, port: Any, on_data: Receiver, on_lost: LostCallback
    ) -> None:
        self._loop = loop
        self._port = port
        self._on_data = on_data
        self._on_lost = on_lost
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read_loop, name=f"read {port.port}")
        self._thread.daemon = True
        self._thread.start()
        # pyserial's write on these ports can block (a stalled TCP connection: up to its
        # write_timeout), so it happens on a writer thread, never on the loop
        self._outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name=f"write {port.port}")
        self._writer.daemon = True
        self._writer.start()

    def _read_loop(self) -> None:
        port = self._port
        while not self._closed.is_set():
            try:
                data = port.read(max(1, port.in_waiting))
            except (serial.SerialException, OSError) as exc:
                self._report_lost(f"read failed: {exc}")
                return
            if data:
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(self._on_data, bytes(data))

    def _report_lost(self, reason: str) -> None:
        if not self._closed.is_set():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._lost, reason)

    def _lost(self, reason: str) -> None:
        if not self._closed.is_set():
            self.close()
            self._on_lost(reason)

    def _write_loop(self) -> None:
        while (data := self._outgoing.get()) is not None:
            try:
                self._port.write(data)
            except (serial.SerialException, OSError) as exc:
                self._report_lost(f"write failed: {exc}")
                return
            except Exception:
                # pyserial raises TypeError/AttributeError when close() took the fd from under
                # a write in progress; once closing, that write is moot, otherwise it is real.
                if not self._closed.is_set():
                    raise
                return

    def write(self, data: bytes) -> None:
        if not self._closed.is_set():
            self._outgoing.put(data)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._outgoing.put(None)
        cancel = getattr(self._port, "cancel_read", None)
        if cancel is not None:
            with contextlib.suppress(OSError, serial.SerialException):
                cancel()
        for thread in (self._thread, self._writer):
            if threading.current_thread() is not thread:
                thread.join(timeout=1.0)
        with contextlib.suppress(OSError, serial.SerialException):
            self._port.close()
