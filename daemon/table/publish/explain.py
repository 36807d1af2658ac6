"""What the table's state says so that a screen explains itself: how far the deal is, why a
settled seat won or lost (Thirteen: a foul, each row's winner and the hands' names; Pai Gow: the
pairs, their classes, a hand the house re-set, the commission and the bank after the round).
Every name is the rules engine's (daemon/rules/*): this module only arranges them for
`daemon.table.publish.views.console_snapshot`. The words the console reads once, at sign-in,
are the API's (`daemon.api.explain`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from daemon.rules.paigow import classify, parse_tiles
from daemon.rules.thirteen.ranking import CATEGORY_NAMES_HANT_EN

DECK = 52
THIRTEEN_ROWS = ("head", "middle", "tail")
ROW_NAMES = {"head": ("頭道", "head"), "middle": ("中道", "middle"), "tail": ("尾道", "tail")}
FOUL = {"zh": "相公（倒水）", "en": "foul"}
WINNERS = {
    "banker": {"zh": "莊", "en": "banker"},
    "player": {"zh": "閒", "en": "player"},
    "tie": {"zh": "和", "en": "tie"},
}


def label(zh: str, en: str) -> dict[str, str]:
    return {"zh": zh, "en": en}


def pair_class(pair: Sequence[str]) -> dict[str, Any] | None:
    """A two-tile pair's Table II class (至尊宝, 天九皇, 地牌八...), None when it is not two
    known tiles (a hand not opened)."""
    try:
        tiles = parse_tiles(" ".join(pair))
    except ValueError:
        return None
    if len(tiles) != 2:
        return None
    found = classify(tiles[0], tiles[1])
    en = f"Table II row {found.table_row}" if found.table_row else found.kind
    if found.points is not None:
        en = f"{found.points} points ({en})"
    return {"zh": found.name, "en": en, "row": found.table_row}


def progress(snapshot: Mapping[str, Any]) -> dict[str, Any] | None:
    """How far the deal is: Thirteen's cards read of 52, Pai Gow's doors dealt of the hands."""
    if snapshot.get("game") == "paigow":
        hands = snapshot.get("hands")
        if not isinstance(hands, int):
            return None
        doors = snapshot.get("dealt_doors") or []
        return {"kind": "doors", "done": len(doors), "total": hands}
    dealt = snapshot.get("dealt")
    if not isinstance(dealt, list):
        return None
    return {"kind": "cards", "done": len(dealt), "total": DECK}


def _hand_name(category: Any) -> dict[str, str]:
    zh, en = CATEGORY_NAMES_HANT_EN.get(str(category), (str(category), str(category)))
    return label(zh, en)


def thirteen_detail(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Why a settled Thirteen seat won or lost, from its bets' settlement (one comparison with
    the banker's hand, the same for every bet on the seat)."""
    if not entries:
        return None
    first = entries[0]
    if first.get("late"):
        return {"late": True, "foul": None, "rows": [], "special": None}
    rules = first.get("rules")
    if not isinstance(rules, Mapping):
        return None
    rows = []
    for row in rules.get("rows") or []:
        if not isinstance(row, Mapping):
            continue
        zh, en = ROW_NAMES.get(str(row.get("row")), (str(row.get("row")), str(row.get("row"))))
        rows.append(
            {
                "row": row.get("row"),
                "label": label(zh, en),
                "winner": WINNERS.get(str(row.get("winner")), label("", str(row.get("winner")))),
                "units": row.get("units"),
                "banker": _hand_name(row.get("banker")),
                "player": _hand_name(row.get("player")),
            }
        )
    foul = rules.get("foul")
    who = {"player": ("閒家", "the player"), "banker": ("莊家", "the banker")}
    fouled = None
    if foul == "both":
        fouled = label("莊閒皆" + FOUL["zh"], "both fouled")
    elif isinstance(foul, str) and foul in who:
        fouled = label(who[foul][0] + FOUL["zh"], f"{who[foul][1]} fouled")
    special = rules.get("special") or rules.get("player_special") or rules.get("banker_special")
    return {
        "late": False,
        "foul": fouled,
        "rows": rows,
        "special": label(str(special), "special hand") if special else None,
        "commission": rules.get("commission"),
    }


def _pairs(hand: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("front", "back"):
        tiles = [str(t) for t in hand.get(key) or []]
        out[key] = tiles
        out[f"{key}_class"] = pair_class(tiles)
    return out


def paigow_detail(door: Mapping[str, Any], reset: bool = False) -> dict[str, Any]:
    """A settled Pai Gow door: its pairs with their classes, the house's re-set when there was
    one (Art. 6(2): `reset_hand`, or the rule set's own correction), won, lost and the
    commission (Art. 8)."""
    correction = door.get("correction")
    return {
        **_pairs(door),
        "corrected": reset or correction is not None,
        "correction": correction,
        "won": door.get("won"),
        "lost": door.get("lost"),
        "commission": door.get("commission"),
        "limited": bool(door.get("limited")),
    }


def paigow_bank(settlement: Any) -> dict[str, Any] | None:
    """The bank after a Pai Gow round: its stake, result, commission and what it carries into
    the next round (Art. 5(3)-(4), 8), with the co-bankers' shares (Art. 5(5))."""
    if not isinstance(settlement, Mapping):
        return None
    hand = settlement.get("banker_hand")
    return {
        "hand": _pairs(hand) if isinstance(hand, Mapping) else None,
        "stake": settlement.get("bank_stake"),
        "result": settlement.get("bank_result"),
        "commission": settlement.get("banker_commission"),
        "net": settlement.get("banker_net"),
        "carried": settlement.get("banker_carried"),
        "rate": settlement.get("commission"),
        "co_bankers": list(settlement.get("co_bankers") or []),
    }
