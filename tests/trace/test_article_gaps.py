"""Articles no other suite proved: each test here closes one gap `tabled trace` showed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from daemon.config import ConfigError, load_config
from daemon.procedures import build
from daemon.procedures.base import Outcome, Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.rules import thirteen

DEALER = "dealer:D1"


class Feed:
    def __init__(self, proc: Procedure) -> None:
        self.proc, self.now = proc, 1000.0

    def __call__(self, action: str, actor: str, payload: dict[str, Any] | None = None) -> Outcome:
        self.now += 1.0
        return self.proc.handle(action, actor, payload or {}, self.now)

    def ok(self, action: str, actor: str = DEALER, payload: dict[str, Any] | None = None) -> None:
        outcome = self(action, actor, payload)
        assert outcome.accepted, outcome.violation

    def refused(
        self, action: str, actor: str = DEALER, payload: dict[str, Any] | None = None
    ) -> str:
        outcome = self(action, actor, payload)
        assert not outcome.accepted and outcome.violation is not None
        return outcome.violation.article


@pytest.mark.article("15/90/M", "1(2)")
def test_a_paigow_table_opens_only_with_its_dice_shaker_identified_and_approved() -> None:
    feed = Feed(PaiGowProcedure())
    assert feed.refused("open_table") == "Portaria 15/90/M Art. 1"
    shaker = {"device": "dice_shaker", "approved": False}
    feed.ok("device_identified", "device:dice_shaker", shaker)
    assert feed.refused("open_table") == "Portaria 15/90/M Art. 1"
    feed.ok("device_identified", "device:dice_shaker", {**shaker, "approved": True})
    feed.ok("open_table")
    assert feed.proc.phase == "BANK_OFFER"


@pytest.mark.article("51/89/M", "1(b)", "1(c)", "1(d)")
@pytest.mark.article("15/90/M", "1(2)")
@pytest.mark.parametrize(
    ("config", "equipment"),
    [
        ("table.toml", ("shuffler", "shoe_reader", "dice_shaker")),
        ("paigow.toml", ("dice_shaker",)),
    ],
)
def test_the_table_built_from_its_config_waits_for_the_equipment_of_art_1(
    config: str, equipment: tuple[str, ...]
) -> None:
    """`build` (what `tabled run` plays) gives the procedure the devices Art. 1 names; the
    table opens only once each is identified and approved, and a device it has not is refused."""
    root = Path(__file__).resolve().parents[2]
    proc = build(load_config(root / "config" / config))
    assert set(equipment) <= set(proc.devices)
    feed = Feed(proc)
    regulation = "Portaria 51/89/M" if config == "table.toml" else "Portaria 15/90/M"
    assert feed.refused("open_table") == f"{regulation} Art. 1"
    stranger = {"device": "roulette_wheel", "approved": True}
    assert feed.refused("device_identified", "device:roulette_wheel", stranger).endswith("Art. 1")
    not_a_flag = {"device": equipment[0], "approved": "yes"}
    assert feed.refused("device_identified", f"device:{equipment[0]}", not_a_flag).endswith(
        "Art. 1"
    )
    for name in proc.devices:
        feed.ok("device_identified", f"device:{name}", {"device": name, "approved": True})
    assert feed.refused("open_table", payload={"skip_checks": True}) == f"{regulation} Art. 1"
    feed.ok("open_table")


@pytest.mark.article("51/89/M", "1(b)", "1(c)", "1(d)")
@pytest.mark.article("15/90/M", "1(2)")
@pytest.mark.parametrize(
    ("game", "present", "needed"),
    [
        ("thirteen", "dice_shaker", "[devices.shuffler], [devices.shoe_reader]"),
        ("paigow", "timer_bell", "[devices.dice_shaker]"),
    ],
)
def test_a_table_is_not_built_without_the_equipment_its_game_names(
    tmp_path: Path, game: str, present: str, needed: str
) -> None:
    """A tool's partial config may lack devices; the table `build` makes from it may not: the
    game's own list of the equipment Art. 1 names refuses it."""
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nid = "T01"\ngame = "{game}"\n\n[devices.{present}]\nport = "sim://{present}"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=re.escape(f"a {game} table needs {needed}")):
        build(load_config(config, partial=True))


