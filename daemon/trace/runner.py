"""The proof's processes: pytest imported once here, a forked child per run of tests.

`run` forks up to `jobs` children at once, each running pytest on its `Task`'s tests (with
``-x`` unless told otherwise) after putting its mutant's text in its module's place at import
(`daemon.trace.hook`, also for every process the tests start: ``sitecustomize`` on
``PYTHONPATH``). A child past the timeout is killed with its process group. Each child writes
``<key>.out`` (JSON: the first test that failed, how many ran, each one's seconds) and
``<key>.log`` (pytest's output) in the work folder.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from daemon.trace.hook import VARIABLE, install
from daemon.trace.mutants import Mutant

PYTEST_ARGS = ("-q", "-n", "0", "-p", "no:cacheprovider", "--no-header")
_OWN = ("daemon", "drivers", "simulators", "tests", "conftest", "sitecustomize", "__main__")


@dataclass
class Task:
    key: int
    tests: list[str]
    mutant: Mutant | None
    exitfirst: bool = True
    plugin: object | None = None  # a pytest plugin for the run (default: a `Recorder`)


@dataclass
class Done:
    exit: int | None  # pytest's exit status; None: killed at the timeout
    seconds: float


class Recorder:
    """A pytest plugin in the child: which test failed first, how many ran, each one's time."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.failed: str | None = None
        self.failures: list[str] = []
        self.ran = 0
        self.durations: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        nodeid = str(report.nodeid).split("[", 1)[0]  # a parametrized test counts as its mark's
        self.durations[nodeid] = self.durations.get(nodeid, 0.0) + float(report.duration)
        if report.when == "call":
            self.ran += 1
        if report.failed:
            self.failed = self.failed or str(report.nodeid)
            self.failures.append(str(report.nodeid))

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        record = {
            "failed": self.failed,
            "failures": self.failures,
            "ran": self.ran,
            "durations": self.durations,
        }
        self.out.write_text(json.dumps(record), encoding="utf-8")


def read(work: Path, key: int) -> dict[str, Any]:
    out = work / f"{key}.out"
    return dict(json.loads(out.read_text(encoding="utf-8"))) if out.exists() else {}


def warm(modules: Iterable[str] = ()) -> None:
    """Load pytest's plugins and import the libraries the tests import (`modules`, as a session
    that collected them had them) once, here, so a forked child imports only the project."""
    for entry in entry_points(group="pytest11"):
        with contextlib.suppress(Exception):  # one that will not load here loads in the child
            entry.load()
    for name in modules:
        if name.split(".", 1)[0] in _OWN or "conftest" in name or name in sys.modules:
            continue
        with contextlib.suppress(BaseException):  # what will not import here, the child does
            importlib.import_module(name)


def use_mutant(mutant: Mutant, work: Path, key: int) -> Path:
    """Write the mutant's spec and name it for every process started from here on."""
    spec = work / f"{key}.json"
    data = {"module": mutant.module, "file": str(mutant.file), "source": mutant.source}
    spec.write_text(json.dumps(data), encoding="utf-8")
    os.environ[VARIABLE] = str(spec)
    return spec


def _forget_the_project() -> None:
    """Drop the project's modules this process imported (a test suite forking a proof has
    them), so the child's run imports them afresh, the mutant's module from its text."""
    for name in list(sys.modules):
        top = name.split(".", 1)[0]
        if (
            (top in _OWN or "conftest" in name)
            and name != "daemon"
            and not name.startswith("daemon.trace")
        ):
            del sys.modules[name]


def _child(task: Task, root: Path, work: Path) -> None:
    """In the forked child: put the mutant in place, run pytest, exit with its status."""
    os.setpgid(0, 0)
    log = os.open(work / f"{task.key}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    status = 3
    try:
        os.chdir(root)
        site = [str(work / "site"), os.environ.get("PYTHONPATH", "")]
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in site if p)
        _forget_the_project()
        if task.mutant is not None:
            install(str(use_mutant(task.mutant, work, task.key)))
        args = [*PYTEST_ARGS, *(["-x"] if task.exitfirst else [])]
        plugin = task.plugin or Recorder(work / f"{task.key}.out")
        status = int(pytest.main([*args, *task.tests], plugins=[plugin]))
    except BaseException as exc:  # the child reports, never returns
        print(f"the proof's child failed: {exc!r}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def reap(running: dict[int, tuple[Any, float]], timeout: float) -> Iterable[tuple[Any, Done]]:
    """The children that ended, or that ran past `timeout` (killed with their group)."""
    for pid, (what, started) in list(running.items()):
        ended, status = os.waitpid(pid, os.WNOHANG)
        late = not ended and time.monotonic() - started > timeout
        if late:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        if ended or late:
            del running[pid]
            code = None if late else os.waitstatus_to_exitcode(status)
            yield what, Done(code, time.monotonic() - started)


def run(
    tasks: Sequence[Task],
    root: Path,
    work: Path,
    *,
    jobs: int,
    timeout: float,
    done: Callable[[Task, Done], None],
) -> None:
    pending, running = list(tasks), dict[int, tuple[Any, float]]()
    while pending or running:
        while pending and len(running) < jobs:
            task = pending.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(task, root, work)
            running[pid] = (task, time.monotonic())
        time.sleep(0.02)
        for task, result in reap(running, timeout):
            done(task, result)
