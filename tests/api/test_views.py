"""The API's view of the real procedures: every operator payload a whole round needs passes the
API's checks (so the forms the console builds are ones the procedure accepts), and the console
snapshot shows the seats, bets, dice, cards, timer, holds and settlement the procedure holds."""

from __future__ import annotations

import inspect
import random
from typing import Any

import pytest

from daemon.api.models import check_payload
from daemon.config import load_config
from daemon.contract.facade import ActionSpec, TableFacade
from daemon.procedures.base import Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.rules import paigow
from daemon.rules.cards import DECK
from daemon.table import Table
from daemon.table.publish.facade import LocalFacade
from daemon.table.publish.views import action_specs, console_snapshot

WALL = 1_796_000_000.0


class Checked:
    """Feeds a procedure as the runtime would behind the API: operator payloads are checked
    against the API's ActionSpecs first, and must pass."""

    def __init__(self, proc: Procedure, game: str) -> None:
        self.proc = proc
        self.specs: dict[str, ActionSpec] = {
            s.name: s for s in action_specs(type(proc).ACTIONS, game)
        }
        self.now = 1000.0

    def op(self, action: str, role: str = "dealer", person: str = "x", **payload: Any) -> None:
        spec = self.specs[action]
        assert role in spec.roles
        assert spec.payload_checked, f"{action} has no parameter table"
        # As the API does: the reason travels beside the payload and joins it after the checks.
        reason = payload.pop("reason", None)
        assert spec.requires_reason == (reason is not None), action
        assert check_payload(spec, payload) is None, (action, check_payload(spec, payload))
        if reason is not None:
            payload["reason"] = reason
        self.feed(action, f"{role}:{person}", payload)

    def feed(self, action: str, actor: str, payload: dict[str, Any]) -> None:
        self.now += 1
        outcome = self.proc.handle(action, actor, payload, self.now)
        assert outcome.accepted, outcome.violation

    def view(self) -> dict[str, Any]:
        return console_snapshot(self.proc.snapshot(), now=self.now, wall_now=WALL)


def test_only_operator_actions_are_offered_and_supervisors_give_reasons() -> None:
    specs = {s.name: s for s in action_specs(ThirteenProcedure.ACTIONS, "thirteen")}
    assert "card_read" not in specs
    assert "timer_expired" not in specs
    assert specs["place_bet"].roles == {"dealer"}
    assert specs["clear_tilt"].requires_reason
    assert specs["void_deal"].requires_reason
    assert not specs["shake_dice"].requires_reason
    assert specs["place_bet"].label_zh == "下注"
    every = {n for n, a in ThirteenProcedure.ACTIONS.items() if a.roles & {"dealer", "supervisor"}}
    assert set(specs) == every


