"""Durable before every effect (issue 25): nothing outside the process acts on an input before
its journal lines are on disk. A device command goes to its device, and an operator's reply
goes back to the operator, only once the input that caused it is durable; a device's input
that commands nothing (a card read) is not synced on its own, and is durable within the group
commit's bound all the same.

The table plays a whole Thirteen round on `sim://` devices through pyserial, with a disk whose
every `fdatasync` takes a few milliseconds (so an effect that did not wait for it would be seen
before it), and the test checks, at the moment each device command is handed to its driver and
each reply returns, that the journal's durable seq covers the input's last line.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from daemon.journal.verifier import verify
from daemon.table import Table
from daemon.table.publish.publisher import SnapshotPublisher
from daemon.table.runtime import Staged
from drivers.base import DeviceDriver
from simulators.world import forget_world
from tests.table.scenario_support import make_table, new_world, table_config, until
from tests.table.test_rounds import play_until, quiet_autoplay

DISK_SECONDS = 0.003


class Effects:
    """Watches a table's effects: each device command and each operator reply, with the seq of
    the line it needs durable and the journal's durable seq when it went out."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.cause: dict[int, int] = {}  # id(command) -> the seq of its input's last line
        self.commands: list[tuple[str, int, int]] = []  # (command, needed, durable)
        self.replies: list[tuple[str, int, int]] = []
        self.syncs = self.syncs_in_play = 0
        journal = table.journal
        assert journal is not None
        self.journal = journal
        stage, command, act = table.stage, table.devices._command, table.act

        def slow_disk(fd: int) -> None:
            self.syncs += 1
            time.sleep(DISK_SECONDS)
            os.fdatasync(fd)

        def staged(*args: Any, **kwargs: Any) -> Staged:
            one = stage(*args, **kwargs)
            for cmd in one.fed.outcome.commands:
                self.cause[id(cmd)] = one.fed.seq
            return one

        async def sent(driver: DeviceDriver, cmd: Any) -> None:
            # Handed to the driver, which writes its frame now: the input must be durable.
            self.commands.append((cmd.command, self.cause[id(cmd)], self.journal.durable_seq))
            await command(driver, cmd)

        async def replied(action: str, *args: Any) -> dict[str, Any]:
            answer = await act(action, *args)
            # What the API sends back now: the seq it names must be durable.
            seq = answer["seq"] if answer["accepted"] else answer["violation"]["seq"]
            self.replies.append((action, seq, self.journal.durable_seq))
            return answer

        journal.fdatasync = slow_disk  # type: ignore[method-assign]
        table.stage = staged  # type: ignore[method-assign]
        table.devices._command = sent  # type: ignore[method-assign]
        table.act = replied  # type: ignore[method-assign]


def test_no_device_command_or_reply_goes_out_before_its_line_is_durable(tmp_path: Path) -> None:
    key, _ = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key, durability="fsync"))
    cards_durable: list[float] = []

    async def main() -> Effects:
        await table.start()
        # No group-commit timer in this round: a card read is made durable only by a commit an
        # effect brings (the last card's disarm), so the count of syncs below does not depend
        # on how fast the shoe deals on a loaded machine.
        table.GROUP_COMMIT_SECONDS = table.GROUP_COMMIT_MAX_SECONDS = 3600.0
        effects = Effects(table)
        journal = effects.journal

        def on_durable(fed: Any, _received: float | None) -> None:
            # Told only once durable: the trace's `ack`, the frame-to-durable time.
            assert journal.durable_seq >= fed.seq
            if fed.input.action == "card_read":
                cards_durable.append(time.perf_counter())

        table.on_durable = on_durable
        try:
            await quiet_autoplay(table, key).run()
            effects.syncs_in_play = effects.syncs  # `table.stopped` syncs once more below
        finally:
            await table.stop()
        return effects

    try:
        effects = asyncio.run(main())
    finally:
        forget_world(key)
    early = [c for c in effects.commands if c[2] < c[1]]
    assert not early, f"device commands sent before their input was durable: {early}"
    early = [r for r in effects.replies if r[2] < r[1]]
    assert not early, f"operator replies before their input was durable: {early}"
    sent = {c[0] for c in effects.commands}
    assert {"shuffle", "shake", "arm", "disarm"} <= sent, sent
    assert len(effects.replies) >= 15
    # Every card read was made durable (and said so), and the 52 of them did not each cost a
    # sync of their own: the round's syncs are at most its effects (the timer's commits are
    # the other test's).
    assert len(cards_durable) == 52
    assert 0 < effects.syncs_in_play <= len(effects.commands) + len(effects.replies)
    assert verify(tmp_path / "j").ok


def test_a_card_read_alone_is_made_durable_by_the_group_commit_timer(tmp_path: Path) -> None:
    """A card read commands nothing and nobody waits for it: the group-commit timer makes it
    durable all the same once the shoe falls quiet, and the table says so (`on_durable`)."""
    key, _ = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key, durability="fsync"))
    acked: list[int] = []

    async def main() -> None:
        await table.start()
        table.on_durable = lambda fed, _received: acked.append(fed.seq)
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "DEALING")
            journal = table.journal
            assert journal is not None
            proc: Any = table.procedure
            for n in range(1, 4):
                reply = await player.control_request({"op": "draw"})
                assert reply["reader"] == "read"
                await until(table, lambda n=n: len(proc.dealt) == n, "the card read")
                for _ in range(5000):  # the loop's own pace, until the timer's commit
                    if acked and acked[-1] == journal.last_seq:
                        break
                    await asyncio.sleep(0.001)
                assert journal.durable_seq == journal.last_seq == acked[-1]
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_the_consoles_are_never_shown_a_line_that_is_not_durable(tmp_path: Path) -> None:
    """The published state (what every console reads) is an effect too: while the shoe reads
    cards (deferred to the group commit) and operators act at once (each answer publishes for
    the caller's next read, `SnapshotPublisher.publish_durable`), no publication shows a line
    not yet on disk."""
    key, _ = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=key, durability="fsync"))
    shown: list[tuple[int, int]] = []  # (durable, last) at each publication

    async def main() -> None:
        await table.start()
        Effects(table)  # its 3 ms disk
        journal = table.journal
        assert journal is not None
        publisher = SnapshotPublisher(table)
        publish = publisher.publish

        def watched(**kwargs: Any) -> Any:
            shown.append((journal.durable_seq, journal.last_seq))
            return publish(**kwargs)

        publisher.publish = watched  # type: ignore[method-assign]
        publisher.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "DEALING")

            async def draws() -> None:
                for _ in range(13):
                    await player.control_request({"op": "draw"})

            async def acts() -> None:  # refused (the deal is not over): journaled, answered
                for _ in range(60):
                    await table.act("settle_round", "d1", "dealer", {})
                    await publisher.publish_durable()
                    await asyncio.sleep(0.0005)

            await asyncio.gather(draws(), acts())
        finally:
            await publisher.stop()
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)
    assert len(shown) > 10
    assert [(d, last) for d, last in shown if d < last] == []
