"""The frame of the tabled device protocol, and a sans-I/O codec for it (the h11 model).

One frame, as it travels on the wire::

    +------+------+-----+-----+-----+-------------+--------+--------+------+
    | STX  | ADDR | SEQ | LEN | CMD | PAYLOAD     | CRC hi | CRC lo | ETX  |
    | 0x02 | 1 B  | 1 B | 1 B | 1 B | LEN bytes   |      CRC-16     | 0x03 |
    +------+------+-----+-----+-----+-------------+--------+--------+------+

- ADDR: bits 0-6 the device's bus address (1-127); bit 7 set on frames the device sends, clear
  on frames the host sends (an echo of our own frame is never taken for the peer's).
- SEQ: 1-255, then wraps to 1. 0 only in a NAK of a frame too damaged to read its SEQ.
- LEN: the PAYLOAD's length, 0-128 (MAX_PAYLOAD).
- CRC: CRC-16/XMODEM (`drivers.crc`, check value 0x31C3) over ADDR..PAYLOAD, high byte first.
- Escaping: between STX and ETX, each byte 0x02, 0x03 or 0x10 is sent as DLE (0x10) followed by
  the byte XOR 0x20 (0x10 0x22, 0x10 0x23, 0x10 0x30). So an STX on the wire always starts a
  frame and an ETX always ends one: a receiver resynchronises at the next STX with no timer,
  a truncated frame is detected the moment the next frame starts, and garbage can never swallow
  the good frame that follows it. LEN and the CRC are checked after unescaping.
- Size: at most 136 bytes unescaped (MAX_FRAME) and 270 on the wire (MAX_WIRE_FRAME).

`FrameCodec` is the same for both ends; its role says which direction bit it sends and
expects. `send(message, seq, address)` returns the bytes to write; `receive_data(bytes)` feeds
received bytes; `next_event()` returns the next `Frame`, a `ProtocolError` for bytes that are not
a good frame, or None when it needs more data. Nothing escapes it on bad input: garbage, a bad
CRC, a wrong LEN, a truncated or oversized frame, an unknown CMD or a malformed payload each
become one `ProtocolError`, and decoding continues with the bytes after them; a run of STX
bytes (each an empty frame cut short) is one error. Decoding costs time linear in the bytes,
whatever the noise (no search looks further than one frame). The receive buffer is bounded
by BUFFER_LIMIT plus the latest feed, provided the caller drains `next_event()` after each.
"""

from __future__ import annotations

import re
from binascii import crc_hqx
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum, StrEnum

from drivers.crc import crc16
from drivers.messages import Message, PayloadError

STX = 0x02
ETX = 0x03
DLE = 0x10
FROM_DEVICE = 0x80
MAX_PAYLOAD = 128
HEADER_SIZE = 4  # ADDR SEQ LEN CMD
MAX_FRAME = 1 + HEADER_SIZE + MAX_PAYLOAD + 2 + 1
MAX_WIRE_FRAME = 2 + 2 * (HEADER_SIZE + MAX_PAYLOAD + 2)
BUFFER_LIMIT = 4 * MAX_WIRE_FRAME
ERROR_SAMPLE = 48  # bytes of a bad frame kept in its ProtocolError, for the log

_STX = b"\x02"
_STX_RUN = re.compile(b"\x02+")
_ETX = b"\x03"
_DLE = b"\x10"


class Role(Enum):
    HOST = "host"
    DEVICE = "device"


class ErrorKind(StrEnum):
    GARBAGE = "garbage"  # bytes outside any frame
    TRUNCATED = "truncated"  # a frame cut short by the next STX, or shorter than a header
    OVERSIZED = "oversized"  # no ETX within MAX_WIRE_FRAME bytes
    ESCAPE = "escape"  # DLE followed by a byte that is not an escaped STX, ETX or DLE
    LENGTH = "length"  # LEN disagrees with the bytes received
    CRC = "crc"
    DIRECTION = "direction"  # the direction bit says we sent it (an echo)
    UNKNOWN_COMMAND = "unknown_command"
    BAD_PAYLOAD = "bad_payload"


