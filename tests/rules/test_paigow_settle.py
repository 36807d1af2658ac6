from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.paigow import (
    MACAU_1990,
    TILE_SET,
    CoBanker,
    Door,
    Hand,
    PaiGowRules,
    RoundSettlement,
    Tile,
    parse_deal,
    ruleset,
    second_round_stake,
    settle_round,
)


def hands(*pairs: str) -> list[Hand]:
    groups = parse_deal(pairs)
    return [((g[0], g[1]), (h[0], h[1])) for g, h in zip(groups[::2], groups[1::2], strict=True)]


# The banker holds 地牌宝 / 天牌宝: beats every door except one holding 至尊宝 behind.
BANKER, LOSE_1, LOSE_2, PUSH, LOSE_3 = hands(
    "地 地", "天 天", "梅 梅", "人 人", "板凳 板凳", "长三 长三", "杂九 杂九", "大鸡 细鸡",
    "红头 红头", "斧头 斧头",
)  # fmt: skip
# A banker who loses to everything but a 密 hand.
WEAK_BANKER, WIN_1, WIN_2, WIN_3 = hands(
    "高脚七 细鸡", "杂七 杂五", "地 地", "天 天", "梅 梅", "人 人", "板凳 板凳", "长三 长三",
)  # fmt: skip


def money_balances(result: RoundSettlement) -> None:
    doors = sum(d.net for d in result.doors)
    bank = sum(s.net for s in result.shares)
    assert doors + bank + result.commission == 0


@pytest.mark.article("15/90/M", "5(4)", "8")
def test_within_the_stake_every_door_settles_in_full_with_5_percent() -> None:
    result = settle_round(BANKER, [Door(LOSE_1, 100), Door(LOSE_2, 60)], 1000)
    assert [(d.outcome, d.lost, d.limited) for d in result.doors] == [
        ("banker", 100, False),
        ("banker", 60, False),
    ]
    assert result.bank_result == 160
    assert result.banker.commission == 8  # 5 % of 160 (Art. 8)
    assert result.banker.net == 152
    assert result.banker_new_stake == 1152  # Art. 5(4): winnings join the stake
    money_balances(result)


@pytest.mark.article("15/90/M", "8")
def test_art_8_the_house_takes_five_per_cent_exactly_of_any_win() -> None:
    """「场方自彩金抽水百分之五」: 5 % of the winnings, whatever their size (rounded down to the
    money unit): 500 of a 10,000 win, not a unit more, for the door as for the bank."""
    doors = settle_round(WEAK_BANKER, [Door(WIN_1, 10_000), Door(WIN_2, 99)], 100_000)
    assert [(d.won, d.commission) for d in doors.doors] == [(10_000, 500), (99, 4)]
    bank = settle_round(BANKER, [Door(LOSE_1, 30_000), Door(LOSE_2, 20_000)], 100_000)
    assert (bank.bank_result, bank.banker.commission, bank.commission) == (50_000, 2_500, 2_500)
    money_balances(doors)
    money_balances(bank)


@pytest.mark.article("15/90/M", "5(3)")
def test_art_5_3_the_banker_cannot_win_more_than_the_stake() -> None:
    # Collected counter-clockwise: 头门 pays in full, 二门 pays what is left of the 250 cap.
    result = settle_round(BANKER, [Door(LOSE_1, 200), Door(LOSE_2, 200), Door(LOSE_3, 50)], 250)
    assert [(d.lost, d.limited) for d in result.doors] == [(200, False), (50, True), (0, True)]
    assert result.bank_result == 250
    money_balances(result)


@pytest.mark.article("15/90/M", "5(3)")
def test_art_5_3_the_banker_cannot_lose_more_than_the_stake() -> None:
    result = settle_round(WEAK_BANKER, [Door(WIN_1, 100), Door(WIN_2, 100), Door(WIN_3, 100)], 150)
    assert [(d.outcome, d.won, d.limited) for d in result.doors] == [
        ("player", 100, False),
        ("player", 50, True),
        ("player", 0, True),
    ]
    assert [d.commission for d in result.doors] == [5, 2, 0]  # 5 % rounded down
    assert result.bank_result == -150
    assert result.banker.carried == 0
    money_balances(result)
    with pytest.raises(ValueError, match="new stake"):
        second_round_stake(result)
    assert second_round_stake(result, added=300) == 300


