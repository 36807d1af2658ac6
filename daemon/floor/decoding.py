"""A journal line decoded on the floor: the record `daemon.journal.format.decode_line` makes, its
JSON parsed by orjson (a third of the json module's time: decoding was the largest part of the
floor's ingest, once by the history and once more by the live view).

The result is the journal's own, line for line: a line orjson parses into the journal's nine
fields with the journal's types becomes the same record (`make_record`, the same hash); every
other line goes to the journal's `decode_line`, whose verdict (the record, or the ValueError
and its words) is then the floor's. orjson reads an integer of more than 64 bits as a float
where json keeps it whole, so a line with a number of 19 digits or more goes there too, and so
does whatever orjson refuses (NaN, a lone surrogate, an infinite number, deep nesting)."""

from __future__ import annotations

import re
from types import MappingProxyType

import orjson

from daemon.journal.format import FIELDS, Record, line_hash, make_record
from daemon.journal.format import decode_line as journal_decode_line

# A JSON number of 19 digits or more (after the `:`, `,` or `[` a value follows): maybe beyond
# 64 bits. A string holding such a run (a hex digest is preceded by its quote) is not matched;
# a false match only costs the json module's time.
LONG_NUMBER = re.compile(rb"[:,\[][ \t\r\n]*-?[0-9]{19}")

_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError


def decode_line(line: bytes) -> Record:
    """A Record from one line's bytes; ValueError if it is not a well-formed event line (as
    `daemon.journal.format.decode_line`, whose record and errors these are)."""
    if LONG_NUMBER.search(line) is not None:
        return journal_decode_line(line)
    try:
        obj = _loads(line)
    except _JSONDecodeError:
        return journal_decode_line(line)
    if type(obj) is dict and tuple(obj) == FIELDS:
        seq, ts, mono, table, round_id, actor, event, payload, prev = obj.values()
        kind = type(round_id)
        if (
            type(seq) is int
            and seq >= 1
            and type(prev) is str
            and len(prev) == 64
            and type(ts) is str
            and type(table) is str
            and type(actor) is str
            and type(event) is str
            and type(payload) is dict
            and type(mono) in (int, float)
            and (round_id is None or kind is str or kind is int)
        ):
            return make_record(
                seq, ts, float(mono), table, round_id, actor, event,
                MappingProxyType(payload), prev,
                line_hash(line), line,
            )  # fmt: skip
    return journal_decode_line(line)  # its error, in its words
