"""The 32 tiles of Taiwan Pai Gow (台湾牌九, Macau, Portaria 15/90/M) and their names.

Art. 1(1): the house supplies one set of 32 天九 tiles. The set is the Chinese domino set: eleven
"civil" faces appear twice (22 tiles) and ten "military" faces once each (10 tiles). Table I ranks
the single tiles from largest to smallest in 17 ranks; the two faces of each mixed military rank
(杂九 is 3-6 and 4-5) share a name and a rank, and 大鸡 (2-4) and 细鸡 (1-2) each stand alone.

A tile's value is its pip total; Art. 7(2) counts a pair's points modulo ten. Art. 9(2) fixes the
value of the two 鸡 when they are split: 大鸡 counts six and 细鸡 three, exactly their pips, so no
tile of this game ever changes value ("无变").

Names are accepted as Table I writes them and in the variants tables and players use: 鹅/和 for
娥, 长三 for 长衫, 红头十, 零霖六/铜锤六 for 拧冧六, 小鸡 for 细鸡, and traditional characters.
Pips are written low-high (`4-5`) and accepted either way round (`5-4`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

# Table I, largest first: (canonical name, the faces of this rank as (low, high) pips).
TABLE_I: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("天牌", ((6, 6),)),
    ("地牌", ((1, 1),)),
    ("人牌", ((4, 4),)),
    ("娥牌", ((1, 3),)),
    ("梅牌", ((5, 5),)),
    ("长衫", ((3, 3),)),
    ("板凳", ((2, 2),)),
    ("斧头", ((5, 6),)),
    ("红头", ((4, 6),)),
    ("高脚七", ((1, 6),)),
    ("拧冧六", ((1, 5),)),
    ("杂九", ((4, 5), (3, 6))),
    ("杂八", ((3, 5), (2, 6))),
    ("杂七", ((3, 4), (2, 5))),
    ("大鸡六", ((2, 4),)),
    ("杂五", ((2, 3), (1, 4))),
    ("细鸡", ((1, 2),)),
)

CIVIL_NAMES = frozenset(name for name, _ in TABLE_I[:11])

# Each Table I name in traditional characters (the console's zh-Hant) and in the English a
# Macau pit uses for it (the Cantonese names' meanings), for the screens that draw the tiles.
NAMES_HANT_EN: dict[str, tuple[str, str]] = {
    "天牌": ("天牌", "Heaven"),
    "地牌": ("地牌", "Earth"),
    "人牌": ("人牌", "Man"),
    "娥牌": ("娥牌", "Goose"),
    "梅牌": ("梅牌", "Flower"),
    "长衫": ("長衫", "Long"),
    "板凳": ("板凳", "Bench"),
    "斧头": ("斧頭", "Hatchet"),
    "红头": ("紅頭", "Red head ten"),
    "高脚七": ("高腳七", "Long leg seven"),
    "拧冧六": ("擰冧六", "Copper hammer six"),
    "杂九": ("雜九", "Mixed nine"),
    "杂八": ("雜八", "Mixed eight"),
    "杂七": ("雜七", "Mixed seven"),
    "大鸡六": ("大雞六", "Big chicken six"),
    "杂五": ("雜五", "Mixed five"),
    "细鸡": ("細雞", "Small chicken"),
}

# Every way of writing a Table I name that the parser accepts. Longest match wins, so 大鸡六 is
# read before 大鸡 and 红头十 before 红头.
_ALIASES: dict[str, tuple[str, ...]] = {
    "天牌": ("天牌", "天"),
    "地牌": ("地牌", "地"),
    "人牌": ("人牌", "人"),
    "娥牌": ("娥牌", "娥", "鹅牌", "鹅", "鵝牌", "鵝", "和牌", "和"),
    "梅牌": ("梅牌", "梅花", "梅"),
    "长衫": ("长衫", "长三", "長衫", "長三", "长衫牌", "长三牌"),
    "板凳": ("板凳", "板櫈", "板凳牌"),
    "斧头": ("斧头", "斧頭", "斧头牌"),
    "红头": ("红头十", "紅頭十", "红头", "紅頭"),
    "高脚七": ("高脚七", "高腳七"),
    "拧冧六": ("拧冧六", "擰冧六", "零霖六", "零冧六", "伶冧六", "铜锤六", "銅錘六", "銅鎚六"),
    "杂九": ("杂九", "雜九"),
    "杂八": ("杂八", "雜八"),
    "杂七": ("杂七", "雜七"),
    "大鸡六": ("大鸡六", "大雞六", "大鸡", "大雞"),
    "杂五": ("杂五", "雜五"),
    "细鸡": ("细鸡", "細雞", "小鸡", "小雞", "细鸡三", "小鸡三"),
}

_RANK_OF_NAME = {name: rank for rank, (name, _) in enumerate(TABLE_I, start=1)}
_NAME_OF_FACE = {face: name for name, faces in TABLE_I for face in faces}
_ALIAS_TO_NAME = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}
_ALIASES_LONGEST_FIRST = sorted(_ALIAS_TO_NAME, key=len, reverse=True)


class TileParseError(ValueError):
    """Text that does not name tiles, or names more of a tile than one set holds."""


@dataclass(frozen=True, slots=True)
class Tile:
    """One tile face: `low`-`high` pips. The two copies of a civil tile are equal values."""

    low: int
    high: int

    def __post_init__(self) -> None:
        if (self.low, self.high) not in _NAME_OF_FACE:
            raise TileParseError(f"{self.low}-{self.high} is not a tile of the 32-tile set")

    @property
    def name(self) -> str:
        """Table I's name for the tile (杂九 for both 3-6 and 4-5)."""
        return _NAME_OF_FACE[(self.low, self.high)]

    @property
    def rank(self) -> int:
        """Table I's row: 1 for 天牌 (largest) to 17 for 细鸡 (smallest)."""
        return _RANK_OF_NAME[self.name]

    @property
    def pips(self) -> int:
        """The tile's value: its pip total; Art. 9(2) keeps 大鸡 at 6 and 细鸡 at 3."""
        return self.low + self.high

    @property
    def is_civil(self) -> bool:
        return self.name in CIVIL_NAMES

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"


