"""The proof's results, as data and as text: per article, each guard's mutant killed or
survived, with the time taken (`ArticleProof`, made by `daemon.trace.prove`); the last full
run kept in docs/traceability-proof.json and shown in docs/traceability.md."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from daemon.trace.equivalents import EQUIVALENT, MARK

LAST_RUN = Path("docs") / "traceability-proof.json"
BENCH = "bench/bench_trace_proof.py"
# The suite proves one day's share of the enforced articles (tests/trace/test_proof.py): every
# DAYS-th article in the catalogue's order, so each is proven once in DAYS days whatever day the
# suite runs. Fourteen: a seventh took up to 2 min of the 2 cores under the load of a session.
DAYS = 14
GOAL_DAY = 60.0  # seconds, the bound on the suite's share


@dataclass
class Outcome:
    guard: str
    operator: str
    line: int
    result: str  # killed, survived, error
    by: str | None = None  # the test that failed (killed), or what went wrong (error)
    tests_run: int = 0
    seconds: float = 0.0


@dataclass
class ArticleProof:
    article: str
    tests: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    unmutated: list[dict[str, str]] = field(default_factory=list)

    def count(self, result: str) -> int:
        return sum(1 for o in self.outcomes if o.result == result)

    @property
    def seconds(self) -> float:
        return round(sum(o.seconds for o in self.outcomes), 1)

    def as_json(self) -> dict[str, Any]:
        return {
            "article": self.article,
            "tests": self.tests,
            "killed": self.count("killed"),
            "survived": self.count("survived"),
            "errors": self.count("error"),
            "seconds": self.seconds,
            "mutants": [asdict(o) for o in self.outcomes],
            "unmutated": self.unmutated,
        }


def day_sample(citations: Sequence[str], day: date) -> list[str]:
    """The articles the suite proves on `day`: every DAYS-th, from the day's place in the
    rotation, so each is proven once in DAYS days."""
    return [c for i, c in enumerate(citations) if i % DAYS == day.toordinal() % DAYS]


def day_shares(seconds: dict[str, float], jobs: int) -> list[float]:
    """Each day's share of the rotation, in seconds: its articles' mutants' seconds over the
    jobs that ran them (the order of `seconds` is the catalogue's)."""
    start = date(2026, 1, 5)
    citations = list(seconds)
    return [
        sum(seconds[c] for c in day_sample(citations, start + timedelta(days=n))) / jobs
        for n in range(DAYS)
    ]


def article_markdown(proof: ArticleProof) -> list[str]:
    lines = [
        f"### {proof.article} — {proof.count('killed')} killed, {proof.count('survived')} "
        f"survived, {proof.count('error')} errors ({proof.seconds} s, {len(proof.tests)} tests)",
        "",
        "| Guard | Edit | Result | By the test | Tests run | Seconds |",
        "|---|---|---|---|---|---|",
    ]
    for o in proof.outcomes:
        by = f"`{o.by}`" if o.by else ""
        lines.append(
            f"| `{o.guard}` | {o.operator} | **{o.result}** | {by} | {o.tests_run} | {o.seconds} |"
        )
    for left in proof.unmutated:
        lines.append(f"| `{left['guard']}` | not mutated: {left['reason']} | — | | 0 | 0 |")
    return [*lines, ""]


def markdown(proofs: Sequence[ArticleProof]) -> str:
    lines = ["# The proof of the trace", "", *summary(totals(proofs)), ""]
    for proof in proofs:
        lines += article_markdown(proof)
    return "\n".join(lines)


def equivalents(proof: ArticleProof) -> int:
    """The guards of the article left unmutated as equivalent (daemon/trace/equivalents.py)."""
    return sum(1 for left in proof.unmutated if left["reason"].startswith(MARK))


def totals(proofs: Sequence[ArticleProof], seconds: float | None = None) -> dict[str, Any]:
    return {
        "articles": len(proofs),
        "mutants": sum(len(p.outcomes) for p in proofs),
        "killed": sum(p.count("killed") for p in proofs),
        "survived": sum(p.count("survived") for p in proofs),
        "errors": sum(p.count("error") for p in proofs),
        "unmutated": sum(len(p.unmutated) for p in proofs),
        "equivalent": sum(equivalents(p) for p in proofs),
        "seconds": round(seconds if seconds is not None else sum(p.seconds for p in proofs), 1),
    }


def summary(total: dict[str, Any]) -> list[str]:
    kinds = "types, fields without a default, aliases, values already empty"
    if "equivalent" in total:
        kinds += f", and {total['equivalent']} equivalent mutants, each with its reason"
    return [
        f"{total['articles']} enforced articles, {total['mutants']} mutants: "
        f"**{total['killed']} killed, {total['survived']} survived, {total['errors']} errors**; "
        f"{total['unmutated']} guards not mutated ({kinds}); {total['seconds']} s.",
    ]


def survivors(proofs: Sequence[ArticleProof]) -> list[str]:
    return [
        f"{p.article}: {o.guard} ({o.operator}) — {o.tests_run} tests, none failed"
        for p in proofs
        for o in p.outcomes
        if o.result == "survived"
    ]


def save(path: Path, proofs: Sequence[ArticleProof], when: str, figures: dict[str, Any]) -> None:
    """The last full run: its date, its figures and each article's counts."""
    data = {
        "date": when,
        "figures": figures,
        "articles": [
            {
                "article": p.article,
                "guards": len(p.outcomes) + len(p.unmutated),
                "mutants": len(p.outcomes),
                "killed": p.count("killed"),
                "survived": p.count("survived"),
                "errors": p.count("error"),
                "unmutated": len(p.unmutated),
                "tests": len(p.tests),
                "seconds": p.seconds,
            }
            for p in proofs
        ],
        "survivors": survivors(proofs),
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def last_run_markdown(base: Path) -> list[str]:
    """docs/traceability.md's section on the last full run, or [] when there is none."""
    path = base / LAST_RUN
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    figures = data["figures"]
    lines = [
        "",
        "## The proof: every guard shown necessary by its article's tests",
        "",
        "For each enforced article, each guard above is disabled by one small edit (a check "
        "citing the article becomes `pass`; a function citing it as a whole returns `None`, a "
        "condition `True`, a container function an empty one; a number grows, a flag flips, "
        "a setting takes its next choice, a container empties; an action's parameters go "
        "unchecked) and the article's tests run against it: at least one must fail "
        "(**killed**; a module that refuses to load with the edit kills it too). A mutant all "
        "tests pass (**survived**) is a missing test. "
        "`tabled trace --prove [--article A] [--json]` runs it; the suite proves every "
        f"{DAYS}th article each day, all of them in {DAYS} days "
        "(tests/trace/test_proof.py: a survivor fails it); "
        f"`{BENCH}` runs the whole proof and wrote this.",
        "",
        f"Last run: {data['date']}. " + " ".join(summary(figures)),
        "",
    ]
    for key in ("scope", "command", "wall", "cpu", "load"):
        if key in figures:
            lines.append(f"- {key}: {figures[key]}")
    if "jobs" in figures:
        shares = day_shares({a["article"]: a["seconds"] for a in data["articles"]}, figures["jobs"])
        met = "met" if max(shares) <= GOAL_DAY else "MISSED"
        lines.append(
            f"- the suite's daily share (every {DAYS}th article, all of them in {DAYS} days), "
            "its mutants' seconds over the jobs: "
            + ", ".join(f"{d:.0f}" for d in shares)
            + f" s (goal <= {GOAL_DAY:.0f} s: {met})"
        )
    elif "verdict" in figures:
        lines.append(f"- verdict: {figures['verdict']}")
    lines += [
        "",
        "| Article | Guards | Mutated | Killed | Survived | Errors | Not mutated | Tests "
        "| Seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in data["articles"]:
        lines.append(
            f"| {a['article']} | {a['guards']} | {a['mutants']} | {a['killed']} | "
            f"{a['survived']} | {a['errors']} | {a['unmutated']} | {a['tests']} | {a['seconds']} |"
        )
    if data["survivors"]:
        lines += ["", "Survivors:", "", *(f"- {s}" for s in data["survivors"])]
    return [*lines, *equivalent_markdown()]


def equivalent_markdown() -> list[str]:
    """The equivalent mutants the proof does not run, with the reason of each."""
    if not EQUIVALENT:
        return []
    lines = [
        "",
        "Equivalent mutants, not run (`daemon/trace/equivalents.py`: no sequence of inputs "
        "can tell the guard disabled from the guard in place):",
        "",
    ]
    for (article, guard), reason in EQUIVALENT.items():
        lines.append(f"- {article}: `{guard}` — {reason}")
    return lines