@pytest.mark.article("15/90/M", "2(3)", "5(3)")
def test_collected_bets_pay_winners_before_the_stake_runs_out() -> None:
    banker, win, lose = hands("梅 梅", "长三 长三", "地 地", "天 天", "杂七 杂五", "娥 板凳")
    mixed = [Door(win, 300), Door(lose, 200)]
    result = settle_round(banker, mixed, 100)
    assert [d.outcome for d in result.doors] == ["player", "banker"]
    # 杀 then 赔: the 200 collected and the 100 stake pay the winner's 300 in full.
    assert (result.doors[0].won, result.doors[1].lost) == (300, 200)
    hand_by_hand = settle_round(
        banker, mixed, 100, rules=PaiGowRules(settlement_order="hand_by_hand")
    )
    # Door by door: the winner comes first and finds only the 100 stake.
    assert (hand_by_hand.doors[0].won, hand_by_hand.doors[1].lost) == (100, 200)
    money_balances(hand_by_hand)


@pytest.mark.article("15/90/M", "6(2)")
def test_art_6_2_a_door_set_wrongly_is_reset_before_comparing() -> None:
    # The door put 天天 in front of 人人; the croupier opens 人人 as the front.
    swapped = (LOSE_1[1], LOSE_1[0])
    result = settle_round(BANKER, [Door(swapped, 10)], 100)
    assert result.doors[0].correction == "pairs_swapped"
    assert result.doors[0].hand == LOSE_1


@pytest.mark.article("15/90/M", "5(5)")
def test_art_5_5_co_bankers_and_the_main_banker_first() -> None:
    doors = [Door(WIN_1, 300), Door(WIN_2, 300)]
    result = settle_round(
        WEAK_BANKER, doors, 200, co_bankers=[CoBanker("house", 500, is_house=True)]
    )
    assert result.bank_stake == 700
    assert result.bank_result == -600
    assert [(s.name, s.result) for s in result.shares] == [("banker", -200), ("house", -400)]
    money_balances(result)
    winning = settle_round(
        BANKER,
        [Door(LOSE_1, 300)],
        200,
        co_bankers=[CoBanker("guest", 500)],
        rules=PaiGowRules(co_bank_allocation="pro_rata"),
    )
    assert [(s.name, s.result, s.commission) for s in winning.shares] == [
        ("banker", 86, 4),
        ("guest", 214, 10),
    ]
    money_balances(winning)


@pytest.mark.article("15/90/M", "5(5)")
def test_art_5_5_a_co_banker_may_not_bet_on_a_door() -> None:
    with pytest.raises(ValueError, match=r"Art\. 5\(5\)"):
        settle_round(
            BANKER,
            [Door(LOSE_1, 10, frozenset({"ms-lei"}))],
            100,
            co_bankers=[CoBanker("ms-lei", 50)],
        )


@pytest.mark.article("15/90/M", "5(4)")
def test_art_5_4_the_second_stake_may_grow_not_shrink() -> None:
    result = settle_round(BANKER, [Door(LOSE_1, 100)], 100)
    assert second_round_stake(result) == 195
    assert second_round_stake(result, added=5) == 200
    with pytest.raises(ValueError, match="not lowered"):
        second_round_stake(result, added=-1)


@pytest.mark.article("15/90/M", "5(3)")
@pytest.mark.parametrize("stake", [0, -100])
def test_art_5_3_the_bank_plays_only_with_a_stake(stake: int) -> None:
    """The stake bounds the bank's win and loss: a round with none is refused, citing it."""
    with pytest.raises(ValueError, match=r"stake must be positive \(Art\. 5\(3\)\)"):
        settle_round(BANKER, [Door(LOSE_1, 100)], stake)


def test_invalid_rounds_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        settle_round(BANKER, [Door(LOSE_1, -1)], 10)
    with pytest.raises(ValueError, match="only 2"):
        settle_round(BANKER, [Door(BANKER, 1)], 10)


