from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.paigow.classes import (
    CLASS_BY_NAME,
    CLASSES,
    TABLE_II,
    PairClass,
    all_combinations,
    classify,
)
from daemon.rules.paigow.tiles import TILE_SET, Tile, parse_tiles

# Table II as the text prints it (002, 表II), spaces and all, to check the module's copy.
TABLE_II_AS_PRINTED = """
至尊宝 天牌宝 地牌宝 人牌宝 娥牌宝 梅牌宝 长衫宝 板凳宝 斧头宝 红头宝
高脚七宝 拧冧六宝 杂九宝 杂八宝 杂七宝 杂五宝 天九皇 天杠 地杠 天牌九
地牌九 人牌九 娥牌九 梅牌九 长牌九 板凳九 斧头九 红头九 拧冧六_九
天牌八 地牌八 人牌八 娥牌八 梅牌八 斧头八 红头八 杂牌八 天牌七 地牌七
人牌七 娥牌七 梅牌七 长牌七 板凳七 斧头七 红头七 杂牌七 天牌六 地牌六
人牌六 梅牌六 长牌六 斧头六 红头六 高脚七_六 杂牌六 人牌五 娥牌五
梅牌五 长牌五 板凳五 红头五 高脚七_五 拧冧六_五 杂九五 杂八五 天牌四
人牌四 娥牌四 梅牌四 长牌四 板凳四 高脚七_四 拧冧六_四 杂九四 杂八四
天牌三 地牌三 人牌三 娥牌三 长牌三 板凳三 高脚七_三 拧冧六_三 杂八三
杂七三 天牌二 地牌二 人牌二 娥牌二 长牌二 板凳二 高脚七_二 拧冧六_二
杂九二 杂七二 地牌一 娥牌一 梅牌一 长牌一 板凳一 斧头一 拧冧六_一
杂八一 杂五一 娥牌密 梅牌密 长牌密 板凳密 斧头密 高脚七密
""".replace("_", " ").split("\n")

POINT_WORDS = "密一二三四五六七八九"
PREFIX_TILE = {name: name for name in ("天牌", "地牌", "人牌", "娥牌", "梅牌", "板凳", "斧头")}
PREFIX_TILE |= {name: name for name in ("红头", "高脚七", "拧冧六", "杂九", "杂八", "杂七", "杂五")}
PREFIX_TILE["长牌"] = "长衫"
MILITARY = {"杂九", "杂八", "杂七", "杂五"}
CHICKENS = {"大鸡六", "细鸡"}


@pytest.mark.article("15/90/M", "Table II")
def test_module_copy_of_table_ii_is_the_text() -> None:
    printed = [" ".join(line.split()) for line in TABLE_II_AS_PRINTED if line.strip()]
    rows = " ".join(printed).replace("拧冧六 ", "拧冧六").replace("高脚七 ", "高脚七").split()
    assert len(rows) == 111
    assert tuple(rows) == TABLE_II


def _expected_row(a: Tile, b: Tile) -> str | None:
    """Table II's row for two tiles, read off the row names alone (an independent oracle)."""
    names = {a.name, b.name}
    if names == CHICKENS:
        return "至尊宝"
    if a.name == b.name:
        return a.name + "宝"
    tiles = {a.name: a, b.name: b}
    if "天牌" in names and 9 in (a.pips, b.pips):
        return "天九皇"
    if "天牌" in names and 8 in (a.pips, b.pips):
        return "天杠"
    if "地牌" in names and 8 in (a.pips, b.pips):
        return "地杠"
    points = (a.pips + b.pips) % 10
    candidates = []
    for row in TABLE_II:
        if row.endswith("宝") or row in ("天九皇", "天杠", "地杠"):
            continue
        prefix, word = row[:-1], row[-1]
        if POINT_WORDS.index(word) != points:
            continue
        if prefix == "杂牌":
            if names <= MILITARY | CHICKENS and names & MILITARY:
                candidates.append(row)
        elif PREFIX_TILE[prefix] in tiles:
            other = (names - {PREFIX_TILE[prefix]}) or names
            (other_name,) = other
            other_tile = tiles[other_name]
            leader = tiles[PREFIX_TILE[prefix]]
            if other_tile.rank > leader.rank or other_name in CHICKENS:
                candidates.append(row)
    assert len(candidates) <= 1, (a, b, candidates)
    return candidates[0] if candidates else None


@pytest.mark.article("15/90/M", "7(1)", "Table II")
def test_all_496_combinations_against_table_ii() -> None:
    combos = list(all_combinations())
    assert len(combos) == 496
    rows_seen: Counter[int] = Counter()
    for a, b, pair_class in combos:
        expected = _expected_row(a, b)
        if expected is None:
            assert pair_class.table_row is None, (a, b, pair_class)
        else:
            assert pair_class.name == expected, (a, b)
            assert pair_class.table_row == TABLE_II.index(expected) + 1
            rows_seen[pair_class.table_row] += 1
    assert set(rows_seen) == set(range(1, 112)), "every row of Table II is a real combination"


@pytest.mark.article("15/90/M", "7(1)", "Table II")
def test_classes_follow_table_ii_order_exactly() -> None:
    rows = [c.table_row for c in CLASSES if c.table_row is not None]
    assert rows == list(range(1, 112))
    assert [c.strength for c in CLASSES] == list(range(len(CLASSES), 0, -1))


