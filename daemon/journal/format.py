"""The journal's on-disk format: one JSON event a line, each line chained to the one before.

A line is UTF-8 JSON with its keys in this order, then a single ``\\n``::

    {"seq":7,"ts":"2026-11-29T12:00:00.000000Z","mono":812.031337,"table":"T01",
     "round":"R42","actor":"shoe_reader","event":"shoe.card_read","payload":{"card":"AS"},
     "prev":"<64 lowercase hex>"}

``prev`` is the SHA-256 of the previous line's exact bytes, its ``\\n`` included (so
``sed -n 6p FILE | sha256sum`` reproduces line 7's ``prev``). The first line of a journal has
``seq`` 1 and ``prev`` = ``GENESIS`` (64 zeros). The chain runs on across files: the first line
of a rotated file carries the hash of the last line of the file before it.

Files are named ``journal-<first seq, 12 digits>-<UTC date yyyymmdd>.jsonl``; their order is
the order of the first seq, never of the date (a wall clock may step back). A line is an event
only once its ``\\n`` is written: trailing bytes without one are a torn write.

This module holds the parts shared by the writer, the reader and the verifier; it does no
writing.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from json.encoder import c_encode_basestring, c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Any, BinaryIO

GENESIS = "0" * 64
# The largest line the floor takes (the largest a table writes: its checkpoints); the stream is
# made with it as its `max_msg_size`, so the broker refuses a longer message before storing it.
MAX_LINE_BYTES = 256 * 1024
FILE_PATTERN = re.compile(r"^journal-(\d{12})-(\d{8})\.jsonl$")
EVENT_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
FIELDS = ("seq", "ts", "mono", "table", "round", "actor", "event", "payload", "prev")


class JournalError(Exception):
    """Base of every journal failure."""


class JournalCorrupt(JournalError):
    """The journal on disk is not a valid chain (see `tabled verify-log` for the diagnosis)."""


@dataclass(frozen=True)
class Record:
    """One journaled event, as it is (or will be) on disk."""

    seq: int
    ts: str
    mono: float
    table: str
    round_id: str | int | None
    actor: str
    event: str
    payload: Mapping[str, Any]
    prev: str
    hash: str
    line: bytes = field(repr=False)


_new_object = object.__new__
_set_attribute = object.__setattr__


def make_record(  # noqa: PLR0917 - the hot path; positional, in the fields' order
    seq: int,
    ts: str,
    mono: float,
    table: str,
    round_id: str | int | None,
    actor: str,
    event: str,
    payload: Mapping[str, Any],
    prev: str,
    hash: str,
    line: bytes,
) -> Record:
    """``Record(...)`` for the writer's and the reader's hot paths: the same frozen record,
    its fields set at once (its ``__dict__`` given whole) rather than one ``object.__setattr__``
    each."""
    record: Record = _new_object(Record)
    _set_attribute(record, "__dict__", {
        "seq": seq, "ts": ts, "mono": mono, "table": table, "round_id": round_id,
        "actor": actor, "event": event, "payload": payload, "prev": prev, "hash": hash,
        "line": line,
    })  # fmt: skip
    return record


def record_dict(record: Record) -> dict[str, Any]:
    """A record as the API and the feed show it: the line's keys (``round`` for `round_id`)
    plus its hash; the payload is a deep copy, so the caller may change it."""
    return {
        "seq": record.seq,
        "ts": record.ts,
        "mono": record.mono,
        "table": record.table,
        "round": record.round_id,
        "actor": record.actor,
        "event": record.event,
        "payload": copy.deepcopy(dict(record.payload)),
        "prev": record.prev,
        "hash": record.hash,
    }


def file_name(first_seq: int, day: str) -> str:
    """`day` is the ISO date of the file's first event (``2026-11-29``)."""
    return f"journal-{first_seq:012d}-{day.replace('-', '')}.jsonl"


