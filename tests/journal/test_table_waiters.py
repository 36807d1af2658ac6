"""`Table.wait_for`: who waits for the table (autoplay, the API's state publisher, benchmarks)
is woken only once its predicate holds, not at every input; True means it still held when the
wait returned; a wait that times out or is cancelled leaves nothing behind; a predicate's error
reaches its waiter.

The table runs without devices (`start(connect=False)`); its inputs are dealer actions the
procedure refuses at the equipment check, each journaled as a violation: a change of the table
as any other.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from daemon.table import Table
from tests.table.scenario_support import make_table, table_config


def started(tmp_path: Path) -> Table:
    table, _ = make_table(table_config(tmp_path / "j"))
    return table


async def refused(table: Table) -> None:
    fed = await table.feed("settle_round", "dealer", {})
    assert not fed.accepted


def test_a_waiter_is_woken_only_once_its_predicate_holds(tmp_path: Path) -> None:
    table = started(tmp_path)
    holds = False
    asked_by: list[asyncio.Task[object] | None] = []

    def predicate() -> bool:
        asked_by.append(asyncio.current_task())
        return holds

    async def main() -> None:
        nonlocal holds
        await table.start(connect=False)
        try:
            waiter = asyncio.ensure_future(table.wait_for(predicate, 30))
            await asyncio.sleep(0)
            assert asked_by == [waiter]  # asked once when it began to wait
            for _ in range(20):
                await refused(table)
                await asyncio.sleep(0)
            assert not waiter.done()
            # Every input asked the predicate from the feeding task: the waiter never ran.
            assert len(asked_by) == 21 and asked_by[1:] == [asked_by[1]] * 20
            assert asked_by[1] is not waiter
            holds = True
            await refused(table)
            assert await waiter is True
        finally:
            await table.stop()

    asyncio.run(main())


def test_true_means_the_predicate_still_held_when_the_wait_returned(tmp_path: Path) -> None:
    table = started(tmp_path)
    holds = False

    async def main() -> None:
        nonlocal holds
        await table.start(connect=False)
        try:
            waiter = asyncio.ensure_future(table.wait_for(lambda: holds, 30))
            await asyncio.sleep(0)
            holds = True
            await refused(table)  # it held at this change ...
            holds = False  # ... and no longer when the waiter runs: it waits on
            for _ in range(5):
                await asyncio.sleep(0)
            assert not waiter.done()
            holds = True
            await refused(table)
            assert await waiter is True
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_timed_out_or_cancelled_wait_leaves_nothing_behind(tmp_path: Path) -> None:
    table = started(tmp_path)

    async def main() -> None:
        await table.start(connect=False)
        try:
            for _ in range(50):  # the supervisor's poll: wait_for(lambda: False, 0.05)
                assert await table.wait_for(lambda: False, 0.001) is False
            waiter = asyncio.ensure_future(table.wait_for(lambda: False, 30))
            await asyncio.sleep(0)
            assert len(table.waiters) == 1
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            assert len(table.waiters) == 0
            await refused(table)  # nobody to wake
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_predicate_error_reaches_its_waiter(tmp_path: Path) -> None:
    table = started(tmp_path)
    broken = False

    def predicate() -> bool:
        if broken:
            raise KeyError("seat 9")
        return False

    async def main() -> None:
        nonlocal broken
        await table.start(connect=False)
        try:
            waiter = asyncio.ensure_future(table.wait_for(predicate, 30))
            await asyncio.sleep(0)
            broken = True
            await refused(table)  # the input itself goes through
            with pytest.raises(KeyError, match="seat 9"):
                await waiter
            assert len(table.waiters) == 0
        finally:
            await table.stop()

    asyncio.run(main())