@pytest.mark.article("15/90/M", "7(2)")
def test_omitted_classes_are_placed_by_art_7_2() -> None:
    omitted = [c.name for c in CLASSES if c.table_row is None]
    assert omitted == ["天牌五", "地牌五", "斧头四", "梅牌三", "红头三", "人牌一", "杂七密"]
    order = [c.name for c in CLASSES]

    def between(name: str, stronger: str, weaker: str) -> None:
        assert order.index(stronger) + 1 == order.index(name) == order.index(weaker) - 1

    between("天牌五", "杂牌六", "地牌五")
    between("地牌五", "天牌五", "人牌五")
    assert order.index("板凳四") < order.index("斧头四") < order.index("高脚七四")
    assert order.index("娥牌三") < order.index("梅牌三") < order.index("长牌三")
    assert order.index("长牌三") < order.index("红头三") < order.index("高脚七三")
    assert order.index("地牌一") < order.index("人牌一") < order.index("娥牌一")
    assert order[-1] == "杂七密"
    for name in omitted:  # every omitted combination holds the 细鸡 that Table II assumed varies
        for a, b, pair_class in all_combinations():
            if pair_class.name == name:
                assert "细鸡" in (a.name, b.name)


@pytest.mark.parametrize(
    ("tiles", "name", "row"),
    [
        ("大鸡 细鸡", "至尊宝", 1),
        ("天 天", "天牌宝", 2),
        ("杂九 杂九", "杂九宝", 13),
        ("3-4 2-5", "杂七宝", 15),
        ("杂五 杂五", "杂五宝", 16),
        ("天 4-5", "天九皇", 17),
        ("天 3-6", "天九皇", 17),
        ("天 人", "天杠", 18),
        ("天 2-6", "天杠", 18),
        ("天 3-5", "天杠", 18),
        ("地 人", "地杠", 19),
        ("地 杂八", "地杠", 19),
        ("天 高脚七", "天牌九", 20),
        ("天 杂七", "天牌九", 20),
        ("长三 细鸡", "长牌九", 25),
        ("拧冧六 细鸡", "拧冧六九", 29),
        ("杂五 细鸡", "杂牌八", 37),
        ("杂九 杂八", "杂牌七", 47),
        ("杂九 杂七", "杂牌六", 56),
        ("高脚七 杂九", "高脚七六", 55),
        ("杂九 大鸡", "杂九五", 65),
        ("大鸡 杂五", "杂五一", 105),
        ("高脚七 细鸡", "高脚七密", 111),
        ("天 细鸡", "天牌五", None),
        ("杂七 细鸡", "杂七密", None),
    ],
)
@pytest.mark.article("15/90/M", "Table II")
def test_named_classes(tiles: str, name: str, row: int | None) -> None:
    a, b = parse_tiles(tiles)
    pair_class = classify(a, b)
    assert (pair_class.name, pair_class.table_row) == (name, row)
    assert classify(b, a) == pair_class


@pytest.mark.article("15/90/M", "9(2)")
def test_art_9_2_chickens_do_not_change_value() -> None:
    # 天 + 细鸡 would be 天牌八 if 细鸡 could count six; fixed at three it is 5 points.
    a, b = parse_tiles("天 细鸡")
    assert classify(a, b).points == 5
    c, d = parse_tiles("天 大鸡")
    assert classify(c, d).name == "天牌八"
    assert classify(c, d) > classify(a, b)


@pytest.mark.article("15/90/M", "7(2)")
def test_equal_points_and_larger_tile_are_one_class() -> None:
    # Art. 7(2) compares only the larger tile: 天+高脚七 and 天+杂七 tie.
    assert classify(*parse_tiles("天 高脚七")) == classify(*parse_tiles("天 杂七"))
    assert classify(*parse_tiles("天 长三")) == classify(*parse_tiles("天 大鸡"))


def test_a_single_tile_cannot_pair_with_itself() -> None:
    with pytest.raises(ValueError, match="single 大鸡六"):
        classify(Tile(2, 4), Tile(2, 4))


def test_class_names_are_unique_and_looked_up() -> None:
    assert len(CLASS_BY_NAME) == len(CLASSES) == 118
    assert CLASS_BY_NAME["天九皇"].table_row == 17


pairs = st.sampled_from([(a, b) for a, b in combinations(TILE_SET, 2)])


@given(pairs, pairs, pairs)
def test_the_order_is_total_and_consistent(
    x: tuple[Tile, Tile], y: tuple[Tile, Tile], z: tuple[Tile, Tile]
) -> None:
    cx, cy, cz = classify(*x), classify(*y), classify(*z)
    assert sum([cx < cy, cx == cy, cx > cy]) == 1
    assert (cx == cy) == (cx.name == cy.name)
    if cx <= cy <= cz:
        assert cx <= cz
    # Rows, where both exist, order the same way as the classes.
    if cx.table_row is not None and cy.table_row is not None:
        assert (cx > cy) == (cx.table_row < cy.table_row)


@given(pairs)
@pytest.mark.article("15/90/M", "7(2)")
def test_point_classes_agree_with_art_7_2(pair: tuple[Tile, Tile]) -> None:
    a, b = pair
    pair_class: PairClass = classify(a, b)
    if pair_class.kind == "points":
        assert pair_class.points == (a.pips + b.pips) % 10
        larger = min(a.rank, b.rank)
        for other_a, other_b, other in all_combinations():
            if other.kind == "points" and other.points == pair_class.points:
                other_larger = min(other_a.rank, other_b.rank)
                assert (other > pair_class) == (other_larger < larger)


@pytest.mark.article("15/90/M", "7(2)")
def test_art_7_2_nine_is_the_most_and_tens_are_dropped() -> None:
    points = [c.points for c in CLASSES if c.kind == "points" and c.points is not None]
    assert len(points) == sum(1 for c in CLASSES if c.kind == "points")
    assert max(points) == 9 and min(points) == 0
    assert classify(*parse_tiles("梅 斧头")).name == "梅牌一"  # 21 -> 1
    assert classify(*parse_tiles("天 高脚七")).points == 9  # 19 -> 9
