"""docs/operations.md's wheel line, run as written (with a temp folder for `dist`): it builds
with what the project installs (pip), and the wheel holds the packages and the embedded config."""

from __future__ import annotations

import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.daemon.cli_support import REPO, environment


def test_the_documented_wheel_build_works(tmp_path: Path) -> None:
    text = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("python3.11 -m pip wheel"))
    words = shlex.split(line.split("#", 1)[0])
    assert "build" not in words[:3], line  # not `python -m build`: the project does not install it
    words[0] = sys.executable
    words[words.index("-w") + 1] = str(tmp_path)
    built = subprocess.run(
        words, cwd=REPO, capture_output=True, text=True, timeout=600, check=False, env=environment()
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("tabled-*-py3-none-any.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"daemon/_config/table.toml", "daemon/_config/paigow.toml"} <= names
    assert {"daemon/cli/__init__.py", "drivers/__init__.py", "simulators/__init__.py"} <= names
