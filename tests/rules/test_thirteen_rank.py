"""Ranking of Thirteen rows, Art. 6 and Art. 9 II of 000 sentence by sentence."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.cards import DECK, Card, CardError, parse_cards
from daemon.rules.thirteen import rank
from daemon.rules.thirteen.ranking import CATEGORIES, HandRank, every_rank


def r(text: str) -> HandRank:
    return rank(parse_cards(text))


def reference_key(cards: tuple[Card, ...]) -> tuple[int, ...]:
    """Art. 9 II written out plainly, independent of the engine's tables."""
    ranks = sorted((c.rank for c in cards), reverse=True)
    counts = Counter(ranks)
    by_count = sorted(counts, key=lambda x: (counts[x], x), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    if len(cards) == 3:
        if shape == [3]:
            return (3, by_count[0])
        if shape == [2, 1]:
            return (1, *by_count, 0, 0, 0)
        return (0, *ranks, 0, 0)
    flush = len({c.suit for c in cards}) == 1
    distinct = set(ranks)
    height = 0
    if len(distinct) == 5:
        if distinct == {14, 13, 12, 11, 10}:
            height = 15
        elif distinct == {14, 2, 3, 4, 5}:
            height = 14
        elif ranks[0] - ranks[4] == 4:
            height = ranks[0]
    if flush and height == 15:
        return (9,)
    if flush and height:
        return (8, height)  # A-2-3-4-5 (14) above K-Q-J-10-9 (13)
    if shape == [4, 1]:
        return (7, by_count[0])
    if shape == [3, 2]:
        return (6, by_count[0])
    if flush:
        return (5, *ranks)
    if height:
        return (4, height)
    if shape == [3, 1, 1]:
        return (3, by_count[0])
    if shape == [2, 2, 1]:
        return (2, *by_count)
    if shape == [2, 1, 1, 1]:
        return (1, *by_count)
    return (0, *ranks)


rows5 = st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True).map(tuple)
rows3 = st.lists(st.sampled_from(DECK), min_size=3, max_size=3, unique=True).map(tuple)
rows = st.one_of(rows5, rows3)


# --- the examples Art. 9 II gives, and its sentences -----------------------------------------


@pytest.mark.article("51/89/M", "9 II")
def test_the_examples_of_art_9_have_their_categories() -> None:
    assert r("As Ks Qs Js Ts").category == "royal_flush"  # 黄袍麒
    assert r("Ts 9s 8s 7s 6s").category == "straight_flush"  # 顺10
    assert r("Ah Ad Ac As 5d").category == "four_of_a_kind"
    assert r("8h 8d 8c 5s 5d").category == "full_house"
    assert r("Th 9h 8h 7h 5h").category == "flush"
    assert r("6h 7d 8s 9c Td").category == "straight"
    assert r("Kh Kd Kc 6s 5d").category == "three_of_a_kind"
    assert r("Th Td 6c 6s 5d").category == "two_pair"
    assert r("Th Td 9c 7s 6d").category == "one_pair"
    assert r("Ah Td 7c 6s 5d").category == "high_card"


@pytest.mark.article("51/89/M", "9 II")
def test_the_categories_rank_in_the_order_of_art_9() -> None:
    ladder = [
        "Ah Td 7c 6s 5d",
        "Th Td 9c 7s 6d",
        "Th Td 6c 6s 5d",
        "Kh Kd Kc 6s 5d",
        "6h 7d 8s 9c Td",
        "Th 9h 8h 7h 5h",
        "8h 8d 8c 5s 5d",
        "Ah Ad Ac As 5d",
        "Ts 9s 8s 7s 6s",
        "As Ks Qs Js Ts",
    ]
    ranks = [r(text) for text in ladder]
    assert [x.category for x in ranks] == list(CATEGORIES)
    assert ranks == sorted(ranks)
    assert len(set(ranks)) == len(ranks)


@pytest.mark.article("51/89/M", "9 II")
def test_royal_flush_is_the_largest_five_of_one_suit_above_every_straight_flush() -> None:
    assert r("Ah Kh Qh Jh Th") > r("Ac 2c 3c 4c 5c") > r("Kd Qd Jd Td 9d")
    assert r("Ah Kh Qh Jh Th") == r("As Ks Qs Js Ts")


