"""Whole rounds on simulated devices through pyserial `sim://`, in process: the real drivers,
the real procedure, the real journal. Every check is against what the devices and the journal
say, recomputed independently where the rules allow it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from daemon.autoplay import Autoplay, InProcessControl, house_way13
from daemon.journal import verify
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure, settle_thirteen
from daemon.rules import thirteen as rules13
from daemon.table import Table
from drivers.clock import ManualClock
from drivers.events import LinkDegraded
from drivers.shuffler.driver import ShuffleCompleted
from simulators.world import Card, forget_world
from tests.table.scenario_support import (
    EPOCH,
    inputs_of,
    journal_lines,
    make_table,
    new_world,
    replayed,
    table_config,
    until,
)

DEALER, SUPERVISOR = "D1", "S1"
RANKS = "A23456789TJQK"
SUITS = "shcd"


def card_name(card: Card) -> str:
    return RANKS[card.rank - 1] + SUITS[card.suit]


def thirteen_of(table: Table) -> ThirteenProcedure:
    proc = table.procedure
    assert isinstance(proc, ThirteenProcedure), proc
    return proc


def paigow_of(table: Table) -> PaiGowProcedure:
    proc = table.procedure
    assert isinstance(proc, PaiGowProcedure), proc
    return proc


def quiet_autoplay(table: Table, world: str, **kwargs: Any) -> Autoplay:
    options: dict[str, Any] = {
        "rounds": 1,
        "seed": 3,
        "fault_share": 0.0,
        "violation_share": 0.0,
        "late_share": 0.0,
        "foul_share": 0.0,
    }
    options.update(kwargs)
    return Autoplay(table, InProcessControl(world), **options)


async def play_until(player: Autoplay, phase: str) -> None:
    for _ in range(200):
        if player.proc.phase == phase:
            return
        await player._thirteen_step(player.proc.phase)
    raise AssertionError(f"never reached {phase}; at {player.proc.phase}")


async def draw(player: Autoplay, cards: int) -> None:
    proc = player.proc
    await until(player.table, player.table.quiet, "the reader armed")
    for _ in range(cards):
        count = len(proc.dealt)
        reply = await player.control_request({"op": "draw"})
        assert reply["reader"] == "read", reply

        def read(n: int = count) -> bool:
            return len(proc.dealt) > n

        await until(player.table, read, "the card read")


def test_a_thirteen_round_end_to_end(tmp_path: Path) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            await quiet_autoplay(table, key).run()
            proc = table.procedure
            assert isinstance(proc, ThirteenProcedure)
            assert proc.phase == "ROUND_OVER"
            # The shoe dealt the very stack the simulated shuffler left, in order, to the
            # seats the dice name, counter-clockwise, 13 each.
            stack = [card_name(c) for c in world.items if isinstance(c, Card)]
            assert [d["card"] for d in proc.dealt] == stack[:52]
            assert proc.dice is not None
            order = rules13.deal_order(rules13.first_seat_from_dice(sum(proc.dice)))
            assert [d["seat"] for d in proc.dealt] == order
            assert all(len(proc.seat_cards(s)) == 13 for s in range(4))
            # The banker arranged the house way; the settlement is the rules engine's.
            banker = house_way13(proc.seat_cards(0))
            assert proc.arrangements[0]["tail"] == banker[2]
            assert proc.settlement == settle_thirteen(
                proc.arrangements, proc.bets, proc.late, proc.ruleset
            )
            live = proc.snapshot()
        finally:
            await table.stop()
        lines = journal_lines(tmp_path / "j")
        events = [r["event"] for r in lines]
        assert events.count("card.dealt") == 52
        assert {"bets.closed", "dice.landed", "banker.opened", "round.settled"} <= set(events)
        # The journal alone rebuilds the round.
        assert replayed(config, inputs_of(lines)).snapshot() == live
        assert verify(tmp_path / "j").ok

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


@pytest.mark.article("15/90/M", "2(4)")
def test_a_paigow_table_keeps_four_hands_for_the_next_round(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", game="paigow", world=key, hands=4)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key, rounds=2)
            summary = await player.run()
            assert summary.rounds == 2
            proc = paigow_of(table)
            assert proc.phase == "ROUND_OVER"
            assert proc.bank_rounds == 2
            live = proc.snapshot()
        finally:
            await table.stop()
        lines = journal_lines(tmp_path / "j")
        inputs = [i.action for i in inputs_of(lines)]
        # Art. 2(4): one shuffle serves both rounds of four hands.
        assert inputs.count("confirm_tile_shuffle") == 1
        assert inputs.count("settle_round") == 2
        assert any(r["event"] == "tiles.shown_face_up" for r in lines)
        assert replayed(config, inputs_of(lines)).snapshot() == live
        assert verify(tmp_path / "j").ok

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_the_shoe_taken_out_mid_deal_holds_and_the_deal_resumes_intact(tmp_path: Path) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "DEALING")
            proc = thirteen_of(table)
            await draw(player, 20)
            world.inject("shoe_reader", "shoe_removed")
            await until(table, lambda: proc.phase == "HOLD", "the HOLD")
            assert proc.faults["shoe_reader"]["fault"] == "shoe open"
            # Nobody clears a HOLD while the shoe is still out: refused and journaled.
            refused = await table.act("clear_hold", SUPERVISOR, "supervisor", {"reason": "x"})
            assert not refused["accepted"]
            assert "not reported healthy" in refused["violation"]["reason"]
            world.clear("shoe_reader", "shoe_removed")
            await until(table, lambda: proc.faults["shoe_reader"]["healthy"], "healthy")
            cleared = await table.act("clear_hold", SUPERVISOR, "supervisor", {"reason": "back"})
            assert cleared["accepted"] and cleared["phase"] == "DEALING"
            await draw(player, 32)
            assert proc.phase == "BANKER_ARRANGING"
            stack = [card_name(c) for c in world.items if isinstance(c, Card)]
            assert [d["card"] for d in proc.dealt] == stack[:52]
        finally:
            await table.stop()
        events = [r["event"] for r in journal_lines(tmp_path / "j")]
        assert events.count("table.held") == 1 and events.count("table.resumed") == 1
        assert events.count("table.violation") == 1

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


@pytest.mark.article("51/89/M", "1(a)", "2(a)")
def test_a_wrong_count_takes_the_deck_out_of_play(tmp_path: Path) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "HAND_SHUFFLE")
            world.inject("shuffler", "wrong_count")
            await player.act("confirm_hand_shuffle")
            proc = thirteen_of(table)
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            assert proc.shuffle is not None
            assert proc.shuffle["count"] == 51
            await player.supervise()
            # R1: clearing returns to the hand shuffle with a new deck, never to the cut.
            assert proc.phase == "HAND_SHUFFLE"
            await play_until(player, "CUT")
            assert proc.shuffle is not None
            assert proc.shuffle["count"] == 52
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


@pytest.mark.article("51/89/M", "2(a)")
def test_a_shuffle_is_judged_on_the_mode_its_result_reports(tmp_path: Path) -> None:
    """The mode comes from the result itself, not from a sort_mode fault that may not follow
    it (a fault the driver already knows latched is not reported again)."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)
    # A real-time shuffler (40 s a shuffle): the table waits in MACHINE_SHUFFLE.
    config["devices"]["shuffler"]["port"] = f"sim://shuffler?world={key}&seed=7&speed=1.0"

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "HAND_SHUFFLE")
            await player.act("confirm_hand_shuffle")
            proc = table.procedure
            assert proc.phase == "MACHINE_SHUFFLE"
            await until(table, table.quiet, "the shuffle started")
            result = ShuffleCompleted("shuffler", 52, 52, 0, 0, mode="mode_7")
            await table.devices.on_event("shuffler", result, 0.0)
            assert proc.phase == "TILT"
            assert proc.faults["shuffler"]["fault"] == "mode mode_7"
        finally:
            await table.stop()
        shuffled = [
            r for r in journal_lines(tmp_path / "j") if r["event"] == "deck.machine_shuffled"
        ]
        assert [r["payload"]["mode"] for r in shuffled] == ["mode_7"]

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_a_device_that_loses_power_mid_round_tilts_until_a_supervisor_clears(
    tmp_path: Path,
) -> None:
    """The bell loses power as the players' five minutes start: it comes back with its
    countdown gone. The table journals the restart and TILTs; clearing restarts the bell with
    the time left."""
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "BANKER_ARRANGED")
            proc = table.procedure
            assert isinstance(proc, ThirteenProcedure)
            world.inject("timer_bell", "power_lost")
            await player.act("open_banker")

            def restart_reported() -> bool:
                return bool(proc.faults.get("timer_bell", {}).get("fault") == "restarted")

            await until(table, restart_reported, "the restart reported")
            assert proc.phase == "TILT" and proc.suspended == "PLAYERS_ARRANGING"
            assert proc.snapshot()["timer"]["paused_remaining"] is not None
            await player.supervise()
            assert proc.phase == "PLAYERS_ARRANGING"
            assert proc.deadline is not None
        finally:
            await table.stop()
        lines = journal_lines(tmp_path / "j")
        restarted = [r for r in lines if r["event"] == "device.restarted"]
        assert [(r["actor"], r["payload"]["device"]) for r in restarted] == [
            ("device:timer_bell", "timer_bell")
        ]
        faults = [
            r["payload"]["payload"]
            for r in lines
            if r["event"] == "table.input" and r["payload"]["action"] == "fault_reported"
        ]
        assert {"device": "timer_bell", "fault": "restarted"} in faults
        assert lines[-1]["event"] == "table.stopped"
        assert verify(tmp_path / "j").ok

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_a_pulled_cable_holds_until_the_link_is_back_and_a_supervisor_clears(
    tmp_path: Path,
) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "BETTING")
            proc = thirteen_of(table)
            await player.act(
                "place_bet",
                {"player": "P1", "seat": 2, "amount": 200, "units": 2, "seated": True},
            )
            world.unplug("dice_shaker")
            await player.act("shake_dice", {"player": "P1"})
            await until(table, lambda: proc.phase == "HOLD", "the HOLD")
            assert proc.suspended == "SHAKING"
            assert proc.faults["dice_shaker"]["fault"] == "link lost"
            world.plug("dice_shaker")

            # The simulated shaker is switched off with its port (simulators/base.py, close):
            # it comes back powered up, and a device restarted in a round TILTs the table.
            def restart_reported() -> bool:
                return bool(proc.faults["dice_shaker"]["fault"] == "restarted")

            await until(table, restart_reported, "the link back, the restart reported")
            assert proc.phase == "TILT" and proc.suspended == "SHAKING"
            held = await table.act("clear_hold", SUPERVISOR, "supervisor", {"reason": "ok"})
            assert not held["accepted"]
            result = await table.act("clear_tilt", SUPERVISOR, "supervisor", {"reason": "ok"})
            assert result["accepted"]
            # Resuming asks the shaker again; its fresh throw is the one dealt from.
            await until(table, lambda: proc.phase == "DEALING", "the dice")
            assert proc.dice is not None
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_invalid_throws_are_shaken_again_and_the_third_tilts(tmp_path: Path) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "BETTING")
            proc = table.procedure
            bet = {"player": "P1", "seat": 1, "amount": 100, "units": 1, "seated": True}
            await player.act("place_bet", bet)
            world.inject("dice_shaker", "die_tilted")
            await player.act("shake_dice", {"player": "P1"})
            await until(table, lambda: proc.phase == "DEALING", "a valid throw")
            # The deal waits; three invalid throws in a row on the next round's shake tilt.
            lines = journal_lines(tmp_path / "j")
            invalid = [r for r in lines if r["event"] == "dice.invalid"]
            assert [r["payload"]["reason"] for r in invalid] == ["die_tilted"]
            assert "dice" not in invalid[0]["payload"]
        finally:
            await table.stop()

    async def three() -> None:
        table, _ = make_table(table_config(tmp_path / "k", world=key))
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "BETTING")
            proc = table.procedure
            bet = {"player": "P1", "seat": 1, "amount": 100, "units": 1, "seated": True}
            await player.act("place_bet", bet)
            for _ in range(3):
                world.inject("dice_shaker", "die_out_of_cup")
            await player.act("shake_dice", {"player": "P1"})
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            assert proc.suspended == "SHAKING"
            assert "3 invalid throws" in proc.faults["dice_shaker"]["fault"]
        finally:
            await table.stop()

    try:
        asyncio.run(main())
        asyncio.run(three())
    finally:
        forget_world(key)