def parse_file_name(name: str) -> tuple[int, str] | None:
    """(first seq, ISO day) of a journal file name, or None for any other file."""
    m = FILE_PATTERN.match(name)
    if m is None:
        return None
    raw_day = m.group(2)
    return int(m.group(1)), f"{raw_day[:4]}-{raw_day[4:6]}-{raw_day[6:]}"


def journal_files(directory: Path) -> list[Path]:
    """The journal's files in chain order (by first seq); other files are ignored."""
    found: list[tuple[int, Path]] = []
    for path in directory.iterdir():
        parsed = parse_file_name(path.name)
        if parsed is not None and path.is_file():
            found.append((parsed[0], path))
    found.sort()
    return [p for _, p in found]


_second_cache: tuple[int, str] = (-1, "")


def iso_utc(wall: float) -> str:
    """``2026-11-29T12:00:00.123456Z``; the date-and-second part is formatted once a second."""
    global _second_cache  # noqa: PLW0603 -- a one-entry cache on the append path
    micros = round(wall * 1_000_000)
    second, micro = divmod(micros, 1_000_000)
    cached_second, prefix = _second_cache
    if second != cached_second:
        prefix = datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second_cache = (second, prefix)
    return "%s.%06dZ" % (prefix, micro)  # noqa: UP031 - quicker than the f-string's format spec


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _json_default(value: Any) -> Any:
    # Payloads carry the domain's frozen dataclasses and enums; render them as plain data.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"journal payload: {type(value).__name__} is not JSON-serialisable")


_encoder = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default
)
# The same encoder's C parts, called directly: `JSONEncoder.encode` builds them anew at each call.
_escape: Callable[[str], str] = c_encode_basestring or encode_basestring
_float_repr = float.__repr__
_int_repr = int.__repr__


def json_value(value: Any) -> str:
    """`value` as JSON, exactly as the line's encoder writes it (no spaces, UTF-8 kept, no NaN).
    Raises TypeError/ValueError on bad data."""
    if c_make_encoder is None:  # an interpreter without the C accelerator
        return _encoder.encode(value)
    # Fresh markers each call (circular references are refused, and a failed call leaves none
    # behind for the next): its construction is cheap, unlike `JSONEncoder.encode`'s.
    encode = c_make_encoder({}, _json_default, _escape, None, ":", ",", False, False, False)
    return "".join(encode(value, 0))


def json_number(value: Any) -> str:
    """A float, int or other JSON value, as `json_value` writes it; a finite float directly."""
    if type(value) is float and value - value == 0.0:  # finite: NaN and infinities are refused
        return _float_repr(value)
    return json_value(value)


def json_round(round_id: str | int | None) -> str:
    """A line's ``round`` value as JSON."""
    if round_id is None:
        return "null"
    if type(round_id) is str:
        return _escape(round_id)
    if type(round_id) is int:  # a Thirteen round's number: what json writes for an int
        return _int_repr(round_id)
    return json_value(round_id)


def format_line(  # noqa: PLR0917 - the hot path; positional, in the line's order
    seq: int,
    ts: str,
    mono: str,
    table: str,
    round_json: str,
    actor: str,
    event: str,
    payload: str,
    prev: str,
) -> bytes:
    """A line's bytes from its parts already in JSON (`table`, `actor`, `event` and `payload`
    with their quotes), but for `seq` (an int), `ts` and `prev`, whose text needs no escaping
    (an `iso_utc` time, a hex digest). The writer keeps the JSON of its table, its actors and
    its events, and formats each line in one pass; `encode_line` is the same line from plain
    values."""
    return (
        f'{{"seq":{seq},"ts":"{ts}","mono":{mono},"table":{table},"round":{round_json},'
        f'"actor":{actor},"event":{event},"payload":{payload},"prev":"{prev}"}}\n'
    ).encode()