@dataclass(frozen=True, slots=True)
class Frame:
    address: int
    seq: int
    message: Message


# A frame as the host's link reads it (`FrameCodec.decode`): (address, seq, message), a tuple
# and not a `Frame`, so the link's hot path makes no object of its own a frame.
Decoded = tuple[int, int, Message]


@dataclass(frozen=True, slots=True)
class ProtocolError:
    """Bytes that are not a good frame. `seq` and `address` are set when the frame was intact
    enough to read them (an unknown CMD or a bad payload), else None."""

    kind: ErrorKind
    data: bytes
    seq: int | None = None
    address: int | None = None
    detail: str = ""


def escape(body: bytes) -> bytes:
    if DLE in body or STX in body or ETX in body:
        return body.replace(_DLE, b"\x10\x30").replace(_STX, b"\x10\x22").replace(_ETX, b"\x10\x23")
    return body


def unescape(body: bytes) -> bytes | None:
    """The unescaped body, or None if a DLE is not followed by a valid escaped byte."""
    if DLE not in body:
        return body
    parts = body.split(_DLE)
    out = bytearray(parts[0])
    for part in parts[1:]:
        if not part or part[0] not in (0x22, 0x23, 0x30):
            return None
        out.append(part[0] ^ 0x20)
        out += part[1:]
    return bytes(out)


