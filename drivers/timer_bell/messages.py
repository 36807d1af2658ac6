"""The timer bell's wire messages: pure (no I/O, no asyncio), shared with its simulator.

Wire messages (docs/protocol-shoe-bell.md, "Timer bell"; common messages in `drivers.messages`):

- START_TIMER 0x50, host -> device, payload seconds (u16, 1-65535), warn_before (u16, 0 = no
  warning, else less than seconds). ACK when the countdown has begun; NAK BUSY if one is
  already running (a double start: the host cancels first), FAULT_ACTIVE for a latched fault.
- CANCEL_TIMER 0x51, no payload. ACK, also when no countdown runs (so a retry is harmless).
- GET_REMAINING 0x52, no payload -> REMAINING 0xB8: running (u8, 0 or 1), remaining_ms (u32).
- RING 0x53, no payload. ACK, then the bell sounds: BELL_RANG, or FAULT_RAISED bell_failed.
- TIMER_WARNING 0xD8, device -> host event: number (u16), remaining (u16 seconds).
- TIMER_EXPIRED 0xD9, device -> host event: number (u16).
- BELL_RANG 0xDA, device -> host event: number (u16), cause (u8: 1 expiry, 2 command).

Fault codes: 1 power_lost (the countdown is gone: no expiry will come), 2 hardware, 3 memory,
4 bell_failed (the sounder's current sense saw no ring). No doors.

The bell's countdown is a convenience for the people at the table; the daemon's own clock stays
the authority (DOMAIN R8). The driver keeps the deadline it asked for on its injected clock,
and logs how far the bell's expiry lands from it.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar, Self

from drivers.messages import (
    COMMON_FAULT_NAMES,
    DeviceEvent,
    Kind,
    Message,
    PayloadError,
    unpack_exact,
)

_START = struct.Struct(">HH")
_REMAINING = struct.Struct(">BI")
_EVENT_U16 = struct.Struct(">HH")
_EVENT_U8 = struct.Struct(">HB")
_EVENT = struct.Struct(">H")


class BellFault(IntEnum):
    BELL_FAILED = 4


class RingCause(IntEnum):
    EXPIRY = 1
    COMMAND = 2


@dataclass(frozen=True, slots=True)
class StartTimer(Message):
    CMD: ClassVar[int] = 0x50
    KIND: ClassVar[Kind] = "command"
    seconds: int
    warn_before: int = 0

    def encode_payload(self) -> bytes:
        return _START.pack(self.seconds, self.warn_before)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        seconds, warn_before = unpack_exact(_START, payload, "START_TIMER")
        if seconds == 0 or (warn_before and warn_before >= seconds):
            raise PayloadError(f"START_TIMER: {seconds} s, warning {warn_before} s before")
        return cls(seconds, warn_before)


@dataclass(frozen=True, slots=True)
class CancelTimer(Message):
    CMD: ClassVar[int] = 0x51
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class GetRemaining(Message):
    CMD: ClassVar[int] = 0x52
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class Remaining(Message):
    CMD: ClassVar[int] = 0xB8
    KIND: ClassVar[Kind] = "reply"
    running: int
    remaining_ms: int

    def encode_payload(self) -> bytes:
        return _REMAINING.pack(self.running, self.remaining_ms)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        running, remaining_ms = unpack_exact(_REMAINING, payload, "REMAINING")
        if running > 1:
            raise PayloadError(f"REMAINING: running {running} (0 or 1)")
        return cls(running, remaining_ms)


@dataclass(frozen=True, slots=True)
class Ring(Message):
    CMD: ClassVar[int] = 0x53
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class TimerWarningEvent(DeviceEvent):
    CMD: ClassVar[int] = 0xD8
    remaining: int

    def encode_payload(self) -> bytes:
        return _EVENT_U16.pack(self.number, self.remaining)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(*unpack_exact(_EVENT_U16, payload, "TIMER_WARNING"))


@dataclass(frozen=True, slots=True)
class TimerExpiredEvent(DeviceEvent):
    CMD: ClassVar[int] = 0xD9

    def encode_payload(self) -> bytes:
        return _EVENT.pack(self.number)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(*unpack_exact(_EVENT, payload, "TIMER_EXPIRED"))


@dataclass(frozen=True, slots=True)
class BellRangEvent(DeviceEvent):
    CMD: ClassVar[int] = 0xDA
    cause: int

    def encode_payload(self) -> bytes:
        return _EVENT_U8.pack(self.number, self.cause)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, cause = unpack_exact(_EVENT_U8, payload, "BELL_RANG")
        if cause not in (RingCause.EXPIRY, RingCause.COMMAND):
            raise PayloadError(f"BELL_RANG: cause {cause} (1 or 2)")
        return cls(number, cause)


BELL_MESSAGES: tuple[type[Message], ...] = (
    StartTimer,
    CancelTimer,
    GetRemaining,
    Remaining,
    Ring,
    TimerWarningEvent,
    TimerExpiredEvent,
    BellRangEvent,
)


# Fault code -> name, door bit -> name: what the driver reports and the simulator accepts.
FAULT_NAMES: Mapping[int, str] = {
    **COMMON_FAULT_NAMES,
    **{f.value: f.name.lower() for f in BellFault},
}
DOOR_NAMES: Mapping[int, str] = {}
