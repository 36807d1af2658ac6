"""The real table as the operator API sees it: the journal feed after a seq with no gap and no
duplicate, journal queries, violations and metrics, device status, and a journal that belongs
to another game."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from daemon.autoplay import Autoplay, InProcessControl
from daemon.config import parse_config
from daemon.contract.facade import TableFacade
from daemon.table import JournalMismatch, Table, TableError
from drivers.clock import ManualClock, MonotonicClock
from drivers.link import LinkTiming
from drivers.timer_bell.driver import TimerBellDriver
from simulators.world import forget_world
from tests.table.scenario_support import (
    EPOCH,
    journal_lines,
    make_table,
    new_world,
    table_config,
    until,
)


def test_the_feed_resumes_after_a_seq_and_follows_live_events(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"))
            await table.act("open_table", "D1", "dealer", {})
            feed = table.facade.subscribe(after_seq=3)
            seen: list[int] = []

            async def read() -> None:
                async for event in feed:
                    seen.append(event["seq"])
                    if event["event"] == "round.settled":
                        return

            reader = asyncio.ensure_future(read())
            player = Autoplay(
                table, InProcessControl(key), rounds=1, seed=1, fault_share=0,
                violation_share=0, late_share=0, foul_share=0,
            )  # fmt: skip
            await player.run()
            await asyncio.wait_for(reader, 10)
            await feed.aclose()
            assert seen == list(range(4, seen[-1] + 1))
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_queries_violations_metrics_and_devices(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"))
            assert isinstance(table.facade, TableFacade)
            assert table.facade.legal_actions("surveillance") == []
            refused = await table.act("settle_round", "D1", "dealer", {})
            assert refused["accepted"] is False
            violation = refused["violation"]
            assert violation["phase"] == "EQUIPMENT_CHECK" and violation["seq"] > 0
            opened = await table.act("open_table", "D1", "dealer", {})
            assert opened == {"accepted": True, "seq": opened["seq"], "phase": "HAND_SHUFFLE"}
            metrics = table.facade.metrics()
            assert metrics.violations_by_article == {violation["article"]: 1}
            assert set(metrics.link_up_by_device) == {
                "shuffler", "dice_shaker", "shoe_reader", "timer_bell",
            }  # fmt: skip
            state = table.facade.snapshot()
            assert state["phase"] == "HAND_SHUFFLE"
            assert state["violations"][-1]["seq"] == violation["seq"]
            status = {d["name"]: d for d in table.facade.device_status()}
            assert status["shuffler"]["link"] == "up"
            assert status["shuffler"]["identity"]["model"] == "SHUF-52"
            found = table.facade.journal_query(event="table.violation")
            assert [e["seq"] for e in found] == [violation["seq"]]
            inputs = table.facade.journal_query(event="table.", limit=2)
            assert [e["event"] for e in inputs] == ["table.input", "table.opened"]
            assert inputs[-1]["seq"] == opened["seq"]
            now = datetime.now(UTC)
            assert table.facade.journal_query(since=now + timedelta(hours=1)) == []
            assert table.facade.journal_query(until=now - timedelta(hours=1)) == []
            await table.act("confirm_hand_shuffle", "D1", "dealer", {})
            await until(table, table.quiet, "the shuffle started")
            # Every exchange is sampled: IDENTIFY, GET_STATUS at the connect, the shuffle.
            assert table.facade.metrics().link_round_trip_seconds["shuffler"].count >= 3
            await table.journal_security("api.auth_failed", {"client": "127.0.0.1"})
            assert table.facade.journal_query(event="api.")[-1]["actor"] == "api"
        finally:
            await table.stop()
        events = [r["event"] for r in journal_lines(tmp_path / "j")]
        assert events[-1] == "table.stopped"

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_queries_answer_after_the_old_journal_files_are_archived(tmp_path: Path) -> None:
    """IT archives closed journal files off the PC (docs/operations.md): a query after a
    restart reads the files still there, not the chain from seq 1."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)
    config["journal"]["rotate_bytes"] = 4096

    async def play() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"))
            await table.act("open_table", "D1", "dealer", {})
            player = Autoplay(
                table, InProcessControl(key), rounds=1, seed=1, fault_share=0,
                violation_share=0, late_share=0, foul_share=0,
            )  # fmt: skip
            await player.run()
        finally:
            await table.stop()

    async def query() -> None:
        table, _ = make_table(config)
        await table.start(connect=False)
        try:
            recent = table.facade.journal_query(limit=3)
            assert [e["event"] for e in recent][-1] == "table.recovery"
            settled = table.facade.journal_query(event="round.settled")
            assert len(settled) == 1
            rounds = table.facade.journal_query(round=str(settled[0]["round"]), limit=1000)
            assert rounds and all(e["round"] == settled[0]["round"] for e in rounds)
            assert rounds[0]["seq"] > 1
        finally:
            await table.stop()

    try:
        asyncio.run(play())
        directory = tmp_path / "j"
        checkpoint = max(
            r["seq"] for r in journal_lines(directory) if r["event"] == "table.checkpoint"
        )
        files = sorted(directory.glob("journal-*.jsonl"), key=lambda p: int(p.name.split("-")[1]))
        firsts = [int(p.name.split("-")[1]) for p in files]
        # Archived: every file wholly before the one holding the last checkpoint.
        kept = max(i for i, first in enumerate(firsts) if first <= checkpoint)
        assert kept >= 2, "the round should span several files"
        for path in files[: kept - 1]:
            path.unlink()
        asyncio.run(query())
    finally:
        forget_world(key)


