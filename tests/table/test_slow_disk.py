"""A slow disk delays the input that waits for it, not the loop: a device command still goes out
only once the input that caused it is durable (the fdatasync held by a gate the test opens)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.journal.test_commit_thread import GatedDisk
from tests.table.scenario_support import make_table, new_world, table_config, until


def test_a_device_command_waits_for_its_input_to_be_durable(tmp_path: Path) -> None:
    world, _ = new_world()
    table, _ = make_table(table_config(tmp_path / "j", world=world, durability="fsync"))

    async def main() -> None:
        await table.start()
        try:
            await until(
                table, lambda: "open_table" in table.facade.legal_actions("dealer"), "ready"
            )
            await table.act("open_table", "D1", "dealer", {})
            await until(table, table.quiet, "the devices idle")
            disk = GatedDisk()
            assert table.journal is not None
            table.journal.fdatasync = disk  # type: ignore[method-assign]
            shuffle = asyncio.ensure_future(table.act("confirm_hand_shuffle", "D1", "dealer", {}))
            await asyncio.to_thread(disk.entered.wait, 30)
            # Decided and staged, not durable: the shuffler has been told nothing yet, and
            # the loop still runs the other devices (a status exchange with the dice shaker).
            assert table.procedure.phase == "MACHINE_SHUFFLE"
            assert table.quiet() and not shuffle.done()
            status = await table.drivers["dice_shaker"].status()
            assert status is not None and table.quiet()
            disk.gate.set()
            assert (await shuffle)["accepted"]
            await until(table, lambda: table.procedure.phase == "CUT", "the shuffler's count")
        finally:
            await table.stop()

    asyncio.run(main())
