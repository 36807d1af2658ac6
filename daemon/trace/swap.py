"""The proof's quick path: a function's mutant run in a test session collected once.

A pytest session collects every test of the proof once; for each mutant of a function it forks
a child that swaps the function's code for the mutant's (`swap`: the same function object, so
every reference to it, in a table or another module, runs the mutant) and runs the article's
tests in that child until one fails. Processes the tests start load the mutant's whole text at
import (`daemon.trace.hook`), as in the fresh path. The mutants of data (a constant, a field's
default, a table's entry) are read by other code when their module is imported, so they take
the fresh path (a new process importing the mutant's text), in `daemon.trace.prove`.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import CodeType
from typing import Any

from _pytest.runner import runtestprotocol

from daemon.trace.mutants import Mutant
from daemon.trace.reexec import Modules, RefusesToLoad
from daemon.trace.runner import reap, use_mutant


def _code(source: str, file: str, qualname: str) -> CodeType:
    stack = [compile(source, file, "exec", dont_inherit=True)]
    while stack:
        code = stack.pop()
        if code.co_qualname == qualname:
            return code
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
    raise LookupError(f"no code for {qualname} in the mutant")


def apply(m: Mutant) -> None:
    """Swap the code of `m.swap` (in its imported module) for the mutant's."""
    if m.swap is None:
        raise ValueError(f"{m.guard}: a mutant of data is not swapped")
    owner: Any = importlib.import_module(m.module)
    parts = m.swap.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    target = vars(owner)[parts[-1]] if isinstance(owner, type) else getattr(owner, parts[-1])
    target = getattr(target, "fget", None) or getattr(target, "__func__", None) or target
    while hasattr(target, "__wrapped__"):  # functools.cache and the like: the function inside
        if hasattr(target, "cache_clear"):
            target.cache_clear()
        target = target.__wrapped__
    code = _code(m.source, str(m.file), m.swap)
    if code.co_freevars != target.__code__.co_freevars:
        raise ValueError(f"{m.swap}: the mutant's free variables differ; it runs fresh")
    target.__code__ = code


class Session:
    """The pytest plugin of the quick path: runs `tasks` (key, tests, mutant) instead of the
    session's tests and writes ``<key>.out`` in `work` for each."""

    def __init__(
        self,
        tasks: Sequence[tuple[int, list[str], Mutant | None]],
        work: Path,
        jobs: int,
        timeout: float,
        root: Path,
        *,
        keep_going: bool = False,
    ) -> None:
        self.tasks, self.work, self.jobs, self.timeout = list(tasks), work, jobs, timeout
        self.root, self.keep_going = root, keep_going
        self.modules: Modules | None = None

    def pytest_runtestloop(self, session: Any) -> bool:
        # What the tests import, for the fresh path to import once before it forks (`warm`).
        (self.work / "modules.json").write_text(json.dumps(sorted(sys.modules)), encoding="utf-8")
        if any(mutant is not None and mutant.swap is None for _, _, mutant in self.tasks):
            self.modules = Modules(self.root)  # compiled once, for every child of data
        items: dict[str, list[Any]] = {}
        for item in session.items:
            items.setdefault(item.nodeid.split("[", 1)[0], []).append(item)
        pending, running = list(self.tasks), dict[int, tuple[Any, float]]()
        while pending or running:
            while pending and len(running) < self.jobs:
                key, tests, mutant = pending.pop(0)
                pid = os.fork()
                if pid == 0:
                    self._child(key, [i for t in tests for i in items.get(t, [])], mutant, session)
                running[pid] = (key, time.monotonic())
            time.sleep(0.02)
            for key, result in reap(running, self.timeout):
                if result.exit is None:
                    record = {"failed": "timeout", "ran": 0, "seconds": result.seconds}
                    (self.work / f"{key}.out").write_text(json.dumps(record), encoding="utf-8")
        return True

    def _child(self, key: int, items: list[Any], mutant: Mutant | None, session: Any) -> None:
        os.setpgid(0, 0)
        started = time.monotonic()
        record: dict[str, Any] = {"failed": None, "failures": [], "ran": 0, "durations": {}}
        try:
            if mutant is not None:
                use_mutant(mutant, self.work, key)  # for the processes the tests start
                if mutant.swap is not None:
                    apply(mutant)
                elif self.modules is not None:
                    record["reran"] = self.modules.run_again(mutant)
                else:
                    raise LookupError("no modules to run again")
            for index, item in enumerate(items):
                following = items[index + 1] if index + 1 < len(items) else None
                reports = runtestprotocol(item, log=False, nextitem=following)
                base = item.nodeid.split("[", 1)[0]
                spent = sum(float(r.duration) for r in reports)
                record["durations"][base] = record["durations"].get(base, 0.0) + spent
                record["ran"] += 1
                if any(r.failed for r in reports):
                    record["failures"].append(item.nodeid)
                    record["failed"] = record["failed"] or item.nodeid
                    if not self.keep_going:
                        session._setupstate.teardown_exact(None)
                        break
        except RefusesToLoad as exc:
            record["failed"] = str(exc)[:300]  # killed at import: no test could even load
        except BaseException as exc:  # the child reports, never returns
            record["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            record["seconds"] = time.monotonic() - started
            try:
                (self.work / f"{key}.out").write_text(json.dumps(record), encoding="utf-8")
            finally:
                sys.stdout.flush()
                os._exit(0)