@pytest.mark.article("51/89/M", "2(d)")
def test_the_bell_is_the_tables_clock_and_a_late_player_loses(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)
    clock = ManualClock(start=100.0, wall_start=EPOCH)

    async def main() -> None:
        table, _ = make_table(config, clock=clock)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "PLAYERS_ARRANGING")
            proc = thirteen_of(table)
            seats = proc.played_seats()
            for seat in seats[1:]:
                await player.act("player_arranged", {"seat": seat})
            await clock.advance(299.0)
            assert proc.phase == "PLAYERS_ARRANGING"
            await clock.advance(1.0)
            await until(table, lambda: proc.phase == "SETTLING", "the bell")
            assert proc.late == [seats[0]]
            late = {"seat": seats[0]}
            refused = await table.act("player_arranged", DEALER, "dealer", late)
            assert not refused["accepted"]
            assert refused["violation"]["article"].endswith("Art. 2(d)")
        finally:
            await table.stop()
        expired = [
            r
            for r in journal_lines(tmp_path / "j")
            if r["event"] == "table.input" and r["payload"]["action"] == "timer_expired"
        ]
        assert len(expired) == 1 and expired[0]["actor"] == "system"

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_a_clean_stop_between_rounds_restarts_ready_and_inside_a_round_held(
    tmp_path: Path,
) -> None:
    """Issue 23 item 4: a table stopped cleanly with no round in play (its round settled)
    restarts ready to play, the reason journaled; stopped inside a round, or killed without a
    stop, it restarts held for a supervisor, with a reason that reads as a sentence."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def run(until: str | None) -> tuple[str, str | None]:
        table, _ = make_table(config)
        await table.start()
        try:
            proc = table.procedure
            phase, suspended = proc.phase, proc.suspended
            if until is not None:
                player = quiet_autoplay(table, key)
                if phase == "HOLD":
                    await player.supervise()
                await play_until(player, until)
            return phase, suspended
        finally:
            await table.stop()

    def recovered() -> dict[str, Any]:
        lines = [r for r in journal_lines(tmp_path / "j") if r["event"] == "table.recovered"]
        payload: dict[str, Any] = lines[-1]["payload"]
        return payload

    try:
        asyncio.run(run("ROUND_OVER"))
        assert asyncio.run(run("PLAYERS_ARRANGING")) == ("ROUND_OVER", None)
        said = recovered()
        assert said["held"] is False
        assert said["reason"] == "stopped cleanly between rounds: ready to play"
        phase, suspended = asyncio.run(run(None))
        assert (phase, suspended) == ("HOLD", "PLAYERS_ARRANGING")
        said = recovered()
        assert said["held"] is True
        assert said["reason"] == (
            "restarted: the table was stopped inside a round (PLAYERS_ARRANGING); "
            "a supervisor checks the table before play goes on"
        )
    finally:
        forget_world(key)


def test_a_restart_comes_back_in_hold_with_the_round_and_the_timer(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)
    clock = ManualClock(start=100.0, wall_start=EPOCH)

    async def first() -> dict[str, Any]:
        table, _ = make_table(config, clock=clock)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            await play_until(player, "PLAYERS_ARRANGING")
            await clock.advance(120.0)
            return table.procedure.snapshot()
        finally:
            await table.stop()

    async def second(before: dict[str, Any]) -> None:
        await clock.advance(30.0)  # the daemon was down for half a minute
        table, _ = make_table(config, clock=clock)
        await table.start()
        try:
            proc = thirteen_of(table)
            after = proc.snapshot()
            assert after["phase"] == "HOLD" and after["suspended"] == "PLAYERS_ARRANGING"
            for key_ in ("seats", "bets", "dice", "dealt", "shakes", "first_seat", "round"):
                assert after[key_] == before[key_], key_
            deadline = before["timer"]["deadline"]
            remaining = after["timer"]["paused_remaining"]
            # The five minutes ran on while the daemon was down (the players went on), and
            # stop while the table is held.
            assert remaining == deadline - (EPOCH + 250.0)
            assert remaining == pytest.approx(300.0 - 150.0)
            assert after["timer"]["deadline"] is None
            player = quiet_autoplay(table, key)
            await player.supervise()
            assert proc.phase == "PLAYERS_ARRANGING"
            assert proc.deadline is not None
        finally:
            await table.stop()

    try:
        before = asyncio.run(first())
        asyncio.run(second(before))
    finally:
        forget_world(key)


def test_a_paigow_restart_keeps_the_bank_the_bets_and_the_dice(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", game="paigow", world=key)

    async def first() -> dict[str, Any]:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key)
            for _ in range(100):
                if player.proc.phase == "SETTING":
                    break
                await player._paigow_step(player.proc.phase)
            proc = player.proc
            assert proc.phase == "SETTING" and len(proc.played_seats()) > 1
            seat = proc.played_seats()[0]
            await player.act("set_hand", {"seat": seat})  # face down: no tiles (Art. 6(1))
            assert proc.phase == "SETTING" and proc.set_seats == [seat]
            return table.procedure.snapshot()
        finally:
            await table.stop()

    async def second(before: dict[str, Any]) -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            after = table.procedure.snapshot()
            assert after["phase"] == "HOLD" and after["suspended"] == "SETTING"
            for name in ("banker", "banker_seat", "bank_rounds", "stake", "bets", "dice", "seats"):
                assert after[name] == before[name], name
            player = quiet_autoplay(table, key)
            await player.supervise()
            assert table.procedure.phase == "SETTING"
        finally:
            await table.stop()

    try:
        before = asyncio.run(first())
        asyncio.run(second(before))
    finally:
        forget_world(key)


@pytest.mark.article("51/89/M", "4")
def test_a_misread_mid_deal_voids_the_deal_and_it_is_dealt_again_on_the_same_dice(
    tmp_path: Path,
) -> None:
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key, entered_share=0.0)  # the card not established
            await play_until(player, "DEALING")
            proc = thirteen_of(table)
            assert proc.dice is not None
            dice, bets, first = list(proc.dice), list(proc.bets), proc.first_seat
            await draw(player, 12)
            world.inject("shoe_reader", "misread")
            reply = await player.control_request({"op": "draw"})
            assert reply["reader"] == "misread"
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            assert proc.faults["shoe_reader"]["fault"] == "misread"
            # The supervisor clears once the reader reports healthy, and voids the deal.
            await player.supervise()
            assert proc.phase == "DEALING"
            await player._thirteen_step("DEALING")
            assert proc.phase == "HAND_SHUFFLE" and proc.redealing
            assert proc.voided_deals and len(proc.voided_deals[0]) == 12
            # Art. 4: shuffled, cut and loaded again, dealt from the same seat; bets and dice stand.
            await play_until(player, "DEALING")
            assert proc.dice == dice and proc.bets == bets and proc.first_seat == first
            await draw(player, 52)
            assert proc.phase == "BANKER_ARRANGING"
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


@pytest.mark.article("51/89/M", "4")
def test_a_misread_card_entered_by_hand_and_approved_takes_its_place_in_the_deal(
    tmp_path: Path,
) -> None:
    """The override end to end: the reader misses card #13, the table tilts; once the reader is
    healthy and the TILT cleared, the dealer enters the card he shows, the supervisor approves
    it with a reason, and the deal goes on from #14 with the reader's own count."""
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key, entered_share=1.0)
            await play_until(player, "DEALING")
            proc = thirteen_of(table)
            await draw(player, 12)
            world.inject("shoe_reader", "misread")
            await player._thirteen_step("DEALING")  # the dealer draws #13: the reader misses it
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            assert proc.misread == {"index": 13, "seat": proc.order[12], "read": None}
            await player.supervise()
            assert proc.phase == "DEALING"
            await player._thirteen_step("DEALING")
            assert proc.phase == "BANKER_ARRANGING"
            assert not proc.voided_deals
            assert len({d["card"] for d in proc.dealt}) == 52
            assert proc.dealt[12]["entered"] == {"by": "dealer:D1", "approved_by": "supervisor:S1"}
            assert len(proc.dealt) == 52
            assert player.summary.supervisor["approve_override"] == 1
        finally:
            await table.stop()
        lines = journal_lines(tmp_path / "j")
        names = [r["event"] for r in lines]
        assert names.count("override.proposed") == names.count("override.approved") == 1
        approved = next(r for r in lines if r["event"] == "override.approved")
        assert approved["actor"] == "supervisor:S1"
        assert approved["payload"]["proposed_by"] == "dealer:D1"
        assert approved["payload"]["reason"] == "autoplay: the card checked on camera"
        dealt = [r["payload"] for r in lines if r["event"] == "card.dealt"]
        assert dealt[12]["card"] == approved["payload"]["card"] and dealt[12]["index"] == 13
        assert [d["index"] for d in dealt] == list(range(1, 53))

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


