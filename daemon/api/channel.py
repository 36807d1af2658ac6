"""The channel between the table's process and its API process (`daemon.api.process`).

An anonymous Unix socket pair made by the table's process for each API process it starts: no
path in the file system, so no other process can reach either end (the API process inherits
its end, nothing else does). Frames are length-prefixed: 4 bytes (big-endian) of length, then
one byte of kind, then the body:

- `J`: a JSON object, UTF-8. Everything the API process sends is JSON (requests: an action, a
  security fact, a training control, a metrics scrape): the API process faces the network, so
  the table's process reads nothing from it but plain data, each field checked, at most
  `MAX_FROM_API` bytes a frame.
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
MAX_FROM_API = 1 << 20  # bytes a frame from the API process may have
MAX_TO_API = 1 << 30  # a frame from the table's process (a burst of journal lines)


class ChannelError(Exception):
    """The peer broke the channel's framing (or sent what it may not)."""


def frame(kind: bytes, body: bytes) -> bytes:
    return HEADER.pack(len(body) + 1) + kind + body


def json_frame(message: dict[str, Any]) -> bytes:
    return frame(JSON, json.dumps(message, separators=(",", ":"), default=str).encode())


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
        raise ChannelError(f"a frame of {size} bytes (at most {limit})")
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


def json_body(body: bytes) -> dict[str, Any]:
    """A JSON frame's object; ChannelError for anything else."""
    try:
        message = json.loads(body, parse_float=finite_float, parse_constant=no_constant)
    except (ValueError, RecursionError):
        raise ChannelError("a frame that is not JSON") from None
    if not isinstance(message, dict):
        raise ChannelError("a JSON frame that is not an object")
    return message
