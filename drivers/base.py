"""The driver base every device driver extends: an asyncio-facing link to one device.

A driver opens its port (`drivers.transport`), identifies the device, checks it against the
approved list, then runs the link rules (`drivers.link.HostLink`) with an injected clock: reply
deadlines, retransmission, status polling, and reconnection with backoff after a loss. Device
facts come out as `DriverEvent`s, one frozen dataclass per kind of fact; commands are coroutines
that return when the device has accepted them (its ACK or reply), or raise `DeviceError`.
This module connects, identifies and reconnects; the exchange of frames is `drivers.exchange`
and what the device's events and status mean is `drivers.facts`.

    driver = ShufflerDriver.from_config(config.devices["shuffler"])
    await driver.start()                  # True: link up; False: retrying in the background
    await driver.shuffle(expected=52)     # accepted; ShuffleCompleted arrives as an event later
    event = await driver.next_event()

Nothing here blocks the event loop; nothing raises out of a receive path.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from typing import Any, ClassVar, Self, TypeVar

import serial
import structlog

from drivers.clock import Clock, MonotonicClock, TimerHandle
from drivers.events import (
    DeviceError,
    DeviceFault,
    DeviceStatus,
    DriverEvent,
    LinkDown,
    LinkLost,
    LinkState,
    LinkUp,
    NotApproved,
)
from drivers.exchange import LinkExchange, Tap
from drivers.kinds import load_class
from drivers.link import (
    HostLink,
    Link,
    LinkTiming,
)
from drivers.mailbox import Mailbox
from drivers.messages import (
    COMMON_FAULT_NAMES,
    COMMON_MESSAGES,
    ClearFaults,
    GetStatus,
    Identify,
    Identity,
    Message,
    Status,
    StatusFlag,
    message_set,
)
from drivers.settings import ApprovedBuild, DeviceSettings, is_approved
from drivers.transport import Transport, open_transport

# opener(url, baudrate, on_data, on_lost) -> Transport: how the port is opened (replay harnesses
# substitute their own).
Opener = Callable[[str, int, Callable[[bytes], None], Callable[[str], None]], Awaitable[Transport]]

_M = TypeVar("_M", bound=Message)
_GET_STATUS = GetStatus()  # messages are immutable: the status poll sends this one
# Read on every command, bound once (a class attribute lookup on an Enum is slow).
_UP = LinkState.UP


def _expect(reply: Message, kind: type[_M]) -> _M:
    if not isinstance(reply, kind):
        raise DeviceError(f"expected {kind.__name__}, the device answered {type(reply).__name__}")
    return reply


def driver_class(kind: str) -> type[DeviceDriver]:
    """The driver of device kind `kind` (drivers.kinds); LookupError of one line if the kind is
    unknown or its driver cannot be imported."""
    return load_class(kind, "driver", DeviceDriver)


class DeviceDriver(LinkExchange):
    DEVICE: ClassVar[str] = "device"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES)
    FAULTS: ClassVar[Mapping[int, str]] = COMMON_FAULT_NAMES
    DOORS: ClassVar[Mapping[int, str]] = {}

    def __init__(
        self,
        port: str,
        *,
        baudrate: int = 115200,
        address: int = 1,
        approved: Sequence[ApprovedBuild] = (),
        clock: Clock | None = None,
        timing: LinkTiming | None = None,
        name: str | None = None,
        tap: Tap | None = None,
        opener: Opener = open_transport,
    ) -> None:
        if not 0 < address < 0x80:
            raise ValueError(f"bus address {address}: 1-127 (bit 7 is the frame's direction)")
        if baudrate <= 0:
            raise ValueError(f"baudrate {baudrate}: a positive number of bits per second")
        self.name = name or self.DEVICE
        self.port = port
        self.baudrate = baudrate
        self.approved_builds = tuple(approved)
        self.clock = clock or MonotonicClock()
        self.timing = timing or LinkTiming()
        self.link = self.make_link(address)
        self.state = LinkState.DOWN
        self.identity: Identity | None = None
        self.approved: bool | None = None
        self.last_error: str | None = None  # why the last connect failed, for people to read
        self._events: Mailbox[DriverEvent] = Mailbox()
        self._waiting: deque[tuple[Message, asyncio.Future[Message]]] = deque()
        self._current: asyncio.Future[Message] | None = None
        self._transport: Transport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the port was opened on
        self._timer: TimerHandle | None = None
        self._timer_at = 0.0  # when `_timer` fires
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reconnecting = False
        self._faults = 0
        self._doors = 0
        self._was_up = False  # the link has been up before: a power-up since is a restart
        self._held: list[DriverEvent] = []  # device events received while connecting
        self._error_logged_at: float | None = None
        self._errors_not_logged = 0
        self._tap = tap
        self._opener = opener
        self._log = structlog.get_logger("tabled.drivers").bind(device=self.name, port=port)

    def make_link(self, address: int) -> Link:
        """The host end of this device's link: the tabled protocol's (`HostLink`). A driver of
        a device that speaks another protocol returns its own `Link` (docs/devices.md)."""
        return HostLink(self.MESSAGES, address, self.baudrate, self.timing)

    @classmethod
    def from_config(cls, config: DeviceSettings, **kwargs: Any) -> Self:
        return cls(
            config.port,
            baudrate=config.baudrate,
            address=config.address,
            approved=config.approved,
            name=config.name,
            **kwargs,
        )

    @property
    def clock(self) -> Clock:
        return self._clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self._clock = clock
        self._now = clock.now  # read twice an exchange: one attribute, not two

    # --- public API -----------------------------------------------------------------------

    @property
    def link_up(self) -> bool:
        return self.state is _UP

    async def start(self, keep_trying: bool = True) -> bool:
        """Connect once; True if the link is up. Otherwise (unless `keep_trying` is False)
        reconnection continues in the background and LinkUp arrives when it succeeds."""
        up = await self._connect()
        if not keep_trying:
            return up
        if not up:
            self._reconnect_soon()
        self._spawn(self._poll_loop())
        return up

    async def close(self) -> None:
        self.state = LinkState.CLOSED
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._drop_transport()
        self._fail_all(LinkLost("driver closed"))

    async def next_event(self) -> DriverEvent:
        return await self._events.get()

    def pending_events(self) -> list[DriverEvent]:
        """The events already received, without waiting."""
        return self._events.drain()

    async def events(self) -> AsyncIterator[DriverEvent]:
        while True:
            yield await self._events.get()

    async def identify(self) -> Identity:
        return _expect(await self._command(Identify(), device_command=False), Identity)

    async def status(self) -> DeviceStatus:
        # `_command(_GET_STATUS, device_command=False)` without the call: the status poll is
        # the exchange a driver makes most
        if self.state is not _UP:
            raise LinkLost(f"{self.name}: link is {self.state.value}")
        reply = await self._exchange(_GET_STATUS)
        if not isinstance(reply, Status):
            _expect(reply, Status)
        return self._describe(reply)  # type: ignore[arg-type]

    async def clear_faults(self) -> None:
        await self._command(ClearFaults(), device_command=False)

    # --- for subclasses -------------------------------------------------------------------

    def _command(self, message: Message, device_command: bool = True) -> asyncio.Future[Message]:
        """Send `message` (now, or once the link is free); await the result for its answer.
        Raises at once, sending nothing, if the link is not up or (a device command) the
        firmware is not approved."""
        if self.state is not _UP:
            raise LinkLost(f"{self.name}: link is {self.state.value}")
        if device_command and self.approved is False:
            raise NotApproved(f"{self.name}: firmware not on the approved list")
        return self._exchange(message)

    # --- link machinery -------------------------------------------------------------------

    async def _connect(self) -> bool:
        if self.state is LinkState.CLOSED:
            return False
        self.state = LinkState.CONNECTING
        self._loop = asyncio.get_running_loop()
        try:
            self._transport = await self._opener(
                self.port, self.baudrate, self._on_data, self._on_port_lost
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            self._log.warning("device.open_failed", error=str(exc))
            self.last_error = f"cannot open the port: {exc}"
            self.state = LinkState.DOWN
            return False
        self.link.reset(self.clock.now())
        try:
            # taken down for noise: listen (answering nothing) until the line is quiet
            while self.link.noisy and not self.link.quiet(self.clock.now()):
                if self._transport is None:
                    raise LinkLost("port lost while the line was noisy")
                await self.clock.sleep(self.timing.quiet_time / 5)
            identity = _expect(await self._exchange(Identify()), Identity)
            status = _expect(await self._exchange(_GET_STATUS), Status)
        except DeviceError as exc:
            self._log.warning("device.connect_failed", error=str(exc))
            self.last_error = f"no answer to IDENTIFY or GET_STATUS ({exc})"
            self._drop_transport()
            if self.state is not LinkState.CLOSED:
                self.state = LinkState.DOWN
            self._release_held()  # acknowledged to the device: reported, not lost
            return False
        if self.state is LinkState.CLOSED:
            self._release_held()
            return False
        self.identity = identity
        self.approved = is_approved(identity, self.approved_builds)
        self.last_error = None
        restarted = self._was_up and bool(status.flags & StatusFlag.POWERED_UP)
        self._was_up = True
        self.state = LinkState.UP
        self._log.info(
            "device.link_up",
            make=identity.make,
            model=identity.model,
            serial=identity.serial,
            firmware=identity.firmware,
            approved=self.approved,
        )
        self._emit(LinkUp(self.name, identity, self.approved))
        if self.approved is False:
            self._log.error("device.unapproved_firmware", firmware=identity.firmware)
            self._emit(DeviceFault(self.name, "unapproved_firmware", 0))
        elif self.approved is None:
            self._log.warning("device.no_approved_list")
        if restarted:
            self._restarted()
        self._release_held()
        self._reconcile(status)
        return True

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _reconnect_soon(self) -> None:
        if not self._reconnecting and self.state is not LinkState.CLOSED:
            self._reconnecting = True
            self._spawn(self._reconnect_loop())

    async def _reconnect_loop(self) -> None:
        delay = self.timing.reconnect_initial
        try:
            while self.state is LinkState.DOWN:
                await self.clock.sleep(delay)
                if await self._connect():
                    return
                delay = min(delay * 2, self.timing.reconnect_max)
        finally:
            self._reconnecting = False

    async def _poll_loop(self) -> None:
        while self.state is not LinkState.CLOSED:
            await self.clock.sleep(self.timing.poll_interval)
            if self.state is LinkState.UP and not self.link.busy and not self._waiting:
                with contextlib.suppress(DeviceError):
                    await self._exchange(_GET_STATUS)

    def _on_port_lost(self, reason: str) -> None:
        self._link_lost(f"port_lost: {reason}")

    def _link_lost(self, reason: str) -> None:
        self._drop_transport()
        self._fail_all(LinkLost(f"{self.name}: {reason}"))
        if self.state is LinkState.UP:
            self.state = LinkState.DOWN
            self._log.error("device.link_down", reason=reason)
            self._emit(LinkDown(self.name, reason))
            self._reconnect_soon()

    def _drop_transport(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
        self.link.reset()
