"""`tabled floor demo` as a person runs it: a process, from a root shell whose PATH lacks
/usr/sbin (no `runuser` on it), stopped with Ctrl-C (SIGINT to the demo's process alone).

Within 60 s of start its real tables differ in game, pace and state on the floor's API, the
autoplay's violations and faults have reached the floor, and after the SIGINT nothing of it is
left: no folder, no process."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.daemon.cli_support import TABLED, environment

pytestmark = pytest.mark.slow
WINDOW = 60.0  # seconds from start within which the tables must differ


def _lines(stream: Any) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    return lines


def _processes_naming(text: str) -> list[str]:
    """Every live process whose command line holds `text` (zombies have none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


@pytest.fixture
def tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temp folder the `postgres` user can enter (pytest's own are root's alone), as /tmp
    is on a root shell: the demo's folder goes there (TMPDIR)."""
    folder = Path(tempfile.mkdtemp(prefix="demo-test-", dir="/tmp"))
    folder.chmod(0o711)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_demo_real_tables_differ_and_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    started = time.monotonic()
    env = environment(PATH="/usr/bin:/bin", TMPDIR=str(tmp_path))
    demo = subprocess.Popen(
        [*TABLED, "floor", "demo", "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "demo-stderr.txt").open("w"),
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert demo.stdout is not None
    out = _lines(demo.stdout)
    said: list[str] = []
    url = token = folder = ""
    try:
        while not url:
            line = out.get(timeout=WINDOW)
            assert line, (
                "the demo ended before serving:\n"
                + "".join(said)
                + (tmp_path / "demo-stderr.txt").read_text()
            )
            said.append(line)
            if line.startswith("floor: "):
                url = line.split(" ", 1)[1].strip().rstrip("/")
            elif "admin token" in line:
                token = line.rsplit(" ", 1)[1].strip()
            elif ", folder " in line:
                folder = line.rsplit(" ", 1)[1].strip()
        assert folder.startswith(str(tmp_path)), said
        # Real tables: `tabled run --autoplay` processes, one a table, with their paces.
        runs = [p for p in _processes_naming(folder) if " run --config " in p]
        assert len(runs) == 3, runs
        assert {"--pace 0.3", "--pace 1.0", "--pace 0.7"} <= {
            "--pace " + p.split("--pace ", 1)[1].split(" ", 1)[0] for p in runs
        }

        headers = {"Authorization": f"Bearer {token}"}
        phases_seen: set[tuple[str, ...]] = set()
        tables: dict[str, dict[str, Any]] = {}
        violations: list[Any] = []
        faults: list[Any] = []
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            while time.monotonic() - started < WINDOW:
                rows = client.get("/api/tables").json()
                tables = {row["table"]: row for row in rows}
                if len(tables) == 3:
                    phases_seen.add(tuple(tables[t]["phase"] for t in sorted(tables)))
                violations = client.get("/api/violations").json()
                faults = client.get("/api/faults").json()
                differ = any(len(set(phases)) > 1 for phases in phases_seen)
                if (
                    differ
                    and violations
                    and faults
                    and len(tables) == 3
                    and tables["T01"]["last_seq"] > 2 * tables["T03"]["last_seq"] > 0
                ):
                    break
                time.sleep(1.0)
        # Game: both games are played.
        assert {row["game"] for row in tables.values()} == {"thirteen", "paigow"}, tables
        # State: at one moment the three tables were in different phases.
        assert any(len(set(phases)) > 1 for phases in phases_seen), phases_seen
        # Pace: the same game at 0.3 s a step has gone more than twice as far as at 0.7 s.
        assert tables["T01"]["last_seq"] > 2 * tables["T03"]["last_seq"] > 0, tables
        # The autoplay's attempted violations and injected device faults, shipped for real.
        assert violations, "no violation reached the floor"
        assert faults, "no device fault reached the floor"
        assert {row["table"] for row in tables.values()} == {"T01", "T02", "T03"}
        assert all(row["chain"] == "ok" for row in tables.values()), tables
        # The tables' clocks are the wall's: no line from the future (lag never below zero
        # by more than the machines' clock steps).
        assert all(row["lag_seconds"] > -2 for row in tables.values()), tables
    finally:
        demo.send_signal(signal.SIGINT)  # Ctrl-C, to the demo's process only
        status = demo.wait(timeout=90)
    assert status in (0, 130), status
    assert not [p for p in tmp_path.iterdir() if p.name != "demo-stderr.txt"]
    assert not _processes_naming(folder)
    assert "Traceback" not in (tmp_path / "demo-stderr.txt").read_text()


def test_demo_as_root_without_runuser_on_path(tmp_path: Path) -> None:
    """PostgreSQL refuses root; the demo's cluster runs as `postgres` with no `runuser` found
    on a short PATH (it drops privileges itself). Checked with a start that fails later: a
    floor port already taken, so the demo stops at once and cleans up."""
    if os.geteuid() != 0:
        pytest.skip("the root case")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [*TABLED, "floor", "demo", "--http", f"127.0.0.1:{port}"],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            env=environment(PATH="/usr/bin:/bin", TMPDIR=str(tmp_path)),
            cwd=tmp_path,
        )
    assert "runuser" not in proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert not list(tmp_path.iterdir())
