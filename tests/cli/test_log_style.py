"""One log style per output, whichever command: readable text on a person's terminal (a real
pseudo-terminal here), JSON lines in a pipe, and JSON on the stream systemd names as its journal
(`$JOURNAL_STREAM`), even were that a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path

from tests.daemon.cli_support import TABLED, environment


def _on_a_terminal(
    args: list[str], until: str, cwd: Path, **env: str
) -> tuple[str, subprocess.Popen[bytes]]:
    """Run `tabled ARGS` with stdout and stderr on a pseudo-terminal until `until` shows."""
    master, slave = pty.openpty()
    if "JOURNAL_STREAM" in env:  # the terminal itself named as systemd's journal stream
        st = os.fstat(slave)
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    proc = subprocess.Popen(
        [*TABLED, *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=environment(**env),
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    while until.encode() not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    proc.send_signal(signal.SIGTERM)
    # Keep reading what it says while it stops (a full terminal would block it).
    while proc.poll() is None:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    proc.wait(timeout=60)
    os.close(master)
    return seen.decode(errors="replace").replace("\r\n", "\n"), proc


def _log_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "device.link_up" in line]


def test_tabled_run_on_a_terminal_logs_text_and_says_its_address(tmp_path: Path) -> None:
    said, _ = _on_a_terminal(
        ["run", "--http", "127.0.0.1:0", "--journal", str(tmp_path / "j")],
        "console and API: http://",
        tmp_path,
    )
    lines = _log_lines(said)
    assert lines, said
    assert all("[info" in line and not line.startswith("{") for line in lines), lines
    assert "console and API: http://127.0.0.1:" in said
    assert '{"http"' not in said


def test_tabled_run_logs_json_in_a_pipe_and_prints_its_address_as_json(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*TABLED, "run", "--http", "127.0.0.1:0", "--journal", str(tmp_path / "j")],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "err").open("w"),
        text=True,
        cwd=tmp_path,
        env=environment(),
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert json.loads(first)["http"].startswith("http://127.0.0.1:")
    logged = [line for line in (tmp_path / "err").read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in logged if line.startswith("{")]
    assert any(r["event"] == "device.link_up" for r in records), logged
    # Every line of the log is JSON but the one-line warnings the CLI prints for a person.
    assert all(line.startswith(("{", "tabled run: warning:")) for line in logged), logged


def test_under_systemd_the_journal_stream_gets_json_even_on_a_terminal(tmp_path: Path) -> None:
    said, _ = _on_a_terminal(
        ["run", "--journal", str(tmp_path / "j")],
        '"event": "table.running"',
        tmp_path,
        JOURNAL_STREAM="set below",
        INVOCATION_ID="0123456789abcdef0123456789abcdef",
    )
    lines = _log_lines(said)
    assert lines, said
    assert all(json.loads(line)["event"] == "device.link_up" for line in lines), lines


def test_other_commands_log_in_the_same_styles(tmp_path: Path) -> None:
    said, _ = _on_a_terminal(["devices"], "shuffler", tmp_path)
    lines = _log_lines(said)
    assert lines and all("[info" in line for line in lines), said
    piped = subprocess.run(
        [*TABLED, "devices"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env=environment(),
    )
    records = [json.loads(line) for line in piped.stderr.splitlines() if line.strip()]
    assert {r["event"] for r in records} == {"device.link_up"}, piped.stderr
