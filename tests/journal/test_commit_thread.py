"""The durability wait off the loop: `append_async` stages its line at once, in call order, and
waits for the fdatasync in the journal's commit thread while the loop goes on; commits that
arrive while a sync is in flight share the next one; a failed sync fails every waiter.

The disk is held by a gate on `Journal.fdatasync` (a threading.Event the test opens), never by
sleeping.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from daemon.config import JournalConfig
from daemon.journal import Journal, JournalError
from daemon.journal.verifier import verify


class GatedDisk:
    """An fdatasync that waits for the test to open the gate, and counts who called it."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.threads: set[str] = set()
        self.fail = False

    def __call__(self, fd: int) -> None:
        self.threads.add(threading.current_thread().name)
        self.entered.set()
        assert self.gate.wait(timeout=30)
        if self.fail:
            raise OSError(5, "Input/output error")
        os.fdatasync(fd)


def open_fsync(directory: Path, disk: GatedDisk) -> Journal:
    journal = Journal.open(JournalConfig(dir=directory, durability="fsync"), "T01")
    journal.fdatasync = disk  # type: ignore[method-assign]
    return journal


def test_the_loop_runs_while_a_commit_waits_for_the_disk(tmp_path: Path) -> None:
    disk = GatedDisk()
    journal = open_fsync(tmp_path / "j", disk)

    async def main() -> None:
        commit = asyncio.ensure_future(
            journal.append_async("shoe.card_read", actor="shoe_reader", commit=True)
        )
        await asyncio.to_thread(disk.entered.wait, 30)
        staged = journal.last_seq
        # The disk is stuck; the loop is not: other work runs and other lines are staged.
        ticks = 0
        for _ in range(50):
            await asyncio.sleep(0)
            ticks += 1
        other = journal.append("dice.result", actor="dice_shaker", commit=False)
        assert not commit.done() and ticks == 50
        assert journal.durable_seq < staged < other.seq
        disk.gate.set()
        record = await commit
        assert journal.durable_seq >= record.seq

    asyncio.run(main())
    assert disk.threads == {"journal-commit-T01"}  # never the loop's thread
    journal.close()
    assert verify(tmp_path / "j").ok


def test_lines_keep_the_order_of_the_calls_and_waiting_commits_share_a_sync(
    tmp_path: Path,
) -> None:
    disk = GatedDisk()
    journal = open_fsync(tmp_path / "j", disk)

    async def main() -> list[int]:
        first = asyncio.ensure_future(
            journal.append_async("table.input", actor="D1", payload={"n": 0}, commit=True)
        )
        await asyncio.to_thread(disk.entered.wait, 30)
        syncs = journal.syncs
        # Five more commits while the first one's sync is in flight.
        rest = [
            asyncio.ensure_future(
                journal.append_async("table.input", actor="D1", payload={"n": n}, commit=True)
            )
            for n in range(1, 6)
        ]
        await asyncio.sleep(0)
        disk.gate.set()
        records = await asyncio.gather(first, *rest)
        assert journal.syncs - syncs == 2  # the one in flight, then one for all five
        return [record.seq for record in records]

    seqs = asyncio.run(main())
    assert seqs == sorted(seqs) and len(set(seqs)) == 6
    payloads = [r.payload["n"] for r in journal.replay() if r.event == "table.input"]
    assert payloads == [0, 1, 2, 3, 4, 5]
    journal.close()


def test_a_failed_sync_fails_every_waiting_commit_and_the_journal(tmp_path: Path) -> None:
    disk = GatedDisk()
    disk.fail = True
    journal = open_fsync(tmp_path / "j", disk)

    async def main() -> list[BaseException | object]:
        waiting = [
            asyncio.ensure_future(journal.append_async("table.input", actor="D1", commit=True))
            for _ in range(3)
        ]
        await asyncio.sleep(0)
        disk.gate.set()
        return await asyncio.gather(*waiting, return_exceptions=True)

    outcomes = asyncio.run(main())
    assert all(isinstance(outcome, JournalError) for outcome in outcomes), outcomes
    with pytest.raises(JournalError):
        journal.append("table.input", actor="D1", commit=True)
    journal.close()