def test_a_thirteen_round_through_the_api_checks_and_its_console_view() -> None:
    t = Checked(ThirteenProcedure(), "thirteen")
    for name in ("shuffler", "shoe_reader", "dice_shaker", "timer_bell"):
        t.feed("device_identified", f"device:{name}", {"device": name, "approved": True})
    t.op("open_table")
    t.op("confirm_hand_shuffle")
    t.feed("shuffle_completed", "device:shuffler", {"count": 52, "mode": "random"})
    t.op("confirm_cut", by="player", player="P1", cards=20, one_hand=True)
    t.op("load_shoe")
    t.op("place_bet", player="P1", seat=1, amount=300, units=3, seated=True)
    t.op("place_bet", player="P2", seat=1, amount=100, units=1, seated=True)
    t.op("place_bet", player="陳", seat=2, amount=200, units=2, seated=True)
    view = t.view()
    assert view["phase"] == "BETTING"
    assert view["phase_label"] == {"en": "Betting", "zh": "下注"}
    assert view["seats"][0]["name"] == "Banker"
    assert view["seats"][1]["bets"] == [
        {"bettor": "P1", "amount": 300},
        {"bettor": "P2", "amount": 100},
    ]
    assert view["seats"][1]["holder"] == "P1"
    assert view["seats"][2]["name_zh"] == "第2門"

    t.op("shake_dice", player="P1")
    t.feed("dice_landed", "device:dice_shaker", {"dice": [1, 2, 3, 4], "valid": True})
    deck = [str(c) for c in DECK]
    random.Random(3).shuffle(deck)
    for card in deck:
        t.feed("card_read", "device:shoe_reader", {"card": card})
    view = t.view()
    assert view["dice"] == [1, 2, 3, 4]
    assert view["dice_total"] == 10
    assert [len(s["cards"]) for s in view["seats"]] == [13, 13, 13, 13]

    def rows(seat: int) -> dict[str, Any]:
        cards = t.proc.seat_cards(seat)  # type: ignore[attr-defined]
        return {"head": cards[:3], "middle": cards[3:8], "tail": cards[8:13]}

    t.op("arrange_banker")
    t.op("open_banker")
    view = t.view()
    assert view["timer"]["remaining"] == 300.0
    assert view["timer"]["deadline"] == WALL + 300.0
    assert view["next"].startswith("players arrange within 5 minutes")

    # A shoe removed mid-round: HOLD, the timer paused, the supervisor clears with a reason.
    t.feed("door_opened", "device:shoe_reader", {"device": "shoe_reader", "fault": "shoe removed"})
    view = t.view()
    assert view["hold"]["kind"] == "hold"
    assert view["hold"]["reason"] == "shoe_reader: shoe removed"
    assert view["hold"]["resumes"] == "PLAYERS_ARRANGING"
    assert view["timer"] == {"remaining": 299.0, "running": False, "rang": False}
    assert view["faults"] == [
        {
            "device": "shoe_reader",
            "fault": "shoe removed",
            "kind": "hold",
            "healthy": False,
            "cleared": False,
        }
    ]
    t.feed("device_healthy", "device:shoe_reader", {"device": "shoe_reader"})
    # Healthy again is not cleared: the fault stays open until the supervisor clears it.
    [fault] = t.view()["faults"]
    assert (fault["healthy"], fault["cleared"]) == (True, False)
    t.op("clear_hold", role="supervisor", reason="shoe back in place")
    assert t.view()["hold"] is None

    t.op("enter_arrangement", seat=0, **rows(0))
    t.op("player_arranged", seat=1)
    t.now += 400
    t.feed("timer_expired", "system", {})
    t.op("open_hand", seat=1)
    t.op("enter_arrangement", seat=1, **rows(1))
    t.op("settle_round")
    view = t.view()
    assert view["seats"][2]["late"] is True
    assert view["seats"][2]["settlement"]["result"] == "late"
    assert view["seats"][2]["settlement"]["amount"] == -200.0
    assert view["timer"]["rang"] is True
    assert {s["seat"] for s in view["settlements"]} == {1, 2}
    # Issue 23: why each seat won or lost, in both languages: each row's winner and the two
    # hands' names (the late seat: none, it lost unopened).
    assert view["progress"] == {"kind": "cards", "done": 52, "total": 52}
    detail = view["seats"][1]["detail"]
    assert [r["row"] for r in detail["rows"]] == ["head", "middle", "tail"]
    assert detail["rows"][0]["label"] == {"zh": "頭道", "en": "head"}
    assert all(r["player"]["zh"] and r["banker"]["en"] for r in detail["rows"])
    assert view["seats"][2]["detail"] == {"late": True, "foul": None, "rows": [], "special": None}
    t.op("start_round")


def test_a_pai_gow_round_through_the_api_checks_and_its_console_view() -> None:
    t = Checked(PaiGowProcedure(hands=8), "paigow")
    t.feed("device_identified", "device:dice_shaker", {"device": "dice_shaker", "approved": True})
    t.op("open_table")
    t.op("take_bank", player="B", seat=0)
    t.op("confirm_tile_shuffle", new_set=False)
    t.op("move_stacks", by="player", player="P1", one_hand=True)
    t.op("move_stacks", by="banker", player="B", one_hand=True)
    t.op("place_bet", player="P1", seat=1, amount=100)
    t.op("place_bet", player="P2", seat=2, amount=50)
    t.op("place_stake", amount=1000)
    t.op("head_tiles_out")
    t.op("shake_dice", player="B")
    t.feed("dice_landed", "device:dice_shaker", {"dice": [2, 2, 3, 3]})
    for door in range(1, 9):  # 10 from the banker: door 1 first, counter-clockwise
        t.op("deal_hand", seat=door % 8)
    tiles = [str(x) for x in paigow.TILE_SET]
    random.Random(5).shuffle(tiles)

    def setting(group: list[str]) -> dict[str, str]:
        front, back = paigow.set_hand(paigow.parse_tiles(" ".join(group)))
        return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}

    t.op("set_hand", seat=1)  # set face down: the tiles enter when the croupier opens them
    t.op("set_hand", seat=2)
    t.op("set_banker")
    t.op("open_hand", seat=0, **setting(tiles[0:4]))
    t.op("open_hand", seat=1, **setting(tiles[4:8]))
    t.op("open_hand", seat=2, **setting(tiles[8:12]))
    view = t.view()
    assert len(view["seats"]) == 8
    assert view["seats"][0]["name"] == "Banker"
    assert view["seats"][3]["name"] == "Door 3"
    assert len(view["seats"][1]["cards"]) == 4
    assert view["seats"][1]["bets"] == [{"bettor": "P1", "amount": 100}]
    t.op("settle_round")
    view = t.view()
    assert {s["seat"] for s in view["settlements"]} == {1, 2}
    assert all(isinstance(s["amount"], float) for s in view["settlements"])
    # Issue 23: the doors dealt and opened, the first hand; each settled door's pairs with
    # their Table II classes; the bank's result, commission and new bank.
    assert view["progress"] == {"kind": "doors", "done": 8, "total": 8}
    assert view["first_hand"] == 1 and view["stake"] == 1000
    assert all(s["dealt"] and s["open"] == (s["seat"] in (0, 1, 2)) for s in view["seats"])
    door = view["seats"][1]["detail"]
    assert door["front_class"]["zh"] and door["back_class"]["zh"] and not door["corrected"]
    bank = view["bank"]
    assert bank["stake"] == 1000 and bank["carried"] == 1000 + bank["net"]
    assert bank["hand"]["back_class"]["zh"]
    t.op("next_round")


