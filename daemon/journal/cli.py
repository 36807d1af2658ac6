"""`tabled verify-log PATH`: check a journal's hash chain and name the first line tampered with.

Exit status: 0 the chain is intact; 1 a line was changed, removed or inserted; 3 the chain is
intact but ends in a torn line (a crash cut an unacknowledged write; opening the journal
truncates it); 2 usage error or nothing to check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from daemon.cli.progress import Progress
from daemon.journal.anchor import AnchorRefused, anchored_head
from daemon.journal.format import journal_files
from daemon.journal.verifier import TORN, VerifyResult, verify
from daemon.safetext import safe

EXIT_OK, EXIT_BROKEN, EXIT_USAGE, EXIT_TORN = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabled verify-log",
        description="Check a journal's hash chain (a journal directory, or one journal file).",
        epilog="exit status: 0 intact, 1 changed/removed/inserted line, 3 torn last line, "
        "2 usage error",
    )
    parser.add_argument("path", type=Path, help="the journal directory or one journal file")
    parser.add_argument(
        "--expect",
        metavar="SEQ:SHA256",
        help="a head recorded elsewhere (e.g. by the operator feed): the line with that seq "
        "must have that hash; catches edits of the last lines and a cut-off end",
    )
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    return parser


def _as_json(result: VerifyResult) -> str:
    problem = result.problem
    return json.dumps(
        {
            "path": str(result.path),
            "ok": result.ok,
            "files": [p.name for p in result.files],
            "events": result.events,
            "first_seq": result.first_seq,
            "last_seq": result.last_seq,
            "head": result.head,
            "problem": None
            if problem is None
            else {
                "kind": problem.kind,
                "file": str(problem.file),
                "line": problem.line,
                "seq": problem.seq,
                "detail": problem.detail,
                "missing": problem.missing,
            },
        }
    )


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    path: Path = args.path
    expect: tuple[int, str] | None = None
    if args.expect:
        seq_text, _, digest = args.expect.partition(":")
        if not seq_text.isdigit() or len(digest) != 64:
            print("tabled verify-log: --expect takes SEQ:SHA256 (64 hex digits)", file=sys.stderr)
            return EXIT_USAGE
        expect = (int(seq_text), digest.lower())
    if not path.exists():
        print(f"tabled verify-log: {path}: no such file or directory", file=sys.stderr)
        return EXIT_USAGE
    if expect is None and path.is_dir():
        # Run as the daemon's user, the keyed anchor's head is expected too (issue 9): a chain
        # rewritten after an edit checks out line by line, but not against it.
        try:
            expect = anchored_head(path)
        except AnchorRefused as exc:
            print(f"tabled verify-log: {exc}", file=sys.stderr)
            return EXIT_BROKEN
    try:
        files = journal_files(path) if path.is_dir() else [path]
        with Progress("verify-log", sum(f.stat().st_size for f in files), unit=" bytes") as bar:
            result = verify(path, expect=expect, progress=bar.advance)
    except OSError as exc:
        print(f"tabled verify-log: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not result.files:
        print(f"tabled verify-log: {path}: no journal files (journal-*.jsonl)", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(_as_json(result))
    elif result.problem is None:
        print(
            f"OK: {result.events} events in {len(result.files)} file(s), "
            f"seq {result.first_seq}..{result.last_seq}, head {result.head}"
        )
    else:
        print(safe(result.problem.describe()))
        print(f"  {result.problem.file}")
        print(
            f"  {result.events} events verified before it "
            f"(last good seq {result.last_seq}, head {result.head})"
        )
    if result.problem is None:
        return EXIT_OK
    return EXIT_TORN if result.problem.kind == TORN else EXIT_BROKEN
