from __future__ import annotations

import subprocess
import sys


def run_tabled(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_help_lists_every_command() -> None:
    result = run_tabled("--help")
    assert result.returncode == 0
    for name in (
        "run",
        "sim",
        "devices",
        "verify-log",
        "diagram",
        "rules",
        "status",
        "act",
        "journal",
        "token",
    ):
        assert f"  {name}" in result.stdout


def test_unknown_command_is_a_clear_error() -> None:
    result = run_tabled("shuffle-everything")
    assert result.returncode == 2
    assert "unknown command 'shuffle-everything'" in result.stderr
