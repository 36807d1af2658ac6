"""Simulated devices on pseudo-terminals: each model sits behind the master side of a pty, and
the slave side (`/dev/pts/N`) is a serial port like any other for a daemon, in this process or
another. Everything runs on one asyncio loop: the master fds are watched with `add_reader`,
model timers are loop timers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty
from dataclasses import dataclass, field

from drivers.clock import MonotonicClock
from simulators.base import DeviceModel
from simulators.spec import SimSpec, create_model
from simulators.world import TableWorld

READ_CHUNK = 4096


@dataclass
class PtyDevice:
    spec: SimSpec
    port: str
    master: int
    slave: int
    model: DeviceModel | None = None
    pending: bytearray = field(default_factory=bytearray)


class PtyHost:
    """Hosts simulated devices on pseudo-terminals until `close()`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._scheduler = MonotonicClock(loop)
        self.devices: list[PtyDevice] = []

    def add(self, spec: SimSpec, world: TableWorld) -> PtyDevice:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing: bytes pass untouched
        os.set_blocking(master, False)
        device = PtyDevice(spec, os.ttyname(slave), master, slave)
        try:
            device.model = create_model(
                spec, self._scheduler, lambda data: self._write(device, data), world
            )
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._loop.add_reader(master, self._readable, device)
        self.devices.append(device)
        return device

    def _readable(self, device: PtyDevice) -> None:
        try:
            data = os.read(device.master, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # EIO while no one has the slave open; we keep it open, so rare
        if data and device.model is not None and not self._unplugged(device):
            device.model.receive_data(data)

    @staticmethod
    def _unplugged(device: PtyDevice) -> bool:
        """The cable between the host's port and the device is out (control `unplug`): the
        pty stays, as a USB-serial adapter's tty does, but no byte crosses either way."""
        model = device.model
        return model is not None and model.DEVICE in model.world.unplugged

    def _write(self, device: PtyDevice, data: bytes) -> None:
        if self._unplugged(device):
            return
        if device.pending:
            device.pending += data
            return
        try:
            sent = os.write(device.master, data)
        except BlockingIOError:
            sent = 0
        except OSError:
            return
        if sent < len(data):
            device.pending += data[sent:]
            self._loop.add_writer(device.master, self._writable, device)

    def _writable(self, device: PtyDevice) -> None:
        try:
            sent = os.write(device.master, device.pending)
        except BlockingIOError:
            return
        except OSError:
            device.pending.clear()
            sent = 0
        del device.pending[:sent]
        if not device.pending:
            self._loop.remove_writer(device.master)

    def close(self) -> None:
        for device in self.devices:
            self._loop.remove_reader(device.master)
            self._loop.remove_writer(device.master)
            if device.model is not None:
                device.model.close()
            for fd in (device.master, device.slave):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.devices.clear()
