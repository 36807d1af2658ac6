from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.paigow import (
    TILE_SET,
    Hand,
    Tile,
    classify,
    correct_setting,
    deal,
    deal_order,
    door_order,
    first_hand_from_dice,
    hand_outcome,
    legal_settings,
    parse_deal,
    parse_tiles,
    set_hand,
    setting_key,
)


def hand(front: str, back: str) -> Hand:
    a, b = parse_tiles(front)
    c, d = parse_tiles(back)
    return ((a, b), (c, d))


def hands_of(*pairs: str) -> list[Hand]:
    groups = parse_deal(pairs)
    return [((g[0], g[1]), (h[0], h[1])) for g, h in zip(groups[::2], groups[1::2], strict=True)]


four_tiles = st.permutations(TILE_SET).map(lambda tiles: tuple(tiles[:4]))


def _two_hands(t: list[Tile]) -> tuple[Hand, Hand]:
    return ((t[0], t[1]), (t[2], t[3])), ((t[4], t[5]), (t[6], t[7]))


two_hands = st.permutations(TILE_SET).map(_two_hands)


# Art. 6(2): the back pair as large as possible.
@pytest.mark.article("15/90/M", "6(2)")
def test_set_hand_puts_the_largest_pair_behind() -> None:
    front, back = set_hand(parse_tiles("天 天 人 人"))
    assert classify(*back).name == "天牌宝"
    assert classify(*front).name == "人牌宝"


@pytest.mark.article("15/90/M", "6(2)")
def test_set_hand_prefers_the_largest_back_even_over_two_good_pairs() -> None:
    # 天 杂九 地 人: 天九皇 + 地人(地杠) beats 天人(天杠) + 地杂九(一) and 天地 + 杂九人.
    front, back = set_hand(parse_tiles("天 杂九 地 人"))
    assert (classify(*front).name, classify(*back).name) == ("地杠", "天九皇")


@pytest.mark.article("15/90/M", "6(2)")
def test_set_hand_breaks_ties_on_the_back_by_the_front() -> None:
    # Back 天牌九 two ways (天+高脚七 or 天+杂七); the front is then 杂七+梅 (六) or 高脚七+梅 (七).
    front, back = set_hand(parse_tiles("天 高脚七 杂七 梅"))
    assert classify(*back).name == "天牌九"
    assert classify(*front).name == "梅牌七"


@pytest.mark.article("15/90/M", "6(2)")
def test_art_6_2_croupier_resets_a_hand_whose_back_is_not_largest() -> None:
    check = correct_setting(hand("天 人", "天 人"))
    assert check.correction == "back_not_largest"
    assert check.hand == set_hand(parse_tiles("天 人 天 人"))


@pytest.mark.article("15/90/M", "6(2)")
def test_art_6_2_a_larger_front_is_opened_as_the_back() -> None:
    check = correct_setting(hand("天 天", "人 人"))
    assert check.correction == "pairs_swapped"
    assert check.hand == hand("人 人", "天 天")


@pytest.mark.article("15/90/M", "6(2)")
def test_art_6_2_a_legal_setting_stands() -> None:
    check = correct_setting(hand("人 人", "天 天"))
    assert (check.correction, check.corrected) == (None, False)
    # The text polices only the back pair: a back as large as possible but a weaker front stands.
    tiles = parse_tiles("天 高脚七 杂七 梅")
    weaker_front = ((tiles[1], tiles[3]), (tiles[0], tiles[2]))  # 高脚七梅 / 天杂七
    assert correct_setting(weaker_front).correction is None


@pytest.mark.article("15/90/M", "1(1)", "2(4)")
def test_a_hand_is_four_tiles_from_one_set() -> None:
    with pytest.raises(ValueError, match="four tiles"):
        set_hand(parse_tiles("天 天 人"))
    with pytest.raises(ValueError, match="only 2"):
        set_hand([Tile(6, 6)] * 4)


@given(four_tiles)
@pytest.mark.article("15/90/M", "6(2)")
def test_set_hand_is_never_worse_than_any_legal_setting(tiles: tuple[Tile, ...]) -> None:
    best = set_hand(tiles)
    settings = legal_settings(tiles)
    assert best in settings
    assert all(setting_key(best) >= setting_key(other) for other in settings)
    assert classify(*best[0]) <= classify(*best[1])
    assert correct_setting(best).correction is None
    assert set_hand(tiles[::-1]) == best == set_hand((tiles[2], tiles[0], tiles[3], tiles[1]))


# Art. 6(3) and Art. 9(1).
@pytest.mark.article("15/90/M", "6(3)")
def test_art_6_3_both_pairs_win() -> None:
    banker, player = hands_of("人 人", "天 天", "梅 梅", "地 地")
    assert hand_outcome(banker, player) == "banker"
    assert hand_outcome(player, banker) == "player"


@pytest.mark.article("15/90/M", "6(3)")
def test_art_6_3_one_pair_tied_the_other_decides() -> None:
    banker, player = hands_of("天 高脚七", "人 人", "天 杂七", "地 地")
    assert classify(*banker[0]) == classify(*player[0])  # both 天牌九
    assert hand_outcome(banker, player) == "player"
    assert hand_outcome(player, banker) == "banker"


