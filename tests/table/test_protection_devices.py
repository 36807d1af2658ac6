"""Devices under game protection (issue 9), on simulated devices through pyserial `sim://` in
process, with the real drivers, procedure and journal: a deck with a foreign or unreadable card
never reaches the deal; a device that is not the approved one is never healthy and cannot be
cleared, across a power cycle and a restart of the daemon; the cut card reached mid-deal is
journaled and holds the deal until a supervisor clears it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from daemon.autoplay import Autoplay, InProcessControl
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.table import Table
from simulators.base import SIM_MAKE, firmware_digest
from simulators.spec import model_class
from simulators.world import Card, forget_world
from tests.table.scenario_support import (
    journal_lines,
    make_table,
    new_world,
    table_config,
    until,
)

SUPERVISOR = "S1"
RANKS = "A23456789TJQK"
SUITS = "shcd"


def _autoplay(table: Table, world: str) -> Autoplay:
    return Autoplay(
        table,
        InProcessControl(world),
        rounds=1,
        seed=3,
        fault_share=0.0,
        violation_share=0.0,
        late_share=0.0,
        foul_share=0.0,
    )


def _thirteen(table: Table) -> ThirteenProcedure:
    proc = table.procedure
    assert isinstance(proc, ThirteenProcedure)
    return proc


async def _play_until(player: Autoplay, phase: str) -> None:
    for _ in range(200):
        if player.proc.phase == phase:
            return
        await player._thirteen_step(player.proc.phase)
    raise AssertionError(f"never reached {phase}; at {player.proc.phase}")


@pytest.mark.parametrize("fault", ["foreign_card", "unreadable_card"])
@pytest.mark.article("51/89/M", "1(a)", "2(a)")
def test_a_shuffle_with_a_foreign_or_unreadable_card_tilts_before_any_card_is_dealt(
    tmp_path: Path, fault: str
) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = _autoplay(table, key)
            await _play_until(player, "HAND_SHUFFLE")
            world.inject("shuffler", fault)
            await player.act("confirm_hand_shuffle")
            proc = _thirteen(table)
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            assert proc.shuffle is not None
            # A foreign card is counted among the 52; an unreadable one is set aside.
            assert proc.shuffle["count"] == (52 if fault == "foreign_card" else 51)
            assert proc.shuffle["good"] is False and proc.dealt == []
            assert proc.faults["shuffler"]["fault"].endswith(
                "foreign card(s)" if fault == "foreign_card" else "unreadable card(s)"
            )
            await player.supervise()
            # The deck is out of play: a new hand shuffle, never the cut of the bad deck.
            assert proc.phase == "HAND_SHUFFLE" and proc.shuffle is None
            await _play_until(player, "CUT")
        finally:
            await table.stop()
        shuffled = [
            r["payload"]
            for r in journal_lines(tmp_path / "j")
            if r["event"] == "deck.machine_shuffled"
        ]
        kind = "foreign" if fault == "foreign_card" else "unreadable"
        assert shuffled[0][kind] == 1 and kind not in shuffled[1]

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def _approved(device: str) -> list[dict[str, str]]:
    cls = model_class(device)
    digest = firmware_digest(cls.MODEL, cls.FIRMWARE).hex()
    return [
        {"make": SIM_MAKE, "model": cls.MODEL, "firmware": cls.FIRMWARE, "firmware_hash": digest}
    ]


@pytest.mark.article("51/89/M", "1(a)")
def test_a_device_not_approved_is_never_healthy_across_a_power_cycle_and_a_restart(
    tmp_path: Path,
) -> None:
    """The shaker comes back from a power cycle with a build the approved list does not name:
    the table TILTs, the device is never reported healthy and the supervisor's clear is refused,
    also after the daemon restarts; the approved build back, the clear goes through."""
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)
    config["devices"]["dice_shaker"]["approved"] = _approved("dice_shaker")

    async def clear_refused(table: Table) -> None:
        proc = table.procedure
        await until(table, lambda: "dice_shaker" in proc.faults, "the shaker's fault")
        # Whatever the device says meanwhile, and however often it is asked.
        for _ in range(3):
            result = await table.act("clear_tilt", SUPERVISOR, "supervisor", {"reason": "ok"})
            assert not result["accepted"], result
            assert "dice_shaker" in result["violation"]["reason"]
            assert proc.faults["dice_shaker"]["healthy"] is False
        assert (
            next(d for d in table.facade.device_status() if d["name"] == "dice_shaker")["approved"]
            is False
        )

    async def first() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = _autoplay(table, key)
            await _play_until(player, "BETTING")
            world.inject("dice_shaker", "unapproved_firmware")
            world.unplug("dice_shaker")
            proc = table.procedure
            await until(table, lambda: proc.phase == "HOLD", "the link lost")
            world.plug("dice_shaker")
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            await clear_refused(table)
        finally:
            await table.stop()

    async def second() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            proc = table.procedure
            assert proc.phase in ("HOLD", "TILT") and proc.suspended == "BETTING"
            await until(table, lambda: proc.phase == "TILT", "the TILT after the restart")
            await clear_refused(table)
            # The approved shaker is back on the line: now it is healthy and the clear goes.
            world.clear("dice_shaker", "unapproved_firmware")
            world.unplug("dice_shaker")
            world.plug("dice_shaker")

            async def cleared() -> bool:
                result = await table.act("clear_tilt", SUPERVISOR, "supervisor", {"reason": "ok"})
                return bool(result["accepted"])

            for _ in range(100):
                if proc.phase == "HOLD":
                    await table.act("clear_hold", SUPERVISOR, "supervisor", {"reason": "ok"})
                if proc.phase == "TILT" and await cleared():
                    break
                await table.wait_for(lambda: False, 0.05)
            assert proc.phase == "BETTING"
        finally:
            await table.stop()

    try:
        asyncio.run(first())
        asyncio.run(second())
    finally:
        forget_world(key)
    lines = journal_lines(tmp_path / "j")
    healthy = [r for r in lines if r["event"] == "device.healthy"]
    changed = [
        i for i, r in enumerate(lines) if r["event"] == "table.tilted"
        and r["payload"]["device"] == "dice_shaker"
    ]  # fmt: skip
    assert changed
    # Not one `device.healthy` for the shaker while it was not the approved build.
    back = max(i for i, r in enumerate(lines) if r["event"] == "table.started")
    assert not [
        r for r in healthy if lines.index(r) < back and r["payload"]["device"] == "dice_shaker"
    ]


@pytest.mark.article("51/89/M", "1(a)", "2(a)", "4")
def test_the_cut_card_reached_mid_deal_is_journaled_and_holds_the_deal_in_order(
    tmp_path: Path,
) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def draw(player: Autoplay, cards: int) -> None:
        proc = _thirteen(player.table)
        await until(player.table, player.table.quiet, "the reader armed")
        for _ in range(cards):
            count = len(proc.dealt)
            reply = await player.control_request({"op": "draw"})
            assert reply["reader"] == "read", reply
            await until(player.table, lambda n=count: len(proc.dealt) > n, "the card read")

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = _autoplay(table, key)
            await _play_until(player, "DEALING")
            proc = _thirteen(table)
            await draw(player, 10)
            world.inject("shoe_reader", "cut_card")
            reply: dict[str, Any] = await player.control_request({"op": "draw"})
            assert reply["reader"] == "cut_card"
            await until(table, lambda: proc.phase == "HOLD", "the HOLD")
            assert proc.faults["shoe_reader"]["fault"] == "cut card reached after 10 card(s)"
            assert len(proc.dealt) == 10  # nothing was dealt in its draw
            await player.supervise()
            assert proc.phase == "DEALING"
            await draw(player, 42)
            assert proc.phase == "BANKER_ARRANGING"
            stack = [RANKS[c.rank - 1] + SUITS[c.suit] for c in world.items if isinstance(c, Card)]
            assert [d["card"] for d in proc.dealt] == stack[:52]
        finally:
            await table.stop()
        held = [r for r in journal_lines(tmp_path / "j") if r["event"] == "table.held"]
        assert [r["payload"]["fault"] for r in held] == ["cut card reached after 10 card(s)"]

    try:
        asyncio.run(main())
    finally:
        forget_world(key)
