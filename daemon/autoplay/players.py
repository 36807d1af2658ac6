"""How the scripted players arrange their cards and set their tiles: mostly the house way, some
foul or wrongly set on purpose."""

from __future__ import annotations

from daemon.rules import paigow
from daemon.rules import thirteen as rules13
from daemon.rules.cards import parse_card

Rows = tuple[list[str], list[str], list[str]]


def house_way13(cards: list[str]) -> Rows:
    head, middle, tail = rules13.house_way([parse_card(c) for c in cards])
    return [str(c) for c in head], [str(c) for c in middle], [str(c) for c in tail]


def foul_rows(cards: list[str]) -> Rows:
    """The house way turned upside down: the strongest row at the head (mostly a foul)."""
    head, middle, tail = house_way13(cards)
    return tail[:3], middle, head + tail[3:]


def rows_payload(rows: Rows) -> dict[str, list[str]]:
    return {"head": rows[0], "middle": rows[1], "tail": rows[2]}


def good_setting(tiles4: list[str]) -> dict[str, str]:
    front, back = paigow.set_hand(paigow.parse_tiles(" ".join(tiles4)))
    return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}


def bad_setting(tiles4: list[str]) -> dict[str, str] | None:
    """A setting the croupier must re-set (Art. 6(2)), when the four tiles allow one."""
    a, b, c, d = paigow.parse_tiles(" ".join(tiles4))
    for front, back in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
        for hand in ((front, back), (back, front)):
            if paigow.correct_setting(hand).correction == "back_not_largest":
                return {"front": " ".join(map(str, hand[0])), "back": " ".join(map(str, hand[1]))}
    return None
