"""Rule sets of Thirteen cards, chosen by name, and the settings houses vary.

- ``macau-1989`` (default): Portaria 51/89/M of 10 March 1989 (000_*.txt), Art. 6-11.
- ``hk-common``: 003_*.txt, the first way (香港一般玩法): its payout table, five special hands
  (报到), "both special: the banker pays the player", and the tie-break option.
- ``hk-extended``: 003, the second way (玩法2): the same rows, twelve special hands with their
  units, the "三或四注" alternatives as settings.
- ``hk-points``: 003, the third way (玩法3): four players each against each, +1/-1 per row, the
  bonus points, 打枪 and 全垒打, special hands outside the comparison; the money of a point
  (「1分×元」) or a pot the highest score takes (「分數最高者贏得底池」): ``stakes``.
- ``hk-four``: 003, the second way played 「四人对比」: no banker, each seat against each other
  seat with the second way's rows and special hands.

The Hong Kong ways all say 「必須小於」 (way 3: 「第一墩＜第二墩＜第三墩」): two equal rows are a
foul there (``equal_rows_foul``); Art. 7's 「从小至大」 lets them stand in ``macau-1989``.

Every reading the texts leave open is a field here, documented in docs/rules.md with its
article; ``ruleset(name, **settings)`` gives a named rule set with some settings changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from types import MappingProxyType
from typing import Any

ROWS = ("head", "middle", "tail")


class RulesError(ValueError):
    """A request the rules cannot answer: unknown rule set or setting, a bet not allowed."""


def _units(table: Mapping[str, Mapping[str, int]]) -> Mapping[str, Mapping[str, int]]:
    return MappingProxyType({row: MappingProxyType(dict(table.get(row, {}))) for row in ROWS})


# Art. 9 II: the units a row wins with, when more than one. Every other winning row wins 1.
MACAU_UNITS = _units(
    {
        "head": {"three_of_a_kind": 3},
        "middle": {"royal_flush": 10, "straight_flush": 10, "four_of_a_kind": 8, "full_house": 2},
        "tail": {"royal_flush": 5, "straight_flush": 5, "four_of_a_kind": 4, "full_house": 1},
    }
)
# 003, first way: 三條摆頭 3; 夫佬摆二道 2; 四條 尾 4 / 二道 8; 同花順 尾 5 / 二道 10.
HK_UNITS = MACAU_UNITS
# 003, second way, the lower of each "三或四注" / "四或八注" / "四或五注" / "五或十注".
HK_EXTENDED_LOWER_UNITS = _units(
    {
        "head": {"three_of_a_kind": 3},
        "middle": {"royal_flush": 5, "straight_flush": 5, "four_of_a_kind": 4, "full_house": 2},
        "tail": {"royal_flush": 4, "straight_flush": 4, "four_of_a_kind": 3},
    }
)
# 003, third way, 特殊加分: what a loser of the row pays on top of the row's 1 point.
HK_POINTS_BONUS = _units(
    {
        "head": {"three_of_a_kind": 1},
        "middle": {"full_house": 1, "four_of_a_kind": 3, "straight_flush": 4, "royal_flush": 4},
        "tail": {"four_of_a_kind": 2, "straight_flush": 3, "royal_flush": 3},
    }
)

# Special hands: (name, units), rarest first: when a hand holds several worth the same units,
# the first listed names it (a 青龙 is also a 杂龙). Macau lists them in the text's order;
# 003 lists its own from the commonest, so they are reversed here. Names are simplified
# Chinese; those 003 leaves blank (「」) carry their usual names.
MACAU_SPECIALS = (("一条龙", 3), ("六对半", 3), ("三花", 3), ("三顺", 3))
HK_COMMON_SPECIALS = (("青龙", 13), ("杂龙", 13), ("六对半", 3), ("三花", 3), ("三顺", 3))
HK_EXTENDED_SPECIALS = (
    ("至尊清龙", 108),
    ("一条龙", 36),
    ("十二皇族", 32),
    ("三同花顺", 24),
    ("三分天下", 20),
    ("全大", 12),
    ("全小", 12),
    ("凑一色", 10),
    ("四套三条", 8),
    ("六对半", 6),
    ("三顺子", 4),
    ("三同花", 3),
)


@dataclass(frozen=True)
class RuleSet:
    """One way of playing Thirteen. Fields are the settings; see docs/rules.md."""

    name: str
    source: str
    # "banker": each player against the banker (000, 003 ways 1-2); "points": each against
    # each, +1/-1 a row (003 way 3); "versus": each against each with the rows' units and no
    # banker (003 way 2, 「也可以四人对比」).
    scoring: str = "banker"
    # "all-cards": rank by every compared card; "top-card": category, then only the highest
    # compared card (003: "只比點數最大的一隻牌", 食夾棍).
    tie_break: str = "all-cards"
    # Who takes a row whose hands are equal: "banker" (Art. 10 夹棍) or "push" (no units).
    row_tie: str = "banker"
    # Whether two equal rows are a foul (Art. 7 "从小至大"; 003 "必須小於").
    equal_rows_foul: bool = False
    # Whether a fouled arrangement forfeits its special hand (Art. 7 "自动输给庄家" over
    # Art. 9 I "必胜"); by default the special hand, judged on the cards, wins.
    foul_voids_special: bool = False
    units: Mapping[str, Mapping[str, int]] = field(default_factory=lambda: MACAU_UNITS)
    specials: tuple[tuple[str, int], ...] = MACAU_SPECIALS
    # Head runs that do not count for 三顺 / 三同花顺 (003 second way: "QKA、KA2、JQKA2除外").
    excluded_head_runs: frozenset[frozenset[int]] = frozenset()
    # Both sides special: "push" (Art. 9 I 和局), "banker-pays" (003: 由莊家賠閒家),
    # "larger-wins" (003 third way: the smaller pays the larger, never the reverse).
    both_special: str = "push"
    # Both sides foul: "banker" (Art. 7: the seat's bet is lost to the banker, whatever the
    # banker holds) or "push" (003: 全賠 each way).
    both_foul: str = "banker"
    # Bets allowed (Art. 11: 1, 2 or 3 units); None: any positive whole number of units.
    bets: tuple[int, ...] | None = (1, 2, 3)
    # The money of a winning player (Art. 11 is ambiguous): "half-bet" (the prize is half the
    # bet, the units of Art. 9 deciding only who wins), "half-units" (each unit of difference
    # pays half the bet) or "units" (the difference of units times the bet, as 003 pays).
    prize: str = "half-bet"
    commission: Decimal = Decimal("0.02")
    # Without a banker (points, versus): "per-point" (「1分×元」: each point is worth the table's
    # unit of money, divided by `points_per_unit` for 「×分1元」) or "pot" (「也可以使用下注玩法，
    # 分數最高者贏得底池」: each seat's bet goes into a pot the highest score takes).
    stakes: str = "per-point"
    points_per_unit: int = 1
    # Points scoring only (003 third way).
    bonus: Mapping[str, Mapping[str, int]] = field(default_factory=lambda: _units({}))
    shoot_multiplier: int = 1
    home_run_multiplier: int = 2

    def row_units(self, row: str, category: str) -> int:
        """The units (or points) a winning row earns with a hand of ``category``."""
        return self.units[row].get(category, 1)


_CATEGORIES = frozenset(
    {
        "royal_flush",
        "straight_flush",
        "four_of_a_kind",
        "full_house",
        "flush",
        "straight",
        "three_of_a_kind",
        "two_pair",
        "one_pair",
        "high_card",
    }
)
_CHOICES: dict[str, tuple[Any, ...]] = {
    "scoring": ("banker", "points", "versus"),
    "stakes": ("per-point", "pot"),
    "tie_break": ("all-cards", "top-card"),
    "row_tie": ("banker", "push"),
    "both_special": ("push", "banker-pays", "larger-wins"),
    "both_foul": ("banker", "push"),
    "prize": ("half-bet", "half-units", "units"),
}

RULESETS: dict[str, RuleSet] = {
    "macau-1989": RuleSet(name="macau-1989", source="000 Art. 6-11 (Portaria 51/89/M)"),
    "hk-common": RuleSet(
        name="hk-common",
        source="003 香港一般玩法",
        row_tie="push",
        equal_rows_foul=True,
        units=HK_UNITS,
        specials=HK_COMMON_SPECIALS,
        both_special="banker-pays",
        both_foul="push",
        bets=None,
        prize="units",
        commission=Decimal(0),
    ),
    "hk-extended": RuleSet(
        name="hk-extended",
        source="003 玩法2",
        row_tie="push",
        equal_rows_foul=True,
        units=HK_UNITS,
        specials=HK_EXTENDED_SPECIALS,
        excluded_head_runs=frozenset({frozenset({12, 13, 14}), frozenset({13, 14, 2})}),
        both_special="banker-pays",
        both_foul="push",
        bets=None,
        prize="units",
        commission=Decimal(0),
    ),
    "hk-points": RuleSet(
        name="hk-points",
        source="003 玩法3",
        scoring="points",
        row_tie="push",
        equal_rows_foul=True,
        units=_units({}),
        specials=HK_EXTENDED_SPECIALS,
        excluded_head_runs=frozenset({frozenset({12, 13, 14}), frozenset({13, 14, 2})}),
        both_special="larger-wins",
        both_foul="push",
        bets=None,
        prize="units",
        commission=Decimal(0),
        bonus=HK_POINTS_BONUS,
    ),
    # 003 way 2, 「四人中一人為莊家（也可以四人对比）」: the four without a banker. Its tie rule
    # (由莊家賠閒家) needs a banker; of two special hands the larger wins, as way 3 says.
    "hk-four": RuleSet(
        name="hk-four",
        source="003 玩法2 四人对比",
        scoring="versus",
        row_tie="push",
        equal_rows_foul=True,
        units=HK_UNITS,
        specials=HK_EXTENDED_SPECIALS,
        excluded_head_runs=frozenset({frozenset({12, 13, 14}), frozenset({13, 14, 2})}),
        both_special="larger-wins",
        both_foul="push",
        bets=None,
        prize="units",
        commission=Decimal(0),
    ),
}


def ruleset(name: str | RuleSet = "macau-1989", **settings: Any) -> RuleSet:
    """The rule set called ``name``, with ``settings`` (RuleSet fields) changed.

    ``units`` and ``bonus`` merge row by row into the named set's tables, so
    ``units={"tail": {"four_of_a_kind": 3}}`` changes one entry.
    """
    if isinstance(name, RuleSet):
        base = name
    else:
        try:
            base = RULESETS[name]
        except KeyError:
            known = ", ".join(RULESETS)
            raise RulesError(f"unknown rule set {name!r} (known: {known})") from None
    if not settings:
        return base
    names = {f.name for f in fields(RuleSet)} - {"name", "source"}
    changes: dict[str, Any] = {}
    for key, given in settings.items():
        if key not in names:
            raise RulesError(f"unknown setting {key!r} (known: {', '.join(sorted(names))})")
        if key in _CHOICES and given not in _CHOICES[key]:
            raise RulesError(f"setting {key} must be one of {_CHOICES[key]}, not {given!r}")
        try:
            changes[key] = _setting(key, given, base)
        except RulesError:
            raise
        except (ValueError, TypeError, ArithmeticError):
            raise RulesError(f"setting {key}: {given!r} is not a valid value") from None
    return replace(base, **changes)


def _whole(value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(value)
    return value


def _setting(key: str, value: Any, base: RuleSet) -> Any:
    """A setting's value checked and in the field's type; ValueError/TypeError if not."""
    if key in {"units", "bonus"}:
        return _merge_table(getattr(base, key), value, key)
    if key == "commission":
        rate = Decimal(str(value))
        if not Decimal(0) <= rate < 1:
            raise ValueError(value)
        return rate
    if key == "specials":
        return _specials(value, base)
    if key == "bets":
        return None if value is None else tuple(_whole(v, 1) for v in value)
    if key == "excluded_head_runs":
        runs = frozenset(frozenset(_whole(r, 2) for r in run) for run in value)
        if any(len(run) != 3 or max(run) > 14 for run in runs):
            raise ValueError(value)
        return runs
    if key in {"equal_rows_foul", "foul_voids_special"}:
        if not isinstance(value, bool):
            raise TypeError(value)
        return value
    if key in {"shoot_multiplier", "home_run_multiplier", "points_per_unit"}:
        return _whole(value, 1)
    return value  # the choices, checked by the caller


def _merge_table(
    base: Mapping[str, Mapping[str, int]], change: Any, key: str
) -> Mapping[str, Mapping[str, int]]:
    if not isinstance(change, Mapping):
        raise RulesError(f"setting {key} must map rows to {{category: units}}")
    merged = {row: dict(base[row]) for row in ROWS}
    for row, entries in change.items():
        if row not in merged or not isinstance(entries, Mapping):
            raise RulesError(f"setting {key}: unknown row {row!r} (rows: head, middle, tail)")
        for category, units in entries.items():
            if category not in _CATEGORIES:
                raise RulesError(f"setting {key}: unknown category {category!r}")
            merged[row][category] = _whole(units, 0)
    return _units(merged)


def _specials(change: Any, base: RuleSet) -> tuple[tuple[str, int], ...]:
    """``{"青龙": 26}`` changes the units of a special hand the rule set knows."""
    if not isinstance(change, Mapping):
        raise RulesError("setting specials must map special hand names to units")
    known = dict(base.specials)
    for special, units in change.items():
        if special not in known:
            raise RulesError(f"unknown special hand {special!r} in {base.name}")
        known[special] = _whole(units, 0)
    return tuple(known.items())
