"""The floor decodes a line with orjson (daemon/floor/decoding.py) and gets the journal's record
or the journal's error, line for line: what it stores is what `decode_line` would have made."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.floor import decoding
from daemon.floor.synthetic import SyntheticTable
from daemon.journal.format import decode_line as journal_decode_line


def _verdict(decode: object, line: bytes) -> object:
    try:
        rec = decode(line)  # type: ignore[operator]
    except ValueError as exc:
        return ("error", str(exc))
    return ("record", rec, dict(rec.payload), type(rec.round_id), type(rec.seq))


def _same(line: bytes) -> None:
    assert _verdict(decoding.decode_line, line) == _verdict(journal_decode_line, line)


def _line(**change: object) -> bytes:
    base = SyntheticTable("D01").next_line()
    obj = json.loads(base)
    obj.update(change)
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def test_every_line_of_a_synthetic_table_decodes_to_the_journals_record() -> None:
    for line in SyntheticTable("D01", violation_share=1.0, tilt_share=1.0).lines(600):
        _same(line)


@pytest.mark.parametrize(
    "line",
    [
        _line(seq=2**64),  # beyond 64 bits: orjson would read a float
        _line(seq=-(2**63) - 1),
        _line(payload={"amount": 123456789012345678901234567890}),
        _line(payload={"amounts": [1, -99999999999999999999]}),
        _line(mono=True),
        _line(seq=True),
        _line(seq=0),
        _line(round=True),  # an int to the journal: taken as it is
        _line(round=[1]),
        _line(payload=[]),
        _line(prev="ab"),
        _line(ts=5),
        _line(mono=1),
        _line(event=None),
        b'{"seq":1}\n',
        b"[1,2]\n",
        b"not json\n",
        b"\xef\xbb\xbf" + _line(),  # a BOM
        _line().replace(b'"payload":{', b'"payload":{"x":NaN,'),
        _line().replace(b'"payload":{', b'"payload":{"x":1e400,'),
        _line().replace(b'"payload":{', b'"payload":{"x":"\\ud800",'),  # a lone surrogate
        _line().replace(b'"payload":{', b'"payload":{"x":"\xed\xa0\x80",'),  # not UTF-8
        _line().replace(b'"payload":{', b'"payload":{"x":"\xff",'),
        _line().replace(b'"payload":{', b'"payload":{"x":' + b"[" * 2000 + b"]" * 2000 + b","),
        _line().replace(b'"seq":', b'"seq":1,"seq":'),  # a key twice
        _line().replace(b'"actor"', b'"act\\u006fr"'),
    ],
)
def test_an_odd_or_malformed_line_gets_the_journals_verdict(line: bytes) -> None:
    _same(line)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(payload=st.dictionaries(st.text(), json_values, max_size=6), seq=st.integers())
def test_any_payload_decodes_as_the_journal_decodes_it(
    payload: dict[str, object], seq: int
) -> None:
    obj = {
        "seq": seq,
        "ts": "2026-01-01T00:00:00+00:00",
        "mono": 1.5,
        "table": "D01",
        "round": None,
        "actor": "system",
        "event": "x.y",
        "payload": payload,
        "prev": "0" * 64,
    }
    # json.dumps writes NaN and Infinity, which the journal's json reads and orjson refuses
    _same(
        json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        + b"\n"
    )
