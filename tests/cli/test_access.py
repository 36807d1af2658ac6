"""What a person is told when the table's files are not theirs to use, or the config has a typo:
`tabled run` as a process, one line naming the folder, the user, the nearest key."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.daemon.cli_support import TABLED, environment, tabled

SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")


def _as_a_person(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`tabled ARGS` as someone file permissions apply to: root without the capability that
    overrides them (the venv's interpreter is under root's home, closed to other users)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if SETPRIV is None:
            pytest.skip("setpriv (util-linux) drops root's override of file permissions")
        prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search", "--"]
    return subprocess.run(
        [*prefix, *TABLED, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=environment(),
    )


@pytest.mark.parametrize("exists", [False, True])
def test_a_journal_folder_nobody_may_write_is_named_with_the_user(
    tmp_path: Path, exists: bool
) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    folder = closed / "journal"
    if exists:
        folder.mkdir()
        folder.chmod(0o555)
    else:
        closed.chmod(0o555)
    try:
        run = _as_a_person("run", "--autoplay", "1", "--journal", str(folder), cwd=tmp_path)
    finally:
        closed.chmod(0o755)
        if exists:
            folder.chmod(0o755)
    user = "root" if os.geteuid() == 0 else os.environ.get("USER", "")
    assert run.returncode == 1, run.stderr
    assert "Errno" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    line = run.stderr.strip()
    assert line.startswith(f"tabled run: journal folder {folder}: user {user} (uid "), line
    assert "dr-xr-xr-x" in line and "write access" in line, line
    assert len(line.splitlines()) == 1


def test_a_config_typo_names_the_nearest_key(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[table]\nid = "T01"\ngame = "thirteen"\nrulset = "hk-common"\n[jornal]\n')
    run = tabled("run", "--config", str(config), "--autoplay", "1")
    assert run.returncode == 2
    assert run.stderr == (
        f"tabled run: {config}: table.rulset: unknown key; did you mean 'ruleset'?; "
        "jornal: unknown key; did you mean 'journal'? (the file's sections: table, devices, "
        "journal, api, feed, rules)\n"
    )
