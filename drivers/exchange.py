"""The exchange half of `DeviceDriver` (drivers.base): one request at a time over the link.

A command waits its turn while the link is busy (`_exchange`), goes out as one frame (`_send`),
and its future is settled by the device's reply, its refusal, or the link giving up. One timer
serves every exchange's deadline and retransmission (`_arm_timer`). Each chunk received goes
through the link (`_on_data`), whose results (`_handle`) settle the command, report the device's
events and status as facts (`DeviceFacts`), log bad frames at a bounded rate, or take the link
down. Nothing here blocks the event loop; nothing raises out of a receive path.
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from collections.abc import Callable

from drivers.clock import Clock, TimerHandle
from drivers.events import (
    CommandRefused,
    DeviceError,
    EventsMissed,
    LinkDegraded,
    LinkLost,
    LinkState,
)
from drivers.facts import DeviceFacts
from drivers.framing import ProtocolError
from drivers.link import (
    Degraded,
    LinkResult,
    Missed,
    Received,
    Refused,
    Replied,
    TimedOut,
    TooNoisy,
)
from drivers.messages import Message, Status, StatusFlag
from drivers.transport import Transport

# tap(direction, data): every chunk written ("tx") or received ("rx"), for capture tools.
Tap = Callable[[str, bytes], None]

PROTOCOL_ERROR_LOG_INTERVAL = 1.0  # seconds between two device.protocol_error log lines

# Enum members read on every exchange, bound once (a class attribute lookup on an Enum is slow).
_UP = LinkState.UP
_POWERED_UP = int(StatusFlag.POWERED_UP)


class LinkExchange(DeviceFacts):
    """Commands out and replies in over the driver's link (set up by `DeviceDriver`)."""

    _clock: Clock
    _now: Callable[[], float]
    _transport: Transport | None
    _loop: asyncio.AbstractEventLoop | None  # the loop the port was opened on
    _waiting: deque[tuple[Message, asyncio.Future[Message]]]
    _current: asyncio.Future[Message] | None
    _timer: TimerHandle | None
    _timer_at: float  # when `_timer` fires
    _tap: Tap | None
    _error_logged_at: float | None
    _errors_not_logged: int
    # The link is lost: the port dropped, every command failed, a reconnection begun.
    _link_lost: Callable[[str], None]

    def _exchange(self, message: Message) -> asyncio.Future[Message]:
        transport, loop = self._transport, self._loop
        if transport is None or loop is None:
            future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
            future.set_exception(LinkLost(f"{self.name}: port not open"))
            return future
        future = loop.create_future()
        if self._waiting or self.link.busy:
            self._waiting.append((message, future))
            self._pump()
        else:  # the usual case, a free link: straight out, no queue
            self._send(transport, message, future)
        return future

    def _pump(self) -> None:
        while (transport := self._transport) is not None and not self.link.busy and self._waiting:
            message, future = self._waiting.popleft()
            if not future.done():
                self._send(transport, message, future)

    def _send(
        self, transport: Transport, message: Message, future: asyncio.Future[Message]
    ) -> None:
        link = self.link
        try:
            data = link.request(message, self._now())
        except (struct.error, ValueError) as exc:
            # a value the payload cannot carry: the caller's mistake, nothing is sent
            future.set_exception(ValueError(f"{type(message).__name__}: {exc}"))
            return
        self._current = future
        if self._tap is not None:
            self._tap("tx", data)
        transport.write(data)
        if self._timer is None or self._timer_at > link.deadline:  # type: ignore[operator]
            self._arm_timer()  # (a timer due by the new deadline is kept: `_arm_timer`)

    def _arm_timer(self) -> None:
        """Make sure a timer fires by the link's deadline. One timer serves many exchanges: a
        timer already due no later than the deadline is kept (when it fires, `_on_timer` finds
        nothing due yet and sets the next one), and a settled command leaves its timer to fire
        once for nothing, rather than setting and cancelling a timer for every frame."""
        deadline = self.link.deadline
        if deadline is None:
            return
        if self._timer is not None:
            if self._timer_at <= deadline:
                return
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self._clock.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        out, results = self.link.check_timeout(self._clock.now())
        if out and self._transport is not None:
            self._log.info("device.retransmit", retransmits=self.link.counters.retransmits)
            self._write(self._transport, out)
        if self.link.deadline is not None:
            self._arm_timer()
        self._handle(results)

    def _write(self, transport: Transport, data: bytes) -> None:
        if self._tap is not None:
            self._tap("tx", data)
        transport.write(data)

    def _on_data(self, data: bytes) -> None:
        transport = self._transport
        if transport is None:
            return
        if self._tap is not None:
            self._tap("rx", data)
        link = self.link
        out, results = link.receive_data(data, self._now())
        if out:  # `_write(transport, out)`, inline: an event's ACK
            if self._tap is not None:
                self._tap("tx", out)
            transport.write(out)
        if link.deadline is not None:
            self._arm_timer()
        if results:
            self._handle(results)
        if self._waiting:
            self._pump()

    def _handle(self, results: list[LinkResult]) -> None:
        for result in results:
            if isinstance(result, Replied):
                message = result.message
                if isinstance(message, Status) and self.state is _UP:
                    if message.flags & _POWERED_UP:
                        self._restarted()
                    self._reconcile(message)
                # `_settle(message, None)` without the call: every exchange ends here
                future, self._current = self._current, None
                if future is not None and not future.done():
                    future.set_result(message)
            elif isinstance(result, Received):
                self._on_device_event(result.event)
            elif isinstance(result, Refused):
                self._settle(None, CommandRefused(result.reason))
            elif isinstance(result, ProtocolError):
                self._log_protocol_error(result)
            elif isinstance(result, Missed):
                self._log.error("device.events_missed", count=result.count)
                self._emit(EventsMissed(self.name, result.count))
            elif isinstance(result, TimedOut):
                self._settle(None, LinkLost(f"{self.name}: no response"))
                self._link_lost("no_response")
            elif isinstance(result, Degraded):
                self._log.warning(
                    "device.link_degraded", errors=result.errors, seconds=round(result.seconds, 3)
                )
                self._emit(LinkDegraded(self.name, result.errors, result.seconds))
            elif isinstance(result, TooNoisy):
                self._settle(None, LinkLost(f"{self.name}: the line is too noisy"))
                self._link_lost("noisy")

    def _log_protocol_error(self, error: ProtocolError) -> None:
        """Every bad frame is counted (link.counters); the log gets at most one line per
        PROTOCOL_ERROR_LOG_INTERVAL, carrying how many it left out, so a noisy cable cannot
        flood the journal with thousands of lines a second."""
        now = self._clock.now()
        if self._error_logged_at is not None and now - self._error_logged_at < (
            PROTOCOL_ERROR_LOG_INTERVAL
        ):
            self._errors_not_logged += 1
            return
        self._log.warning(
            "device.protocol_error",
            kind=str(error.kind),
            data=error.data.hex(" "),
            detail=error.detail,
            not_logged_before=self._errors_not_logged,
        )
        self._error_logged_at, self._errors_not_logged = now, 0

    def _settle(self, message: Message | None, error: DeviceError | None) -> None:
        future, self._current = self._current, None
        if future is None or future.done():
            return
        if message is not None:
            future.set_result(message)
        else:
            future.set_exception(error or LinkLost("no answer"))

    def _fail_all(self, error: DeviceError) -> None:
        self._settle(None, error)
        while self._waiting:
            _, future = self._waiting.popleft()
            if not future.done():
                future.set_exception(error)
