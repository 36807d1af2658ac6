"""The proof as text: per article, each guard's mutant killed or survived, with the time taken;
the last full run kept in docs/traceability-proof.json and shown in docs/traceability.md."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.trace.equivalents import EQUIVALENT, MARK

if TYPE_CHECKING:
    from daemon.trace.prove import ArticleProof

LAST_RUN = Path("docs") / "traceability-proof.json"
BENCH = "bench/bench_trace_proof.py"


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
    kinds = "types, fields without a default, aliases"
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
        "condition `True`; a constant or default changes, a container empties; an action's "
        "parameters go unchecked) and the article's tests run against it: at least one must "
        "fail (**killed**). A mutant all tests pass (**survived**) is a missing test. "
        "`tabled trace --prove [--article A] [--json]` runs it; a seventh of the articles "
        "each day, all of them in a week, is proven by `pytest -m proof` "
        "(tests/trace/test_proof.py), which the default run leaves out while the whole proof "
        "still has survivors (below: each is a missing test); "
        f"`{BENCH}` runs the whole proof and wrote this.",
        "",
        f"Last run: {data['date']}. " + " ".join(summary(figures)),
        "",
    ]
    for key in ("scope", "command", "wall", "cpu", "load", "verdict"):
        if key in figures:
            lines.append(f"- {key}: {figures[key]}")
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
