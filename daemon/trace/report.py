"""Article -> what the text requires -> guards -> tests -> status, as data, Markdown or JSON."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.trace.catalogue import ARTICLES, STATUSES, Article
from daemon.trace.cites import PAIGOW, THIRTEEN, covers
from daemon.trace.guards import Unit, scan
from daemon.trace.marks import MarkedTest, marked_tests, tests_dir
from daemon.trace.proofdoc import last_run_markdown

GAMES = ("thirteen", "paigow")
TITLES = {
    THIRTEEN: "Thirteen cards (十三张) — Portaria 51/89/M of 10 March 1989 (seed 000)",
    PAIGOW: "Taiwan Pai Gow (台湾牌九) — Portaria 15/90/M of 18 January 1990 (seed 002)",
    "003": "Thirteen cards — the Hong Kong ways (seed 003) the rule sets implement",
}
WHOLE = re.compile(r".* Art\. \d+")
COMMAND = "tabled trace -o docs/traceability.md"


@dataclass(frozen=True)
class Trace:
    article: Article
    guards: tuple[str, ...]
    tests: tuple[str, ...] | None  # None: no tests/ to read (an installed wheel)
    # The journal's evidence of it: the actions citing it (table.input) and their events.
    actions: tuple[str, ...] = ()
    events: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        a = self.article
        return {
            "article": a.citation,
            "game": a.game,
            "text": a.text,
            "gloss": a.gloss,
            "status": a.status,
            "reason": a.reason,
            "gap": a.gap,
            "guards": list(self.guards),
            "tests": None if self.tests is None else list(self.tests),
            "journal": {"actions": list(self.actions), "events": list(self.events)},
        }


def guards_of(article: Article, units: Sequence[Unit]) -> tuple[str, ...]:
    """The guards of `article`: units citing it (or one of its `also`), units whose text
    carries one of its `marks`, and the units it names."""
    found = [
        unit.path
        for unit in units
        if any(covers(article.citation, cited) for cited in unit.citations)
        or any(_also(also, cited) for also in article.also for cited in unit.citations)
        or any(mark in unit.text for mark in article.marks)
        or unit.path in article.guards
    ]
    return tuple(dict.fromkeys(found))


def _also(also: str, cited: str) -> bool:
    """A whole article in `also` (``Art. 1``) means a citation of the whole article, not of
    each of its paragraphs; a paragraph (``Art. 9 II``) takes in what is inside it."""
    return cited == also if WHOLE.fullmatch(also) else covers(also, cited)


def tests_of(article: Article, tests: Iterable[MarkedTest]) -> tuple[str, ...]:
    """The tests marked with `article` (or a paragraph inside it), and those of each of its
    `also`: an article enforced by another's guards is proven by that one's tests too, so the
    proof disables those guards against both."""
    return tuple(
        t.nodeid
        for t in tests
        if any(covers(article.citation, cited) for cited in t.citations)
        or any(_also(also, cited) for also in article.also for cited in t.citations)
    )


def trace(
    game: str | None = None,
    *,
    base: Path | None = None,
    units: Sequence[Unit] | None = None,
    tests: Sequence[MarkedTest] | None = None,
    with_tests: bool = True,
    with_journal: bool = True,
) -> list[Trace]:
    """One `Trace` per catalogue article (of `game`, or all), in catalogue order."""
    if units is None:
        units = scan(base)
    if tests is None and with_tests:
        folder = tests_dir(base)
        tests = None if folder is None else marked_tests(folder)
    from daemon.trace.evidence import evidence  # noqa: PLC0415 - it reads this module's guards_of

    traces = []
    for a in ARTICLES:
        if game is None or a.game == game:
            marked = None if tests is None else tests_of(a, tests)
            trail = Trace(a, guards_of(a, units), marked)
            if with_journal:  # the game's data, imported (the proof imports none of the game)
                found = evidence(a.citation, units)
                trail = Trace(a, trail.guards, marked, found.actions, found.events)
            traces.append(trail)
    return traces


def uncatalogued(units: Iterable[Unit]) -> list[tuple[str, str]]:
    """(guard, citation) for each citation in the source that names no article of the
    catalogue: neither an article, nor inside one, nor a whole article with paragraphs there
    (a mistyped ``Art. 2(9)`` or ``Art. 12`` shows here)."""
    return [
        (unit.path, cited)
        for unit in units
        for cited in sorted(unit.citations)
        if not any(covers(a.citation, cited) or covers(cited, a.citation) for a in ARTICLES)
    ]


def counts(traces: Iterable[Trace]) -> dict[str, int]:
    tally = dict.fromkeys(STATUSES, 0)
    for t in traces:
        tally[t.article.status] += 1
    return tally


def _bullets(items: Sequence[str] | None, none: str) -> list[str]:
    if items is None:
        return [f"  - {none}"]
    return [f"  - `{item}`" for item in items] or ["  - none"]


def markdown(traces: Sequence[Trace], base: Path | None = None) -> str:
    lines = [
        "# Traceability: each article, where it is enforced, which test proves it",
        "",
        f"Generated by `{COMMAND}` from the catalogue (`daemon/trace/catalogue/`), the",
        "guards found in the source by the article they cite, and the tests marked",
        '`@pytest.mark.article("51/89/M", "2(a)")`; tests/trace keeps this file current. A guard',
        "is `module:qualname` (`ACTIONS[name]` is an action's entry: who may send it, in which",
        "phases). Status: **enforced** (a guard refuses, or the system computes it), **recorded**",
        "(the table only records it), **outside** (outside a table system, with the reason),",
        "**missing** (a clause of 003 no rule set implements yet).",
        "",
        "| | enforced | recorded | outside | missing |",
        "|---|---|---|---|---|",
    ]
    groups: dict[str, list[Trace]] = {}
    for t in traces:
        groups.setdefault(t.article.regulation, []).append(t)
    for regulation, group in groups.items():
        tally = counts(group)
        cells = " | ".join(str(tally[s]) for s in STATUSES)
        lines.append(f"| {regulation} | {cells} |")
    for regulation, group in groups.items():
        lines += ["", f"## {TITLES[regulation]}"]
        for t in group:
            a = t.article
            lines += ["", f"### {a.citation} — {a.status}", "", f"> 「{a.text}」", "", a.gloss]
            if a.reason:
                lines += ["", a.reason]
            if a.gap:
                lines += ["", f"**Gap:** {a.gap}"]
            lines += ["", "- Guards:", *_bullets(t.guards, "none")]
            lines += ["- Tests:", *_bullets(t.tests, "not available (no source checkout)")]
            if t.actions or t.events:
                lines += ["- In the journal (`tabled trace --article A --journal DIR`):"]
                lines += [f"  - `table.input` of `{name}`" for name in t.actions]
                lines += [f"  - `{name}`" for name in t.events]
                lines += ["  - `table.violation` citing it"]
    lines += last_run_markdown(base or Path(__file__).resolve().parents[2])
    return "\n".join(lines) + "\n"