@pytest.mark.article("51/89/M", "9 II")
def test_a_2_3_4_5_is_the_largest_straight_flush_then_k_high_and_down() -> None:
    order = [r(t) for t in ("6s 5s 4s 3s 2s", "Qs Js Ts 9s 8s", "Ks Qs Js Ts 9s", "As 2s 3s 4s 5s")]
    assert order == sorted(order) and len(set(order)) == 4


@pytest.mark.article("51/89/M", "9 II")
def test_the_two_ace_straights_are_numbered_and_named_as_the_rules_lab_prints_them() -> None:
    """Among straights A-K-Q-J-10 ranks 15 and A-2-3-4-5 14, above K-high's 13; among straight
    flushes A-2-3-4-5 ranks 14 (9 II.2, 9 II.6). `tabled rules thirteen rank` prints these
    ranks, and a rank is named by its cards."""
    broadway, wheel, steel = r("Ah Kd Qs Jc Td"), r("Ah 2d 3s 4c 5d"), r("As 2s 3s 4s 5s")
    assert (broadway.ranks, str(broadway)) == ((15,), "straight(A-K-Q-J-10)")
    assert (wheel.ranks, str(wheel)) == ((14,), "straight(A-2-3-4-5)")
    assert (steel.ranks, str(steel)) == ((14,), "straight_flush(A-2-3-4-5)")
    assert r("Ks Qd Jh Tc 9d").ranks == (13,)


@pytest.mark.article("51/89/M", "9 II")
def test_straights_a_high_then_a_2_3_4_5_second_then_k_high() -> None:
    broadway, wheel, king = r("Ah Kd Qs Jc Td"), r("Ah 2d 3s 4c 5d"), r("Kh Qd Js Tc 9d")
    assert broadway > wheel > king > r("6h 5d 4s 3c 2d")
    assert r("Ah 2d 3s 4c 5d").category == "straight"


@pytest.mark.article("51/89/M", "9 II")
def test_four_of_a_kind_ignores_the_single_card() -> None:
    assert r("Ah Ad Ac As 5d") == r("Ah Ad Ac As Kd")
    assert r("2h 2d 2c 2s 3d") > r("Kh Kd Kc Qs Qd")


@pytest.mark.article("51/89/M", "9 II")
def test_full_house_compares_the_three_and_ignores_the_pair() -> None:
    assert r("8h 8d 8c 5s 5d") == r("8h 8d 8c Ks Kd")
    assert r("9h 9d 9c 2s 2d") > r("8h 8d 8c As Ad")


@pytest.mark.article("51/89/M", "9 II")
def test_flush_compares_highest_card_then_the_next() -> None:
    assert r("Th 9h 8h 7h 5h") > r("Td 9d 8d 7d 4d") > r("Tc 9c 8c 6c 5c")
    assert r("Th 9h 8h 7h 5h") == r("Ts 9s 8s 7s 5s")


@pytest.mark.article("51/89/M", "9 II")
def test_three_of_a_kind_ignores_the_other_two() -> None:
    assert r("Kh Kd Kc 6s 5d") == r("Kh Kd Kc As Qd")
    assert r("Kh Kd Kc 2s 3d") > r("Qh Qd Qc As Kd")


@pytest.mark.article("51/89/M", "9 II")
def test_two_pair_higher_pair_then_lower_pair_then_the_odd_card() -> None:
    assert r("Th Td 6c 6s 5d") > r("Tc Ts 5c 5s Ad")
    assert r("Th Td 6c 6s 7d") > r("Tc Ts 6d 6h 5c")
    assert r("Jh Jd 2c 2s 3d") > r("Th Td 9c 9s Ad")


@pytest.mark.article("51/89/M", "9 II")
def test_one_pair_then_the_others_from_the_highest() -> None:
    assert r("Th Td 9c 7s 6d") > r("Tc Ts 9d 7h 5c") > r("Tc Ts 8d 7h 6c")
    assert r("Jh Jd 2c 3s 4d") > r("Th Td Ac Ks Qd")


@pytest.mark.article("51/89/M", "6", "9 II")
def test_high_card_from_the_highest() -> None:
    assert r("Ah Td 7c 6s 5d") > r("Ac Ts 7d 6h 4c") > r("Kc Qs Jd 9h 8c")


