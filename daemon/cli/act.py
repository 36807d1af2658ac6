"""`tabled act ACTION [key=value ...]`: ask the table to take a step through the operator API
(daemon/cli/client.py). `tabled act ACTION --help`: one action as the game declares it
(daemon/procedures/spec.py, each game's `game.py`): what it is, who takes it, in which phases,
the article, and each parameter with its kind, bounds and label, the same declarations the
table checks a request by.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from collections.abc import Sequence
from typing import Any

from daemon.cli.client import (
    ClientError,
    api_from,
    common_options,
    exit_code,
    print_json,
    run,
)
from daemon.procedures.diagram import describe, procedure_of
from daemon.procedures.games import GAMES
from daemon.safetext import safe, safe_lines


def parse_assignment(text: str) -> tuple[str, Any]:
    """`key=value`: the value is JSON when it parses (2, true, [1,2], "2"), else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ClientError(-2, f"{text!r}: expected key=value")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def actions_help() -> str:
    """Each game's operator actions with their parameters, from the games' declarations (the
    same the table checks a request with); `tabled status` says which are legal now."""
    lines = []
    for game in GAMES.values():
        lines.append(f"{game.name} ({game.regulation}):")
        for name, action in game.actions.items():
            if not action.operator or action.params is None:
                continue
            params = " ".join(f"{k}=<{describe(p)}>" for k, p in action.params.items())
            reason = " --reason TEXT" if action.requires_reason else ""
            lines.append(f"  {name} {params}{reason}".rstrip() + f"  ({action.label_en})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """`tabled act ACTION [key=value ...]`: ask the table to take a step, as you."""
    words = list(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(words) and words and not words[0].startswith("-"):
        described = action_help(words[0])
        if described is not None:
            print(described)
            return 0
    parser = argparse.ArgumentParser(
        prog="tabled act",
        description=main.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="e.g. tabled act place_bet player=P1 seat=2 units=1 seated=true;\n"
        "     tabled act clear_hold --reason 'lid closed, count 52'\n"
        + (
            "\nactions (`<kind?>` optional, `×N` a list of N):\n" + actions_help()
            if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv)
            else ""
        ),
    )
    parser.add_argument("action")
    parser.add_argument("params", nargs="*", metavar="key=value")
    parser.add_argument("--reason", help="required for supervisor actions; journaled")
    parser.add_argument("--request-id", help="repeat safely: the table acts once per id")
    common_options(parser)
    args = parser.parse_args(argv)

    def work() -> int:
        payload = dict(parse_assignment(p) for p in args.params)
        body: dict[str, Any] = {"payload": payload}
        if args.reason is not None:
            body["reason"] = args.reason
        if args.request_id is not None:
            body["request_id"] = args.request_id
        api = api_from(args)
        status, content = api.request(
            "POST", "/api/actions/" + urllib.parse.quote(args.action, safe=""), body
        )
        if args.json:
            print_json({"status": status, **content})
        elif status == 200:
            print(
                safe(
                    f"accepted: {args.action} by {content.get('actor')}"
                    f" (seq {content.get('seq')}, now {content.get('phase')})"
                )
            )
        elif status == 409:
            print(f"refused: {safe(content.get('message'))}", file=sys.stderr)
        else:
            print(f"tabled: {safe_lines(api.refusal(status, content))}", file=sys.stderr)
        return 0 if status == 200 else exit_code(status)

    return run(work)


def action_help(name: str) -> str | None:
    """The help of the operator action `name` in each game that has it; None if none does."""
    blocks = []
    for game in GAMES.values():
        action = game.actions.get(name)
        if action is None or not action.operator or action.params is None:
            continue
        phases = [p for p, a in procedure_of(game.name).transition_pairs() if a == name]
        order = list(game.phases)
        phases.sort(key=lambda p: order.index(p) if p in order else len(order))
        lines = [
            f"{game.name} ({game.regulation}): {name}: {action.label_en} / {action.label_zh}",
            f"  {action.summary}; {action.article}",
            f"  taken by: {', '.join(sorted(action.roles))}",
            f"  legal in: {', '.join(phases) if len(phases) < len(order) else 'every phase'}",
        ]
        if action.params:
            lines.append("  parameters (key=value; `?` optional):")
            width = max(len(k) for k in action.params)
            for key, param in action.params.items():
                label = f"{param.label_en} / {param.label_zh}" if param.label_en else ""
                cited = f" ({param.article})" if param.article else ""
                lines.append(f"    {key:<{width}}  {describe(param):<22} {label}{cited}".rstrip())
        else:
            lines.append("  parameters: none")
        if action.requires_reason:
            lines.append("  --reason TEXT is required (journaled with the step)")
        example = [f"{k}=…" for k, p in (action.params or {}).items() if p.required]
        example += ["--reason '…'"] if action.requires_reason else []
        lines.append("  e.g. " + " ".join(["tabled act", name, *example]))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) or None
