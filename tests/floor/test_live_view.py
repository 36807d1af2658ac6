"""The live view's rules (daemon/floor/live.py) without servers: which messages make a tile, when
it is provisional, what `/api/tables` shows of it, and the provisional alerts it pushes."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from daemon.floor.consumer import _Raw
from daemon.floor.live import PROVISIONAL_SECONDS, LiveView, _Key
from daemon.floor.store import BatchResult
from daemon.floor.synthetic import SyntheticTable, subject_of, table_key
from daemon.journal.format import line_hash
from daemon.journal.provenance import parse_public


def raw(line: bytes, msg_id: str | None = None, subject: str | None = None) -> _Raw:
    if subject is None or msg_id is None:
        subject, msg_id = (
            subject or subject_of("tabled", line)[0],
            msg_id or subject_of("tabled", line)[1],
        )
    return _Raw(subject.encode(), b"", line, msg_id)


def view(*tables: str) -> tuple[LiveView, list[dict[str, Any]]]:
    pushed: list[dict[str, Any]] = []
    live = LiveView({"T1": "Pit A"}, pushed.append)
    live.enrolled = dict.fromkeys(tables)
    return live, pushed


def take(live: LiveView, msgs: list[_Raw]) -> None:
    async def run() -> None:
        live.take(msgs)

    asyncio.run(run())


def test_newest_lines_make_the_tile_and_it_is_pushed() -> None:
    live, pushed = view("T1")
    sim = SyntheticTable("T1", wall=1.8e9, step=0.01, tilt_share=0.0, violation_share=0.0)
    lines = sim.lines(20)
    take(live, [raw(line) for line in lines])
    [msg] = [m for m in pushed if m["type"] == "live"]
    tile = msg["tables"]["T1"]
    assert tile["live_seq"] == 20 and tile["last_seq"] == 0 and tile["provisional"] is True
    assert tile["game"] == "thirteen" and tile["round"] == "1" and tile["pit"] == "Pit A"
    assert tile["last_event"] == json.loads(lines[-1])["event"]
    # The history stores up to 19, its line 0.01 s before the newest: in step, not provisional.
    result = BatchResult(
        tables={"T1": 19}, stamps={"T1": datetime.fromtimestamp(1.8e9 + 0.19, UTC)}
    )
    live.committed(result)
    assert live.tile("T1")["provisional"] is False
    # ... but PROVISIONAL_SECONDS behind it, it is.
    old = datetime.fromtimestamp(1.8e9 + 0.2, UTC) - timedelta(seconds=PROVISIONAL_SECONDS + 0.1)
    assert live.provisional("T1", 5, old) is True


def test_what_the_live_view_leaves_to_the_history() -> None:
    live, pushed = view("T1")
    live.stored["T1"] = (10, None)
    sim = SyntheticTable("T1", tilt_share=0.0, violation_share=0.0)
    lines = sim.lines(14)
    other = SyntheticTable("X9").lines(3)
    take(
        live,
        [
            *(raw(line) for line in lines[:10]),  # the history has them
            raw(lines[10], msg_id="T1:99"),  # not its shipper's id
            raw(lines[11], subject="tabled.T1.bogus.event"),  # not its event's subject
            raw(b'{"not": "a line"}\n', "T1:13", "tabled.T1.card.dealt"),  # malformed
            raw(b"{}", msg_id="T1:head:13", subject="tabled.T1.head"),  # a head
            *(raw(line) for line in other),  # not enrolled
        ],
    )
    assert live.tiles == {} and pushed == []
    take(live, [raw(lines[13]), raw(lines[12])])  # 14, then 13 (older than the tile: left)
    assert live.tiles["T1"].seq == 14 and live.stats.lines == 1


def test_api_rows_show_the_live_state_where_it_is_newer() -> None:
    live, _ = view("T1", "T2", "T3")
    t1 = SyntheticTable("T1", tilt_share=0.0, violation_share=0.0)
    t2 = SyntheticTable("T2", tilt_share=0.0, violation_share=0.0)
    take(live, [raw(line) for line in t1.lines(8) + t2.lines(3)])
    history = {"contiguous_seq": 4, "pending_overrides": 1, "chain": "ok", "pit": "Pit A"}
    rows = [
        {"table": "T1", "last_seq": 4, "last_ts": None, "state": "held", **history},
        {"table": "T2", "last_seq": 9, "last_ts": None, "state": "held", **history},  # newer
    ]
    out = {r["table"]: r for r in live.overlay(rows, "pit")}
    assert out["T1"]["live_seq"] == 8 and out["T1"]["last_seq"] == 4
    assert out["T1"]["state"] == "playing" and out["T1"]["provisional"] is True
    assert out["T1"]["pending_overrides"] == 1 and out["T1"]["pit"] == "Pit A"
    assert out["T2"]["state"] == "held" and "live_seq" not in out["T2"]
    assert "T3" not in out  # enrolled, no line yet


def test_alerts_are_pushed_provisional_and_blotted() -> None:
    live, pushed = view("T1")
    sim = SyntheticTable("T1", violation_share=1.0, tilt_share=0.0, reason="saw {card} early")
    lines = sim.lines(10)
    said = next(json.loads(x)["payload"]["reason"] for x in lines if b"table.violation" in x)
    take(live, [raw(line) for line in lines])
    [violation] = [m for m in pushed if m["type"] == "violation"]
    assert violation["provisional"] is True
    row = violation["violation"]
    assert row["table"] == "T1" and row["article"] and "said" in row
    # A round in play: the card its reason names is blotted out, as the history's push does.
    card = said.split()[1]
    assert row["reason"] != said and card not in row["reason"] and "early" in row["reason"]


def _keyed(live: LiveView, table: str, key: Any) -> None:
    live.keys[table] = [_Key(key.fingerprint, parse_public(key.public), None)]


def test_a_head_signed_by_the_tables_key_proves_its_line_and_those_linked_below() -> None:
    live, pushed = view("T1")
    real = table_key("T1")
    _keyed(live, "T1", real)
    lines = SyntheticTable("T1", violation_share=1.0, tilt_share=0.0).lines(10)
    take(live, [raw(line) for line in lines])
    pushed_items = [m for m in pushed if m["type"] == "violation"]
    assert pushed_items and all(m["proven"] is False for m in pushed_items)
    assert live.tile("T1")["proven"] is False

    def head(key: Any, seq: int, line: bytes, table: str = "T1") -> _Raw:
        return raw(key.head(table, seq, line_hash(line)), f"T1:head:{seq}", "tabled.T1.head")

    # Not proven: another key, a hash not of the line at that seq, another table's name.
    pushed.clear()
    take(live, [head(table_key("T1", seed=1), 10, lines[9])])
    take(live, [head(real, 10, lines[8])])
    take(live, [head(real, 10, lines[9], table="T2")])
    assert [m for m in pushed if m["type"] == "proven"] == []
    assert live.tile("T1")["proven"] is False

    # The table's own head of line 8 proves 1..8, linked by their `prev`; then 10 proves 9..10.
    take(live, [head(real, 8, lines[7])])
    assert [m for m in pushed if m["type"] == "proven"] == [
        {"type": "proven", "table": "T1", "from_seq": 1, "to_seq": 8}
    ]
    assert live.tile("T1")["proven"] is False  # its newest line, 10, is not yet
    take(live, [head(real, 10, lines[9])])
    assert live.tile("T1")["proven"] is True
    assert [m for m in pushed if m["type"] == "proven"][-1]["from_seq"] == 9
    assert live.stats.proven == 10


def test_a_line_pushed_with_its_head_in_the_same_pull_is_pushed_proven() -> None:
    live, pushed = view("T1")
    real = table_key("T1")
    _keyed(live, "T1", real)
    lines = SyntheticTable("T1", violation_share=1.0, tilt_share=0.0).lines(6)
    head = raw(real.head("T1", 6, line_hash(lines[5])), "T1:head:6", "tabled.T1.head")
    take(live, [*(raw(line) for line in lines), head])
    items = [m for m in pushed if m["type"] == "violation"]
    assert items and all(m["proven"] is True for m in items)


def test_heads_are_not_checked_while_the_history_is_in_step() -> None:
    live, _ = view("T1")
    real = table_key("T1")
    _keyed(live, "T1", real)
    sim = SyntheticTable("T1", wall=1.8e9, step=0.01, tilt_share=0.0, violation_share=0.0)
    lines = sim.lines(20)
    live.stored["T1"] = (0, datetime.fromtimestamp(1.8e9, UTC))  # a second-old history
    take(live, [raw(line) for line in lines])
    take(live, [raw(real.head("T1", 20, line_hash(lines[19])), "T1:head:20", "tabled.T1.head")])
    assert live.stats.heads == 0 and live.tile("T1")["proven"] is False
    # The history stores what it proves: the live view forgets those lines' hashes.
    live.committed(BatchResult(tables={"T1": 15}, stamps={}))
    assert min(live.tiles["T1"].chain) == 16