# --- the head -----------------------------------------------------------------------------


@pytest.mark.article("51/89/M", "9 II")
@pytest.mark.article("003", "way 1 head")
def test_the_head_has_only_three_of_a_kind_one_pair_and_high_card() -> None:
    assert r("Kh Kd Kc").category == "three_of_a_kind"
    assert r("Kh Kd Ac").category == "one_pair"
    assert r("Ah Kh Qh").category == "high_card"  # three suited, consecutive: no flush, no run
    assert r("Ah 2d 3c").category == "high_card"


@pytest.mark.article("51/89/M", "7")
def test_head_and_five_card_rows_share_one_scale() -> None:
    assert r("Kh Kd Ac") < r("Ks Kc Ad 4c 3d")  # the missing cards count below a 2
    assert r("Ah Kd Qc") < r("As Ks Qd Jc 9d")
    assert r("2h 2d 3c") > r("As Ks Qd Jc 9d")
    assert r("Kh Kd Kc") > r("Qs Qc Qd Ac Kd") and r("Kh Kd Kc") < r("As Ac Ad 2c 3d")
    assert r("Ah Ad Kc") > r("Ks Kc Qd Jc 9d")


def test_every_rank_counts_the_distinct_classes() -> None:
    # Ordinary poker's 7,462 classes less those Art. 9 merges: kickers of four of a kind (13 *
    # 12 -> 13), pairs of full houses (13 * 12 -> 13), kickers of three of a kind (858 -> 13).
    five = 7462 - (156 - 13) - (156 - 13) - (858 - 13)
    # Heads add their high cards and pairs; a head's three of a kind is the five-card one.
    head = 13 * 12 * 11 // 6 + 13 * 12
    assert len(every_rank()) == five + head
    assert every_rank() == sorted(every_rank())


# --- properties ------------------------------------------------------------------------------


@given(rows, rows)
@pytest.mark.article("51/89/M", "6", "9 II")
def test_the_order_agrees_with_a_plain_reading_of_art_9(
    a: tuple[Card, ...], b: tuple[Card, ...]
) -> None:
    ka, kb = reference_key(a), reference_key(b)
    if len(a) == len(b):
        assert (rank(a) < rank(b)) == (ka < kb)
        assert (rank(a) == rank(b)) == (ka == kb)
    assert rank(a).category == CATEGORIES[ka[0]]


@given(rows, rows, rows)
def test_the_order_is_total_and_transitive(
    a: tuple[Card, ...], b: tuple[Card, ...], c: tuple[Card, ...]
) -> None:
    x, y, z = rank(a), rank(b), rank(c)
    assert (x < y) + (x == y) + (x > y) == 1
    if x <= y <= z:
        assert x <= z


@given(rows5, st.randoms(use_true_random=False))
def test_the_order_of_the_cards_does_not_matter(cards: tuple[Card, ...], rnd: object) -> None:
    shuffled = list(cards)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert rank(shuffled) is rank(cards)
    assert rank(" ".join(map(str, shuffled))) is rank(cards)


def test_every_five_card_hand_counted_by_category() -> None:
    counts: Counter[str] = Counter()
    for hand in combinations(DECK, 5):
        counts[rank(hand).category] += 1
    assert counts == {
        "royal_flush": 4,
        "straight_flush": 36,
        "four_of_a_kind": 624,
        "full_house": 3744,
        "flush": 5108,
        "straight": 10200,
        "three_of_a_kind": 54912,
        "two_pair": 123552,
        "one_pair": 1098240,
        "high_card": 1302540,
    }


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("As Ks Qs Js", "3 or 5 cards, not 4"),
        ("As As Qs Js Ts", "As appears twice"),
        ("As As Qs", "As appears twice"),
        ("As Ks Zz", "not a card"),
    ],
)
def test_bad_rows_are_errors_naming_the_problem(row: str, message: str) -> None:
    with pytest.raises(CardError, match=message):
        rank(row)


def test_items_that_are_not_cards_are_errors() -> None:
    with pytest.raises(CardError, match="not a card"):
        rank(["As", "Ks", "Qs"])  # type: ignore[list-item]
    with pytest.raises(CardError, match="not a row"):
        rank(5)  # type: ignore[arg-type]


