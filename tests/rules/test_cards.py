from __future__ import annotations

import pickle
from collections import Counter
from itertools import combinations_with_replacement, product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.cards import (
    DECK,
    RANK_FIELD_MASK,
    SUIT_BITS,
    Card,
    CardError,
    card_name,
    card_of,
    format_cards,
    parse_card,
    parse_cards,
    require_distinct,
)

cards_lists = st.lists(st.sampled_from(DECK), max_size=20)


@pytest.mark.article("51/89/M", "1(a)", "6")
def test_the_deck_has_52_distinct_cards_13_ranks_by_4_suits() -> None:
    assert len(DECK) == 52
    assert len({str(card) for card in DECK}) == 52
    assert {card.rank for card in DECK} == set(range(2, 15))
    assert {card.suit for card in DECK} == set("shdc")


def test_the_issue_example_parses_with_t_and_10_and_a_symbol() -> None:
    cards = parse_cards("As Kd Th 10c 9♠")
    assert [str(c) for c in cards] == ["As", "Kd", "Th", "Tc", "9s"]
    assert [c.rank for c in cards] == [14, 13, 10, 10, 9]


def test_str_of_a_card_is_the_short_form() -> None:
    assert str(parse_card("As")) == "As"
    assert str(parse_card("10h")) == "Th"
    assert repr(parse_card("2c")) == "Card('2c')"


@pytest.mark.parametrize(
    "text",
    ["AsKdTh", "as,kd,th", "A♠ K♦ T♥", "A♤ K♢ 10♡", "AS KD TH", "  As\tKd\nTh  "],
)
def test_spellings_of_the_same_three_cards(text: str) -> None:
    assert format_cards(parse_cards(text)) == "As Kd Th"


def test_a_list_of_strings_or_cards_parses_as_json_gives_it() -> None:
    assert parse_cards(["As", "Kd Th"]) == parse_cards("As Kd Th")
    assert parse_cards(list(parse_cards("2c 3d"))) == parse_cards("2c 3d")


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("1s", "'1s'"),
        ("Ax", "'Ax'"),
        ("As Kd Zz", "'Zz'"),
        ("11h", "'11h'"),
        ("AsK", "'K'"),
    ],
)
def test_malformed_text_is_an_error_naming_the_bad_part(text: str, names: str) -> None:
    with pytest.raises(CardError, match=names):
        parse_cards(text)


def test_a_non_string_item_is_an_error() -> None:
    with pytest.raises(CardError, match="not a card"):
        parse_cards([7])  # type: ignore[list-item]


def test_parse_card_wants_exactly_one() -> None:
    with pytest.raises(CardError, match="expected one card"):
        parse_card("As Kd")


def test_one_card_looked_up_is_the_card_parsed_in_every_spelling() -> None:
    """`parse_card` looks a lone card up in a table of its 304 spellings before it parses:
    every spelling of rank (2-9, 10, T J Q K A in either case) and suit (letter in either
    case, symbol) gives the parser's card, and anything else is still parsed or refused."""
    ranks = [*"23456789", "10", *"TJQKA", *"tjqka"]
    suits = [*"shdcSHDC", *"♠♤♥♡♦♢♣♧"]
    for rank, suit in product(ranks, suits):
        (parsed,) = parse_cards([rank + suit])
        assert parse_card(rank + suit) is parsed
        assert card_name(rank + suit) == str(parsed)
    assert parse_card(" As,") is parse_card("As")
    assert card_name(" 10h,") == "Th"
    for bad in ("", "1s", "Ax", "AsKd", "10"):
        with pytest.raises(CardError):
            parse_card(bad)
        assert card_name(bad) is None


def test_cards_are_singletons_and_card_index_bounds() -> None:
    assert Card(51) is DECK[51]
    assert card_of(14, "♠") is parse_card("As")
    with pytest.raises(CardError):
        Card(52)
    with pytest.raises(CardError):
        card_of(1, "s")
    with pytest.raises(CardError):
        card_of(5, "x")


def test_cards_pickle_to_the_same_singleton() -> None:
    card = parse_card("Qh")
    assert pickle.loads(pickle.dumps(card)) is card  # noqa: S301 -- our own bytes, just made


@pytest.mark.article("51/89/M", "1(a)")
def test_require_distinct_names_the_duplicate() -> None:
    require_distinct(parse_cards("As Ks"))
    with pytest.raises(CardError, match="Ks appears twice"):
        require_distinct(parse_cards("As Ks Qd Ks"), "hand")


@given(cards_lists)
def test_printing_then_parsing_round_trips(cards: list[Card]) -> None:
    assert list(parse_cards(format_cards(cards))) == cards
    assert list(parse_cards("".join(str(c) for c in cards))) == cards


@given(st.sampled_from(DECK))
def test_index_rank_and_suit_agree(card: Card) -> None:
    assert card_of(card.rank, card.suit) is card
    assert card.index == (card.rank - 2) * 4 + "cdhs".index(card.suit)
    assert Card(card.index) is card


# --- a card's int value is its ranking key (thirteen_rank adds a row's cards) ---------------


def test_five_cards_sum_below_one_machine_digit_of_a_python_int() -> None:
    assert 5 * max(DECK) < 2**30


def test_the_rank_part_of_a_sum_names_the_ranks() -> None:
    # No two multisets of five ranks (at most four alike), nor of three, share a rank part.
    for size in (3, 5):
        parts: dict[int, tuple[int, ...]] = {}
        for ranks in combinations_with_replacement(range(2, 15), size):
            if max(Counter(ranks).values()) > 4:
                continue
            cards = [card_of(rank, "cdhs"[i % 4]) for i, rank in enumerate(ranks)]
            part = sum(cards) & RANK_FIELD_MASK
            assert parts.setdefault(part, ranks) == ranks


@pytest.mark.article("003", "way 1 compare")
def test_the_suit_part_of_a_sum_tells_a_flush_and_nothing_else() -> None:
    # Every mix of suits over five different ranks: flush exactly when SUIT_BITS are all clear.
    ranks = (14, 11, 8, 5, 2)
    for suits in product("cdhs", repeat=5):
        total = sum(card_of(rank, suit) for rank, suit in zip(ranks, suits, strict=True))
        assert (total & SUIT_BITS == 0) == (len(set(suits)) == 1)
