"""Capture: record every byte a device port carries, with timestamps and direction.

A capture is a pyserial URL wrapper, so it is chosen by configuration like any port and the
driver does not know it is there::

    capture://sim://shoe_reader?seed=3&world=T01#var/captures/shoe.jsonl
    capture:///dev/serial/by-id/usb-FTDI_shoe-if00#/var/log/tabled/shoe.jsonl

The inner URL runs from after `capture://` to the last `#`; the capture file follows it.
(`capture_url(url, path)` writes one; `capture_all(ports, directory)` wraps every device's.)
The wrapper opens the inner port with the same settings, passes every byte through unchanged
and appends one JSON line per chunk to the file, flushed at once so a crash loses nothing
already on the wire. The format (docs/protocol-shoe-bell.md,
"Capture files"):

    {"format": "tabled-capture", "version": 1, "port": "sim://...", "baudrate": 115200,
     "device": "shoe_reader", "started": "2026-11-29T12:00:00.000000+00:00"}
    {"t": 0.000412, "dir": "tx", "hex": "02 01 01 00 11 43 94 03"}
    {"t": 0.000655, "dir": "rx", "hex": "02 81 01 39 91 ..."}

`t` is monotonic seconds since the port was first opened; `dir` is "tx" for bytes the host
wrote to the device, "rx" for bytes the host received from it, and "open" / "close" (no "hex")
when the port was opened or closed, so a reconnect shows in the file. `device` is the simulated
device's name for `sim://` ports, else null. A capture of a real port and one of a simulator
are alike, which is what lets `drivers.replay` feed either back into the drivers.

Importing this module registers the `capture://` scheme with pyserial.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import serial
from serial.serialutil import PortNotOpenError, SerialBase, SerialException

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

FORMAT = "tabled-capture"
VERSION = 1
TX = "tx"  # host -> device
RX = "rx"  # device -> host
OPEN = "open"  # the port was (re)opened: a reconnect shows as a second one
CLOSE = "close"
DIRECTIONS = (TX, RX, OPEN, CLOSE)


@dataclass(frozen=True, slots=True)
class CaptureHeader:
    port: str
    baudrate: int
    device: str | None
    started: str


@dataclass(frozen=True, slots=True)
class Record:
    t: float
    direction: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Capture:
    header: CaptureHeader
    records: tuple[Record, ...]


class CaptureFormatError(ValueError):
    """A file that is not a tabled capture, or a line of it that cannot be read."""


def capture_url(url: str, path: str | Path) -> str:
    """The URL that captures the traffic of port `url` into `path`."""
    return f"capture://{url}#{path}"


def capture_all(
    ports: Mapping[str, str], directory: str | Path, stamp: str | None = None
) -> dict[str, str]:
    """Every device's port wrapped to capture into `directory/DEVICE-STAMP.jsonl` (the stamp
    defaults to the UTC time now), for a daemon run that records all its devices."""
    stamp = stamp or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return {
        device: capture_url(url, Path(directory) / f"{device}-{stamp}.jsonl")
        for device, url in ports.items()
    }


def parse_capture_url(url: str) -> tuple[str, Path]:
    """(inner URL, capture file) of a `capture://` URL."""
    if not url.lower().startswith("capture://"):
        raise ValueError(f"expected capture://PORT#FILE, got {url!r}")
    inner, sep, path = url[len("capture://") :].rpartition("#")
    if not sep or not inner or not path:
        raise ValueError(f"expected capture://PORT#FILE, got {url!r}")
    return inner, Path(path)


def device_of(url: str) -> str | None:
    parts = urlsplit(url)
    return parts.netloc if parts.scheme == "sim" and parts.netloc else None


class CaptureWriter:
    """Appends records to a capture file; safe to call from a port's reader thread.

    The first port to open a file in this process starts it afresh (an existing file of an
    earlier run is kept, renamed `NAME.1`, `NAME.2`, ...); a port that opens it again in the
    same process, as a driver does when it reconnects, appends to it on the same time base."""

    _starts: ClassVar[dict[Path, float]] = {}
    _starts_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: Path, header: CaptureHeader) -> None:
        path = path.resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._starts_lock:
            start = self._starts.get(path)
            fresh = start is None
            if start is None:
                _keep_earlier(path)
                start = self._starts[path] = time.monotonic()
        self._file: IO[str] = path.open("w" if fresh else "a", encoding="utf-8")
        self._lock = threading.Lock()
        self._start = start
        if fresh:
            self._write(
                {
                    "format": FORMAT,
                    "version": VERSION,
                    "port": header.port,
                    "baudrate": header.baudrate,
                    "device": header.device,
                    "started": header.started,
                }
            )
        self.record(OPEN, b"")

    def _write(self, line: dict[str, Any]) -> None:
        self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._file.flush()

    def record(self, direction: str, data: bytes) -> None:
        with self._lock:
            if self._file.closed:
                return
            t = round(time.monotonic() - self._start, 6)
            if direction in (TX, RX):
                self._write({"t": t, "dir": direction, "hex": data.hex(" ")})
            else:
                self._write({"t": t, "dir": direction})

    def close(self) -> None:
        self.record(CLOSE, b"")
        with self._lock:
            if not self._file.closed:
                self._file.close()


def _keep_earlier(path: Path) -> None:
    if not path.exists():
        return
    for number in itertools.count(1):
        kept = path.with_name(f"{path.name}.{number}")
        if not kept.exists():
            path.rename(kept)
            return


def read_capture(path: str | Path) -> Capture:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return parse_capture(lines, str(path))


def parse_capture(lines: Iterable[str], name: str = "capture") -> Capture:
    header: CaptureHeader | None = None
    records: list[Record] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if header is None:
                if item.get("format") != FORMAT or item.get("version") != VERSION:
                    raise CaptureFormatError(f"{name}: not a {FORMAT} v{VERSION} file")
                header = CaptureHeader(
                    str(item["port"]), int(item["baudrate"]), item.get("device"), item["started"]
                )
                continue
            direction = item["dir"]
            if direction not in DIRECTIONS:
                raise CaptureFormatError(f"{name}:{number}: dir {direction!r}")
            data = bytes.fromhex(item["hex"]) if direction in (TX, RX) else b""
            records.append(Record(float(item["t"]), direction, data))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, CaptureFormatError):
                raise
            raise CaptureFormatError(f"{name}:{number}: {exc}") from None
    if header is None:
        raise CaptureFormatError(f"{name}: empty")
    return Capture(header, tuple(records))


class Serial(SerialBase):
    """A pyserial port that records what passes through the port it wraps."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.inner: Any = None
        self.writer: CaptureWriter | None = None
        super().__init__(*args, **kwargs)

    is_open: bool

    def open(self) -> None:
        if self.is_open:
            raise SerialException("port already open")
        if self.port is None:
            raise SerialException("port must be configured before it can be used")
        try:
            inner_url, path = parse_capture_url(self.port)
        except ValueError as exc:
            raise SerialException(str(exc)) from None
        self.inner = serial.serial_for_url(
            inner_url,
            baudrate=self.baudrate,
            timeout=self.timeout,
            write_timeout=self.write_timeout,
        )
        header = CaptureHeader(
            inner_url, self.baudrate, device_of(inner_url), datetime.now(UTC).isoformat()
        )
        try:
            self.writer = CaptureWriter(path, header)
        except OSError as exc:
            self.inner.close()
            raise SerialException(f"cannot write the capture {path}: {exc}") from None
        self.is_open = True

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
            self.inner = None
        if self.writer is not None:
            self.writer.close()
        self.is_open = False

    def _port_or_fail(self) -> Any:
        if not self.is_open or self.inner is None:
            raise PortNotOpenError()
        return self.inner

    def write(self, data: ReadableBuffer) -> int:
        inner = self._port_or_fail()
        if self.writer is not None:
            self.writer.record(TX, bytes(data))
        written: int = inner.write(data)
        return written

    def read(self, size: int = 1) -> bytes:
        data = bytes(self._port_or_fail().read(size))
        if data and self.writer is not None:
            self.writer.record(RX, data)
        return data

    @property
    def in_waiting(self) -> int:
        waiting: int = self._port_or_fail().in_waiting
        return waiting

    def cancel_read(self) -> None:
        if self.inner is not None and hasattr(self.inner, "cancel_read"):
            self.inner.cancel_read()

    @property
    def attach(self) -> Callable[[Callable[[bytes], None] | None], None]:
        """Present only when the wrapped port has it (the in-process `sim://` port)."""
        inner_attach = getattr(self.inner, "attach", None)
        if inner_attach is None:
            raise AttributeError("attach")

        def attach(receiver: Callable[[bytes], None] | None) -> None:
            if receiver is None:
                inner_attach(None)
                return

            def recorded(data: bytes) -> None:
                if self.writer is not None:
                    self.writer.record(RX, data)
                receiver(data)

            inner_attach(recorded)

        return attach

    def reset_input_buffer(self) -> None:
        if self.inner is not None:
            self.inner.reset_input_buffer()

    def reset_output_buffer(self) -> None:
        if self.inner is not None:
            self.inner.reset_output_buffer()

    def _reconfigure_port(self, *args: Any, **kwargs: Any) -> None:
        if self.inner is not None:
            self.inner.baudrate = self.baudrate

    def _update_rts_state(self) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    def _update_break_state(self) -> None:
        pass


def register(scheme: str, module_name: str) -> None:
    """Make `scheme://` URLs open `module_name`'s Serial class through pyserial.

    pyserial looks for `<package>.protocol_<scheme>` in `serial.protocol_handler_packages`; the
    module registers itself under that name instead of shipping a file per scheme."""
    sys.modules.setdefault(f"drivers.protocol_{scheme}", sys.modules[module_name])
    if "drivers" not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append("drivers")


register("capture", __name__)
