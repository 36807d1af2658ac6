"""`tabled trace`: each article, what it requires, its guards, its tests and its status.

    tabled trace                      Markdown on stdout (both games)
    tabled trace --game paigow        one game (Thirteen includes the Hong Kong ways of 003)
    tabled trace --json               a JSON list: article, text, guards, tests, status, ...
    tabled trace -o docs/traceability.md

Tests are read from the tests/ of a source checkout; an installed wheel has none, and the
output says "not available" (JSON: "tests": null) instead of an empty list.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from daemon.cli_progress import Progress
from daemon.trace.guards import scan
from daemon.trace.marks import marked_tests, tests_dir
from daemon.trace.report import GAMES, markdown, trace


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabled trace",
        description="Each article of the regulations: what it requires (quoted), the guards "
        "that enforce it, the tests that prove it, and its status.",
    )
    parser.add_argument("--game", choices=GAMES, help="one game only (default: both)")
    parser.add_argument("--json", action="store_true", help="a JSON list instead of Markdown")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # a bad option: usage on stderr, exit 2
    try:
        with Progress("trace", 3, unit=" steps") as bar:
            units = scan()  # the guards, from the source
            bar.advance()
            folder = tests_dir()
            tests = None if folder is None else marked_tests(folder)
            bar.advance()
            traces = trace(args.game, units=units, tests=tests, with_tests=tests is not None)
            bar.advance()
    except (SyntaxError, ValueError) as exc:
        print(f"tabled trace: {exc}", file=sys.stderr)
        return 1
    if traces and traces[0].tests is None:
        print("tabled trace: tests not available (no source checkout)", file=sys.stderr)
    if args.json:
        text = json.dumps([t.as_json() for t in traces], ensure_ascii=False, indent=2) + "\n"
    else:
        text = markdown(traces)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"tabled trace: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
