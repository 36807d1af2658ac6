"""`tabled rules`: the rules engines for labs, JSON lines in and JSON lines out.

    tabled rules thirteen COMMAND    Thirteen cards (daemon.rules.thirteen.cli)
    tabled rules paigow COMMAND      Taiwan Pai Gow (daemon.rules.paigow.cli)

Both answer through one loop, `daemon.rules.jsonlines`: a line that cannot be read or answered
gets ``{"line": n, "error": "..."}`` naming the problem and the stream goes on; the exit status
is 1 if any line failed. docs/rules.md and docs/rules-paigow.md document every shape.
"""

from __future__ import annotations

import importlib
import sys

USAGE = """usage: tabled rules GAME COMMAND [--ruleset NAME] < requests.jsonl

games and commands:
  thirteen rank        rank a 3-card head or a 5-card row
  thirteen settle      settle a player against the banker (or 2-4 players, hk-points)
  thirteen house-way   the banker's arrangement of 13 cards
  thirteen rulesets    the rule sets and their settings
  paigow ...           Taiwan Pai Gow: `tabled rules paigow --help`

JSON lines in, JSON lines out; see docs/rules.md."""

GAMES = {"thirteen": "daemon.rules.thirteen.cli", "paigow": "daemon.rules.paigow.cli"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(USAGE)
        return 0
    game, rest = argv[0], argv[1:]
    if game not in GAMES:
        print(f"tabled rules: unknown game {game!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    # Only the game asked for is imported (each loads its own tables).
    result: int = importlib.import_module(GAMES[game]).main(rest)
    return result
