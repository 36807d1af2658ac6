"""A journal line as the floor page says it: a short sentence in both languages, from the game's
own data, never raw event names and JSON.

The sentence is the event's label (the game's declared events: `Game.events`, the same labels the
dealer console shows), then what the payload says in words: who, which seat or door, how much,
the dice, the device and its fault, the action refused and the phase (by their labels in the
game's declaration), the article and the reason. A card or tile the reader may not see arrives
here as the redaction left it (`hidden`) and is said as face down. Payload keys without words
here (checkpoints' snapshots, a settlement's detail) are left out: the drill-down's raw line is
for admin and audit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from daemon.procedures.games import GAMES
from daemon.procedures.spec import HIDDEN, Game

# The devices by the names the journal gives them (config [devices.NAME]).
DEVICES = {
    "shuffler": ("洗牌機", "shuffler"),
    "dice_shaker": ("骰盅", "dice shaker"),
    "shoe_reader": ("牌靴讀牌器", "shoe reader"),
    "timer_bell": ("計時鐘", "timer bell"),
}


def _games(game: str | None) -> list[Game[Any]]:
    """The game's declaration first, then the others (a line before `table.started` says no
    game; the shared events are declared alike in both)."""
    first = GAMES.get(game or "")
    return (
        [first, *(g for g in GAMES.values() if g is not first)] if first else list(GAMES.values())
    )


def _event_label(games: Sequence[Game[Any]], event: str) -> tuple[str, str]:
    for spec in games:
        declared = getattr(spec, "events", None) or {}
        if event in declared:
            return declared[event].label_zh, declared[event].label_en
    # A table older than the declarations, or a name no game declares: its words, not its code.
    words = event.replace(".", " ").replace("_", " ")
    return words, words[:1].upper() + words[1:]


def _action_label(games: Sequence[Game[Any]], action: str) -> tuple[str, str]:
    for spec in games:
        declared = spec.actions.get(action)
        if declared is not None and (declared.label_en or declared.label_zh):
            return declared.label_zh or declared.label_en, declared.label_en or action
    return action, action.replace("_", " ")


def _phase_label(games: Sequence[Game[Any]], phase: str) -> tuple[str, str]:
    for spec in games:
        if phase in spec.phases:
            text = spec.phase_text(phase)
            return text.label_zh, text.label_en
    return phase, phase


def _cards(value: Any) -> tuple[str, str] | None:
    """A card or tile, or a list of them, as shown: the hidden ones counted as face down."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(c, str) for c in items):
        return None
    shown = [c for c in items if c != HIDDEN]
    down = len(items) - len(shown)
    if not shown:
        return ("暗牌", "face down") if down == 1 else (f"{down}張暗牌", f"{down} face down")
    zh = " ".join(shown) + (f"（{down}張暗牌）" if down else "")
    en = " ".join(shown) + (f"{' ' if shown else ''}({down} face down)" if down else "")
    return zh.strip(), en.strip()


def _details(games: Sequence[Game[Any]], payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    who = payload.get("player") or payload.get("bettor")
    if isinstance(who, str):
        parts.append((who, who))
    for key, zh, en in (("seat", "第{}門", "seat {}"), ("door", "第{}門", "door {}")):
        value = payload.get(key)
        if isinstance(value, int | str) and not isinstance(value, bool) and value != "":
            parts.append((zh.format(value), en.format(value)))
    units = payload.get("units")
    if isinstance(units, int) and not isinstance(units, bool):
        parts.append((f"{units}注", f"{units} unit{'s' if units != 1 else ''}"))
    amount = payload.get("amount")
    if isinstance(amount, int | float | str) and not isinstance(amount, bool):
        parts.append((f"金額 {amount}", f"amount {amount}"))
    for key in ("card", "tile", "cards", "tiles"):
        said = _cards(payload.get(key))
        if said is not None:
            zh = said[0] if "暗牌" in said[0] and not said[0][0].isascii() else f"牌 {said[0]}"
            parts.append((zh, f"{key} {said[1]}"))
    dice = payload.get("dice")
    if isinstance(dice, list) and dice and all(isinstance(d, int) for d in dice):
        shown = " ".join(str(d) for d in dice)
        parts.append((f"骰子 {shown}", f"dice {shown} (total {sum(dice)})"))
    device = payload.get("device")
    if isinstance(device, str):
        parts.append(DEVICES.get(device, (device, device.replace("_", " "))))
    fault = payload.get("fault")
    if isinstance(fault, str):
        parts.append((f"故障 {fault}", f"fault {fault.replace('_', ' ')}"))
    action = payload.get("action")
    if isinstance(action, str):
        zh, en = _action_label(games, action)
        parts.append((zh, en))
    phase = payload.get("phase")
    if isinstance(phase, str):
        zh, en = _phase_label(games, phase)
        parts.append((f"於{zh}", f"in {en}"))
    settled = payload.get("settlement")
    if isinstance(settled, list):
        parts.append((f"{len(settled)}注已結算", f"{len(settled)} bet(s) settled"))
    article = payload.get("article")
    if isinstance(article, str):
        parts.append((article, article))
    reason = payload.get("reason")
    if isinstance(reason, str) and reason:
        parts.append((f"原因：{reason}", f"because {reason}"))
    return parts


def sentence(game: str | None, event: str, payload: Mapping[str, Any]) -> dict[str, str]:
    """`{"zh": ..., "en": ...}`: the line as the page says it."""
    games = _games(game)
    action = payload.get("action")
    if event == "table.input" and isinstance(action, str):
        # An input the table took: said by its action's label, with what it was given (the
        # console's journal says it so too), not "Input: ...".
        label_zh, label_en = _action_label(games, action)
        given = payload.get("payload")
        parts = _details(games, given) if isinstance(given, Mapping) else []
    else:
        label_zh, label_en = _event_label(games, event)
        parts = _details(games, payload)
    zh = label_zh + ("：" + "，".join(p[0] for p in parts) if parts else "")
    en = label_en + (": " + ", ".join(p[1] for p in parts) if parts else "")
    return {"zh": zh, "en": en}


# What `_details` reads of a payload: a sentence (not of a `table.input`) is a function of these,
# its game and its event (test_said_memo reads `_details` to keep this list whole).
SAID_KEYS = ("player", "bettor", "seat", "door", "units", "amount", "card", "tile", "cards",
             "tiles", "dice", "device", "fault", "action", "phase", "settlement", "article",
             "reason")  # fmt: skip


def said_memo(
    memo: dict[Any, dict[str, str]], game: str | None, event: str, payload: Mapping[str, Any]
) -> dict[str, str]:
    """`sentence`, remembered in `memo` by what it reads: a list of 5,000 violations says a few
    dozen sentences (its articles, actions, phases and reasons), each made once."""
    if event == "table.input":
        return sentence(game, event, payload)
    key = (game, event, *(payload.get(k) for k in SAID_KEYS))
    try:
        said = memo.get(key)
    except TypeError:  # a list (cards, dice): said as it is
        return sentence(game, event, payload)
    if said is None:
        said = memo[key] = sentence(game, event, payload)
    return dict(said)


def phase_said(game: str | None, phase: str | None) -> dict[str, str] | None:
    """A phase by its name in the game's declaration, `{"zh", "en"}` (None: no phase yet)."""
    if not phase:
        return None
    zh, en = _phase_label(_games(game), phase)
    return {"zh": zh, "en": en}
