"""The proof of the trace: each guard of each enforced article, disabled, fails a test of it.

For every enforced article, each guard the trace names gets its mutant (`daemon.trace.mutants`)
and the tests the trace names for the article run against it, fastest first, until one fails:
the mutant is **killed** (the guard is shown necessary) or, when all pass, it **survived** (the
tests would not notice the guard gone: a test is missing). A mutant with which a module refuses
to load (a table it builds at import no longer holds together: a ValueError or LookupError of
its own checks) is killed at import, before any test; one whose edit does not even run (a
TypeError), or that collects no test, is an **error**. A mutant `daemon.trace.equivalents`
shows no input can tell from the guard in place is not run: its guard is listed unmutated with
that reason.

How it runs: one pytest session collects every test of the proof once (`daemon.trace.swap`);
for each mutant it forks a child that puts the mutant in place, a function's code swapped in
its function object, data by running its module and every module importing it again in place
from the mutant's text (`daemon.trace.reexec`), and runs the article's tests in that child
until one fails, the one that killed it last time first, then the cheapest. Every process a
test starts loads the mutant's text at import (`daemon.trace.hook`). A mutant that cannot be
put in place so runs in a new pytest process that imports the mutant's text (the fresh path,
`daemon.trace.runner`). The tree is never written. `jobs` children run at once; a child past
`timeout` is killed with its process group and the mutant counts as killed (the tests did not
end).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from daemon.trace.equivalents import EQUIVALENT, MARK
from daemon.trace.guards import constants, scan
from daemon.trace.hook import SITECUSTOMIZE, VARIABLE
from daemon.trace.marks import marked_tests, tests_dir
from daemon.trace.mutants import Mutant, Unmutated, mutant
from daemon.trace.proofdoc import DAYS, ArticleProof, Outcome, day_sample
from daemon.trace.report import Trace, trace
from daemon.trace.runner import Done, Task, read, run, warm
from daemon.trace.swap import Session

# Cheaper tests first when no timings are known: a unit test fails faster than a process run.
_FOLDER_ORDER = ("rules", "procedures", "trace", "drivers", "daemon", "journal", "simulators")


def enforced(traces: Iterable[Trace]) -> list[Trace]:
    return [t for t in traces if t.article.status == "enforced"]


def plan(
    selected: Sequence[str] | None = None, base: Path | None = None
) -> list[tuple[Trace, list[Mutant], list[Unmutated]]]:
    """Each enforced article (of `selected`, or all) with its mutants and its guards left alone.
    An unknown or unenforced citation in `selected` is a ValueError."""
    root = base or Path(__file__).resolve().parents[2]
    folder = tests_dir(root)
    if folder is None:
        raise ValueError("the proof runs the tests: it needs a source checkout")
    units = scan(root)
    by_path = {unit.path: unit for unit in units}
    traces = enforced(trace(base=root, units=units, tests=marked_tests(folder), with_journal=False))
    if selected is not None:
        known = {t.article.citation: t for t in traces}
        missing = [c for c in selected if c not in known]
        if missing:
            raise ValueError(f"not an enforced article of the catalogue: {', '.join(missing)}")
        traces = [known[c] for c in selected]
    known_constants = constants(root)
    planned = []
    for t in traces:
        made: list[Mutant] = []
        left: list[Unmutated] = []
        for guard in t.guards:
            reason = EQUIVALENT.get((t.article.citation, guard))
            if reason is not None:
                left.append(Unmutated(t.article.citation, guard, f"{MARK}{reason}"))
                continue
            module = guard.split(":", 1)[0]
            one = mutant(
                by_path[guard], t.article.citation, root, known_constants.get(module, {}), module
            )
            if isinstance(one, Mutant):
                made.append(one)
            else:
                left.append(one)
        planned.append((t, made, left))
    return planned


def _order(
    tests: Iterable[str], durations: dict[str, float], first: str | None = None
) -> list[str]:
    """The tests cheapest first (their last timings; unknown ones by folder), the one that
    killed this mutant last time before all."""

    def key(nodeid: str) -> tuple[bool, float, int, str]:
        folder = nodeid.split("/")[1] if nodeid.count("/") > 1 else ""
        rank = _FOLDER_ORDER.index(folder) if folder in _FOLDER_ORDER else len(_FOLDER_ORDER)
        return (nodeid != first, durations.get(nodeid, 1000.0 + rank), rank, nodeid)

    return sorted(dict.fromkeys(tests), key=key)


def _outcome(m: Mutant, exit: int | None, record: dict[str, Any], log: Path) -> Outcome:
    ran, seconds = int(record.get("ran", 0)), round(float(record.get("seconds", 0.0)), 2)
    failed = record.get("failed")
    if exit is None or failed == "timeout":
        result, by = "killed", "timeout"
    elif exit in {0, 1} and failed:
        result, by = "killed", str(failed)
    elif exit == 0 and "error" not in record:
        result, by = "survived", None
    else:
        lines = (
            log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []
        )
        last = lines[-1] if lines else "no output"
        result, by = "error", str(record.get("error") or f"pytest exit {exit}: {last}")[:300]
    return Outcome(m.guard, m.operator, m.line, result, by, ran, seconds)


def durations_file() -> Path:
    """Where the tests' last timings, and which test killed each mutant, are kept between
    proofs (outside the tree)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tabled" / "trace-durations.json"


