"""The words the console reads once, at sign-in (`GET /api/console`): the game's phases and
inputs, the articles' short texts, roles, results and training's operations, and Pai Gow's tile
set the dealer picks a hand's tiles from. Every name is the game data's or the rules engine's;
the state's own explanations (a seat's result, the deal's progress) are the table's
(`daemon.table.publish.explain`).
"""

from __future__ import annotations

import re
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
from daemon.rules.paigow import TABLE_I, TILE_SET
from daemon.rules.paigow.tiles import CIVIL_NAMES, NAMES_HANT_EN
from daemon.trace.catalogue import ARTICLES
from daemon.training import OP_NAMES


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
