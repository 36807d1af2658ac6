"""`tabled rules thirteen`: Thirteen cards for labs, JSON lines in and JSON lines out.

    rank       {"cards": "As Ks Qs Js Ts"}
    settle     {"banker": {"head": ..., "middle": ..., "tail": ...},
                "player": ["2c 3d 5h", "...", "..."], "bet": 1}
               or, for hk-points, {"players": [hand, hand, hand, hand]}
    house-way  {"cards": "13 cards"}
    rulesets   every rule set and its settings, one JSON line each

Cards are a string (``"As Kd Th 10c 9♠"``) or a list of card strings. Every request may name
``"ruleset"`` and ``"settings"`` (RuleSet fields, e.g. ``{"tie_break": "top-card"}``); the
``--ruleset`` option gives the default. The loop (errors, ids, blank lines) is
`daemon.rules.jsonlines`; docs/rules.md documents every shape.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

from daemon.rules import thirteen
from daemon.rules.cards import Card, CardError, format_cards, parse_cards
from daemon.rules.jsonlines import RequestError, serve
from daemon.rules.thirteen import RuleSet

Handler = Callable[[dict[str, Any], RuleSet], dict[str, Any]]


def _cards(value: Any, where: str) -> tuple[Card, ...]:
    if isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        try:
            return parse_cards(value)
        except CardError as error:
            raise RequestError(f"{where}: {error}") from None
    raise RequestError(f"{where}: cards are a string or a list of strings, not {value!r}")


def _hand(value: Any, where: str) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
    if isinstance(value, dict):
        missing = [row for row in ("head", "middle", "tail") if row not in value]
        if missing:
            raise RequestError(f"{where}: missing {', '.join(missing)}")
        rows = [value["head"], value["middle"], value["tail"]]
    elif isinstance(value, list) and len(value) == 3:
        rows = value
    else:
        raise RequestError(f"{where}: a hand is {{head, middle, tail}} or a list of three rows")
    head, middle, tail = (
        _cards(row, f"{where}.{name}")
        for row, name in zip(rows, ("head", "middle", "tail"), strict=True)
    )
    return head, middle, tail


def _rank_json(rank: thirteen.HandRank) -> dict[str, Any]:
    return {
        "category": rank.category,
        "category_zh": rank.category_zh,
        "value": rank.value,
        "ranks": list(rank.ranks),
    }


def do_rank(request: dict[str, Any], _: RuleSet) -> dict[str, Any]:
    if "cards" not in request:
        raise RequestError('missing "cards"')
    cards = _cards(request["cards"], "cards")
    return {"cards": format_cards(cards), **_rank_json(thirteen.rank(cards))}


def do_settle(request: dict[str, Any], rules: RuleSet) -> dict[str, Any]:
    if "players" in request:
        players = request["players"]
        if not isinstance(players, list):
            raise RequestError('"players" is a list of hands')
        hands = [_hand(hand, f"players[{i}]") for i, hand in enumerate(players)]
        table = thirteen.table_points(hands, rules)
        return {
            "ruleset": rules.name,
            "points": [_number(p) for p in table.points],
            "shots": [list(shot) for shot in table.shots],
            "home_run": table.home_run,
            "pairs": [
                {"seats": [i, j], **result.to_json()} for (i, j), result in table.pairs.items()
            ],
        }
    for side in ("banker", "player"):
        if side not in request:
            raise RequestError(f'missing "{side}"')
    bet = request.get("bet", 1)
    if isinstance(bet, bool) or not isinstance(bet, int):
        raise RequestError(f'"bet" is a whole number of units, not {bet!r}')
    banker, player = _hand(request["banker"], "banker"), _hand(request["player"], "player")
    return thirteen.settle(banker, player, rules, bet=bet).to_json()


def _number(value: Any) -> int | str:
    """An exact number: an int when whole, else a fraction as text ("20/3")."""
    return int(value) if value == int(value) else str(value)


def do_house_way(request: dict[str, Any], rules: RuleSet) -> dict[str, Any]:
    if "cards" not in request:
        raise RequestError('missing "cards"')
    head, middle, tail = thirteen.house_way(_cards(request["cards"], "cards"), rules)
    return {
        "ruleset": rules.name,
        "head": format_cards(head),
        "middle": format_cards(middle),
        "tail": format_cards(tail),
        "ranks": {
            name: thirteen.rank(row).category
            for name, row in (("head", head), ("middle", middle), ("tail", tail))
        },
        "special": thirteen.special_hand(head, middle, tail, rules),
    }


HANDLERS: dict[str, Handler] = {"rank": do_rank, "settle": do_settle, "house-way": do_house_way}
# The fields each command reads, besides "id", "ruleset" and "settings": any other is refused,
# so a misspelt "setings" or "bets" cannot silently settle under the defaults.
FIELDS: dict[Handler, frozenset[str]] = {
    do_rank: frozenset({"cards"}),
    do_settle: frozenset({"banker", "player", "bet", "players"}),
    do_house_way: frozenset({"cards"}),
}
COMMON_FIELDS = frozenset({"id", "ruleset", "settings"})


def _rules(request: dict[str, Any], default: RuleSet) -> RuleSet:
    name = request.get("ruleset", default)
    settings = request.get("settings", {})
    if not isinstance(name, str | RuleSet):
        raise RequestError(f'"ruleset" is a name, not {name!r}')
    if not isinstance(settings, dict):
        raise RequestError('"settings" is an object of rule settings')
    return thirteen.ruleset(name, **settings)


def stream(handler: Handler, lines: Iterable[bytes], out: BinaryIO, default: RuleSet) -> int:
    """Answer each line under its own rule set (`default` unless it names one)."""
    return serve(
        lambda request: handler(request, _rules(request, default)),
        lines,
        out,
        reads=FIELDS[handler] | COMMON_FIELDS if handler in FIELDS else None,
        bare="cards",
    )


def _rulesets_json() -> list[dict[str, Any]]:
    result = []
    for rules in thirteen.RULESETS.values():
        result.append(
            {
                "name": rules.name,
                "source": rules.source,
                "scoring": rules.scoring,
                "tie_break": rules.tie_break,
                "row_tie": rules.row_tie,
                "equal_rows_foul": rules.equal_rows_foul,
                "foul_voids_special": rules.foul_voids_special,
                "units": {row: dict(table) for row, table in rules.units.items()},
                "specials": dict(rules.specials),
                "both_special": rules.both_special,
                "both_foul": rules.both_foul,
                "bets": list(rules.bets) if rules.bets is not None else None,
                "prize": rules.prize,
                "commission": str(rules.commission),
                "stakes": rules.stakes,
                "points_per_unit": rules.points_per_unit,
                "bonus": {row: dict(table) for row, table in rules.bonus.items()},
                "shoot_multiplier": rules.shoot_multiplier,
                "home_run_multiplier": rules.home_run_multiplier,
                "excluded_head_runs": sorted(sorted(run) for run in rules.excluded_head_runs),
            }
        )
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled rules thirteen",
        # The module's text keeps its layout: one request shape a line, as docs/rules.md has them.
        description=(__doc__ or "").replace("`tabled rules thirteen`: ", "", 1),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='e.g. echo \'{"cards": "As Ks Qs Js Ts"}\' | tabled rules thirteen rank',
    )
    parser.add_argument(
        "command", choices=[*HANDLERS, "rulesets"], help="what each stdin line asks (above)"
    )
    parser.add_argument("--ruleset", default="macau-1989", choices=sorted(thirteen.RULESETS))
    args = parser.parse_args(argv)
    out = sys.stdout.buffer
    if args.command == "rulesets":
        for line in _rulesets_json():
            out.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
        out.flush()
        return 0
    return stream(HANDLERS[args.command], sys.stdin.buffer, out, thirteen.ruleset(args.ruleset))
