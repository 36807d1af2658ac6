"""`tabled rules paigow`: the Taiwan Pai Gow rules engine for labs, JSON lines in and out.

    classify  {"tiles": "天牌 杂九"}                      -> the pair's class and Table II row
    set       {"tiles": "天 杂九 地 人"}                  -> the setting of Art. 6(2)
    outcome   {"banker": ["人 人", "天 天"], "player": "梅 梅 地 地"}
                                                          -> banker | player | push (Art. 6(3))
    settle    {"banker": ..., "banker_stake": 500, "doors": [{"hand": ..., "bet": 100}, ...],
               "co_bankers": [{"name": "house", "stake": 1000, "is_house": true}]}
    table     every class, strongest first, with its Table II row (--json, --markdown)

Tiles are names or pips (`6-6 4-5`), as a string or a list. A hand is four tiles (set by the
house way) or a list [front, back] of two pairs. Any field "id" is echoed back. A line that
cannot be read, or carries a field the command does not read, gets {"error": ..., "line": n}
naming the problem, and the stream goes on; the exit status is 1 if any line failed (the loop
is `daemon.rules.jsonlines`, shared with `tabled rules thirteen`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, BinaryIO

from daemon.rules.jsonlines import RequestError, refuse_unknown, serve
from daemon.rules.paigow.classes import CLASSES, PairClass, all_combinations, classify
from daemon.rules.paigow.hands import Hand, Pair, correct_setting, hand_outcome, set_hand
from daemon.rules.paigow.rulesets import RULESETS, PaiGowRules, ruleset
from daemon.rules.paigow.settlement import CoBanker, Door, RoundSettlement, settle_round
from daemon.rules.paigow.tiles import Tile, parse_deal


def _text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return " ".join(value)
    raise RequestError(f"{where}: expected tiles as a string or a list of strings")


def _field(request: dict[str, Any], key: str) -> Any:
    if key not in request:
        raise RequestError(f"missing field {key!r}")
    return request[key]


def _hand_texts(value: Any, where: str) -> list[str]:
    """One hand as its texts: four loose tiles (a string, or a list of four) or [front, back]."""
    if isinstance(value, list) and len(value) == 2:
        return [_text(value[0], f"{where} front"), _text(value[1], f"{where} back")]
    if isinstance(value, str) or (isinstance(value, list) and len(value) == 4):
        return [_text(value, where)]
    raise RequestError(f"{where}: expected four tiles or [front, back]")


def _to_hand(tiles: Sequence[Sequence[Tile]], where: str) -> tuple[Hand, bool]:
    """A hand from parsed groups, and whether it came set (two pairs) or as four loose tiles."""
    if len(tiles) == 2:
        front, back = tiles
        if len(front) != 2 or len(back) != 2:
            raise RequestError(f"{where}: each pair is two tiles, got {len(front)} and {len(back)}")
        return ((front[0], front[1]), (back[0], back[1])), True
    (loose,) = tiles
    if len(loose) != 4:
        raise RequestError(f"{where}: a hand is four tiles, got {len(loose)}")
    return set_hand(loose), False


def _parse_hands(named: Sequence[tuple[str, Any]]) -> list[tuple[Hand, bool]]:
    """Hands dealt from one set, so `杂九` in two hands names the two different nines."""
    layout = [(where, _hand_texts(value, where)) for where, value in named]
    groups = parse_deal([text for _, texts in layout for text in texts])
    hands = []
    position = 0
    for where, texts in layout:
        hands.append(_to_hand(groups[position : position + len(texts)], where))
        position += len(texts)
    return hands


def _class_json(pair: Pair | Sequence[Tile], pair_class: PairClass) -> dict[str, Any]:
    return {
        "tiles": [str(tile) for tile in pair],
        "names": [tile.name for tile in pair],
        "class": pair_class.name,
        "table_row": pair_class.table_row,
        "strength": pair_class.strength,
        "kind": pair_class.kind,
        "points": pair_class.points,
    }


def _hand_json(hand: Hand) -> dict[str, Any]:
    front, back = hand
    return {
        "front": _class_json(front, classify(*front)),
        "back": _class_json(back, classify(*back)),
    }


def do_classify(request: dict[str, Any], _: PaiGowRules) -> dict[str, Any]:
    (tiles,) = parse_deal([_text(_field(request, "tiles"), "tiles")])
    if len(tiles) != 2:
        raise RequestError(f"classify takes two tiles, got {len(tiles)}")
    return _class_json(tiles, classify(*tiles))


def do_set(request: dict[str, Any], _: PaiGowRules) -> dict[str, Any]:
    (tiles,) = parse_deal([_text(_field(request, "tiles"), "tiles")])
    if len(tiles) != 4:
        raise RequestError(f"set takes four tiles, got {len(tiles)}")
    return _hand_json(set_hand(tiles))


def _sign(banker: PairClass, player: PairClass) -> str:
    return "banker" if banker > player else "player" if banker < player else "tie"


def do_outcome(request: dict[str, Any], rules: PaiGowRules) -> dict[str, Any]:
    (banker, _), (player, player_was_set) = _parse_hands(
        [("banker", _field(request, "banker")), ("player", _field(request, "player"))]
    )
    correction = None
    if player_was_set:
        check = correct_setting(player, largest_back=rules.largest_back_required)
        player, correction = check.hand, check.correction
    # The banker's hand is opened smaller pair first as the croupier opens it (Art. 6(2)), and
    # re-set only under `correct_banker_setting`; the reply shows the hands as compared.
    banker_check = correct_setting(
        banker, largest_back=rules.correct_banker_setting and rules.largest_back_required
    )
    banker = banker_check.hand
    outcome = hand_outcome(banker, player)
    banker_json, player_json = _hand_json(banker), _hand_json(player)
    return {
        "outcome": outcome,
        "front": _sign(_opened(banker)[0], _opened(player)[0]),
        "back": _sign(_opened(banker)[1], _opened(player)[1]),
        "banker": banker_json | {"correction": banker_check.correction},
        "player": player_json | {"correction": correction},
    }


def _opened(hand: Hand) -> tuple[PairClass, PairClass]:
    first, second = classify(*hand[0]), classify(*hand[1])
    return (first, second) if first <= second else (second, first)


def _int(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RequestError(f"{where}: expected a whole number >= {minimum}, got {value!r}")
    return value


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise RequestError(f"{where}: expected a name")
    return value


def _names(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RequestError(f"{where}: expected a list of names")
    return frozenset(value)


def do_settle(request: dict[str, Any], rules: PaiGowRules) -> dict[str, Any]:
    doors_json = _field(request, "doors")
    if not isinstance(doors_json, list) or not all(isinstance(d, dict) for d in doors_json):
        raise RequestError("doors: expected a list of objects with 'hand' and 'bet'")
    for i, door in enumerate(doors_json):
        refuse_unknown(door, frozenset({"hand", "bet", "bettors"}), f"doors[{i}]: ")
    named = [("banker", _field(request, "banker"))]
    named += [(f"doors[{i}]", _field(door, "hand")) for i, door in enumerate(doors_json)]
    hands = _parse_hands(named)
    doors = [
        Door(
            hand,
            _int(_field(door, "bet"), f"doors[{i}].bet", 0),
            _names(door.get("bettors", []), f"doors[{i}].bettors"),
        )
        for i, (door, (hand, _)) in enumerate(zip(doors_json, hands[1:], strict=True))
    ]
    co_json = request.get("co_bankers", [])
    if not isinstance(co_json, list) or not all(isinstance(c, dict) for c in co_json):
        raise RequestError("co_bankers: expected a list of objects with 'name' and 'stake'")
    for i, co in enumerate(co_json):
        refuse_unknown(co, frozenset({"name", "stake", "is_house"}), f"co_bankers[{i}]: ")
    co_bankers = [
        CoBanker(
            _name(_field(co, "name"), f"co_bankers[{i}].name"),
            _int(_field(co, "stake"), f"co_bankers[{i}].stake", 1),
            co.get("is_house", False) is True,
        )
        for i, co in enumerate(co_json)
    ]
    stake = _int(_field(request, "banker_stake"), "banker_stake", 1)
    result = settle_round(hands[0][0], doors, stake, co_bankers=co_bankers, rules=rules)
    return _settlement_json(result)


def _settlement_json(result: RoundSettlement) -> dict[str, Any]:
    return {
        "banker": _hand_json(result.banker_hand) | {"correction": result.banker_correction},
        "doors": [
            {
                "door": door.door,
                "outcome": door.outcome,
                "bet": door.bet,
                "won": door.won,
                "lost": door.lost,
                "commission": door.commission,
                "net": door.net,
                "limited": door.limited,
                "correction": door.correction,
                "hand": _hand_json(door.hand),
            }
            for door in result.doors
        ],
        "bank_stake": result.bank_stake,
        "bank_result": result.bank_result,
        "shares": [
            {
                "name": share.name,
                "stake": share.stake,
                "result": share.result,
                "commission": share.commission,
                "net": share.net,
                "carried": share.carried,
            }
            for share in result.shares
        ],
        "commission": result.commission,
        "banker_new_stake": result.banker_new_stake,
    }


Handler = Callable[[dict[str, Any], PaiGowRules], dict[str, Any]]
HANDLERS: dict[str, Handler] = {
    "classify": do_classify,
    "set": do_set,
    "outcome": do_outcome,
    "settle": do_settle,
}
# The fields each command reads, besides "id".
FIELDS: dict[Handler, frozenset[str]] = {
    do_classify: frozenset({"tiles"}),
    do_set: frozenset({"tiles"}),
    do_outcome: frozenset({"banker", "player"}),
    do_settle: frozenset({"banker", "banker_stake", "doors", "co_bankers"}),
}


def stream(handler: Handler, rules: PaiGowRules, lines: Iterable[bytes], out: BinaryIO) -> int:
    """Answer each line under `rules`; the loop is `daemon.rules.jsonlines.serve`."""
    return serve(
        lambda request: handler(request, rules),
        lines,
        out,
        reads=FIELDS[handler] | {"id"} if handler in FIELDS else None,
        bare="tiles",
    )


def combinations_by_class() -> dict[str, Counter[str]]:
    """For each class name, how many of the 496 combinations form it, by faces."""
    found: dict[str, Counter[str]] = {c.name: Counter() for c in CLASSES}
    for a, b, pair_class in all_combinations():
        high, low = (a, b) if (a.rank, a.low) <= (b.rank, b.low) else (b, a)
        found[pair_class.name][f"{high}+{low}"] += 1
    return found


def _faces(counter: Counter[str]) -> str:
    return ", ".join(f"{faces}×{n}" if n > 1 else faces for faces, n in counter.items())


def render_table(style: str) -> str:
    found = combinations_by_class()
    lines: list[str] = []
    if style == "markdown":
        lines += [
            "| # | Table II row | class | combinations (faces × how many of the 496) |",
            "|---|---|---|---|",
        ]
    for position, pair_class in enumerate(CLASSES, start=1):
        row = pair_class.table_row
        faces = found[pair_class.name]
        if style == "json":
            lines.append(
                json.dumps(
                    {
                        "position": position,
                        "table_row": row,
                        "class": pair_class.name,
                        "strength": pair_class.strength,
                        "kind": pair_class.kind,
                        "points": pair_class.points,
                        "combinations": sum(faces.values()),
                        "faces": dict(faces),
                    },
                    ensure_ascii=False,
                )
            )
        elif style == "markdown":
            shown = str(row) if row is not None else "— (Art. 7(2))"
            lines.append(f"| {position} | {shown} | {pair_class.name} | {_faces(faces)} |")
        else:
            shown = str(row) if row is not None else "-"
            lines.append(f"{position}\t{shown}\t{pair_class.name}\t{_faces(faces)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled rules paigow",
        description="Taiwan Pai Gow (Macau 1990) rules for labs: JSON lines on stdin and stdout.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_ in (
        ("classify", "two tiles -> class and Table II row"),
        ("set", "four tiles -> the setting of Art. 6(2)"),
        ("outcome", "banker and player hands -> banker | player | push"),
        ("settle", "a round: banker, stake, doors in counter-clockwise order"),
    ):
        command = commands.add_parser(name, help=help_)
        command.add_argument("--rules", default="macau-1990", choices=sorted(RULESETS))
    table = commands.add_parser("table", help="every class in order with its Table II row")
    style = table.add_mutually_exclusive_group()
    style.add_argument("--json", dest="style", action="store_const", const="json")
    style.add_argument("--markdown", dest="style", action="store_const", const="markdown")
    args = parser.parse_args(argv)
    if args.command == "table":
        sys.stdout.write(render_table(args.style or "text"))
        return 0
    return stream(HANDLERS[args.command], ruleset(args.rules), sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