@pytest.mark.article("003", "way 1 bets")
@pytest.mark.parametrize("ruleset", ["hk-common", "hk-extended"])
def test_a_hong_kong_table_takes_the_bets_before_the_cards(ruleset: str) -> None:
    """「開牌前，各閒家向莊家下注」: at the table the bets close at the shake, before a card."""
    feed = Feed(ThirteenProcedure(ruleset=ruleset))
    for name in ("shuffler", "shoe_reader", "dice_shaker", "timer_bell"):
        feed.ok("device_identified", f"device:{name}", {"device": name, "approved": True})
    feed.ok("open_table")
    feed.ok("confirm_hand_shuffle")
    feed.ok("shuffle_completed", "device:shuffler", {"count": 52, "mode": "random"})
    feed.ok("confirm_cut", payload={"by": "player", "player": "P1", "cards": 20, "one_hand": True})
    feed.ok("load_shoe")
    bet = {"player": "P1", "seat": 1, "amount": 500, "units": 5, "seated": True}
    feed.ok("place_bet", payload=bet)  # the Hong Kong ways bet any number of units
    feed.ok("shake_dice", payload={"player": "P1"})
    late = {**bet, "player": "P2", "seat": 2}
    assert feed.refused("place_bet", payload=late) == "Portaria 51/89/M Art. 2(c)"
    assert feed.refused("withdraw_bet", payload={"player": "P1", "seat": 1}) == (
        "Portaria 51/89/M Art. 2(c)"
    )


BANKER = ("2c 3d 5h", "7c 7d 8d Jc Qd", "Tc Td 4c 4h 8c")


@pytest.mark.article("003", "way 1 odds")
@pytest.mark.parametrize("ruleset", ["hk-common", "hk-extended"])
@pytest.mark.parametrize(
    ("player", "row", "units"),
    [
        (("Ac Ad Ah", "9s Ts Js Qc Kd", "2s 3s 5s 6s 8s"), 0, 3),  # 三條摆頭: 三注
        (("2d 3h 5c", "9c 9h 9s 6d 6h", "Ks Kh Kd Kc As"), 1, 2),  # 夫佬摆二道: 兩注
        (("2d 3h 5c", "9c 9h 9s 9d 6h", "Ks Kh Kd Kc As"), 1, 8),  # 四條作二道: 八注
        (("2d 3h 5c", "5s 6s 7s 8h 9c", "Ks Kh Kd Kc Ah"), 2, 4),  # 四條摆尾: 四注
        (("2d 3h 5c", "5s 6s 7s 8s 9s", "Th Jh Qh Kh Ah"), 1, 10),  # 同花順作二道: 十注
        (("2d 3h 5c", "5s 6s 7s 8h 9c", "Th Jh Qh Kh Ah"), 2, 5),  # 同花順摆尾: 五注
        (("2d 3h 5c", "5s 6s 7s 8h 9c", "Ks Kh Kd Ac Ah"), 2, 1),  # anything else: 一注
    ],
)
def test_the_hong_kong_row_payouts(
    ruleset: str, player: tuple[str, str, str], row: int, units: int
) -> None:
    result = thirteen.settle(BANKER, player, ruleset)
    assert result.special is None
    assert result.rows[row].winner == "player" and result.rows[row].units == units


DRAGON = ("As 2d 3c", "4h 5s 6d 7c 8h", "9s Td Jc Qh Kd")  # 一條龍: 36 points
SIX_PAIRS = ("Kc 2c 2h", "3h 3s 4c 4d 5c", "5d 6c 6h 7d 7h")  # 六對半: 6 points


@pytest.mark.article("003", "way 3 specials")
def test_of_two_special_hands_the_smaller_pays_the_larger_never_the_reverse() -> None:
    one = thirteen.settle(SIX_PAIRS, DRAGON, "hk-points")
    assert (one.player_special, one.banker_special) == ("一条龙", "六对半")
    assert (one.player_units, one.banker_units) == (36, 0) and one.rows == ()
    other = thirteen.settle(DRAGON, SIX_PAIRS, "hk-points")
    assert (other.banker_units, other.player_units) == (36, 0)


@pytest.mark.article("003", "way 3 specials")
@pytest.mark.article("51/89/M", "9 I")
def test_the_smaller_special_pays_the_larger_only_where_the_third_way_is_played() -> None:
    """Way 3's rule is its rule set's: in Macau two special hands are a push (Art. 9 I 和局),
    whichever is larger; the first way's banker pays the player."""
    macau = thirteen.settle(DRAGON, SIX_PAIRS, "macau-1989")
    assert (macau.banker_special, macau.player_special) == ("一条龙", "六对半")
    assert macau.outcome == "push" and macau.player_net == 0
    points = thirteen.settle(DRAGON, SIX_PAIRS, "hk-points")
    assert (points.banker_units, points.player_units) == (36, 0)
