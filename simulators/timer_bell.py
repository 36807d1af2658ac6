"""A simulated timer bell.

The countdown runs on the model's scheduler (the injected clock: a manual one in unit tests),
its length multiplied by the speed factor like every mechanical delay: at speed 0 a countdown
warns, expires and rings at once, so a simulated round never waits five minutes. REMAINING is
given in the bell's own seconds (real elapsed time divided by the speed).

Faults: one-shot `double_start` (the bell still thinks a countdown runs: the next START is
refused BUSY), `power_lost` (power fails halfway through the next countdown; the bell comes back
with POWER_LOST latched and the countdown gone); condition `bell_failed` (the sounder is dead:
each ring raises FAULT bell_failed instead of BELL_RANG), and the common `no_response`,
`bad_crc`, `unapproved_firmware`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from drivers.messages import COMMON_MESSAGES, Ack, Message, Nak, NakReason, message_set
from drivers.timer_bell.messages import (
    BELL_MESSAGES,
    BellFault,
    BellRangEvent,
    CancelTimer,
    GetRemaining,
    Remaining,
    Ring,
    RingCause,
    StartTimer,
    TimerExpiredEvent,
    TimerWarningEvent,
)
from drivers.timer_bell.messages import (
    FAULT_NAMES as WIRE_FAULT_NAMES,
)
from simulators.base import DeviceModel

POWER_OUTAGE_SECONDS = 5.0


class TimerBellModel(DeviceModel):
    DEVICE: ClassVar[str] = "timer_bell"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, BELL_MESSAGES)
    MODEL: ClassVar[str] = "BELL-1"
    FIRMWARE: ClassVar[str] = "1.2.0"
    FAULT_NAMES: ClassVar[Mapping[int, str]] = WIRE_FAULT_NAMES
    ONE_SHOT: ClassVar[frozenset[str]] = frozenset({"double_start", "power_lost"})
    CONDITIONS: ClassVar[frozenset[str]] = frozenset({"bell_failed"})

    def __init__(self, **kwargs: Any) -> None:
        self.countdown = 0  # identifies the running countdown; cancel and restart change it
        self.seconds = 0
        self.started_at = 0.0
        self.rings = 0
        super().__init__(**kwargs)

    def handle(self, message: Message) -> Message:
        if isinstance(message, StartTimer):
            if self.take("double_start"):
                return Nak(NakReason.BUSY)
            refusal = self.refusal()
            if refusal is not None:
                return Nak(refusal)
            self._start(message.seconds, message.warn_before)
            return Ack()
        if isinstance(message, CancelTimer):
            self.countdown += 1
            self.busy = False
            return Ack()
        if isinstance(message, GetRemaining):
            left = self.remaining()
            return Remaining(int(left is not None), round((left or 0.0) * 1000))
        if isinstance(message, Ring):
            self.after(0.0, lambda: self.ring(RingCause.COMMAND))
            return Ack()
        return super().handle(message)

    def _start(self, seconds: int, warn_before: int) -> None:
        self.countdown += 1
        countdown = self.countdown
        self.busy = True
        self.seconds = seconds
        self.started_at = self.scheduler.now()
        if self.take("power_lost"):
            self.after(seconds / 2, lambda: self.power_off(POWER_OUTAGE_SECONDS))
            return
        if warn_before:
            self.after(seconds - warn_before, lambda: self._warn(countdown, warn_before))
        self.after(seconds, lambda: self._expire(countdown))

    def remaining(self) -> float | None:
        """The bell's seconds left, or None when no countdown runs."""
        if not self.busy:
            return None
        if self.speed <= 0:
            return 0.0
        elapsed = (self.scheduler.now() - self.started_at) / self.speed
        return max(0.0, self.seconds - elapsed)

    def _warn(self, countdown: int, remaining: int) -> None:
        if countdown == self.countdown and self.busy:
            self.emit(lambda n: TimerWarningEvent(n, remaining))

    def _expire(self, countdown: int) -> None:
        if countdown != self.countdown or not self.busy:
            return  # cancelled, or replaced by a newer countdown
        self.busy = False
        self.emit(TimerExpiredEvent)
        self.ring(RingCause.EXPIRY)

    def ring(self, cause: RingCause) -> None:
        if "bell_failed" in self.conditions:
            self.raise_fault(BellFault.BELL_FAILED)
            return
        self.rings += 1
        self.emit(lambda n: BellRangEvent(n, cause))

    def test_ring(self) -> None:
        """A person presses the bell's test button: it rings (a dead sounder faults)."""
        with self.lock:
            self.ring(RingCause.COMMAND)
            self._drain()

    def active_causes(self) -> set[int]:
        return {BellFault.BELL_FAILED} if "bell_failed" in self.conditions else set()

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {**super().describe(), "remaining": self.remaining(), "rings": self.rings}
