"""House way: never a foul, and the same optimum as a brute force over all 72,072 splits."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.rules import thirteen
from daemon.rules.cards import DECK, Card, CardError, parse_cards
from daemon.rules.thirteen import house as thirteen_house
from daemon.rules.thirteen import house_way, is_foul, rank, special_hand

Rows = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
hands13 = st.lists(st.sampled_from(DECK), min_size=13, max_size=13, unique=True)
DEPENDENT = {"三花", "三同花", "三顺", "三顺子", "三同花顺"}


def dependent_units(ruleset: str) -> Callable[[Rows], int]:
    units = dict(thirteen.RULESETS[ruleset].specials)

    def of(rows: Rows) -> int:
        name = special_hand(*rows, ruleset=ruleset)
        return units[name] if name in DEPENDENT else 0

    return of


def key_of(rows: Rows, ruleset: str = "macau-1989") -> tuple[int, int, int, int, int]:
    head, middle, tail = (rank(r) for r in rows)
    units = dependent_units(ruleset)(rows)
    return (
        units,
        thirteen_house.objective(head, middle, tail),
        tail.value,
        middle.value,
        head.value,
    )


def brute_key(cards: list[Card], ruleset: str = "macau-1989") -> tuple[int, int, int, int, int]:
    key, _ = thirteen_house.brute_force(cards, special_units=dependent_units(ruleset))
    return key


def test_seeded_deals_match_the_brute_force() -> None:
    rnd = random.Random(20261129)
    for _ in range(10):
        cards = rnd.sample(DECK, 13)
        rows = house_way(cards)
        assert key_of(rows) == brute_key(cards), cards


def test_deals_rich_in_one_suit_and_pairs_match_the_brute_force() -> None:
    # Where a flush is possible the search cannot treat same-rank cards as interchangeable.
    rnd = random.Random(5)
    checked = 0
    while checked < 4:
        cards = rnd.sample(DECK, 13)
        suits = Counter(card.suit for card in cards)
        pairs = sum(1 for n in Counter(card.rank for card in cards).values() if n >= 2)
        if max(suits.values()) < 6 or pairs < 2:
            continue
        checked += 1
        assert key_of(house_way(cards)) == brute_key(cards), cards


@settings(max_examples=4, deadline=None)
@given(hands13)
def test_hypothesis_deals_match_the_brute_force(cards: list[Card]) -> None:
    assert key_of(house_way(cards)) == brute_key(cards)


def test_equal_rows_foul_setting_matches_its_brute_force() -> None:
    rnd = random.Random(7)
    strict = thirteen.ruleset("macau-1989", equal_rows_foul=True)
    for _ in range(2):
        cards = rnd.sample(DECK, 13)
        rows = house_way(cards, strict)
        assert not is_foul(*rows, ruleset=strict)
        expected, _ = thirteen_house.brute_force(cards, strict=True)
        assert key_of(rows)[1:] == expected[1:]


@settings(max_examples=60, deadline=None)
@given(hands13, st.sampled_from(sorted(thirteen.RULESETS)))
def test_the_house_way_never_fouls_and_uses_every_card_once(cards: list[Card], name: str) -> None:
    head, middle, tail = house_way(cards, name)
    assert (len(head), len(middle), len(tail)) == (3, 5, 5)
    assert sorted((*head, *middle, *tail)) == sorted(cards)
    assert not is_foul(head, middle, tail, name)


THREE_FLUSHES = "2h 7h 9h 3s 5s 8s Ts Qs 2d 4d 6d Jd Kd"


def test_the_banker_sets_three_flushes_when_the_cards_allow() -> None:
    rows = house_way(THREE_FLUSHES)
    assert special_hand(*rows) == "三花"
    assert key_of(rows) == brute_key(list(parse_cards(THREE_FLUSHES)))


def test_the_banker_sets_three_runs_when_the_cards_allow() -> None:
    cards = "Ah 2d 3c 3h 4s 5d 6c 7h 9s Td Jh Qs Kh"
    rows = house_way(cards)
    assert special_hand(*rows) == "三顺"
    assert key_of(rows) == brute_key(list(parse_cards(cards)))


def test_hk_extended_prefers_the_special_worth_most() -> None:
    cards = "2h 3h 4h 5s 6s 7s 8s 9s 9d Td Jd Qd Kd"  # three straight flushes: 24 units
    rows = house_way(cards, "hk-extended")
    assert special_hand(*rows, ruleset="hk-extended") == "三同花顺"
    assert key_of(rows, "hk-extended") == brute_key(list(parse_cards(cards)), "hk-extended")


def test_a_special_hand_whatever_the_setting_keeps_the_objective() -> None:
    dragon = "As 2d 3c 4h 5s 6d 7c 8h 9s Td Jc Qh Kd"  # 一条龙 in any setting
    rows = house_way(dragon)
    assert special_hand(*rows) == "一条龙"
    expected, _ = thirteen_house.brute_force(dragon)
    assert key_of(rows)[1:] == expected[1:]


def test_the_house_way_wants_13_distinct_cards() -> None:
    with pytest.raises(CardError, match="13 cards, not 12"):
        house_way(DECK[:12])
    with pytest.raises(CardError, match="appears twice"):
        house_way([*DECK[:12], DECK[0]])


def test_head_scores_are_probabilities_of_beating_a_random_head() -> None:
    # Over all 22,100 heads, the mean probability of beating a random head, ties half, is 1/2.
    scores = [thirteen_house.SCORE3[rank(h).value] for h in combinations(DECK, 3)]
    assert Fraction(sum(scores), len(scores) * thirteen_house.SCORE_SCALE) == Fraction(1, 2)
    ordered = sorted(thirteen_house.SCORE3)
    assert [thirteen_house.SCORE3[v] for v in ordered] == sorted(thirteen_house.SCORE3.values())


def test_five_card_scores_rise_with_the_rank_and_end_near_one() -> None:
    ordered = sorted(thirteen_house.SCORE5)
    values = [thirteen_house.SCORE5[v] for v in ordered]
    assert values == sorted(values) and len(set(values)) == len(values)
    royal = thirteen_house.SCORE5[rank("As Ks Qs Js Ts").value]
    assert Fraction(royal, thirteen_house.SCORE_SCALE) == Fraction(
        2 * (2598960 - 4) + 4, 2 * 2598960
    )
