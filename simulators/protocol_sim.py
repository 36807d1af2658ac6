"""The `sim://` URL handler for pyserial: `serial.serial_for_url("sim://shuffler?seed=3")`
returns a port whose far end is an in-process simulated device (`simulators.spec` lists the
URL's options). `drivers.transport` registers this package with pyserial.

Besides the blocking pyserial API (read with timeout, write), the port offers `attach(receiver)`
so an asyncio transport receives the device's bytes as they are produced, with no polling
thread; at speed 0 the device answers inside `write`, so an exchange costs no waiting at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from serial.serialutil import PortNotOpenError, SerialBase, SerialException

from drivers.clock import shared_thread_clock
from simulators.base import DeviceModel, UnknownFault
from simulators.spec import SimSpec, create_model, parse_sim_url
from simulators.world import get_world

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class Serial(SerialBase):
    """A pyserial port wired to a simulated device."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._rx = bytearray()
        self._ready = threading.Condition()
        self._receiver: Callable[[bytes], None] | None = None
        self._on_lost: Callable[[str], None] | None = None
        self.model: DeviceModel | None = None
        self.spec: SimSpec | None = None
        super().__init__(*args, **kwargs)

    is_open: bool

    def open(self) -> None:
        if self.is_open:
            raise SerialException("port already open")
        if self.port is None:
            raise SerialException("port must be configured before it can be used")
        try:
            self.spec = parse_sim_url(self.port)
            if self.spec.role in get_world(self.spec.world).unplugged:
                raise SerialException(f"{self.port}: no such device (unplugged)")
            self.model = create_model(self.spec, shared_thread_clock(), self._from_device)
        except (ValueError, LookupError, UnknownFault) as exc:
            raise SerialException(str(exc)) from None
        self.model.world.on_unplug(self.model.DEVICE, self._unplugged, self)
        self.is_open = True

    def close(self) -> None:
        if self.model is not None:
            self.model.world.on_unplug(self.model.DEVICE, None, self)
            self.model.close()
            self.model = None
        with self._ready:
            self.is_open = False
            self._ready.notify_all()

    def attach(self, receiver: Callable[[bytes], None] | None) -> None:
        """Deliver the device's bytes to `receiver` (None: back to buffering for `read`)."""
        with self._ready:
            self._receiver = receiver
            if receiver is not None and self._rx:
                data = bytes(self._rx)
                self._rx.clear()
                receiver(data)

    def attach_lost(self, callback: Callable[[str], None] | None) -> None:
        """Call `callback(reason)` when the simulated cable is pulled (a transport's hook)."""
        self._on_lost = callback

    def _unplugged(self) -> None:
        callback = self._on_lost
        if callback is not None:
            callback(f"{self.port}: device unplugged")

    def _from_device(self, data: bytes) -> None:
        with self._ready:
            if self._receiver is not None:
                self._receiver(data)
            else:
                self._rx += data
                self._ready.notify_all()

    def write(self, data: ReadableBuffer) -> int:
        if not self.is_open or self.model is None or self.spec is None:
            raise PortNotOpenError()
        if self.model.DEVICE in self.model.world.unplugged:
            raise SerialException(f"{self.port}: device unplugged")
        payload = bytes(data)
        self.model.receive_data(payload)
        return len(payload)

    def read(self, size: int = 1) -> bytes:
        if not self.is_open:
            raise PortNotOpenError()
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        with self._ready:
            while len(self._rx) < size and self.is_open:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    break
                self._ready.wait(wait)
            data = bytes(self._rx[:size])
            del self._rx[:size]
            return data

    @property
    def in_waiting(self) -> int:
        if not self.is_open:
            raise PortNotOpenError()
        return len(self._rx)

    def cancel_read(self) -> None:
        with self._ready:
            self._ready.notify_all()

    def reset_input_buffer(self) -> None:
        with self._ready:
            self._rx.clear()

    def reset_output_buffer(self) -> None:
        pass

    def _reconfigure_port(self, *args: Any, **kwargs: Any) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    def _update_break_state(self) -> None:
        pass

    @property
    def cts(self) -> bool:
        return True

    @property
    def dsr(self) -> bool:
        return True

    @property
    def ri(self) -> bool:
        return False

    @property
    def cd(self) -> bool:
        return True
