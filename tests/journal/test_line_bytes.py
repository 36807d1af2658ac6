"""A line's bytes are those of one `json.dumps` of its keys, whichever path wrote them.

The writer formats a line in one pass from parts it keeps as JSON (its table, its actors, its
events) and `encode_line` from plain values; both must write, byte for byte, what the format
says (docs/journal.md): the hash chain is over these bytes, and a reader re-encoding a line
with `json.dumps` must find the same text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daemon.config import JournalConfig
from daemon.journal import Journal
from daemon.journal.format import (
    FIELDS,
    GENESIS,
    Record,
    _json_default,
    decode_line,
    encode_line,
    make_record,
)

from .test_append import Bet, Seat


def reference(values: dict[str, Any]) -> bytes:
    """The format's definition: the keys in order, `json.dumps` compact, UTF-8, a newline."""
    text = json.dumps(
        {key: values[key] for key in FIELDS},
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
        default=_json_default,
    )
    return (text + "\n").encode("utf-8")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
texts = st.text()  # quotes, backslashes, control characters, U+2028, astral planes
rounds = st.none() | st.integers() | st.text() | st.booleans()
monos = st.floats(allow_nan=False, allow_infinity=False) | st.integers(min_value=0)


@given(
    seq=st.integers(min_value=1),
    ts=texts,
    mono=monos,
    table=texts,
    round_id=rounds,
    actor=texts,
    payload=st.dictionaries(st.text(), json_values, max_size=5),
    prev=texts,
)
def test_encode_line_writes_the_json_dumps_of_its_keys(**values: Any) -> None:
    line = encode_line(**values, event="table.note")
    assert line == reference({**values, "event": "table.note", "round": values["round_id"]})


@pytest.mark.parametrize(
    "bad",
    [
        {"payload": {"n": float("nan")}},
        {"payload": {"n": float("inf")}},
        {"mono": float("nan")},
        {"mono": float("-inf")},
        {"payload": {"obj": object()}},
        {"round_id": object()},
        {"actor": b"\xff"},  # bytes are rendered as hex, like the payload's
        {"seq": True},
        {"ts": 12},
    ],
)
def test_odd_values_are_rendered_or_refused_as_json_dumps_does(bad: dict[str, Any]) -> None:
    values: dict[str, Any] = {
        "seq": 3, "ts": "2027-01-15T09:00:00.000000Z", "mono": 1.5, "table": "T01",
        "round_id": "R1", "actor": "dealer", "event": "table.note", "payload": {},
        "prev": GENESIS, **bad,
    }  # fmt: skip
    try:
        expected: bytes | type[Exception] = reference({**values, "round": values["round_id"]})
    except (TypeError, ValueError) as exc:
        expected = type(exc)
    if isinstance(expected, bytes):
        assert encode_line(**values) == expected
    else:
        with pytest.raises(expected):
            encode_line(**values)


def test_a_circular_payload_is_refused_and_the_next_line_is_not_blamed_for_it() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    values: dict[str, Any] = {
        "seq": 3, "ts": "2027-01-15T09:00:00.000000Z", "mono": 1.5, "table": "T01",
        "round_id": None, "actor": "dealer", "event": "table.note", "prev": GENESIS,
    }  # fmt: skip
    with pytest.raises(ValueError, match="Circular"):
        encode_line(**values, payload=loop)
    shared = {"a": 1}
    assert encode_line(**values, payload={"x": shared, "y": shared}) == reference(
        {**values, "round": None, "payload": {"x": shared, "y": shared}}
    )


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(
    actor=st.text(min_size=1),
    round_id=st.none() | st.integers() | st.text(),
    payload=st.dictionaries(st.text(), json_values, max_size=5),
    table=st.text(min_size=1, max_size=8),
)
def test_the_writer_writes_the_json_dumps_of_every_line(
    tmp_path_factory: pytest.TempPathFactory,
    actor: str,
    round_id: int | str | None,
    payload: dict[str, Any],
    table: str,
) -> None:
    directory = tmp_path_factory.mktemp("journal")
    with Journal.open(JournalConfig(dir=directory), table) as journal:
        first = journal.append("table.note", actor=actor, round_id=round_id, payload=payload,
                               commit=False)  # fmt: skip
        # The same actor again: its JSON comes from the writer's memory.
        second = journal.append("table.note", actor=actor, payload={"bet": Bet(Seat.EAST, 5)},
                                commit=True)  # fmt: skip
    for record in (first, second):
        values = {
            "seq": record.seq, "ts": record.ts, "mono": record.mono, "table": table,
            "round": record.round_id, "actor": actor, "event": "table.note",
            "payload": dict(record.payload), "prev": record.prev,
        }  # fmt: skip
        assert record.line == reference(values)
    assert decode_line(first.line) == first
    assert json.loads(second.line)["payload"] == {"bet": {"seat": "east", "amount": 5}}
    on_disk = b"".join(p.read_bytes() for p in sorted(Path(directory).glob("journal-*.jsonl")))
    assert first.line + second.line in on_disk


def test_a_record_made_on_the_hot_path_is_the_record() -> None:
    fields = (7, "ts", 1.5, "T01", "R1", "dealer", "table.note", {"a": 1}, GENESIS, "h", b"l\n")
    made = make_record(*fields)
    assert made == Record(*fields)
    assert repr(made) == repr(Record(*fields))
    with pytest.raises(AttributeError):
        made.seq = 8  # type: ignore[misc]