def encode_line(
    *,
    seq: int,
    ts: str,
    mono: float,
    table: str,
    round_id: str | int | None,
    actor: str,
    event: str,
    payload: Mapping[str, Any],
    prev: str,
) -> bytes:
    """The exact bytes of one line, ``\\n`` included. Raises TypeError/ValueError on bad data.

    They are those of ``json.dumps`` of the line's keys in `FIELDS` order (``ensure_ascii``
    off, no spaces, no NaN, the payload's dataclasses and enums as plain data), then ``\\n``.
    """
    if type(seq) is not int or type(ts) is not str or type(prev) is not str:
        return _encode_slow(seq, ts, mono, table, round_id, actor, event, payload, prev)
    return format_line(
        seq,
        _escape(ts)[1:-1],
        json_number(mono),
        json_value(table),
        json_round(round_id),
        json_value(actor),
        json_value(event),
        json_value(payload),
        _escape(prev)[1:-1],
    )


def _encode_slow(*values: Any) -> bytes:
    # Types a line never has (a bool seq, a number for ts): the encoder as a whole says how.
    text = json_value(dict(zip(FIELDS, values, strict=True)))
    return (text + "\n").encode("utf-8")


def decode_line(line: bytes) -> Record:
    """A Record from one line's bytes; ValueError if it is not a well-formed event line."""
    try:
        obj = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(obj, dict) or tuple(obj) != FIELDS:
        raise ValueError("not a journal event (wrong keys)")
    seq, ts, mono, table = obj["seq"], obj["ts"], obj["mono"], obj["table"]
    round_id, actor, event, payload, prev = (
        obj["round"],
        obj["actor"],
        obj["event"],
        obj["payload"],
        obj["prev"],
    )
    if not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 1):
        raise ValueError("seq is not a positive integer")
    if not (isinstance(prev, str) and len(prev) == 64):
        raise ValueError("prev is not a SHA-256 hex digest")
    if not (isinstance(ts, str) and isinstance(table, str) and isinstance(actor, str)):
        raise ValueError("ts, table and actor must be strings")
    if not (isinstance(event, str) and isinstance(payload, dict)):
        raise ValueError("event must be a string and payload an object")
    if not isinstance(mono, int | float) or isinstance(mono, bool):
        raise ValueError("mono is not a number")
    if round_id is not None and not isinstance(round_id, str | int):
        raise ValueError("round must be a string, an integer or null")
    return make_record(
        seq, ts, float(mono), table, round_id, actor, event, MappingProxyType(payload), prev,
        line_hash(line), line,
    )  # fmt: skip


@dataclass(frozen=True)
class RawLine:
    """One line as read: `data` keeps its ``\\n`` unless the line is torn (`complete` False)."""

    path: Path
    number: int
    offset: int
    data: bytes

    @property
    def complete(self) -> bool:
        return self.data.endswith(b"\n")


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries durable (a file created, renamed or removed in it)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path, start: int = 0) -> Iterator[RawLine]:
    """Every line of one file, 1-based numbers and byte offsets; a last partial line too.

    From `start` (the byte a line starts at) on, the lines' numbers are not known: 0.
    """
    offset = start
    with path.open("rb") as fh:
        fh.seek(start)
        for number, data in enumerate(fh, start=1):
            yield RawLine(path, number if start == 0 else 0, offset, data)
            offset += len(data)


def blocks_from_end(
    fh: BinaryIO, block: int, end: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """(position, bytes) of an open file, `block` bytes at a time from its end (or `end`) back."""
    pos = fh.seek(0, 2) if end is None else end
    while pos > 0:
        step = min(block, pos)
        pos -= step
        fh.seek(pos)
        yield pos, fh.read(step)


def last_complete_line(path: Path, block: int = 65536) -> tuple[bytes | None, int]:
    """(the last ``\\n``-terminated line or None, the byte offset where any torn tail starts)."""
    with path.open("rb") as fh:
        tail = b""
        # Find the last newline, then the one before it: the line between them is the last one.
        for pos, data in blocks_from_end(fh, block):
            tail = data + tail
            last_nl = tail.rfind(b"\n")
            if last_nl < 0:
                continue
            before = tail.rfind(b"\n", 0, last_nl)
            if before >= 0 or pos == 0:
                start = before + 1
                return tail[start : last_nl + 1], pos + last_nl + 1
        return None, 0
