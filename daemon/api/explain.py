"""What the console shows so that a screen explains itself: how far the deal is, why a settled
seat won or lost (Thirteen: a foul, each row's winner and the hands' names; Pai Gow: the pairs,
their classes, a hand the house re-set, the commission and the bank after the round), and the
tile set the dealer picks a hand's tiles from. Every name is the rules engine's
(daemon/rules/*): this module only arranges them for `daemon.api.views.console_snapshot`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from daemon.procedures.common import (
    HOUSE_DEVICE,
    HOUSE_DICE,
    HOUSE_FAULTS,
    HOUSE_OVERRIDE,
    HOUSE_ROLES,
    HOUSE_VOID,
)
from daemon.procedures.games import GAMES
from daemon.rules.paigow import TABLE_I, TILE_SET, classify, parse_tiles
from daemon.rules.paigow.tiles import CIVIL_NAMES, NAMES_HANT_EN
from daemon.rules.thirteen.ranking import CATEGORY_NAMES_HANT_EN
from daemon.trace.catalogue import ARTICLES
from daemon.training import OP_NAMES

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


def tile_set() -> list[dict[str, Any]]:
    """The 32-tile set by Table I's ranks, largest first: each face once, with its names and
    how many of it one set holds (the console draws its pips and counts what is placed)."""
    out = []
    for rank, (name, faces) in enumerate(TABLE_I, start=1):
        zh, en = NAMES_HANT_EN[name]
        for low, high in faces:
            copies = sum(1 for t in TILE_SET if (t.low, t.high) == (low, high))
            out.append(
                {
                    "face": f"{low}-{high}",
                    "pips": [low, high],
                    "name": label(zh, en),
                    "rank": rank,
                    "copies": copies,
                    "civil": name in CIVIL_NAMES,
                }
            )
    return out


def tile_name(face: str) -> dict[str, str] | None:
    """A tile's Table I name ("6-6": 天牌 Heaven), None for what is not one tile."""
    try:
        tiles = parse_tiles(face)
    except ValueError:
        return None
    if len(tiles) != 1:
        return None
    zh, en = NAMES_HANT_EN[tiles[0].name]
    return label(zh, en)


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


# --- the words the console reads once, at sign-in (`GET /api/console`) -------------------------

ROLE_NAMES = {
    "dealer": ("荷官", "dealer"),
    "supervisor": ("主任", "supervisor"),
    "surveillance": ("監控", "surveillance"),
    "admin": ("管理員", "admin"),
    "trainer": ("訓練員", "trainer"),
    "pit": ("賭區主任", "pit"),
    "audit": ("稽核", "audit"),
}
# A settled seat's result (`views._seat_results`), as the seat shows it.
RESULT_NAMES = {
    "win": ("贏", "win"),
    "lose": ("輸", "lose"),
    "push": ("和", "push"),
    "foul": ("相公", "foul"),
    "late": ("逾時", "late at the bell"),
    "banker": ("莊勝", "banker wins"),
    "player": ("閒勝", "player wins"),
    "tie": ("和", "tie"),
}
# The zh text of a refusal's article is the regulation's own, cut to its first clause.
SHORT_TEXT = 48


def _short(text: str) -> str:
    first = text.split("；", maxsplit=1)[0].split("。", maxsplit=1)[0]
    return first if len(first) <= SHORT_TEXT else first[: SHORT_TEXT - 1] + "…"


# The house rules the procedures cite beside the regulations (daemon/procedures/common.py), in
# the dealer's other language.
HOUSE_RULES_ZH = {
    HOUSE_FAULTS: "故障未經主任解除前，停止遊戲",
    HOUSE_ROLES: "每個動作只屬一個角色；未知動作一律拒絕",
    HOUSE_DICE: "骰子結果無效須重搖；連續三次即故障停機",
    HOUSE_OVERRIDE: "更正由荷官提出，主任附原因決定",
    HOUSE_VOID: "已知牌後作廢，須一名主任提出、另一名主任批准，各附原因",
    HOUSE_DEVICE: "設備只報告自身的事實",
}


def articles(game: str) -> dict[str, dict[str, str]]:
    """Each article of the game's regulation, by its citation ("Portaria 51/89/M Art. 2(d)"):
    its text in short (zh: the regulation's first clause; en: the catalogue's gloss), for a
    refusal to say what it breaks in words (daemon/trace/catalogue.py)."""
    found = {
        a.citation: label(_short(a.text), a.gloss)
        for a in ARTICLES
        if a.game == game or (game == "thirteen" and a.citation.startswith("003"))
    }
    # An action may cite an article whole ("Art. 1") or a run of them ("Art. 7-11", "Art.
    # 5(3), 6(3), 8") where the catalogue has its paragraphs: the first paragraph speaks.
    declared = GAMES.get(game)
    for action in declared.actions.values() if declared is not None else ():
        cited = action.article
        if cited in found or cited in HOUSE_RULES_ZH:
            continue
        head = re.split(r"[-,]", cited, maxsplit=1)[0].strip()
        first = next((c for c in found if c == head or c.startswith(head + "(")), None)
        if first is not None:
            found[cited] = found[first]
    for cited, zh in HOUSE_RULES_ZH.items():
        en = cited.split("(", 1)[1].rstrip(")") if "(" in cited else cited
        found[cited] = label(zh, en)
    return found


def console_data(game: str) -> dict[str, Any]:
    """The game's words for the console: its phases, every input (the people's, the
    devices', the clock's), the articles' short texts, roles and results. The console keeps
    no table of its own (issue 23: its fallback tables drifted from the game data)."""
    declared = GAMES.get(game)
    phases = {}
    inputs = {}
    if declared is not None:
        phases = {n: label(t.label_zh, t.label_en) for n, t in declared.phases.items()}
        inputs = {
            n: {**label(a.label_zh or n, a.label_en or n.replace("_", " ")), "article": a.article}
            for n, a in declared.actions.items()
        }
    return {
        "phases": phases,
        "inputs": inputs,
        "articles": articles(game),
        "roles": {k: label(*v) for k, v in ROLE_NAMES.items()},
        "results": {k: label(*v) for k, v in RESULT_NAMES.items()},
        "training_ops": {k: label(*v) for k, v in OP_NAMES.items()},
    }