def _faces_in_set() -> tuple[Tile, ...]:
    tiles: list[Tile] = []
    for name, faces in TABLE_I:
        copies = 2 if name in CIVIL_NAMES else 1
        for low, high in faces:
            tiles.extend(Tile(low, high) for _ in range(copies))
    return tuple(tiles)


# The 32 tiles of one set (Art. 1(1)), largest rank first; simulators shuffle a copy of this.
TILE_SET: tuple[Tile, ...] = _faces_in_set()
_COPIES_IN_SET: Counter[Tile] = Counter(TILE_SET)

_PIPS = re.compile(r"([0-6])\s*[-–:/]\s*([0-6])")
_SEPARATORS = re.compile(r"[\s,，、;；+]+")


def _resolve(name: str, used: Counter[Tile]) -> Tile:
    """The first face of this name that the set still holds after the tiles already parsed."""
    faces = dict(TABLE_I)[name]
    for low, high in faces:
        tile = Tile(low, high)
        if used[tile] < _COPIES_IN_SET[tile]:
            return tile
    raise TileParseError(f"one set holds only {_count_of_name(name)} {name}; more were named")


def _count_of_name(name: str) -> int:
    return sum(_COPIES_IN_SET[Tile(low, high)] for low, high in dict(TABLE_I)[name])


def _tokens(text: str) -> Iterable[str | Tile]:
    for chunk in _SEPARATORS.split(text.strip()):
        position = 0
        while position < len(chunk):
            match = _PIPS.match(chunk, position)
            if match:
                a, b = int(match.group(1)), int(match.group(2))
                yield Tile(min(a, b), max(a, b))
                position = match.end()
                continue
            for alias in _ALIASES_LONGEST_FIRST:
                if chunk.startswith(alias, position):
                    yield _ALIAS_TO_NAME[alias]
                    position += len(alias)
                    break
            else:
                raise TileParseError(f"cannot read a tile at {chunk[position:]!r} in {text!r}")


def _parse_group(text: str, used: Counter[Tile]) -> tuple[Tile, ...]:
    # Faces given by pips are claimed first, so "杂九 3-6" gives 4-5 and 3-6, not 3-6 twice.
    tokens = list(_tokens(text))
    for token in tokens:
        if isinstance(token, Tile):
            used[token] += 1
            if used[token] > _COPIES_IN_SET[token]:
                raise TileParseError(
                    f"one set holds only {_COPIES_IN_SET[token]} of {token}; more were named"
                )
    tiles: list[Tile] = []
    for token in tokens:
        if isinstance(token, Tile):
            tiles.append(token)
        else:
            tile = _resolve(token, used)
            used[tile] += 1
            tiles.append(tile)
    return tuple(tiles)


def parse_tiles(text: str) -> tuple[Tile, ...]:
    """Read tiles by name (`天牌 杂九`, `天杂九`) or pips (`6-6 4-5`), in the order written.

    The tiles must be drawable from one set: `天牌` three times is refused. A mixed military name
    (杂九) names its faces in turn, so `杂九 杂九` is 4-5 and 3-6, the pair 杂九宝.
    """
    return _parse_group(text, Counter())


def parse_deal(groups: Sequence[str]) -> tuple[tuple[Tile, ...], ...]:
    """Read several groups (hands, pairs) dealt from one set: names resolve across groups."""
    used: Counter[Tile] = Counter()
    return tuple(_parse_group(text, used) for text in groups)


def format_tiles(tiles: Iterable[Tile], style: Literal["pips", "name"] = "pips") -> str:
    """`6-6 4-5` (style "pips", readable back exactly) or `天牌 杂九` (style "name")."""
    if style == "name":
        return " ".join(tile.name for tile in tiles)
    return " ".join(str(tile) for tile in tiles)


def tile_from_pips(low: int, high: int) -> Tile:
    """The tile with these pips, in either order."""
    return Tile(min(low, high), max(low, high))