def test_status_polls_feed_the_link_round_trip_histogram(tmp_path: Path) -> None:
    """A device the round does not use (the bell before the players arrange) is polled every
    second: those exchanges are the link's health, sampled like commands."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        parsed = parse_config(config)
        clock = MonotonicClock()
        bell = TimerBellDriver.from_config(
            parsed.devices["timer_bell"], clock=clock, timing=LinkTiming(poll_interval=0.05)
        )
        table = Table(parsed, driver_clock=clock, drivers={"timer_bell": bell})
        await table.start()
        try:
            await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"))
            assert table.quiet()  # no command is sent to the bell before the players arrange
            before = table.facade.metrics().link_round_trip_seconds["timer_bell"].count
            await asyncio.sleep(0.5)
            after = table.facade.metrics().link_round_trip_seconds["timer_bell"].count
            assert after >= before + 3
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_a_journal_of_another_game_is_refused(tmp_path: Path) -> None:
    key, _ = new_world()

    async def main() -> None:
        table, _ = make_table(table_config(tmp_path / "j", world=key))
        await table.start(connect=False)
        await table.stop()
        other, _ = make_table(table_config(tmp_path / "j", game="paigow", world=key))
        with pytest.raises(JournalMismatch, match="thirteen table"):
            await other.start(connect=False)

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_a_failed_journal_stops_the_table_taking_inputs(tmp_path: Path) -> None:
    key, _ = new_world()

    async def main() -> None:
        table, _ = make_table(table_config(tmp_path / "j", world=key))
        await table.start(connect=False)
        journal = table.journal
        assert journal is not None
        try:
            assert table.healthy()
            # The disk goes away under the journal: its next write fails.
            os.close(journal._file.fd)
            with pytest.raises(TableError, match="journal"):
                await table.act("open_table", "D1", "dealer", {})
            assert table.failed is not None and table.failed.is_set()
            assert not table.healthy()
            with pytest.raises(TableError):
                await table.act("open_table", "D1", "dealer", {})
        finally:
            journal._file.fd = -1
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_the_journal_keeps_the_tables_own_time(tmp_path: Path) -> None:
    """The journal reads the clock the table was given: its timestamps and monotonic times move
    with a manual clock, and a jump of the table's clock is not a wall-clock step."""
    config = table_config(tmp_path / "j", world="unused")
    clock = ManualClock(start=10.0, wall_start=EPOCH)

    async def main() -> None:
        table, _ = make_table(config, clock=clock)
        await table.start(connect=False)
        try:
            await table.act("start_round", "D1", "dealer", {})  # refused: journaled now
            await clock.advance(300.0)
            await table.act("start_round", "D1", "dealer", {})  # and five minutes later
        finally:
            await table.stop()

    asyncio.run(main())
    lines = journal_lines(tmp_path / "j")
    refused = [r for r in lines if r["event"] == "table.violation"]
    assert len(refused) == 2
    first, second = (datetime.fromisoformat(r["ts"]) for r in refused)
    assert first == datetime.fromtimestamp(EPOCH + 10.0, UTC)
    assert second - first == timedelta(seconds=300)
    assert [r["mono"] for r in refused] == [10.0, 310.0]
    assert "clock.wall_stepped" not in {r["event"] for r in lines}


def test_a_decision_the_journal_cannot_write_stops_the_table(tmp_path: Path) -> None:
    """A payload the journal refuses to encode (NaN: it writes strict JSON) reaches the table
    only from inside the process (the API and its channel refuse it), but if it does, the
    procedure has decided before the journal failed: the table takes no more inputs, as for a
    disk error, rather than go on with a memory the journal does not hold."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"))
            assert table.journal is not None
            seq = table.journal.durable_seq
            # A device's fact takes the values its driver gives (no declared parameters): here
            # the identity a fault carries, with a value JSON cannot hold.
            fault = {"device": "shuffler", "fault": "jam", "identity": {"serial": float("nan")}}
            with pytest.raises(TableError, match="could not be written"):
                await table.feed("fault_reported", "device:shuffler", fault)
            assert table.failure is not None and "could not be written" in table.failure
            with pytest.raises(TableError):
                await table.act("open_table", "D1", "dealer", {})
            assert table.journal.durable_seq == seq
        finally:
            await table.stop()

    asyncio.run(main())
    assert all("NaN" not in str(line) for line in journal_lines(tmp_path / "j"))