@given(rows5, rows5)
@pytest.mark.article("51/89/M", "9 II")
def test_where_art_9_agrees_with_ordinary_poker_treys_agrees(
    a: tuple[Card, ...], b: tuple[Card, ...]
) -> None:
    treys = pytest.importorskip("treys")
    wheel = {14, 2, 3, 4, 5}
    if any({c.rank for c in row} == wheel for row in (a, b)):
        return  # A-2-3-4-5: the one place Art. 9 orders straights differently from poker
    evaluator = treys.Evaluator()

    def strength(row: tuple[Card, ...]) -> int:
        cards = [treys.Card.new(str(card)) for card in row]
        return -int(evaluator.evaluate(cards[:2], cards[2:]))  # treys: lower is stronger

    ours, theirs = rank(a), rank(b)
    if ours < theirs:
        assert strength(a) < strength(b)
    if strength(a) == strength(b):
        assert ours == theirs


@pytest.mark.article("51/89/M", "9 II")
def test_a_rank_prints_its_category_and_compared_ranks() -> None:
    assert str(r("Ks Qs Js Ts 9s")) == "straight_flush(K-high)"
    assert str(r("Ah 2d 3s 4c 5d")) == "straight(A-2-3-4-5)"
    assert str(r("Th Td 6c 6s 5d")) == "two_pair(T 6 5)"
    # Each category by the name Art. 9 II gives it, from the largest down.
    rows = [
        "As Ks Qs Js Ts",
        "Ks Qs Js Ts 9s",
        "9s 9h 9d 9c 2s",
        "8s 8h 8d 5c 5s",
        "As Js 8s 6s 2s",
        "6s 7h 8d 9c Tc",
        "Kh Kd Kc 6s 5h",
        "Th Td 6c 6s 5d",
        "Th Td 9c 7s 6d",
        "Ad Th 7c 6s 5d",
    ]
    names = ["黄袍麒", "同花顺", "四条", "夫卢", "同花", "顺", "三条", "两对", "一对", "大牌"]
    assert [r(row).category_zh for row in rows] == names
    assert r("Kh Kd Kc").category_zh == "三条"


# --- the card encoding (cards.py: a row's sum names its ranks and tells a flush) -------------


@pytest.mark.article("51/89/M", "9 II")
def test_every_five_card_hand_ranks_as_the_plain_reading_orders_it() -> None:
    """All 2,598,960 hands: equal plain keys give one rank, and ranks order as the keys do."""
    deck = sorted(DECK, key=lambda c: c.index)
    plain: dict[tuple[int, ...], tuple[int, ...]] = {}
    value_of: dict[tuple[int, ...], int] = {}
    for combo in combinations(range(52), 5):
        i, j, k, m, n = combo
        shape = (
            i >> 2,
            j >> 2,
            k >> 2,
            m >> 2,
            n >> 2,
            (i & 3) == (j & 3) == (k & 3) == (m & 3) == (n & 3),
        )
        hand = tuple(deck[x] for x in combo)
        if shape not in plain:
            plain[shape] = reference_key(hand)
        value = rank(hand).value
        assert value_of.setdefault(plain[shape], value) == value
    keys = sorted(value_of)
    values = [value_of[key] for key in keys]
    assert values == sorted(values) and len(set(values)) == len(values)


@given(
    st.lists(st.sampled_from(DECK), min_size=4, max_size=4, unique=True),
    st.integers(0, 3),
    st.randoms(use_true_random=False),
)
def test_a_five_card_row_with_a_card_given_twice_is_an_error(
    cards: list[Card], twice: int, rnd: object
) -> None:
    row = [*cards, cards[twice]]
    rnd.shuffle(row)  # type: ignore[attr-defined]
    with pytest.raises(CardError, match="appears twice"):
        rank(row)


@pytest.mark.parametrize("card", DECK, ids=str)
def test_one_card_given_five_times_is_an_error(card: Card) -> None:
    with pytest.raises(CardError, match="appears twice"):
        rank((card,) * 5)
    others = [c for c in DECK if c.rank != card.rank][:1]
    with pytest.raises(CardError, match="appears twice"):
        rank((card, card, card, card, *others))
