from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.paigow.tiles import (
    NAMES_HANT_EN,
    TABLE_I,
    TILE_SET,
    Tile,
    TileParseError,
    format_tiles,
    parse_deal,
    parse_tiles,
)


@pytest.mark.article("15/90/M", "1(1)")
def test_the_set_has_32_tiles_civil_twice_military_once() -> None:
    assert len(TILE_SET) == 32
    counts = Counter(TILE_SET)
    assert len(counts) == 21
    assert sorted(counts.values()) == [1] * 10 + [2] * 11
    assert sum(tile.pips for tile in TILE_SET) == 227


@pytest.mark.article("15/90/M", "Table I")
def test_table_i_order_and_values() -> None:
    names = [name for name, _ in TABLE_I]
    assert names == [
        "天牌", "地牌", "人牌", "娥牌", "梅牌", "长衫", "板凳", "斧头", "红头",
        "高脚七", "拧冧六", "杂九", "杂八", "杂七", "大鸡六", "杂五", "细鸡",
    ]  # fmt: skip
    pips = {"天牌": 12, "地牌": 2, "人牌": 8, "娥牌": 4, "梅牌": 10, "长衫": 6, "板凳": 4,
            "斧头": 11, "红头": 10, "高脚七": 7, "拧冧六": 6, "杂九": 9, "杂八": 8, "杂七": 7,
            "大鸡六": 6, "杂五": 5, "细鸡": 3}  # fmt: skip
    for tile in TILE_SET:
        assert tile.pips == pips[tile.name]
        assert tile.rank == names.index(tile.name) + 1


# Table I as the text writes it, largest first (002, 表I).
TABLE_I_AS_WRITTEN = (
    "天牌", "地牌", "人牌", "娥牌", "梅牌", "长衫", "板凳", "斧头", "红头", "高脚七", "拧冧六",
    "杂九", "杂八", "杂七", "大鸡六", "杂五", "细鸡",
)  # fmt: skip


@pytest.mark.article("15/90/M", "7(1)", "Table I")
def test_table_i_names_as_written_read_back_and_show_in_both_languages() -> None:
    """Art. 7(1) ranks by Table I: each of its names, as written, reads as the tiles of its row
    and is the name shown; its traditional form (the console's) reads back as the same tiles,
    and each row has its own English name."""
    english = set()
    for rank, written in enumerate(TABLE_I_AS_WRITTEN, start=1):
        tiles = parse_tiles(written)
        assert [(t.rank, t.name) for t in tiles] == [(rank, written)]
        hant, en = NAMES_HANT_EN[written]
        assert parse_tiles(hant) == tiles
        english.add(en)
    assert len(english) == len(TABLE_I_AS_WRITTEN) and all(e.isascii() for e in english)
    assert format_tiles(parse_tiles("天 杂九 细鸡"), "name") == "天牌 杂九 细鸡"


@pytest.mark.article("15/90/M", "9(2)")
def test_art_9_2_split_chickens_count_six_and_three() -> None:
    big, small = parse_tiles("大鸡 细鸡")
    assert (big.pips, small.pips) == (6, 3)
    assert (str(big), str(small)) == ("2-4", "1-2")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("鹅牌", "1-3"), ("和牌", "1-3"), ("娥", "1-3"), ("长三", "3-3"), ("长衫", "3-3"),
        ("長三", "3-3"), ("红头十", "4-6"), ("紅頭", "4-6"), ("零霖六", "1-5"),
        ("铜锤六", "1-5"), ("拧冧六", "1-5"), ("小鸡", "1-2"), ("細雞", "1-2"),
        ("大鸡", "2-4"), ("大鸡六", "2-4"), ("高腳七", "1-6"), ("板櫈", "2-2"),
    ],
)  # fmt: skip
def test_variant_names(text: str, expected: str) -> None:
    assert format_tiles(parse_tiles(text)) == expected


def test_names_and_pips_read_the_same() -> None:
    assert parse_tiles("天牌 杂九") == parse_tiles("6-6 4-5") == parse_tiles("天杂九")
    assert parse_tiles("5-4, 6-6") == (Tile(4, 5), Tile(6, 6))


def test_a_mixed_name_twice_is_both_faces() -> None:
    assert format_tiles(parse_tiles("杂九 杂九")) == "4-5 3-6"
    assert format_tiles(parse_tiles("杂九 4-5")) == "3-6 4-5"


def test_deal_resolves_names_across_groups() -> None:
    banker, player = parse_deal(["天 杂九", "人 杂九"])
    assert {banker[1], player[1]} == {Tile(4, 5), Tile(3, 6)}
    with pytest.raises(TileParseError, match="only 2 天牌"):
        parse_deal(["天 天", "天 人"])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("天 天 天", "only 2 天牌"),
        ("杂九 杂九 杂九", "only 2 杂九"),
        ("2-4 2-4", "only 1 of 2-4"),
        ("7-7", "cannot read"),
        ("0-1", "0-1 is not a tile"),
        ("天王", "cannot read a tile at '王'"),
    ],
)
def test_impossible_or_unreadable_text_is_refused(text: str, problem: str) -> None:
    with pytest.raises(TileParseError, match=problem):
        parse_tiles(text)


@given(st.permutations(TILE_SET))
def test_any_deal_round_trips_through_both_styles(tiles: list[Tile]) -> None:
    assert parse_tiles(format_tiles(tiles)) == tuple(tiles)
    named = parse_tiles(format_tiles(tiles, style="name"))
    assert [t.name for t in named] == [t.name for t in tiles]
    assert Counter(named) == Counter(tiles)