@pytest.mark.parametrize("game", ["thirteen", "paigow"])
def test_every_operator_action_of_each_game_has_a_parameter_table(game: str) -> None:
    proc = ThirteenProcedure if game == "thirteen" else PaiGowProcedure
    unchecked = [s.name for s in action_specs(proc.ACTIONS, game) if not s.payload_checked]
    assert unchecked == []
    # and no device's fact is offered to a person
    assert all(proc.ACTIONS[s.name].operator for s in action_specs(proc.ACTIONS, game))


def test_the_table_runtime_offers_everything_the_api_asks_of_a_table() -> None:
    table = Table(load_config(None))
    assert isinstance(table.facade, TableFacade)
    names = ("act", "journal_query", "subscribe", "journal_security", "legal_actions", "training")
    for name in names:
        wanted = inspect.signature(getattr(TableFacade, name)).parameters
        offered = inspect.signature(getattr(LocalFacade, name)).parameters
        assert list(wanted) == list(offered)[: len(wanted)], name
    assert inspect.iscoroutinefunction(LocalFacade.act)
    assert inspect.iscoroutinefunction(LocalFacade.journal_security)


@pytest.mark.skipif(
    "approve_override" not in ThirteenProcedure.ACTIONS, reason="no override in the procedure"
)
def test_a_misread_card_entered_by_the_dealer_waits_for_the_supervisors_approval() -> None:
    t = Checked(ThirteenProcedure(), "thirteen")
    for name in ("shuffler", "shoe_reader", "dice_shaker", "timer_bell"):
        t.feed("device_identified", f"device:{name}", {"device": name, "approved": True})
    t.op("open_table")
    t.op("confirm_hand_shuffle")
    t.feed("shuffle_completed", "device:shuffler", {"count": 52, "mode": "random"})
    t.op("confirm_cut", by="player", player="P1", cards=20, one_hand=True)
    t.op("load_shoe")
    t.op("place_bet", player="P1", seat=1, amount=300, units=3, seated=True)
    t.op("shake_dice", player="P1")
    t.feed("dice_landed", "device:dice_shaker", {"dice": [1, 2, 3, 4], "valid": True})
    deck = [str(c) for c in DECK]
    t.feed("card_read", "device:shoe_reader", {"card": deck[0]})
    t.feed("card_read", "device:shoe_reader", {"card": "??"})
    assert t.view()["hold"]["kind"] == "tilt"
    t.feed("device_healthy", "device:shoe_reader", {"device": "shoe_reader"})
    t.op("clear_tilt", role="supervisor", person="wong", reason="reader cleaned")
    specs = t.specs
    assert specs["propose_card"].roles == {"dealer"}
    assert specs["approve_override"].requires_reason
    assert specs["reject_override"].requires_reason
    assert (specs["approve_override"].label_en, specs["approve_override"].label_zh) == (
        "Approve override",
        "批准更正",
    )
    t.op("propose_card", card=deck[1], note="read by eye")
    pending = t.view()["override"]
    assert pending["card"] == deck[1]
    assert pending["index"] == 2
    assert pending["proposed_by"] == "dealer:x"
    assert pending["label"]["en"].startswith("Enter card")
    # The supervisor is another person than the dealer who proposed it.
    t.op("approve_override", role="supervisor", person="wong", reason="card seen on camera")
    view = t.view()
    assert view["override"] is None
    assert sum(len(s["cards"]) for s in view["seats"]) == 2
