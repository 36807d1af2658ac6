"""The chain's next line: its seq, time, bytes and hash, made from an event (docs/journal.md).

`Chain` holds where the chain stands (the next seq, the hash of the last line, the wall
clock's offset from the monotonic one) and the JSON of the names that repeat (the table, the
events and actors seen so far), so a line is written in one pass. The writer
(`daemon.journal.writer`) decides which file a line goes to and when it is durable; it makes a
line (`line`), places it, then takes it into the chain (`advance`).
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Any

from daemon.journal.format import (
    EVENT_PATTERN,
    GENESIS,
    Record,
    iso_utc,
    json_number,
    json_round,
    json_value,
)

# Actors remembered with their JSON; more (operators come and go) start the memory afresh.
NAMES_KEPT = 1024
# Wall minus monotonic time moving by more than this between two appends is a clock step.
CLOCK_STEP_SECONDS = 1.0

_sha256 = hashlib.sha256
_float_repr = float.__repr__
_int_repr = int.__repr__
_new_object = object.__new__
_set_attribute = object.__setattr__


class Chain:
    """One table's chain of lines, from where it resumes (`next_seq`, `prev`)."""

    def __init__(self, table_id: str, next_seq: int = 1, prev: str = GENESIS) -> None:
        self.table_id = table_id
        self.next_seq = next_seq
        self.prev = prev  # the hash of the last line: the `prev` of the next one
        self.last_ts: str | None = None
        self._clock_offset: float | None = None
        # The events and actors seen so far, with their JSON (the line's text for them); the
        # writer asks `events_json` before `check`, as `check` does first.
        self.events_json: dict[str, str] = {"clock.wall_stepped": '"clock.wall_stepped"'}
        self._actors: dict[str, str] = {}
        self._table_json = json_value(table_id)

    def check(self, event: str, actor: str) -> None:
        """ValueError for an event that is not a dotted fact or an empty actor."""
        if event not in self.events_json:
            if not EVENT_PATTERN.match(event):
                raise ValueError(
                    f"journal event {event!r} is not a dotted fact like shoe.card_read"
                )
            self.events_json[event] = json_value(event)
        if not actor:
            raise ValueError("journal event needs an actor")

    def clock_step(self, wall: float, mono: float) -> dict[str, Any] | None:
        """The payload of `clock.wall_stepped` when the wall clock stepped since the last line
        (R8: set or stepped by NTP or an operator), else None."""
        offset = wall - mono
        last_offset, self._clock_offset = self._clock_offset, offset
        if last_offset is not None and abs(offset - last_offset) > CLOCK_STEP_SECONDS:
            return {"step_seconds": round(offset - last_offset, 6), "before": self.last_ts}
        return None

    def line(  # noqa: PLR0917 - once a line: positional
        self,
        event: str,
        actor: str,
        round_id: str | int | None,
        data: dict[str, Any],
        wall: float,
        mono: float,
    ) -> Record:
        """The next line as a record (its bytes in `line`), not yet in the chain. TypeError or
        ValueError for a payload that is not JSON. `event` has passed `check`."""
        seq = self.next_seq
        ts = iso_utc(wall)
        actor_json = self._actors.get(actor)
        if actor_json is None:
            if len(self._actors) >= NAMES_KEPT:
                self._actors.clear()
            actor_json = self._actors[actor] = json_value(actor)
        # One pass: the parts that repeat (table, actor, event) are JSON already. What
        # `format.format_line`, `json_number`, `json_round`, `line_hash` and `make_record` do,
        # inline for the common values (a finite float, an int or no round): five calls a
        # line fewer; tests/journal checks the bytes against `encode_line`.
        mono_json = (
            _float_repr(mono) if type(mono) is float and mono - mono == 0.0 else json_number(mono)
        )
        if round_id is None:
            round_json = "null"
        elif type(round_id) is int:
            round_json = _int_repr(round_id)
        else:
            round_json = json_round(round_id)
        prev = self.prev
        line = (
            f'{{"seq":{seq},"ts":"{ts}","mono":{mono_json},"table":{self._table_json},'
            f'"round":{round_json},"actor":{actor_json},"event":{self.events_json[event]},'
            f'"payload":{json_value(data)},"prev":"{prev}"}}\n'
        ).encode()
        record: Record = _new_object(Record)
        _set_attribute(record, "__dict__", {
            "seq": seq, "ts": ts, "mono": mono, "table": self.table_id, "round_id": round_id,
            "actor": actor, "event": event, "payload": MappingProxyType(data), "prev": prev,
            "hash": _sha256(line).hexdigest(), "line": line,
        })  # fmt: skip
        return record

    def advance(self, record: Record) -> None:
        """Take the line `line` made into the chain: the next one follows it."""
        self.next_seq = record.seq + 1
        self.prev = record.hash
        self.last_ts = record.ts
