"""Group commit of a device's events: events a device sent while a commit was on the disk are
handed to the procedure in the order they came and made durable by the next commit point
together (card reads, which command nothing, by the group-commit timer's or the next effect's),
and the device commands they cause go out only once they are durable.

The table runs on `sim://` devices through pyserial; the disk is played by an fdatasync that
waits for a token the test hands out (a threading.Semaphore), never by sleeping.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon.config import JournalConfig
from daemon.journal import Journal, JournalError
from daemon.journal.verifier import verify
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.table import Table
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import forget_world
from tests.table.scenario_support import journal_lines, make_table, new_world, table_config
from tests.table.test_rounds import draw, play_until, quiet_autoplay


class TokenDisk:
    """An fdatasync that waits for one token a call; `fail_from` makes that call and the later
    ones fail as a dying disk does."""

    def __init__(self, fail_from: int | None = None) -> None:
        self.tokens = threading.Semaphore(0)
        self.entered = threading.Semaphore(0)
        self.calls = 0
        self.fail_from = fail_from

    def __call__(self, fd: int) -> None:
        self.calls += 1
        self.entered.release()
        assert self.tokens.acquire(timeout=30)
        if self.fail_from is not None and self.calls >= self.fail_from:
            raise OSError(5, "Input/output error")
        os.fdatasync(fd)

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.acquire, True, 30)


async def eventually(predicate: Callable[[], bool], what: str) -> None:
    # The loop's own pace: what is awaited is the sim:// devices' threads and the commit thread.
    for _ in range(10_000):
        if predicate():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"waited for {what}")


async def deal_to_the_last_three(table: Table, world: str) -> ThirteenProcedure:
    player = quiet_autoplay(table, world)
    await play_until(player, "DEALING")
    await draw(player, 49)
    proc = table.procedure
    assert isinstance(proc, ThirteenProcedure) and len(proc.dealt) == 49
    # Card 49 may be staged with its commit still on its way: the test's disk must see only
    # the commits of the cards it draws next.
    journal = table.journal
    assert journal is not None
    await eventually(lambda: journal.durable_seq == journal.last_seq, "the deal so far durable")
    return proc


async def hold_card_50_and_take_two_more(table: Table, world: str, disk: TokenDisk) -> None:
    """Card 50 taken, the commit that covers it (the group-commit timer's: a card read commands
    nothing) held on `disk`; cards 51 and 52 read meanwhile and taken by the procedure."""
    journal = table.journal
    assert journal is not None
    journal.fdatasync = disk  # type: ignore[method-assign]
    control = quiet_autoplay(table, world)
    assert (await control.control_request({"op": "draw"}))["reader"] == "read"
    await disk.wait_entered()
    for _ in range(2):
        assert (await control.control_request({"op": "draw"}))["reader"] == "read"
    proc = table.procedure
    assert isinstance(proc, ThirteenProcedure)
    await eventually(lambda: len(proc.dealt) == 52, "cards 51 and 52 taken")


def test_cards_read_during_a_commit_share_the_next_and_the_disarm_waits_for_it(
    tmp_path: Path,
) -> None:
    key, world = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key, durability="fsync"))

    async def main() -> None:
        await table.start()
        try:
            proc = await deal_to_the_last_three(table, key)
            shoe = world.devices["shoe_reader"]
            assert isinstance(shoe, ShoeReaderModel)
            journal = table.journal
            assert journal is not None
            disk = TokenDisk()
            await hold_card_50_and_take_two_more(table, key, disk)
            # The procedure has the whole deal, the journal has staged it, and the shoe is
            # still armed: the disarm waits for the last card to be durable.
            assert len(proc.dealt) == 52 and proc.phase == "BANKER_ARRANGING"
            assert journal.durable_seq < journal.last_seq
            assert shoe.shoe_armed and table.quiet()  # nothing queued before it is durable
            disk.tokens.release()  # card 50 durable
            await disk.wait_entered()
            # One commit for 51 and 52 (the disarm's): still armed while it is on the disk.
            assert disk.calls == 2
            assert journal.durable_seq < journal.last_seq
            await asyncio.sleep(0.01)
            assert shoe.shoe_armed
            disk.tokens.release(100)
            await eventually(lambda: not shoe.shoe_armed, "the disarm")
            assert journal.durable_seq == journal.last_seq
            assert disk.calls == 2  # the disarm itself journals nothing
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)
    lines = journal_lines(tmp_path / "j")
    dealt = [r["payload"] for r in lines if r["event"] == "card.dealt"]
    assert [d["index"] for d in dealt] == list(range(1, 53))  # the order the shoe read them
    # Each card's input line comes before its own events: a group is never interleaved.
    kinds = [r["event"] for r in lines if r["event"] in ("table.input", "card.dealt")]
    assert kinds[-104:] == ["table.input", "card.dealt"] * 52
    assert verify(tmp_path / "j").ok


def test_a_failed_commit_fails_the_table_and_nothing_staged_with_it_is_acted_on(
    tmp_path: Path,
) -> None:
    key, world = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key, durability="fsync"))

    async def main() -> None:
        await table.start()
        try:
            proc = await deal_to_the_last_three(table, key)
            shoe = world.devices["shoe_reader"]
            assert isinstance(shoe, ShoeReaderModel)
            journal = table.journal
            assert journal is not None
            disk = TokenDisk(fail_from=2)
            await hold_card_50_and_take_two_more(table, key, disk)
            disk.tokens.release(2)  # card 50 durable; the commit of 51 and 52 fails
            assert table.failed is not None
            await asyncio.wait_for(table.failed.wait(), 30)
            assert table.failure is not None and "journal" in table.failure
            assert len(proc.dealt) == 52  # decided, never durable: never acted on
            await asyncio.sleep(0)
            assert shoe.shoe_armed and table.quiet()
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_lines_staged_without_commit_are_made_durable_by_one_commit_point(
    tmp_path: Path,
) -> None:
    disk = TokenDisk()
    journal = Journal.open(JournalConfig(dir=tmp_path / "j", durability="fsync"), "T01")
    journal.fdatasync = disk  # type: ignore[method-assign]

    async def main() -> None:
        records = [
            journal.append("card.dealt", actor="device:shoe_reader", payload={"n": n}, commit=False)
            for n in range(3)
        ]
        commit = asyncio.ensure_future(journal.commit_async(records[-1].seq))
        await disk.wait_entered()
        assert not commit.done() and journal.durable_seq < records[0].seq
        disk.tokens.release()
        await commit
        assert journal.durable_seq >= records[-1].seq and disk.calls == 1
        await journal.commit_async(records[0].seq)  # durable already: no sync
        assert disk.calls == 1

    asyncio.run(main())
    journal.fdatasync = os.fdatasync  # type: ignore[method-assign]
    journal.close()
    assert [r.payload.get("n") for r in journal.replay() if r.event == "card.dealt"] == [0, 1, 2]


def test_commit_raises_once_the_journal_failed(tmp_path: Path) -> None:
    disk = TokenDisk(fail_from=1)
    journal = Journal.open(JournalConfig(dir=tmp_path / "j", durability="fsync"), "T01")
    journal.fdatasync = disk  # type: ignore[method-assign]
    record = journal.append("card.dealt", actor="device:shoe_reader", commit=False)
    disk.tokens.release()
    with pytest.raises(JournalError):
        journal.commit(record.seq)
    with pytest.raises(JournalError):  # and refuses new lines from then on
        journal.append("card.dealt", actor="device:shoe_reader", commit=False)
    journal.close()
