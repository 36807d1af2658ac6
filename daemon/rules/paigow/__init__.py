"""Taiwan Pai Gow (台湾牌九), Macau, Portaria 15/90/M: the public face of the rules engine.

Tiles and names (Art. 1, Table I), two-tile classes (Art. 7, 9(2), Table II), setting and
comparing hands (Art. 6, 9(1)), the dice that start the deal (Art. 2) and the settlement of a
round (Art. 5, 8) live in this package's modules (`tiles`, `classes`, `hands`, `rulesets`,
`settlement`; the lab CLI in `cli`); `daemon.rules.paigow` gathers what callers use.
"""

from __future__ import annotations

from daemon.rules.paigow.classes import (
    CLASS_BY_NAME,
    CLASSES,
    TABLE_II,
    PairClass,
    all_combinations,
    classify,
)
from daemon.rules.paigow.hands import (
    Hand,
    Outcome,
    Pair,
    SettingCheck,
    correct_setting,
    deal,
    deal_order,
    door_order,
    first_hand_from_dice,
    hand_outcome,
    legal_settings,
    normalise,
    set_hand,
    setting_key,
)
from daemon.rules.paigow.rulesets import MACAU_1990, RULESETS, PaiGowRules, ruleset
from daemon.rules.paigow.settlement import (
    BankShare,
    CoBanker,
    Door,
    DoorResult,
    RoundSettlement,
    second_round_stake,
    settle_round,
)
from daemon.rules.paigow.tiles import (
    TABLE_I,
    TILE_SET,
    Tile,
    TileParseError,
    format_tiles,
    parse_deal,
    parse_tiles,
    tile_from_pips,
)

__all__ = [
    "CLASSES",
    "CLASS_BY_NAME",
    "MACAU_1990",
    "RULESETS",
    "TABLE_I",
    "TABLE_II",
    "TILE_SET",
    "BankShare",
    "CoBanker",
    "Door",
    "DoorResult",
    "Hand",
    "Outcome",
    "PaiGowRules",
    "Pair",
    "PairClass",
    "RoundSettlement",
    "SettingCheck",
    "Tile",
    "TileParseError",
    "all_combinations",
    "classify",
    "correct_setting",
    "deal",
    "deal_order",
    "door_order",
    "first_hand_from_dice",
    "format_tiles",
    "hand_outcome",
    "legal_settings",
    "normalise",
    "parse_deal",
    "parse_tiles",
    "ruleset",
    "second_round_stake",
    "set_hand",
    "setting_key",
    "settle_round",
    "tile_from_pips",
]