def encode_frame(address: int, seq: int, cmd: int, payload: bytes, from_device: bool) -> bytes:
    """The wire bytes of one frame (the codec's `send` without a message object)."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    if not 0 < address < 0x80 or not 0 <= seq <= 0xFF:
        raise ValueError(f"address {address} or seq {seq} out of range")
    body = bytes((address | FROM_DEVICE if from_device else address, seq, len(payload), cmd))
    if payload:
        body += payload
    crc = crc16(body)
    body += bytes((crc >> 8, crc & 0xFF))
    return b"\x02%b\x03" % escape(body)


class FrameCodec:
    """Sans-I/O encoder and decoder of frames for one end of a link."""

    __slots__ = ("_buffer", "_decoded", "_messages", "_sends_from_device", "_sent")

    def __init__(self, role: Role, messages: Mapping[int, type[Message]]) -> None:
        self._sends_from_device = role is Role.DEVICE
        self._messages = messages
        self._buffer = bytearray()
        # CMD -> (payload, message) of the last frame decoded with that CMD. Messages are
        # immutable, so a payload seen last time (the usual status poll) is not decoded again.
        self._decoded: dict[int, tuple[bytes, Message]] = {}
        # (message class, seq, address) -> wire bytes, for messages without fields (ACK,
        # GET_STATUS, IDENTIFY...): their frame is the same every time that SEQ comes round.
        self._sent: dict[tuple[type[Message], int, int], bytes] = {}

    def send(self, message: Message, seq: int, address: int) -> bytes:
        cls = type(message)
        key = (cls, seq, address)
        data = self._sent.get(key)
        if data is not None:
            return data
        data = encode_frame(
            address, seq, message.CMD, message.encode_payload(), self._sends_from_device
        )
        if _fieldless(cls):
            self._sent[key] = data
        return data

    def receive_data(self, data: bytes) -> None:
        buf = self._buffer
        # Bytes left over from earlier feeds beyond BUFFER_LIMIT mean the caller stopped
        # draining next_event(): keep the newest. This feed itself is kept whole, however
        # long (one read of a port may bring several frames).
        excess = len(buf) - BUFFER_LIMIT
        if excess > 0:
            del buf[:excess]
        buf += data

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def next_event(self) -> Frame | ProtocolError | None:
        item = self._next()
        if type(item) is tuple:
            return Frame(*item)
        return item  # type: ignore[return-value]

    def decode(self, data: bytes) -> list[Decoded | ProtocolError]:
        """`receive_data(data)`, then every item `next_event()` would return, in order, a frame
        as a `Decoded` tuple (the host's link: one call a read, no `Frame` made)."""
        buf = self._buffer
        if len(buf) > BUFFER_LIMIT:  # `receive_data(data)`, inline
            del buf[: len(buf) - BUFFER_LIMIT]
        buf += data
        out: list[Decoded | ProtocolError] = []
        while buf and (item := self._next()) is not None:
            out.append(item)
        return out

    def _next(self) -> Decoded | ProtocolError | None:
        buf = self._buffer
        if not buf:
            return None
        if buf[0] != STX:
            start = buf.find(_STX)
            cut = len(buf) if start < 0 else start
            junk = bytes(buf[:cut])
            del buf[:cut]
            return ProtocolError(ErrorKind.GARBAGE, junk[:ERROR_SAMPLE], detail=f"{cut} bytes")
        # Every search stops at the longest frame, so a long run of noise costs linear time.
        end = buf.find(_ETX, 1, MAX_WIRE_FRAME)
        restart = buf.find(_STX, 1, MAX_WIRE_FRAME if end < 0 else end)
        if restart > 0:
            if restart == 1:
                # a run of STX: each would be an empty frame cut short; one error for the run
                run = _STX_RUN.match(buf)
                restart = (run.end() if run else 2) - 1  # the last STX of the run may start a frame
            cut_short = bytes(buf[:restart])
            del buf[:restart]
            return ProtocolError(
                ErrorKind.TRUNCATED, cut_short[:ERROR_SAMPLE], detail=f"{restart} bytes"
            )
        if end < 0:
            if len(buf) >= MAX_WIRE_FRAME:
                long = bytes(buf[:ERROR_SAMPLE])
                following = buf.find(_STX, MAX_WIRE_FRAME)
                del buf[: len(buf) if following < 0 else following]
                return ProtocolError(ErrorKind.OVERSIZED, long, detail="no ETX")
            return None
        # `end` < MAX_WIRE_FRAME: the frame cannot be oversized
        if end + 1 == len(buf):  # the usual read: one whole frame
            wire = bytes(buf)
            buf.clear()
        else:
            wire = bytes(buf[: end + 1])
            del buf[: end + 1]
        body = wire[1:-1]
        if DLE in body:
            unescaped = unescape(body)
            if unescaped is None:
                return ProtocolError(ErrorKind.ESCAPE, wire[:ERROR_SAMPLE])
            body = unescaped
        size = len(body)
        if size < HEADER_SIZE + 2:
            return ProtocolError(ErrorKind.TRUNCATED, wire[:ERROR_SAMPLE])
        if body[2] != size - HEADER_SIZE - 2:
            return ProtocolError(ErrorKind.LENGTH, wire[:ERROR_SAMPLE], detail=f"LEN {body[2]}")
        # The CRC of a body followed by its own CRC (high byte first) is 0, and only then.
        # (crc16 is crc_hqx(data, 0): called here without the wrapper, on every frame.)
        if crc_hqx(body, 0):
            return ProtocolError(ErrorKind.CRC, wire[:ERROR_SAMPLE])
        raw_address, seq, cmd = body[0], body[1], body[3]
        address = raw_address & 0x7F
        if (raw_address >= FROM_DEVICE) == self._sends_from_device:
            return ProtocolError(ErrorKind.DIRECTION, wire[:ERROR_SAMPLE], seq, address)
        payload = body[HEADER_SIZE:-2]
        known = self._decoded.get(cmd)
        if known is not None and known[0] == payload:
            return address, seq, known[1]
        cls = self._messages.get(cmd)
        if cls is None:
            return ProtocolError(
                ErrorKind.UNKNOWN_COMMAND, wire[:ERROR_SAMPLE], seq, address, f"CMD 0x{cmd:02X}"
            )
        try:
            message = cls.decode_payload(payload)
        except (PayloadError, ValueError) as exc:
            return ProtocolError(ErrorKind.BAD_PAYLOAD, wire[:ERROR_SAMPLE], seq, address, str(exc))
        self._decoded[cmd] = (payload, message)
        return address, seq, message


_FIELDLESS: dict[type, bool] = {}


def _fieldless(cls: type[Message]) -> bool:
    """A message class without fields: every instance encodes to the same payload."""
    known = _FIELDLESS.get(cls)
    if known is None:
        known = _FIELDLESS[cls] = not fields(cls)
    return known
