"""`tabled audit`: is each device honest, and does the table pay what its rules say?

    tabled audit dice JOURNAL_DIR [--serial S] [--since T] [--json]
    tabled audit shuffle JOURNAL_DIR ...
    tabled audit reader JOURNAL_DIR ... [--misread-limit N]
    tabled audit hold JOURNAL_DIR ... [--by table|shift|dealer]
    tabled audit report JOURNAL_DIR -o FILE.html    (and FILE.pdf beside it)
    tabled audit game-math [--ruleset R ...] [--deals N] [--seed S]

Each prints, per device serial (or table, shift, dealer), a verdict, the statistic, the p-value
and the power in words; `--json` lists the same with `flagged` true/false. The exit status is 0
when nothing is flagged, 4 when something is, 2 for bad input. docs/integrity.md describes
every test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.analytics.common import Finding
    from daemon.analytics.source import AuditData

KINDS = ("dice", "shuffle", "reader", "hold")
FLAGGED_STATUS = 4


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabled audit",
        description="Integrity audit of a table's journal folder: dice, shuffles, the shoe "
        "reader, and the hold against the rule set (docs/integrity.md). Exit status: 0 "
        "nothing flagged, 4 something flagged, 2 bad input.",
    )
    sub = parser.add_subparsers(dest="kind", required=True)
    for kind, text in (
        ("dice", "each dice shaker: faces, runs, serial correlation, repeats, CUSUM monitor"),
        ("shuffle", "each shuffler: card x position, rising sequences, guessing game"),
        ("reader", "each shoe reader: misread and manual-entry rates, per dealer"),
        ("hold", "actual hold against the rule set's house advantage, as a z-score"),
    ):
        one = sub.add_parser(kind, help=text, description=text)
        one.add_argument("journal", type=Path, help="the table's journal folder (or one file)")
        one.add_argument("--serial", help="only this device serial")
        one.add_argument(
            "--since", help="from this time on (ISO, UTC as the journal writes it: 2027-01-15)"
        )
        one.add_argument("--json", action="store_true", help="JSON on stdout")
        if kind == "reader":
            one.add_argument(
                "--misread-limit",
                type=int,
                default=1000,
                metavar="N",
                help="the accepted misread rate: one card in N (default 1000)",
            )
        if kind == "hold":
            one.add_argument(
                "--by", choices=("table", "shift", "dealer"), default="shift", help="grouping"
            )
    report = sub.add_parser(
        "report",
        help="every audit in one HTML page and a PDF, with charts",
        description="Every audit of the journal in one HTML page (-o FILE.html) and a PDF "
        "beside it: face histograms, card x position heat maps, rising sequences, misreads "
        "by dealer, the hold's z by shift.",
    )
    report.add_argument("journal", type=Path, help="the table's journal folder (or one file)")
    report.add_argument("-o", "--output", type=Path, required=True, help="the HTML file")
    report.add_argument("--serial", help="only this device serial")
    report.add_argument("--since", help="from this time on (ISO, UTC)")
    report.add_argument("--misread-limit", type=int, default=1000, metavar="N")
    report.add_argument("--by", choices=("table", "shift", "dealer"), default="shift")
    math_ = sub.add_parser(
        "game-math",
        help="each rule set's house advantage and variance, by Monte Carlo (JSON)",
        description="Rerun the rules engine's Monte Carlo that daemon/analytics/gamemath.json "
        "keeps: prints the figures as JSON.",
    )
    math_.add_argument("--ruleset", action="append", help="a Thirteen rule set (repeatable)")
    math_.add_argument("--deals", type=int, default=3000)
    math_.add_argument("--seed", type=int, default=2026)
    return parser


def text_report(kind: str, source: str, findings: list[Finding], lines: int) -> str:
    title = {"dice": "DICE SHAKERS", "shuffle": "SHUFFLERS", "reader": "SHOE READERS"}
    out = [f"{title.get(kind, 'HOLD')} - {source} ({lines:,} audited lines)"]
    if not findings:
        out.append("  nothing to audit: no such events (or none for that serial / time)")
    for finding in findings:
        label = "FLAGGED" if finding.flagged else "ok"
        out.append("")
        where = f" at {finding.extra['table']}" if "table" in finding.extra else ""
        out.append(f"{finding.subject}{where}: {label} ({finding.samples:,} samples)")
        out.append(f"  verdict:   {finding.verdict}")
        out.append(f"  statistic: {finding.statistic:.4g}   p-value: {finding.p_value:.3g}")
        for test in finding.tests:
            out.append(f"    {test.name:<20} {test.statistic:>12.4g}  p = {test.p_value:.3g}")
        if finding.power:
            out.append(f"  power:     {finding.power}")
    return "\n".join(out)


def findings_of(
    kind: str, data: AuditData, *, misread_limit: int = 1000, by: str = "shift"
) -> list[Finding]:
    """The findings of one kind over what one pass kept (a journal folder or the floor)."""
    from daemon.analytics import dice, reader, shuffle  # noqa: PLC0415 - numpy, on demand
    from daemon.analytics import hold as hold_  # noqa: PLC0415
    from daemon.analytics.shuffle import permutations  # noqa: PLC0415

    findings: list[Finding] = []
    if kind == "dice":
        for serial in sorted(data.dice):
            findings.append(dice.audit(serial, data.throws(serial)))
    elif kind == "shuffle":
        for serial in sorted(set(data.deck_outputs) | set(data.decks_skipped)):
            inputs, outputs = data.decks(serial)
            finding = shuffle.audit(serial, permutations(inputs, outputs))
            finding.extra["decks_not_audited"] = data.decks_skipped.get(serial, 0)
            findings.append(finding)
    elif kind == "reader":
        for serial in sorted(data.reader):
            by_dealer = {d: c for (s, d), c in data.reader_by_dealer.items() if s == serial}
            findings.append(reader.audit(serial, data.reader[serial], by_dealer, 1 / misread_limit))
    else:
        findings = hold_.audit(data.rounds, by, hold_.game_math())
    return findings


def run(args: argparse.Namespace) -> tuple[list[Finding], int]:
    from daemon.analytics.source import read_journal  # noqa: PLC0415 - numpy, on demand

    data = read_journal(args.journal, serial=args.serial, since=args.since, kinds=[args.kind])
    limit = int(getattr(args, "misread_limit", 1000))
    found = findings_of(args.kind, data, misread_limit=limit, by=getattr(args, "by", "shift"))
    return found, data.lines


def report_json(kind: str, source: str, findings: list[Finding], lines: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "journal": source,
        "lines": lines,
        "flagged": any(f.flagged for f in findings),
        "devices" if kind != "hold" else "groups": [f.json() for f in findings],
    }


def _report(args: argparse.Namespace) -> int:
    try:
        from daemon.analytics import report  # noqa: PLC0415 - matplotlib, on demand
    except ImportError:
        print(
            "tabled audit report: needs matplotlib: pip install 'tabled[analytics]'",
            file=sys.stderr,
        )
        return 2
    from daemon.analytics.source import read_journal  # noqa: PLC0415

    try:
        data = read_journal(args.journal, serial=args.serial, since=args.since)
        sections = {
            kind: findings_of(kind, data, misread_limit=args.misread_limit, by=args.by)
            for kind in KINDS
        }
        written = report.write(f"journal {args.journal}", data, sections, args.output)
    except (OSError, ValueError) as exc:
        print(f"tabled audit: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    flagged = any(f.flagged for findings in sections.values() for f in findings)
    return FLAGGED_STATUS if flagged else 0


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        import numpy  # noqa: F401, PLC0415
        import scipy  # noqa: F401, PLC0415
    except ImportError:
        print(
            "tabled audit: needs numpy and scipy: pip install 'tabled[analytics]'", file=sys.stderr
        )
        return 2
    if args.kind == "game-math":
        from daemon.analytics.hold import simulate_ruleset  # noqa: PLC0415

        figures = {
            name: simulate_ruleset(name, args.deals, args.seed)
            for name in (args.ruleset or ["macau-1989"])
        }
        print(json.dumps(figures, indent=2, sort_keys=True))
        return 0
    if args.kind in ("reader", "report") and args.misread_limit < 1:
        print("tabled audit: --misread-limit is one card in N, N >= 1", file=sys.stderr)
        return 2
    if not args.journal.exists():
        print(f"tabled audit: no journal at {args.journal}", file=sys.stderr)
        return 2
    if args.kind == "report":
        return _report(args)
    try:
        findings, lines = run(args)
    except (OSError, ValueError) as exc:
        print(f"tabled audit: {args.journal}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        report = report_json(args.kind, str(args.journal), findings, lines)
        print(json.dumps(report, indent=2, default=str))
    else:
        print(text_report(args.kind, f"journal {args.journal}", findings, lines))
    return FLAGGED_STATUS if any(f.flagged for f in findings) else 0
