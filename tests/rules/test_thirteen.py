"""Fouls, special hands, settlement and the deal of Thirteen (000 Art. 2, 7-11; 003)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules import thirteen
from daemon.rules.cards import DECK, Card, CardError, parse_cards
from daemon.rules.thirteen import RulesError, is_foul, settle, special_hand
from daemon.rules.thirteen.rulesets import HK_EXTENDED_LOWER_UNITS

Rows = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]


def hand(head: str, middle: str, tail: str) -> Rows:
    return parse_cards(head), parse_cards(middle), parse_cards(tail)


def split(cards: tuple[Card, ...]) -> Rows:
    return cards[:3], cards[3:8], cards[8:13]


deals = st.permutations(DECK).map(tuple)

# A plain banker hand most players can beat or lose to row by row.
BANKER = hand("2c 3d 5h", "7c 7d 9h Jc Qd", "Tc Td 4s 4h 8c")


# --- the deal, Art. 2(b) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "seat"), [(4, 3), (5, 0), (6, 1), (7, 2), (8, 3), (9, 0), (13, 0), (24, 3)]
)
@pytest.mark.article("51/89/M", "2(b)")
def test_dice_count_from_the_banker_as_one_counter_clockwise(total: int, seat: int) -> None:
    assert thirteen.first_seat_from_dice(total) == seat


@pytest.mark.parametrize("total", [3, 25, 0, True, 7.0])
@pytest.mark.article("51/89/M", "2(b)")
def test_a_total_four_dice_cannot_make_is_refused(total: object) -> None:
    with pytest.raises(RulesError):
        thirteen.first_seat_from_dice(total)  # type: ignore[arg-type]


@pytest.mark.article("51/89/M", "2(b)")
def test_the_deal_goes_one_card_at_a_time_counter_clockwise_to_13_each() -> None:
    order = thirteen.deal_order(2)
    assert order[:6] == [2, 3, 0, 1, 2, 3]
    assert len(order) == 52 and all(order.count(seat) == 13 for seat in range(4))
    with pytest.raises(RulesError):
        thirteen.deal_order(4)


# --- fouls, Art. 7 ---------------------------------------------------------------------------


@pytest.mark.article("51/89/M", "7")
def test_a_head_larger_than_the_middle_is_a_foul() -> None:
    assert is_foul("Ah Ad 2c", "Kc Qd 9h 7c 5d", "Tc Td 4s 4h 8c")
    assert not is_foul("Kh Qd 2c", "Ac Ad 9h 7c 5d", "Tc Td 4s 4h 8c")


@pytest.mark.article("51/89/M", "7")
def test_a_middle_larger_than_the_tail_is_a_foul() -> None:
    assert is_foul("2c 3d 5h", "Tc Td 4s 4h 8c", "7c 7d 9h Jc Qd")


@pytest.mark.article("51/89/M", "7")
@pytest.mark.article("003", "way 1 foul")
def test_equal_rows_are_a_foul_in_the_hong_kong_ways_only() -> None:
    rows = hand("2c 3d 5h", "6c 7d 8h 9c Td", "6s 7s 8d 9h Th")  # two equal straights
    assert not is_foul(*rows)  # Art. 7 「从小至大」
    strict = thirteen.ruleset("macau-1989", equal_rows_foul=True)
    assert is_foul(*rows, ruleset=strict)
    # 003: 「頭必須小於二道，二道必須小於尾」 (way 3: 「第一墩＜第二墩＜第三墩」).
    for name in ("hk-common", "hk-extended", "hk-points", "hk-four"):
        assert is_foul(*rows, ruleset=name), name
        assert not is_foul(*rows, ruleset=thirteen.ruleset(name, equal_rows_foul=False))


@pytest.mark.article("51/89/M", "7")
@pytest.mark.article("003", "way 1 rows")
def test_a_bad_arrangement_is_an_error_naming_it() -> None:
    with pytest.raises(CardError, match="the head has 3 cards, not 4"):
        is_foul("2c 3d 5h 6h", "6c 7d 8h 9c", "6s 7s 8d 9h Th")
    with pytest.raises(CardError, match="6c appears twice"):
        is_foul("2c 3d 6c", "6c 7d 8h 9c Td", "6s 7s 8d 9h Th")


@given(deals)
@pytest.mark.article("51/89/M", "7")
def test_a_foul_is_exactly_a_decreasing_pair_of_rows(deck: tuple[Card, ...]) -> None:
    head, middle, tail = split(deck)
    h, m, t = thirteen.rank(head), thirteen.rank(middle), thirteen.rank(tail)
    assert is_foul(head, middle, tail) == (h > m or m > t)


@pytest.mark.article("51/89/M", "7")
def test_a_player_foul_loses_the_bet_to_the_banker() -> None:
    player = hand("Ah Ad 2d", "Kc Qh 9d 7h 5c", "Ts Js Qs 3s 6s")
    result = settle(BANKER, player, bet=2)
    assert result.foul == "player" and result.outcome == "banker"
    assert all(row.winner == "banker" for row in result.rows)
    assert result.player_net == Decimal(-2)


@pytest.mark.article("51/89/M", "7")
@pytest.mark.article("003", "way 1 foul")
def test_a_banker_foul_loses_every_row_and_a_double_foul_is_the_bankers() -> None:
    fouled_banker = hand("Ah Ad 2d", "Kc Qh 9d 7h 5c", "Ts Js Qs 3s 6s")
    assert settle(fouled_banker, BANKER).outcome == "player"
    fouled_player = hand("Kh Kd 3c", "2c 4d 6h 8c 9c", "Tc Td 4s 4h 8d")
    both = settle(fouled_banker, fouled_player)
    assert both.foul == "both" and both.outcome == "banker"
    assert settle(fouled_banker, fouled_player, "hk-common").outcome == "push"


# --- special hands, Art. 9 I -----------------------------------------------------------------

DRAGON = hand("As 2d 3c", "4h 5s 6d 7c 8h", "9s Td Jc Qh Kd")
SIX_PAIRS = hand("As Ad 9c", "Kh Kd Qs Qd Jc", "Jh Th Tc Ah Ac")  # four aces are two pairs
THREE_FLUSHES = hand("2h 7h 9h", "3s 5s 8s Ts Qs", "2d 4d 6d Jd Kd")
THREE_RUNS = hand("Qh Kd Ac", "3s 4d 5c 6h 7s", "8d 9c Th Js Qs")


@pytest.mark.article("51/89/M", "9 I")
def test_the_fixed_combinations_of_art_9_i() -> None:
    assert special_hand(*DRAGON) == "一条龙"
    assert special_hand(*SIX_PAIRS) == "六对半"
    assert special_hand(*THREE_FLUSHES) == "三花"
    assert special_hand(*THREE_RUNS) == "三顺"
    assert special_hand(*BANKER) is None


@pytest.mark.article("51/89/M", "9 I")
def test_three_runs_take_the_ace_low_in_the_head_but_not_around_the_corner() -> None:
    assert special_hand("As 2d 3c", "4h 5s 6d 7c 8h", "9s Td Jc Qh Kd") == "一条龙"
    assert special_hand("Ah 2d 3c", "4h 5s 6d 7c 8h", "9s 9d Th Js Qs") is None
    assert special_hand("Ah 2d 3c", "3h 4s 5d 6c 7h", "9s Td Jh Qs Kh") == "三顺"
    assert special_hand("Kh Ad 2c", "4h 5s 6d 7c 8h", "9s Td Jh Qs Kd") is None


@pytest.mark.article("51/89/M", "9 I")
def test_a_fixed_combination_wins_three_units_even_against_a_foul_or_better_rows() -> None:
    monster = hand("Kh Kd Kc", "5c 5d 5h 5s 2s", "9s Ts Js Qs Ks")  # rows a player cannot beat
    result = settle(monster, THREE_FLUSHES_AGAINST_MONSTER)
    assert result.outcome == "player" and result.player_units == 3 and result.rows == ()
    assert result.special == "三花"
    fouled = hand("Ah Ad 2d", "Kc Qh 9d 7h 6c", "Tc Jd Qc 3s 4h")
    assert settle(fouled, SIX_PAIRS_AGAINST_FOUL).player_units == 3


THREE_FLUSHES_AGAINST_MONSTER = hand("2h 7h 9h", "3c 6c 8c Tc Qc", "2d 4d 6d Jd Ad")
SIX_PAIRS_AGAINST_FOUL = hand("As Ac 9c", "Ks Kd Qs Qd Jc", "Js Th Ts 8s 8h")


@pytest.mark.article("51/89/M", "9 I")
@pytest.mark.article("003", "way 1 both special")
def test_two_fixed_combinations_push_in_macau_and_the_banker_pays_in_hong_kong() -> None:
    banker = hand("Ac Ad 2s", "Kh Kc Qh Qc Jd", "Js Ts Td 9s 9h")  # 六对半
    player = hand("2h 7h 8h", "3c 4c 6c 8c Tc", "2d 4d 6d 7d Kd")  # 三花
    assert special_hand(*banker) == "六对半"
    macau = settle(banker, player)
    assert macau.outcome == "push" and macau.player_net == 0
    hk = settle(banker, player, "hk-common")
    assert hk.outcome == "player" and hk.player_units == 3 and hk.special == "三花"


# --- rows and units, Art. 8-10 ---------------------------------------------------------------


@pytest.mark.article("51/89/M", "10")
def test_jiagun_a_row_of_equal_hands_goes_to_the_banker() -> None:
    banker = hand("2c 3d 5h", "6c 7d 8h 9c Td", "Js Jd Jh Qs Qh")
    player = hand("2d 3c 5s", "6s 7s 8d 9h Th", "Ks Kd Kh Ac Ah")
    result = settle(banker, player)
    assert [row.winner for row in result.rows] == ["banker", "banker", "player"]
    hk = settle(banker, player, "hk-common")
    assert [row.winner for row in hk.rows] == ["push", "push", "player"]


@pytest.mark.parametrize(
    ("player", "row", "units"),
    [
        (("Ac Ad Ah", "9s Ts Js Qc Kd", "2s 3s 5s 6s 8s"), 0, 3),  # head three of a kind
        (("2d 3h 5c", "9c 9h 9s 6d 6h", "Ks Kh Kd Kc As"), 1, 2),  # middle full house
        (("2d 3h 5c", "9c 9h 9s 9d 6h", "Ks Kh Kd Kc As"), 1, 8),  # middle four
        (("2d 3h 5c", "5s 6s 7s 8s 9s", "Th Jh Qh Kh Ah"), 1, 10),  # middle straight flush
        (("2d 3h 5c", "5s 6s 7s 8h 9c", "Th Jh Qh Kh Ah"), 2, 5),  # tail 黄袍麒
        (("2d 3h 5c", "5s 6s 7s 8h 9c", "Ks Kh Kd Kc Ah"), 2, 4),  # tail four
        (("2d 3h 5c", "5s 6s 7s 8h 9c", "Ks Kh Kd Ac Ah"), 2, 1),  # tail full house
    ],
)
@pytest.mark.article("51/89/M", "9 II")
def test_the_units_a_winning_row_earns_art_9(
    player: tuple[str, str, str], row: int, units: int
) -> None:
    banker = hand("2c 3d 5h", "7c 7d 8d Jc Qd", "Tc Td 4c 4h 8c")
    result = settle(banker, hand(*player))
    assert result.rows[row].winner == "player" and result.rows[row].units == units


@pytest.mark.article("51/89/M", "8")
def test_art_8_the_totals_decide_not_the_count_of_rows() -> None:
    banker = hand("2c 3d 5h", "7c 7d 9h Jc Qd", "4s 5s 6s 7s 8s")  # tail straight flush: 5
    player = hand("Ac Kd 2s", "Kc Ks 9c Jd Qs", "Tc Td Th 3h 3s")  # head 1, middle 1
    result = settle(banker, player)
    assert (result.player_units, result.banker_units) == (2, 5)
    assert result.outcome == "banker"


# --- money, Art. 11 ------------------------------------------------------------------------

WINNER = hand("Ac Kh 2s", "Kc Ks 8d Jd Qs", "9s 9d 9c 3h 3s")  # beats BANKER 1 + 1 + 1


@pytest.mark.article("51/89/M", "11")
def test_art_11_half_the_bet_less_2_percent_and_bets_of_1_to_3() -> None:
    player = WINNER
    result = settle(BANKER, player, bet=2)
    assert result.outcome == "player"
    assert (result.prize, result.commission, result.player_net) == (
        Decimal(1),
        Decimal("0.02"),
        Decimal("0.98"),
    )
    for bet in (0, 4, -1):
        with pytest.raises(RulesError):
            settle(BANKER, player, bet=bet)


@pytest.mark.article("51/89/M", "11")
def test_the_units_reading_of_art_11_pays_the_difference() -> None:
    player = WINNER
    rules = thirteen.ruleset("macau-1989", prize="units")
    result = settle(BANKER, player, rules, bet=3)
    assert result.player_units - result.banker_units == 3
    assert result.prize == 9 and result.player_net == Decimal("8.82")


@pytest.mark.article("51/89/M", "1(a)")
def test_one_deck_deals_each_card_once() -> None:
    with pytest.raises(CardError, match="in both"):
        settle(BANKER, hand("2c 4d 6h", "8c 9d Th Jc Qh", "Kc Ks As Ad 3s"))


def test_unknown_rule_sets_and_settings_are_errors() -> None:
    with pytest.raises(RulesError, match="unknown rule set 'macau-1990'"):
        settle(BANKER, BANKER, "macau-1990")
    with pytest.raises(RulesError, match="unknown setting 'tiebreak'"):
        thirteen.ruleset("hk-common", tiebreak="top-card")
    with pytest.raises(RulesError, match="must be one of"):
        thirteen.ruleset("hk-common", tie_break="suits")


# --- Hong Kong ways, 003 -----------------------------------------------------------------------


@pytest.mark.article("003", "way 1 top card")
def test_hk_common_top_card_only_gives_the_banker_a_tie_on_the_top_card() -> None:
    banker = hand("2c 3d 5h", "Ah 9h 7h 4h 3h", "Kc Kd Kh 4c 4d")
    player = hand("2d 3c 6h", "As Qs 7s 4s 3s", "Qc Qd Qh 6c 6s")
    assert settle(banker, player, "hk-common").rows[1].winner == "player"
    top = thirteen.ruleset("hk-common", tie_break="top-card")
    assert settle(banker, player, top).rows[1].winner == "banker"  # both aces up: 食夾棍
    assert settle(banker, player, top).rows[0].winner == "player"


@pytest.mark.article("003", "way 1 specials")
def test_hk_common_special_hands_and_their_units() -> None:
    assert special_hand(*DRAGON, ruleset="hk-common") == "杂龙"
    green = hand("As 2s 3s", "4s 5s 6s 7s 8s", "9s Ts Js Qs Ks")
    assert special_hand(*green, ruleset="hk-common") == "青龙"
    result = settle(BANKER_FOR_DRAGON, DRAGON, "hk-common", bet=2)
    assert result.player_units == 13 and result.player_net == 26


BANKER_FOR_DRAGON = hand("2c 3d 5h", "7s 7d 9h Js Qd", "Tc Th 4s 4c 8c")


@pytest.mark.parametrize(
    ("rows", "name", "units"),
    [
        (("2h 7h 9h", "3s 5s 8s Ts Qs", "2d 4d 6d Jd Kd"), "三同花", 3),
        (("2h 3d 4c", "5s 6d 7c 8h 9s", "9d Tc Jh Qs Kd"), "三顺子", 4),
        (("As Ad 2c", "Kh Kd Qs Qd Jc", "Jh Th Tc 8h 8c"), "六对半", 6),
        (("As Ad Ac", "Kh Kd Ks Qs Qd", "Qc Jh Jc Jd 2c"), "四套三条", 8),
        (("As Ks Qs", "Js 9s 7s 5s 3s", "Kc Qc Tc 8c 6c"), "凑一色", 10),
        (("2s 2h 3s", "3h 4s 4h 5s 5h", "6s 6h 7s 7h 8s"), "全小", 12),
        (("As Ah Ks", "Kh Qs Qh Js Jh", "Ts Th 9s 9h 8s"), "全大", 12),
        (("As Ah Ad", "Ac Ks Kh Kd Kc", "Qs Qh Qd Qc 2c"), "三分天下", 20),
        (("2h 3h 4h", "5s 6s 7s 8s 9s", "9d Td Jd Qd Kd"), "三同花顺", 24),
        (("As Ah Ad", "Ac Ks Kh Kd Kc", "Qs Qh Qd Qc Jc"), "十二皇族", 32),
        (("As 2d 3c", "4h 5s 6d 7c 8h", "9s Td Jc Qh Kd"), "一条龙", 36),
        (("As 2s 3s", "4s 5s 6s 7s 8s", "9s Ts Js Qs Ks"), "至尊清龙", 108),
    ],
)
@pytest.mark.article("003", "way 2 specials")
def test_hk_extended_twelve_special_hands(
    rows: tuple[str, str, str], name: str, units: int
) -> None:
    assert special_hand(*hand(*rows), ruleset="hk-extended") == name
    assert dict(thirteen.RULESETS["hk-extended"].specials)[name] == units


@pytest.mark.article("003", "way 2 specials")
def test_hk_extended_three_runs_exclude_q_k_a_in_the_head() -> None:
    rows = hand("Qh Kd Ac", "3s 4d 5c 6h 7s", "8d 9c Th Js Qs")
    assert special_hand(*rows, ruleset="hk-extended") is None
    assert special_hand(*rows, ruleset="hk-common") == "三顺"


@pytest.mark.article("003", "way 2 odds")
def test_hk_extended_lower_alternatives_are_a_setting() -> None:
    lower = thirteen.ruleset("hk-extended", units={"tail": {"four_of_a_kind": 3}})
    assert lower.row_units("tail", "four_of_a_kind") == 3
    assert lower.row_units("middle", "four_of_a_kind") == 8
    # 「四條…尾：三或四注…二道：四或八注…同花順…尾：四或五注…二道：五或十注」: the higher by
    # default, the lower all at once with the table docs/rules.md names.
    named = [("tail", "four_of_a_kind"), ("middle", "four_of_a_kind")]
    named += [("tail", "straight_flush"), ("middle", "straight_flush")]
    higher = thirteen.ruleset("hk-extended")
    assert [higher.row_units(row, category) for row, category in named] == [4, 8, 5, 10]
    lowest = thirteen.ruleset("hk-extended", units=HK_EXTENDED_LOWER_UNITS)
    assert [lowest.row_units(row, category) for row, category in named] == [3, 4, 4, 5]
    assert lowest.row_units("head", "three_of_a_kind") == 3
    assert lowest.row_units("middle", "full_house") == 2


# --- hk-points: four players each against each -----------------------------------------------

P0 = hand("Ac Ad Ah", "Kc Kd Kh Ks 2c", "Qs Js Ts 9s 8s")
P1 = hand("2d 3d 4c", "5c 6c 7c 9c Jc", "Qc Qd Qh 3c 3h")
P2 = hand("2h 3s 4d", "5d 6h 7s 8c 9d", "Jh Th 8h 5h 4h")
P3 = hand("As Jd 9h", "7d 7h 8d 5s 4s", "Tc Td 6d 6s 2s")


@pytest.mark.article("003", "way 3 scoring", "way 3 bonus", "way 3 shoot", "way 3 home run")
def test_hk_points_a_row_is_one_point_plus_the_bonus_and_shooting_all_is_a_home_run() -> None:
    pair = settle(P1, P0, "hk-points")
    assert [row.units for row in pair.rows] == [2, 4, 4]  # 冲三 +1, 中墩铁支 +3, 尾墩同花顺 +3
    assert pair.shot == "player" and pair.player_units == 10
    table = thirteen.table_points([P0, P1, P2, P3])
    assert table.home_run == 0
    assert {(0, 1), (0, 2), (0, 3)} <= set(table.shots)
    assert table.points[0] == 60  # (10 + 10 + 10) doubled
    assert sum(table.points) == 0


@given(deals)
@pytest.mark.article("003", "way 3 scoring")
def test_hk_points_is_zero_sum_and_antisymmetric(deck: tuple[Card, ...]) -> None:
    hands = [split(deck[13 * i : 13 * i + 13]) for i in range(4)]
    table = thirteen.table_points(hands)
    assert sum(table.points) == 0
    assert all(isinstance(p, Fraction) for p in table.points)
    one, other = settle(hands[0], hands[1], "hk-points"), settle(hands[1], hands[0], "hk-points")
    assert one.player_units - one.banker_units == other.banker_units - other.player_units


@given(deals)
def test_hk_common_settlement_is_antisymmetric_without_special_hands(
    deck: tuple[Card, ...],
) -> None:
    a, b = split(deck[:13]), split(deck[13:26])
    one, other = settle(a, b, "hk-common"), settle(b, a, "hk-common")
    if one.special is None and other.special is None:  # "由莊家賠閒家" favours the player
        assert (one.banker_units, one.player_units) == (other.player_units, other.banker_units)
        assert {one.outcome, other.outcome} in ({"push"}, {"banker", "player"})


@given(deals)
def test_macau_settlement_is_antisymmetric_where_no_row_ties(deck: tuple[Card, ...]) -> None:
    a, b = thirteen.house_way(deck[:13]), thirteen.house_way(deck[13:26])
    one, other = settle(a, b), settle(b, a)
    ties = any(x.banker_rank == x.player_rank for x in one.rows)
    specials = one.banker_special or one.player_special
    if not ties and not specials:  # 夹棍 favours the banker
        assert (one.banker_units, one.player_units) == (other.player_units, other.banker_units)
        assert [r.winner for r in one.rows] != [r.winner for r in other.rows]


def test_table_points_refuses_a_banker_rule_set() -> None:
    with pytest.raises(RulesError):
        thirteen.table_points([P0, P1], "macau-1989")


# --- the rule sets side by side ----------------------------------------------------------------

SIDE_BANKER = hand("2c 3d 5h", "6c 7d 8h 9c Td", "Js Jd Jh Qs Qh")
# Wins the head, ties the middle (two 10-high straights), loses the tail.
SIDE_PLAYER = hand("Ac 4c 5s", "6s 7s 8d 9h Th", "2d 4d 9d Qd Kd")


@pytest.mark.parametrize(
    ("name", "settings", "middle", "outcome", "units", "net"),
    [
        ("macau-1989", {}, "banker", "banker", (1, 2), -1),  # 夹棍
        ("macau-1989", {"prize": "units"}, "banker", "banker", (1, 2), -1),
        ("hk-common", {}, "push", "push", (1, 1), 0),
        ("hk-common", {"tie_break": "top-card"}, "banker", "banker", (1, 2), -1),  # 食夾棍
        ("hk-extended", {}, "push", "push", (1, 1), 0),
        ("hk-points", {}, "push", "push", (1, 1), 0),  # 平手0分
    ],
)
@pytest.mark.article("51/89/M", "10")
@pytest.mark.article("003", "way 1 top card", "way 3 scoring")
def test_the_rule_sets_side_by_side(
    *,
    name: str,
    settings: dict[str, str],
    middle: str,
    outcome: str,
    units: tuple[int, int],
    net: int,
) -> None:
    result = settle(SIDE_BANKER, SIDE_PLAYER, thirteen.ruleset(name, **settings))
    assert [row.winner for row in result.rows] == ["player", middle, "banker"]
    assert (result.player_units, result.banker_units) == units
    assert result.outcome == outcome and result.player_net == net


@given(
    deals, st.sampled_from(["macau-1989", "hk-common", "hk-extended"]), st.sampled_from([1, 2, 3])
)
@pytest.mark.article("51/89/M", "11")
def test_the_money_follows_the_outcome(deck: tuple[Card, ...], name: str, bet: int) -> None:
    banker, player = split(deck[:13]), split(deck[13:26])
    result = settle(banker, player, name, bet=bet)
    sign = {"player": 1, "banker": -1, "push": 0}[result.outcome]
    assert (result.player_net > 0) - (result.player_net < 0) == sign
    assert result.commission == result.prize * thirteen.RULESETS[name].commission
    assert (result.player_units > result.banker_units) == (result.outcome == "player") or (
        name == "macau-1989" and result.foul == "both"
    )


@pytest.mark.article("003", "way 2 four against each other")
def test_four_against_each_other_has_no_banker_ties_push_and_the_larger_special_wins() -> None:
    tied = thirteen.settle(
        ("2c 3d 5h", "Jc Jd Qh Qc Kd", "6c 7d 8h 9c Td"),
        ("2s 3h 5d", "Js Jh Qs Qd Ks", "6s 7s 8d 9h Th"),
        "hk-four",
    )
    assert [r.winner for r in tied.rows] == ["push", "push", "push"] and tied.outcome == "push"
    dragon = ("As 2d 3c", "4h 5s 6d 7c 8h", "9s Td Jc Qh Kd")  # 一條龍: 36
    six_pairs = ("Kc 2c 2h", "3h 3s 4c 4d 5c", "5d 6c 6h 7d 7h")  # 六對半: 6
    assert thirteen.settle(six_pairs, dragon, "hk-four").player_units == 36
    assert thirteen.settle(dragon, six_pairs, "hk-four").banker_units == 36


@pytest.mark.article("003", "way 2 four against each other")
def test_way_2_has_a_banker_unless_the_four_play_each_against_each_other() -> None:
    """「四人中一人為莊家（也可以四人对比）」: way 2 is played against a banker; each seat
    against each other seat only in the rule set that says so (hk-four)."""
    with pytest.raises(RulesError, match="against the banker"):
        thirteen.table_points([P0, P1, P2, P3], "hk-extended")
    four = thirteen.table_points([P0, P1, P2, P3], "hk-four")
    assert sum(four.points) == 0 and len(four.pairs) == 6


@pytest.mark.article("51/89/M", "2(d)")
@pytest.mark.article("003", "way 3 scoring", "way 3 shoot")
def test_a_hand_late_at_the_bell_loses_every_row_to_every_other_seat() -> None:
    played = ("2c 3d 5h", "Jc Jd Qh Qc Kd", "6c 7d 8h 9c Td")
    result = thirteen.settle(played, None, "hk-points")
    assert result.foul == "player" and result.shot == "banker"
    assert [r.winner for r in result.rows] == ["banker"] * 3
    table = thirteen.table_points([played, None, None], "hk-points")
    assert table.points[1] == table.points[2] and table.points[0] == -2 * table.points[1]
    assert (1, 2) not in table.pairs  # two late hands are even


# Six pairs and a half (六对半): with DRAGON, special hands read with the rows.
READ_SIX_PAIRS = hand("2c 2d 3h", "3c 4d 4h 5c 5d", "6h 6c 7d 7h As")


def _settled(banker: object, player: object, name: str, bet: int) -> object:
    """The settlement, or the error that refuses it."""
    try:
        return settle(banker, player, name, bet)  # type: ignore[arg-type]
    except (CardError, RulesError) as exc:
        return (type(exc), str(exc))


@given(deals, st.sampled_from(sorted(thirteen.RULESETS)), st.integers(1, 3))
def test_a_banker_read_once_settles_every_bet_as_the_hand_itself(
    deck: tuple[Card, ...], name: str, bet: int
) -> None:
    rules = thirteen.ruleset(name)
    if rules.bets is not None and bet not in rules.bets:
        bet = min(rules.bets)
    another = "hk-points" if name != "hk-points" else "macau-1989"
    for banker in (split(deck[:13]), thirteen.house_way(deck[:13]), DRAGON, READ_SIX_PAIRS, None):
        read = thirteen.read_hand(banker, name)
        # Read under another rule set, it is read again under the one settled by.
        other = thirteen.read_hand(banker, another)
        for player in (split(deck[13:26]), thirteen.house_way(deck[26:39]), READ_SIX_PAIRS, None):
            if banker is None and player is None:
                continue
            expected = _settled(banker, player, name, bet)
            assert _settled(read, player, name, bet) == expected
            assert _settled(other, player, name, bet) == expected
            assert _settled(player, read, name, bet) == _settled(player, banker, name, bet)


def test_a_hand_that_cannot_be_read_is_refused_when_read() -> None:
    with pytest.raises(CardError, match="appears twice"):
        thirteen.read_hand(hand("2c 2c 3h", "3c 4d 4h 5c 5d", "6h 6c 7d 7h As"))
