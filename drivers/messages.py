"""Messages of the tabled device protocol: the base class and the commands every device shares.

A message is the CMD byte and the PAYLOAD of one frame (`drivers.framing` wraps it in STX, ADDR,
SEQ, LEN, CRC and ETX). Every message is a frozen dataclass named for its wire meaning, with a
class-level `CMD` code and `KIND`:

- ``link``: ACK (0x06) and NAK (0x15); their frame SEQ is the sequence number they answer.
- ``command``: host -> device, 0x10-0x7F. The device answers each with exactly one frame that
  carries the command's SEQ: a ``reply`` (0x80-0xBF) or ACK (accepted) or NAK (refused, reason).
- ``event``: device -> host, 0xC0-0xFF, sent unsolicited with the device's own SEQ and
  retransmitted until the host ACKs it. Its payload starts with the device's 16-bit event
  number (1, 2, ... since power-up) so the host notices an event it never received.

Common codes (every device): IDENTIFY 0x11 -> IDENTITY 0x91, GET_STATUS 0x12 -> STATUS 0x92,
CLEAR_FAULTS 0x13 -> ACK, FAULT_RAISED 0xE0, FAULT_GONE 0xE1, DOOR_REPORT 0xE2. (0x10 is DLE and
0x02/0x03 are STX/ETX: no CMD uses them, so common frames need no escaping.) Device codes:
shuffler 0x20-0x2F / 0xA0-0xA7 / 0xC0-0xC7, dice shaker 0x30-0x3F / 0xA8-0xAF / 0xC8-0xCF,
shoe reader 0x40-0x4F / 0xB0-0xB7 / 0xD0-0xD7, timer bell 0x50-0x5F / 0xB8-0xBF / 0xD8-0xDF.

Integers are big-endian. Strings are one length byte then UTF-8 (at most 32 bytes). Payloads
that are too short, too long or malformed raise `PayloadError`, which the codec turns into a
`ProtocolError` event; it never escapes the codec.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar, Literal, Self

Kind = Literal["link", "command", "reply", "event"]

MAX_TEXT = 32
FIRMWARE_HASH_SIZE = 32  # SHA-256 of the firmware image


class PayloadError(ValueError):
    """A payload does not match its command's layout."""


class NakReason(IntEnum):
    """Why a frame was refused (the NAK payload byte)."""

    BAD_FRAME = 1  # garbage, bad CRC, bad length, truncated or oversized; the SEQ byte is 0
    UNKNOWN_COMMAND = 2
    BAD_PAYLOAD = 3
    BUSY = 4  # e.g. a shuffle is running; shuffles cannot be interrupted
    FAULT_ACTIVE = 5  # a latched fault must be cleared first
    DOOR_OPEN = 6  # a lid, door or tamper switch is open
    NOT_ALLOWED = 7  # the command is not valid in the device's present state


class CommonFault(IntEnum):
    """Fault codes 1-3 mean the same on every device; 4-15 are the device's own."""

    POWER_LOST = 1  # the device restarted while an operation was running
    HARDWARE = 2  # an internal self-test failed
    MEMORY = 3  # the device's non-volatile memory failed its check


# The names drivers and simulators give the common fault codes (a device adds its own, 4-15).
COMMON_FAULT_NAMES: Mapping[int, str] = {
    CommonFault.POWER_LOST: "power_lost",
    CommonFault.HARDWARE: "hardware",
    CommonFault.MEMORY: "memory",
}


class StatusFlag(IntEnum):
    BUSY = 0x01  # an operation (shuffle, shake) is running
    POWERED_UP = 0x02  # the device started since the host's last GET_STATUS


@dataclass(frozen=True, slots=True)
class Message:
    CMD: ClassVar[int]
    KIND: ClassVar[Kind]

    def encode_payload(self) -> bytes:
        return b""

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if payload:
            raise PayloadError(f"{cls.__name__} takes no payload, got {len(payload)} bytes")
        return cls()


@dataclass(frozen=True, slots=True)
class DeviceEvent(Message):
    """An unsolicited device fact. `number` is the device's event counter (u16, wraps)."""

    KIND: ClassVar[Kind] = "event"
    number: int


def pack_text(value: str) -> bytes:
    raw = value.encode("utf-8")
    if len(raw) > MAX_TEXT:
        raise PayloadError(f"text longer than {MAX_TEXT} bytes: {value!r}")
    return bytes((len(raw),)) + raw


def unpack_text(payload: bytes, offset: int) -> tuple[str, int]:
    if offset >= len(payload):
        raise PayloadError("text length byte missing")
    size = payload[offset]
    end = offset + 1 + size
    if size > MAX_TEXT or end > len(payload):
        raise PayloadError("text runs past the payload")
    try:
        return payload[offset + 1 : end].decode("utf-8"), end
    except UnicodeDecodeError as exc:
        raise PayloadError(f"text is not UTF-8: {exc}") from None


def unpack_exact(layout: struct.Struct, payload: bytes, name: str) -> tuple[int, ...]:
    if len(payload) != layout.size:
        raise PayloadError(f"{name}: payload is {len(payload)} bytes, expected {layout.size}")
    values: tuple[int, ...] = layout.unpack(payload)
    return values


MAX_FAULT_CODE = 15  # STATUS.faults is a u16: bit n is fault code n, and there is no code 0
MAX_DOOR = 7  # STATUS.doors is a u8: bit n is door n