@pytest.mark.article("15/90/M", "6(3)")
def test_art_6_3_one_each_is_a_push() -> None:
    banker, player = hands_of("人 人", "地 地", "梅 梅", "天 天")
    assert hand_outcome(banker, player) == "push"


@pytest.mark.article("15/90/M", "9(1)")
def test_art_9_1_no_banker_wins_ties() -> None:
    banker, player = hands_of("天 高脚七", "长三 细鸡", "天 杂七", "长三 大鸡")
    assert classify(*banker[0]) == classify(*player[0])  # 天牌九 = 天牌九
    assert classify(*banker[1]).name == "长牌九"
    assert classify(*player[1]).name == "长牌二"
    assert hand_outcome(banker, player) == "banker"
    tied_banker, tied_player = hands_of("天 高脚七", "梅 杂九", "天 杂七", "梅 杂九")
    assert hand_outcome(tied_banker, tied_player) == "push"


@pytest.mark.article("15/90/M", "7(2)")
def test_art_7_2_ten_and_twenty_count_nothing_and_the_larger_tile_decides() -> None:
    assert classify(*parse_tiles("斧头 杂九")).points == 0  # 20
    assert classify(*parse_tiles("娥 大鸡")).points == 0  # 10
    # Both 密: 娥牌密 beats 斧头密 because 娥 ranks above 斧头 in Table I.
    assert classify(*parse_tiles("娥 大鸡")) > classify(*parse_tiles("斧头 杂九"))


@given(two_hands)
@pytest.mark.article("15/90/M", "9(1)")
def test_outcome_is_antisymmetric(hands: tuple[Hand, Hand]) -> None:
    one, two = hands
    flipped = {"banker": "player", "player": "banker", "push": "push"}
    assert hand_outcome(two, one) == flipped[hand_outcome(one, two)]


# Art. 2(2): count from the banker as one, counter-clockwise.
@pytest.mark.parametrize(
    ("total", "hands", "first"),
    [(9, 8, 0), (10, 8, 1), (4, 8, 3), (24, 8, 7), (17, 8, 0), (5, 4, 0), (6, 4, 1), (24, 4, 3)],
)
@pytest.mark.article("15/90/M", "2(2)")
def test_first_hand_from_dice(total: int, hands: int, first: int) -> None:
    assert first_hand_from_dice(total, hands) == first


@pytest.mark.article("15/90/M", "2(2)")
def test_the_banker_taking_the_first_tiles_makes_the_right_hand_door_first() -> None:
    assert deal_order(9) == (0, 1, 2, 3, 4, 5, 6, 7)
    assert door_order(9) == (1, 2, 3, 4, 5, 6, 7)
    assert deal_order(12) == (3, 4, 5, 6, 7, 0, 1, 2)
    assert door_order(12) == (3, 4, 5, 6, 7, 1, 2)
    assert door_order(7, 4) == (2, 3, 1)


@pytest.mark.parametrize(("total", "hands"), [(3, 8), (25, 8), (10, 6)])
@pytest.mark.article("15/90/M", "2(2)", "3(1)")
def test_impossible_dice_or_door_counts_are_refused(total: int, hands: int) -> None:
    with pytest.raises(ValueError):
        first_hand_from_dice(total, hands)


@pytest.mark.article("15/90/M", "6(3)")
def test_every_pair_of_distinct_hands_has_one_outcome() -> None:
    # A quick exhaustive check over every pair class against 天牌宝 / 地牌宝 fixed for the banker.
    banker = ((Tile(1, 1), Tile(1, 1)), (Tile(6, 6), Tile(6, 6)))
    rest = [t for t in TILE_SET if t not in (Tile(1, 1), Tile(6, 6))]
    for a, b, c, d in combinations(rest[:10], 4):
        player = set_hand((a, b, c, d))
        assert hand_outcome(banker, player) in ("banker", "push")


@pytest.mark.article("15/90/M", "2(2)", "2(4)")
def test_deal_gives_the_first_four_tiles_to_the_door_the_dice_name() -> None:
    tiles = list(TILE_SET)
    dealt = deal(tiles, 12)  # (12 - 1) % 8 = 3: the fourth door from the banker
    assert dealt[3] == tuple(tiles[:4])
    assert dealt[0] == tuple(tiles[20:24])
    assert sorted(dealt) == list(range(8))
    four = deal(tiles[:16], 6, hands=4)
    assert four[1] == tuple(tiles[:4])
    with pytest.raises(ValueError, match="take 16 tiles"):
        deal(tiles, 6, hands=4)


@pytest.mark.article("15/90/M", "6(2)")
def test_set_hand_is_best_for_every_one_of_the_35960_four_tile_deals() -> None:
    # Exhaustive, beside the property test: every physical group of four tiles of the set.
    for tiles in combinations(TILE_SET, 4):
        best = set_hand(tiles)
        settings = legal_settings(tiles)
        assert best in settings
        assert all(setting_key(best) >= setting_key(other) for other in settings)


@pytest.mark.article("15/90/M", "6(2)")
def test_a_house_may_let_players_split_freely() -> None:
    check = correct_setting(hand("天 人", "天 人"), largest_back=False)
    assert check.correction is None
    swapped = correct_setting(hand("天 天", "人 人"), largest_back=False)
    assert swapped.correction == "pairs_swapped"