def _killer_key(article: str, guard: str) -> str:
    return f"{article}|{guard}"


def _memory() -> tuple[dict[str, float], dict[str, str]]:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        kept = json.loads(durations_file().read_text(encoding="utf-8"))
        return dict(kept.get("durations", {})), dict(kept.get("killers", {}))
    return {}, {}


def _remember(
    known: dict[str, float], killers: dict[str, str], work: Path, proofs: Iterable[ArticleProof]
) -> None:
    for out in work.glob("*.out"):
        with contextlib.suppress(OSError, ValueError):
            known.update(json.loads(out.read_text(encoding="utf-8")).get("durations", {}))
    for proof in proofs:
        for o in proof.outcomes:
            if o.result == "killed" and o.by and o.by != "timeout":
                killers[_killer_key(proof.article, o.guard)] = o.by.split("[", 1)[0]
    with contextlib.suppress(OSError):
        durations_file().parent.mkdir(parents=True, exist_ok=True)
        kept = {"durations": known, "killers": killers}
        durations_file().write_text(json.dumps(kept, sort_keys=True), encoding="utf-8")


def prove(
    selected: Sequence[str] | None = None,
    *,
    base: Path | None = None,
    jobs: int = 2,
    timeout: float = 300.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[ArticleProof]:
    """Prove the enforced articles `selected` (all by default): each mutant against its
    article's tests, cheapest first (the last timings known), then each test that killed one
    run unmutated: a killer that fails unmutated proves nothing, and its kills are errors."""
    root = base or Path(__file__).resolve().parents[2]
    known, killers = _memory()
    proofs: dict[str, ArticleProof] = {}
    tasks: list[Task] = []
    owner: dict[int, tuple[str, Mutant]] = {}
    for t, made, left in plan(selected, root):
        citation = t.article.citation
        proofs[citation] = ArticleProof(citation, list(t.tests or ()))
        proofs[citation].unmutated = [{"guard": u.guard, "reason": u.reason} for u in left]
        for m in made:
            first = killers.get(_killer_key(citation, m.guard))
            tasks.append(Task(len(tasks) + 1, _order(t.tests or (), known, first), m))
            owner[tasks[-1].key] = (citation, m)
    count = [0]
    reran: list[tuple[Outcome, Mutant]] = []  # the kills of mutants run again in place
    saved = {k: os.environ.get(k) for k in ("HYPOTHESIS_STORAGE_DIRECTORY", VARIABLE)}
    with tempfile.TemporaryDirectory(prefix="tabled-prove-") as folder:
        work = Path(folder)
        (work / "site").mkdir()
        (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(work / "hypothesis")

        def finish(task: Task, exit: int | None, record: dict[str, Any]) -> None:
            citation, m = owner[task.key]
            outcome = _outcome(m, exit, record, work / f"{task.key}.log")
            proofs[citation].outcomes.append(outcome)
            if "reran" in record:
                reran.append((outcome, m))
            count[0] += 1
            if progress is not None:
                progress(count[0], len(tasks))

        try:
            warm()
            fresh = _quick(tasks, root, work, jobs=jobs, timeout=timeout, finish=finish)
            modules = work / "modules.json"
            warm(json.loads(modules.read_text(encoding="utf-8")) if modules.exists() else ())

            def done(task: Task, result: Done) -> None:
                finish(task, result.exit, {**read(work, task.key), "seconds": result.seconds})

            run(fresh, root, work, jobs=jobs, timeout=timeout, done=done)
            _control(reran, root, work, jobs, timeout)
            _verify(list(proofs.values()), root, work, timeout)
            _remember(known, killers, work, proofs.values())
        finally:
            for key, value in saved.items():
                os.environ.pop(key, None) if value is None else os.environ.update({key: value})
    for proof in proofs.values():
        proof.outcomes.sort(key=lambda o: (o.guard, o.line))
    return list(proofs.values())


def _control(
    reran: Sequence[tuple[Outcome, Mutant]], root: Path, work: Path, jobs: int, timeout: float
) -> None:
    """Run each test that killed a mutant run again in place (`daemon.trace.reexec`) with its
    module run again unmutated, the same way: a kill stands only if its test passes then, so
    nothing the running again itself does (an object made twice) counts as a kill."""
    killers: dict[str, set[str]] = {}
    files: dict[str, Mutant] = {}
    for o, m in reran:
        if o.result == "killed" and o.by and o.by.startswith("tests/"):
            killers.setdefault(m.module, set()).add(o.by.split("[", 1)[0])
            files[m.module] = m
    if not killers:
        return
    controls: list[tuple[int, list[str], Mutant]] = []
    for index, (module, tests) in enumerate(sorted(killers.items())):
        file = files[module].file
        text = file.read_text(encoding="utf-8")
        control = Mutant("", f"{module}:(control)", module, file, "control", 0, text, None)
        controls.append((-100 - index, sorted(tests), control))
    every = sorted({test for _, names, _ in controls for test in names})
    plugin = Session(controls, work, jobs, timeout, root, keep_going=True)
    task = Task(-3, every, None, exitfirst=False, plugin=plugin)
    run([task], root, work, jobs=1, timeout=float("inf"), done=lambda *_: None)
    failing: dict[str, set[str]] = {}
    for key, _, control in controls:
        record = read(work, key)
        bad = set(record.get("failures", []))
        if not record or "error" in record:
            bad = {"*"}  # the module did not even run again: none of its kills stands
        failing[control.module] = bad
    for o, m in reran:
        bad = failing.get(m.module, set())
        if o.result == "killed" and o.by and ("*" in bad or o.by in bad):
            o.result, o.by = "error", f"{o.by} fails with {m.module} run again unmutated"


def _verify(proofs: Sequence[ArticleProof], root: Path, work: Path, timeout: float) -> None:
    """Run every test that killed a mutant, unmutated: its kills stand only if it passes."""
    killed = {o.by for p in proofs for o in p.outcomes if o.result == "killed" and o.by}
    killers = sorted(k for k in killed if k.startswith("tests/"))  # not a timeout, an import
    if not killers:
        return
    key = -2
    results: list[Done] = []
    task = Task(key, killers, None, exitfirst=False)
    run([task], root, work, jobs=1, timeout=timeout * 4, done=lambda _, d: results.append(d))
    record = read(work, key)
    failing = set(record.get("failures", []))
    if results and results[0].exit not in {0, 1}:
        failing = set(killers)  # the killers did not even run: no kill is proven
    for proof in proofs:
        for o in proof.outcomes:
            if o.result == "killed" and o.by in failing:
                o.result, o.by = "error", f"{o.by} fails unmutated too"


def _quick(
    tasks: Sequence[Task],
    root: Path,
    work: Path,
    *,
    jobs: int,
    timeout: float,
    finish: Callable[[Task, int | None, dict[str, Any]], None],
) -> list[Task]:
    """Run the functions' mutants in one collected session (`daemon.trace.swap`); return the
    tasks left for the fresh path (data, and swaps that did not apply)."""
    quick = [t for t in tasks if t.mutant is not None]
    planned = [(t.key, t.tests, t.mutant) for t in quick]
    every = sorted({test for _, tests, _ in planned for test in tests})
    if every:
        session = Task(
            -1, every, None, exitfirst=False, plugin=Session(planned, work, jobs, timeout, root)
        )
        run([session], root, work, jobs=1, timeout=float("inf"), done=lambda *_: None)
    fresh = [t for t in tasks if t not in quick]
    for task in quick:
        record = read(work, task.key)
        if record and "error" not in record:
            finish(task, 0, record)
        else:
            fresh.append(task)  # the swap did not apply: run it as a new process
    return fresh


__all__ = ["DAYS", "ArticleProof", "Outcome", "day_sample", "enforced", "plan", "prove"]