def _fault_code(code: int, name: str) -> int:
    if not 1 <= code <= MAX_FAULT_CODE:
        raise PayloadError(f"{name}: fault code {code} (1-{MAX_FAULT_CODE})")
    return code


_U8 = struct.Struct(">B")
_EVENT_U8 = struct.Struct(">HB")
_EVENT_U8U8 = struct.Struct(">HBB")
_STATUS = struct.Struct(">BHBHB")


# --- link -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ack(Message):
    CMD: ClassVar[int] = 0x06
    KIND: ClassVar[Kind] = "link"


@dataclass(frozen=True, slots=True)
class Nak(Message):
    CMD: ClassVar[int] = 0x15
    KIND: ClassVar[Kind] = "link"
    reason: int

    def encode_payload(self) -> bytes:
        return _U8.pack(self.reason)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        (reason,) = unpack_exact(_U8, payload, "NAK")
        return cls(reason)


# --- common commands and replies ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Identify(Message):
    CMD: ClassVar[int] = 0x11
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class Identity(Message):
    """Who the device is: compared with the config's approved list before the device is used."""

    CMD: ClassVar[int] = 0x91
    KIND: ClassVar[Kind] = "reply"
    make: str
    model: str
    serial: str
    firmware: str
    firmware_hash: bytes

    def encode_payload(self) -> bytes:
        if len(self.firmware_hash) != FIRMWARE_HASH_SIZE:
            raise PayloadError("firmware_hash must be 32 bytes")
        return (
            pack_text(self.make)
            + pack_text(self.model)
            + pack_text(self.serial)
            + pack_text(self.firmware)
            + self.firmware_hash
        )

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        make, at = unpack_text(payload, 0)
        model, at = unpack_text(payload, at)
        serial, at = unpack_text(payload, at)
        firmware, at = unpack_text(payload, at)
        digest = payload[at:]
        if len(digest) != FIRMWARE_HASH_SIZE:
            raise PayloadError(f"IDENTITY: firmware hash is {len(digest)} bytes, expected 32")
        return cls(make, model, serial, firmware, bytes(digest))


@dataclass(frozen=True, slots=True)
class GetStatus(Message):
    CMD: ClassVar[int] = 0x12
    KIND: ClassVar[Kind] = "command"


@dataclass(frozen=True, slots=True)
class Status(Message):
    """flags (StatusFlag bits), faults (bit n = fault code n is latched), doors (bit n = door n
    open), events (the device's event counter), pending (events queued, not yet acknowledged)."""

    CMD: ClassVar[int] = 0x92
    KIND: ClassVar[Kind] = "reply"
    flags: int
    faults: int
    doors: int
    events: int
    pending: int

    def encode_payload(self) -> bytes:
        return _STATUS.pack(self.flags, self.faults, self.doors, self.events, self.pending)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        return cls(*unpack_exact(_STATUS, payload, "STATUS"))


@dataclass(frozen=True, slots=True)
class ClearFaults(Message):
    """Clear latched faults whose cause is gone (a supervisor's action at the table)."""

    CMD: ClassVar[int] = 0x13
    KIND: ClassVar[Kind] = "command"


# --- common events ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FaultRaised(DeviceEvent):
    CMD: ClassVar[int] = 0xE0
    code: int

    def encode_payload(self) -> bytes:
        return _EVENT_U8.pack(self.number, self.code)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, code = unpack_exact(_EVENT_U8, payload, "FAULT_RAISED")
        return cls(number, _fault_code(code, "FAULT_RAISED"))


@dataclass(frozen=True, slots=True)
class FaultGone(DeviceEvent):
    CMD: ClassVar[int] = 0xE1
    code: int

    def encode_payload(self) -> bytes:
        return _EVENT_U8.pack(self.number, self.code)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, code = unpack_exact(_EVENT_U8, payload, "FAULT_GONE")
        return cls(number, _fault_code(code, "FAULT_GONE"))


@dataclass(frozen=True, slots=True)
class DoorReport(DeviceEvent):
    """Door `door` (its bit number in STATUS.doors) is now open (1) or closed (0)."""

    CMD: ClassVar[int] = 0xE2
    door: int
    open: int

    def encode_payload(self) -> bytes:
        return _EVENT_U8U8.pack(self.number, self.door, self.open)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        number, door, is_open = unpack_exact(_EVENT_U8U8, payload, "DOOR_REPORT")
        if is_open > 1 or door > MAX_DOOR:
            raise PayloadError(f"DOOR_REPORT: door {door} (0-{MAX_DOOR}), open {is_open} (0/1)")
        return cls(number, door, is_open)


COMMON_MESSAGES: tuple[type[Message], ...] = (
    Ack,
    Nak,
    Identify,
    Identity,
    GetStatus,
    Status,
    ClearFaults,
    FaultRaised,
    FaultGone,
    DoorReport,
)


def message_set(*groups: Iterable[type[Message]]) -> Mapping[int, type[Message]]:
    """CMD -> message class for one device; refuses two classes with one code."""
    table: dict[int, type[Message]] = {}
    for group in groups:
        for cls in group:
            if cls.CMD in table and table[cls.CMD] is not cls:
                raise ValueError(
                    f"CMD 0x{cls.CMD:02X} used by {table[cls.CMD].__name__} and {cls.__name__}"
                )
            table[cls.CMD] = cls
    return table
