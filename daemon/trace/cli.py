"""`tabled trace`: each article, what it requires, its guards, its tests and its status.

    tabled trace                      Markdown on stdout (both games)
    tabled trace --game paigow        one game (Thirteen includes the Hong Kong ways of 003)
    tabled trace --json               a JSON list: article, text, guards, tests, status, ...
    tabled trace -o docs/traceability.md
    tabled trace --article "15/90/M Art. 5(5)"                  one article (repeatable)
    tabled trace --article "15/90/M Art. 5(5)" --journal var/journal
                                      and the journal lines that evidence it
    tabled trace --prove [--article A] [--json] [--jobs 2]
                                      disable each guard of each enforced article (of A) and
                                      run its tests: one must fail; exit 1 when a guard
                                      survives (daemon/trace/prove.py)

Tests are read from the tests/ of a source checkout; an installed wheel has none, and the
output says "not available" (JSON: "tests": null) instead of an empty list.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from daemon.cli.progress import Progress
from daemon.trace.catalogue import BY_CITATION
from daemon.trace.cites import find_citations
from daemon.trace.evidence import print_evidence as _evidence
from daemon.trace.guards import scan
from daemon.trace.marks import marked_tests, tests_dir
from daemon.trace.proofdoc import markdown as proof_markdown
from daemon.trace.proofdoc import survivors
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
    parser.add_argument(
        "--article",
        action="append",
        metavar="A",
        help='one article, e.g. "15/90/M Art. 5(5)" or "003 way 3 shoot" (repeatable)',
    )
    parser.add_argument(
        "--prove",
        action="store_true",
        help="disable each guard of each enforced article and run its tests: one must fail",
    )
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (--prove)")
    parser.add_argument(
        "--journal", metavar="DIR", help="print the lines of this journal folder that evidence it"
    )
    return parser


def citation(text: str) -> str:
    """The catalogue's citation of `text` ("15/90/M Art. 5(5)", "Portaria 51/89/M Art. 11",
    "003 way 3 shoot"), or a ValueError naming it."""
    if text in BY_CITATION:
        return text
    found = list(dict.fromkeys(find_citations(text)))
    if len(found) == 1 and found[0] in BY_CITATION:
        return found[0]
    raise ValueError(f"{text!r} is no article of the catalogue (tabled trace lists them)")


def _prove(args: argparse.Namespace, selected: list[str] | None) -> int:
    from daemon.trace.prove import prove  # noqa: PLC0415 - pytest, only when proving

    with Progress("prove", 1, unit=" mutants") as bar:

        def step(done: int, total: int) -> None:
            bar.total = total
            bar.update(done)

        proofs = prove(selected, jobs=max(1, args.jobs), progress=step)
    if args.json:
        text = json.dumps([p.as_json() for p in proofs], ensure_ascii=False, indent=2) + "\n"
    else:
        text = proof_markdown(proofs)
    if not _write(text, args.output):
        return 1
    bad = survivors(proofs) + [
        f"{p.article}: {o.guard}: {o.by}" for p in proofs for o in p.outcomes if o.result == "error"
    ]
    for line in bad:
        print(f"tabled trace: not proven: {line}", file=sys.stderr)
    return 1 if bad else 0


def _write(text: str, output: str | None) -> bool:
    if output is None:
        sys.stdout.write(text)
        return True
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"tabled trace: cannot write {output}: {exc.strerror}", file=sys.stderr)
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # a bad option: usage on stderr, exit 2
    try:
        selected = None if args.article is None else [citation(a) for a in args.article]
        if args.prove:
            return _prove(args, selected)
        if args.journal is not None:
            if selected is None:
                raise ValueError("--journal needs --article: the evidence of which article?")
            return _evidence(selected, Path(args.journal), as_json=args.json)
        with Progress("trace", 3, unit=" steps") as bar:
            units = scan()  # the guards, from the source
            bar.advance()
            folder = tests_dir()
            tests = None if folder is None else marked_tests(folder)
            bar.advance()
            traces = trace(args.game, units=units, tests=tests, with_tests=tests is not None)
            if selected is not None:
                traces = [t for t in traces if t.article.citation in selected]
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
    return 0 if _write(text, args.output) else 1


if __name__ == "__main__":
    raise SystemExit(main())
