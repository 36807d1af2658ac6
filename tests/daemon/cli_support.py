"""Running `tabled` as a person does: a process, its output, its exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TABLED = [sys.executable, "-m", "daemon"]


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLED_", "NO_PROGRESS"))}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def tabled(
    *args: str, cwd: Path | None = None, timeout: float = 90, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLED, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=environment(**env),
    )


@contextmanager
def serving(*args: str, cwd: Path | None = None) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`tabled run --http ... ARGS` until its API listens; SIGTERM on the way out. Yields the URL
    it printed and the process (its stderr is a file in `cwd`, read after it stops)."""
    folder = cwd or Path.cwd()
    stderr = (folder / "run-stderr.txt").open("w")
    process = subprocess.Popen(
        [*TABLED, "run", *args],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        cwd=cwd,
        env=environment(),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            process.wait(timeout=30)
            raise AssertionError((folder / "run-stderr.txt").read_text())
        url: str = json.loads(line)["http"]
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        stderr.close()


def journal_lines(directory: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(directory.glob("journal-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
