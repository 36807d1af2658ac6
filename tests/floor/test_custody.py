"""Chain custody as pure judgement: each verdict from real chained lines, no server."""

from __future__ import annotations

from daemon.floor.custody import Custody
from daemon.floor.synthetic import SyntheticTable
from daemon.journal.format import GENESIS, decode_line


def records(n: int, table: str = "T01") -> list:  # type: ignore[type-arg]
    return [decode_line(x) for x in SyntheticTable(table, seed=1).lines(n)]


def test_a_whole_chain_in_order_is_all_new_and_silent() -> None:
    custody = Custody("T01")
    assert [custody.judge(r) for r in records(300)] == [("new", [])] * 300
    assert custody.last_seq == 300


def test_first_line_must_follow_genesis() -> None:
    rec = records(1)[0]
    assert rec.prev == GENESIS
    custody = Custody("T01")
    custody.judge(rec)
    other = SyntheticTable("T01", seed=2)
    other.prev = "ab" * 32  # a table that claims a different start
    bad = decode_line(other.next_line())
    verdict, alerts = Custody("T01").judge(bad)
    assert verdict == "new" and [a.kind for a in alerts] == ["broken_link"]
    assert alerts[0].expected_hash == GENESIS and alerts[0].actual_hash == "ab" * 32


def test_gap_then_fill_checks_both_neighbours() -> None:
    recs = records(10)
    custody = Custody("T01")
    for r in recs[:4]:
        custody.judge(r)
    verdict, alerts = custody.judge(recs[6])  # seqs 5 and 6 withheld
    assert verdict == "new" and [(a.kind, a.seq, a.gap_to) for a in alerts] == [("gap", 5, 6)]
    assert custody.judge(recs[4]) == ("fill", [])
    assert custody.judge(recs[5]) == ("fill", [])  # and its successor (seq 7) chains to it


def test_a_fill_that_does_not_chain_is_a_broken_link() -> None:
    recs = records(6)
    stranger = decode_line(SyntheticTable("T01", seed=99).lines(4)[3])
    custody = Custody("T01")
    for r in recs[:3] + recs[4:]:
        custody.judge(r)
    verdict, alerts = custody.judge(stranger)  # seq 4 from another chain
    assert verdict == "fill"
    assert {a.kind for a in alerts} == {"broken_link"} and {a.seq for a in alerts} == {4, 5}


def test_same_bytes_again_is_a_duplicate_other_bytes_a_fork() -> None:
    recs = records(5)
    custody = Custody("T01")
    for r in recs:
        custody.judge(r)
    assert custody.judge(recs[2]) == ("duplicate", [])
    stranger = decode_line(SyntheticTable("T01", seed=99).lines(3)[2])
    verdict, alerts = custody.judge(stranger)
    assert verdict == "fork"
    assert alerts[0].expected_hash == recs[2].hash and alerts[0].actual_hash == stranger.hash
    assert alerts[0].evidence == stranger.line