@pytest.mark.article("15/90/M", "2(7)")
def test_paigow_autoplay_attempts_a_bet_after_the_shake_and_it_is_refused(tmp_path: Path) -> None:
    """Art. 2(7): the bets close at the shake; the scripted dealer's attempt to raise a bet
    after it is refused and journaled, citing that article."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", game="paigow", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            summary = await quiet_autoplay(table, key, rounds=2, violation_share=1.0).run()
            assert summary.attempted["bet raised after the shake"] == 2
            assert summary.violations["Portaria 15/90/M Art. 2(7)"] == 2
        finally:
            await table.stop()
        refused = [
            r["payload"]
            for r in journal_lines(tmp_path / "j")
            if r["event"] == "table.violation" and r["payload"]["action"] == "place_bet"
        ]
        assert [(v["phase"], v["article"]) for v in refused] == [
            ("DEALING", "Portaria 15/90/M Art. 2(7)")
        ] * 2

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


@pytest.mark.parametrize("fault", ["duplicate_card", "misread"])
def test_a_bad_read_tilts_once_and_the_supervisor_clears_at_the_first_try(
    tmp_path: Path, fault: str
) -> None:
    """The procedure finds a duplicate or a misread in the read itself; the reader's fault that
    follows it is the same fact, not a second TILT (which re-latched the reader as unhealthy
    after it had reported healthy, and refused the supervisor's clear as a violation)."""
    key, world = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> None:
        table, _ = make_table(config)
        await table.start()
        try:
            player = quiet_autoplay(table, key, entered_share=0.0)
            await play_until(player, "DEALING")
            proc = table.procedure
            await draw(player, 5)
            world.inject("shoe_reader", fault)
            await player.control_request({"op": "draw"})
            await until(table, lambda: proc.phase == "TILT", "the TILT")
            await until(table, table.quiet, "the reader disarmed")
            await player.supervise()
            assert proc.phase == "DEALING"
        finally:
            await table.stop()
        lines = journal_lines(tmp_path / "j")
        tilts = [r for r in lines if r["event"] == "table.tilted"]
        assert len(tilts) == 1, [t["payload"] for t in tilts]
        assert not [r for r in lines if r["event"] == "table.violation"]

    try:
        asyncio.run(main())
    finally:
        forget_world(key)


def test_a_noisy_line_is_journaled_as_degraded_and_play_goes_on(tmp_path: Path) -> None:
    """The driver reports a noisy line before it gives up on it: the table journals it
    (surveillance sees a cable going bad) and, the link still up, does not HOLD."""
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> tuple[list[dict[str, Any]], str]:
        table, _ = make_table(config)
        await table.start()
        try:
            before = table.procedure.phase
            await table.devices.on_event("shoe_reader", LinkDegraded("shoe_reader", 25, 0.4), 0.0)
            assert table.procedure.phase == before
            return journal_lines(tmp_path / "j"), before
        finally:
            await table.stop()
            forget_world(key)

    lines, _ = asyncio.run(main())
    degraded = [r for r in lines if r["event"] == "device.link_degraded"]
    assert len(degraded) == 1
    assert degraded[0]["actor"] == "device:shoe_reader"
    assert degraded[0]["payload"] == {"device": "shoe_reader", "errors": 25, "seconds": 0.4}
