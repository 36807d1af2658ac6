"""The channel between the table's process and its API process (`daemon.api.process`).

An anonymous Unix socket pair made by the table's process for each API process it starts: no
path in the file system, so no other process can reach either end (the API process inherits
its end, nothing else does). Frames are length-prefixed: 4 bytes (big-endian) of length, then
one byte of kind, then the body:

- `J`: a JSON object, UTF-8. Everything the API process sends is JSON (requests: an action, a
  security fact, a training control, a metrics scrape; a refusal at its doors): the API process
  faces the network, so the table's process reads nothing from it but plain data, each field
  checked. A frame is at most `MAX_FROM_API` bytes (what the largest legitimate request needs:
  an action's body, at most `MAX_ACT_BODY`, encoded again is no longer than it was, plus the
  request's envelope), refused by its header before its body is read; and holds no number
  with a fraction or an exponent (nothing the API sends has one), so that parsing the largest
  frame costs the table's loop about a millisecond.
- `P`: a pickle, only from the table's process to the API process (the table trusts itself):
  the start-up facts (the table's config, its actions), each publication of its state, the
  answers to requests (dataclasses such as `TableMetrics`, or the exception raised).
- `L`: journal lines, exactly as on disk (each ends with its newline), in seq order.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import struct
from typing import Any

HEADER = struct.Struct(">I")
JSON, PICKLE, LINES = b"J", b"P", b"L"
# Bytes of an action's body (`POST /api/actions/...`, daemon.api.bodies): the largest a game
# declares (thirteen cards in three rows, a 500-character reason, a 200-character note) is under
# 3 KiB.
MAX_ACT_BODY = 16 << 10
MAX_FROM_API = MAX_ACT_BODY + (4 << 10)  # bytes a frame from the API process may have
MAX_TO_API = 1 << 30  # a frame from the table's process (a burst of journal lines)


class ChannelError(Exception):
    """The peer broke the channel's framing (or sent what it may not)."""


class FrameRefused(ChannelError):
    """A frame the peer may not send: too large, or not a JSON object as the channel takes it
    (a broken channel, such as one that ends inside a frame, is a plain `ChannelError`)."""


def frame(kind: bytes, body: bytes) -> bytes:
    return HEADER.pack(len(body) + 1) + kind + body


def json_frame(message: dict[str, Any]) -> bytes:
    # As UTF-8, not \u escapes: a string in a frame is never longer than it was in the body it
    # came from (a lone surrogate, which JSON allows, goes as `json.loads` reads bytes back).
    text = json.dumps(message, separators=(",", ":"), default=str, ensure_ascii=False)
    return frame(JSON, text.encode("utf-8", "surrogatepass"))


def pickle_frame(message: Any) -> bytes:
    return frame(PICKLE, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


async def read_frame(reader: asyncio.StreamReader, limit: int) -> tuple[bytes, bytes] | None:
    """The next frame's kind and body; None at the end of the stream (the peer went away)."""
    try:
        head = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise ChannelError("the channel ended inside a frame's header") from None
        return None
    (size,) = HEADER.unpack(head)
    if size < 1 or size > limit:
        raise FrameRefused(f"a frame of {size} bytes (at most {limit})")
    try:
        body = await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise ChannelError("the channel ended inside a frame") from None
    return body[:1], body[1:]


def finite_float(text: str) -> float:
    """`json.loads`'s `parse_float` for JSON the table takes in: a number too large for a
    float (`1e999`) is refused, as NaN and Infinity are (`no_constant`): the journal writes
    strict JSON, so a payload it could not write must not reach the procedure."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"a number out of range: {text[:32]}")
    return value


def no_constant(name: str) -> Any:
    """`json.loads`'s `parse_constant`: NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def no_float(text: str) -> Any:
    """`json.loads`'s `parse_float` for the channel: nothing the API process sends has a number
    with a fraction or an exponent, and such numbers are the slowest part of JSON to parse."""
    raise ValueError(f"a number with a fraction or an exponent: {text[:32]}")


def json_body(body: bytes) -> dict[str, Any]:
    """A JSON frame's object; FrameRefused for anything else."""
    try:
        message = json.loads(body, parse_float=no_float, parse_constant=no_constant)
    except (ValueError, RecursionError):
        raise FrameRefused("a frame that is not JSON as the channel takes it") from None
    if not isinstance(message, dict):
        raise FrameRefused("a JSON frame that is not an object")
    return message