@st.composite
def rounds(draw: st.DrawFn) -> tuple[Hand, list[Door], int, list[CoBanker], PaiGowRules]:
    tiles: list[Tile] = draw(st.permutations(TILE_SET))
    door_count = draw(st.integers(1, 7))
    dealt = [
        ((tiles[i], tiles[i + 1]), (tiles[i + 2], tiles[i + 3]))
        for i in range(0, 4 * (door_count + 1), 4)
    ]
    bets = draw(st.lists(st.integers(0, 1000), min_size=door_count, max_size=door_count))
    stake = draw(st.integers(1, 2000))
    co = draw(st.lists(st.integers(1, 1000), max_size=3))
    rules = PaiGowRules(
        settlement_order=draw(st.sampled_from(["collect_then_pay", "hand_by_hand"])),
        co_bank_allocation=draw(st.sampled_from(["banker_first", "pro_rata"])),
        correct_banker_setting=draw(st.booleans()),
    )
    doors = [Door(hand, bet) for hand, bet in zip(dealt[1:], bets, strict=True)]
    co_bankers = [CoBanker(f"co{i}", amount, is_house=i == 0) for i, amount in enumerate(co)]
    return dealt[0], doors, stake, co_bankers, rules


@given(rounds())
@pytest.mark.article("15/90/M", "5(3)")
def test_settlement_conserves_money_within_the_stake(
    round_: tuple[Hand, list[Door], int, list[CoBanker], PaiGowRules],
) -> None:
    banker, doors, stake, co_bankers, rules = round_
    result = settle_round(banker, doors, stake, co_bankers=co_bankers, rules=rules)
    money_balances(result)
    assert result.bank_stake == stake + sum(co.stake for co in co_bankers)
    assert -result.bank_stake <= result.bank_result <= result.bank_stake
    assert sum(s.result for s in result.shares) == result.bank_result
    for share in result.shares:
        assert -share.stake <= share.result <= share.stake
        assert share.carried >= 0
    for door in result.doors:
        assert 0 <= door.won <= door.bet and 0 <= door.lost <= door.bet
        assert door.won == 0 or door.lost == 0
        if door.outcome == "push":
            assert door.won == door.lost == 0
        assert door.commission == door.won * 5 // 100
    # Limits fall on the doors settled last on the side that ran short.
    for side in ("banker", "player"):
        limited = [d.limited for d in result.doors if d.outcome == side and d.bet > 0]
        if rules.settlement_order == "collect_then_pay" and True in limited:
            assert all(limited[limited.index(True) :])
    # Nothing is limited when the bank could have covered every door.
    owed = sum(d.bet for d in result.doors if d.outcome == "player")
    due = sum(d.bet for d in result.doors if d.outcome == "banker")
    if rules.settlement_order == "collect_then_pay" and abs(due - owed) <= result.bank_stake:
        assert not any(d.limited for d in result.doors)


@given(rounds())
def test_settlement_is_antisymmetric_within_the_stake(
    round_: tuple[Hand, list[Door], int, list[CoBanker], PaiGowRules],
) -> None:
    banker, doors, _, _, _ = round_
    door = doors[0]
    stake = max(door.bet, 1)
    forward = settle_round(banker, [door], stake, rules=MACAU_1990)
    backward = settle_round(door.hand, [Door(banker, door.bet)], stake, rules=MACAU_1990)
    # A door's win is the banker's loss with the seats exchanged, before commission (the banker
    # may set freely, so both hands are compared as the croupier would open them).
    if forward.doors[0].correction is None and backward.doors[0].correction is None:
        assert forward.bank_result == -backward.bank_result


@pytest.mark.article("15/90/M", "6(2)")
def test_the_free_setting_house_compares_the_hand_as_split() -> None:
    banker, player = hands("梅 梅", "长三 长三", "天 人", "天 人")
    strict = settle_round(banker, [Door(player, 100)], 500)
    free = settle_round(banker, [Door(player, 100)], 500, rules=ruleset("macau-1990-free-setting"))
    # Re-set, the door holds 人牌宝 / 天牌宝 and wins; as split, 天杠 twice: it wins as well, but
    # the croupier reports the correction only where the house requires the largest back.
    assert strict.doors[0].correction == "back_not_largest"
    assert free.doors[0].correction is None
    assert free.doors[0].hand == player
