"""Two-tile classes of Taiwan Pai Gow: Table II and Art. 7 of Portaria 15/90/M.

Art. 7(1): the order of tiles and of pairs is fixed strictly by the tables. Table II lists 111
pair classes from 至尊宝 down to 高脚七密. Art. 7(2) gives the rule behind the table and the rule
for everything it does not list: a pair that is not a 宝 (two tiles of one Table I name, or
至尊宝, the two 鸡), not 天九王 (天牌 + a nine, 12+9), not 天杠 (天牌 + an eight, 12+8) and not
地杠 (地牌 + an eight, 2+8) counts its points: the pip total modulo ten (nine is the most; ten and
twenty count nothing, written 密). Equal points are decided by the larger single tile (Table I).

The table writes classes by their larger tile and their points (天牌九 = 天牌 with a seven), with
three habits this module follows to reproduce its names exactly:
- a point class is named by its larger tile that is not a 鸡: 大鸡 + 杂五 is 杂五一 (row 105) and
  大鸡 + 杂九 is 杂九五 (row 65), although 大鸡 is the larger tile by Table I and orders the class;
- 长衫 is written 长牌 in point classes (长牌九), but 长衫宝 as a pair;
- the single class of eight, seven and six points led by a military tile is 杂牌八/七/六.

32 tiles form 496 two-tile combinations. Table II omits the classes that cannot happen when the
two 鸡 change value (they cannot here: Art. 9(2) "无变"): 天牌五 (天 + 细鸡), 地牌五 (地 + 细鸡),
杂七密 (杂七 + 细鸡) and others; this module places each of them by Art. 7(2) and gives it no row.
`docs/rules-paigow.md` lists every class with its combinations.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

from daemon.rules.paigow.tiles import TABLE_I, TILE_SET, Tile

# Table II, strongest first; row n is TABLE_II[n - 1]. Spaces the text puts in `拧冧六 九` are
# removed, as the public API names classes.
TABLE_II: tuple[str, ...] = (
    "至尊宝", "天牌宝", "地牌宝", "人牌宝", "娥牌宝", "梅牌宝", "长衫宝", "板凳宝", "斧头宝",
    "红头宝", "高脚七宝", "拧冧六宝", "杂九宝", "杂八宝", "杂七宝", "杂五宝", "天九皇", "天杠",
    "地杠", "天牌九", "地牌九", "人牌九", "娥牌九", "梅牌九", "长牌九", "板凳九", "斧头九",
    "红头九", "拧冧六九", "天牌八", "地牌八", "人牌八", "娥牌八", "梅牌八", "斧头八", "红头八",
    "杂牌八", "天牌七", "地牌七", "人牌七", "娥牌七", "梅牌七", "长牌七", "板凳七", "斧头七",
    "红头七", "杂牌七", "天牌六", "地牌六", "人牌六", "梅牌六", "长牌六", "斧头六", "红头六",
    "高脚七六", "杂牌六", "人牌五", "娥牌五", "梅牌五", "长牌五", "板凳五", "红头五",
    "高脚七五", "拧冧六五", "杂九五", "杂八五", "天牌四", "人牌四", "娥牌四", "梅牌四",
    "长牌四", "板凳四", "高脚七四", "拧冧六四", "杂九四", "杂八四", "天牌三", "地牌三",
    "人牌三", "娥牌三", "长牌三", "板凳三", "高脚七三", "拧冧六三", "杂八三", "杂七三",
    "天牌二", "地牌二", "人牌二", "娥牌二", "长牌二", "板凳二", "高脚七二", "拧冧六二",
    "杂九二", "杂七二", "地牌一", "娥牌一", "梅牌一", "长牌一", "板凳一", "斧头一",
    "拧冧六一", "杂八一", "杂五一", "娥牌密", "梅牌密", "长牌密", "板凳密", "斧头密",
    "高脚七密",
)  # fmt: skip

Kind = Literal["supreme", "pair", "king", "gong", "points"]

_POINT_WORDS = ("密", "一", "二", "三", "四", "五", "六", "七", "八", "九")
# How a tile leads a point class's name (Table II writes 长牌 for 长衫).
_POINT_PREFIX = {name: name for name, _ in TABLE_I} | {"长衫": "长牌"}
# The only military-led classes of 8, 7 and 6 points; Table II calls each 杂牌.
_TABLE_II_SPELLING = {"杂五八": "杂牌八", "杂九七": "杂牌七", "杂九六": "杂牌六"}
_CHICKENS = frozenset({"大鸡六", "细鸡"})
_LOWEST_RANK = len(TABLE_I)


@dataclass(frozen=True, order=True)
class PairClass:
    """A two-tile class. Ordered by strength only: greater is stronger, equal is a tie."""

    strength: int
    name: str = field(compare=False)
    table_row: int | None = field(compare=False)
    kind: Kind = field(compare=False)
    points: int | None = field(compare=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, order=True)
class _Key:
    # Art. 7: 宝 (至尊 first, then by Table I), 天九王, 天杠, 地杠, then points and larger tile.
    tier: int
    points: int
    larger: int


def _describe(a: Tile, b: Tile) -> tuple[_Key, str, Kind, int | None]:
    high, low = (a, b) if a.rank <= b.rank else (b, a)
    names = {a.name, b.name}
    if names == _CHICKENS:
        return _Key(5, 0, 0), "至尊宝", "supreme", None
    if a.name == b.name:
        return _Key(4, 0, _LOWEST_RANK - a.rank), f"{a.name}宝", "pair", None
    if high.name == "天牌" and low.pips == 9:
        return _Key(3, 0, 0), "天九皇", "king", None
    if high.name == "天牌" and low.pips == 8:
        return _Key(2, 1, 0), "天杠", "gong", None
    if high.name == "地牌" and low.pips == 8:
        return _Key(2, 0, 0), "地杠", "gong", None
    points = (a.pips + b.pips) % 10
    namer = low if high.name in _CHICKENS else high
    name = f"{_POINT_PREFIX[namer.name]}{_POINT_WORDS[points]}"
    name = _TABLE_II_SPELLING.get(name, name)
    return _Key(1, points, _LOWEST_RANK - high.rank), name, "points", points


def _build() -> tuple[tuple[PairClass, ...], dict[tuple[Tile, Tile], PairClass]]:
    found: dict[_Key, tuple[str, Kind, int | None]] = {}
    for a, b in combinations(sorted(set(TILE_SET), key=lambda t: (t.rank, t.low)), 2):
        key, name, kind, points = _describe(a, b)
        found.setdefault(key, (name, kind, points))
    for tile in set(TILE_SET):
        if TILE_SET.count(tile) == 2:
            key, name, kind, points = _describe(tile, tile)
            found.setdefault(key, (name, kind, points))
    ordered = sorted(found, reverse=True)
    classes: list[PairClass] = []
    by_key: dict[_Key, PairClass] = {}
    for position, key in enumerate(ordered):
        name, kind, points = found[key]
        row = TABLE_II.index(name) + 1 if name in TABLE_II else None
        pair_class = PairClass(len(ordered) - position, name, row, kind, points)
        classes.append(pair_class)
        by_key[key] = pair_class
    lookup: dict[tuple[Tile, Tile], PairClass] = {}
    faces = set(TILE_SET)
    for a in faces:
        for b in faces:
            if a != b or TILE_SET.count(a) == 2:
                lookup[(a, b)] = by_key[_describe(a, b)[0]]
    return tuple(classes), lookup


# Every class two tiles of one set can form, strongest first.
CLASSES: tuple[PairClass, ...]
_LOOKUP: dict[tuple[Tile, Tile], PairClass]
CLASSES, _LOOKUP = _build()
CLASS_BY_NAME: dict[str, PairClass] = {c.name: c for c in CLASSES}


def classify(a: Tile, b: Tile) -> PairClass:
    """The class of two tiles, in either order (Table II; Art. 7(2) where the table is silent)."""
    try:
        return _LOOKUP[(a, b)]
    except KeyError:
        raise ValueError(f"{a} {b}: one set holds a single {a.name} {a}") from None


def all_combinations() -> Iterator[tuple[Tile, Tile, PairClass]]:
    """The 496 two-tile combinations of the 32 tiles (each physical pair once), with classes."""
    for a, b in combinations(TILE_SET, 2):
        yield a, b, classify(a, b)
