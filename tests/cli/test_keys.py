"""`tabled keys init|show|rotate` and the table that will not ship without its key, as processes."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from daemon.journal.format import journal_files
from daemon.journal.provenance import KEY_ROTATED, parse_public, verify_rotation
from daemon.shipper.cursor import journal_writer_running
from tests.shipper.support import ENV, TABLED, tabled


def config(tmp_path: Path, feed: bool = True) -> Path:
    path = tmp_path / "T.toml"
    text = (
        '[table]\nid = "T07"\n[journal]\ndir = "j"\ndurability = "none"\n'
        '[api]\ntokens_file = "secret/tokens.toml"\n'
    )
    for i, name in enumerate(("shuffler", "dice_shaker", "shoe_reader", "timer_bell")):
        text += f'[devices.{name}]\nport = "sim://{name}?seed={3 + i}&speed=0"\n'
    if feed:
        text += '[feed]\nservers = ["nats://127.0.0.1:9"]\nconnect_timeout_seconds = 0.2\n'
    path.write_text(text)
    return path


def test_init_show_and_the_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config(tmp_path)
    # Relative paths in the config are the working directory's: run from the config's folder.
    monkeypatch.chdir(tmp_path)
    refused = tabled("run", "--config", str(cfg), "--autoplay", "1")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"tabled keys init --config {cfg}" in refused.stderr
    assert "secret/table.key: no signing key" in refused.stderr  # beside the tokens file
    assert not (tmp_path / "j").exists(), "nothing journaled before the refusal"

    made = tabled("keys", "init", "--config", str(cfg))
    assert made.returncode == 0, made.stderr
    key = tmp_path / "secret" / "table.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    public = made.stdout.strip().splitlines()[-1]
    parse_public(public)
    again = tabled("keys", "init", "--config", str(cfg))
    assert again.returncode == 1 and "never replaced" in again.stderr
    assert made.stdout.strip().splitlines()[-1] == public

    shown = tabled("keys", "show", "--config", str(cfg))
    assert shown.returncode == 0
    lines = shown.stdout.strip().splitlines()
    assert lines[-1] == public and lines[0] == "table T07"
    fingerprint = next(x for x in lines if x.startswith("fingerprint ")).split()[1]
    assert len(fingerprint) == 19 and fingerprint.count("-") == 3

    key.chmod(0o640)
    loose = tabled("keys", "show", "--config", str(cfg))
    assert loose.returncode == 1 and f"chmod 600 {key}" in loose.stderr
    run = tabled("run", "--config", str(cfg), "--autoplay", "1")
    assert run.returncode == 2 and "mode 0640" in run.stderr
    key.chmod(0o600)


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A table without a feed, its key made; run from its folder (relative paths)."""
    cfg = config(tmp_path, feed=False)
    monkeypatch.chdir(tmp_path)
    assert tabled("keys", "init", "--config", str(cfg)).returncode == 0
    return cfg


def test_rotation_is_a_line_signed_by_the_old_key(tmp_path: Path, keyed: Path) -> None:
    cfg = keyed
    old = tabled("keys", "show", "--config", str(cfg)).stdout.strip().splitlines()[-1]
    assert tabled("run", "--config", str(cfg), "--autoplay", "1").returncode == 0
    rotated = tabled("keys", "rotate", "--config", str(cfg))
    assert rotated.returncode == 0, rotated.stderr
    new = rotated.stdout.strip().splitlines()[-1]
    assert new != old
    assert tabled("keys", "show", "--config", str(cfg)).stdout.strip().splitlines()[-1] == new
    last = journal_files(tmp_path / "j")[-1].read_bytes().splitlines()[-1]
    line = json.loads(last)
    assert line["event"] == KEY_ROTATED and line["payload"]["old_key"] == old
    assert verify_rotation("T07", line["payload"]) == new
    assert verify_rotation("T08", line["payload"]) is None  # bound to the table
    retired = list((tmp_path / "secret").glob("table.key.retired-*"))
    assert len(retired) == 1 and stat.S_IMODE(retired[0].stat().st_mode) == 0o600
    verify = tabled("verify-log", str(tmp_path / "j"))
    assert verify.returncode == 0, verify.stdout


def test_a_rotation_while_the_table_runs_is_refused_and_changes_nothing(
    tmp_path: Path, keyed: Path
) -> None:
    cfg = keyed
    key = tmp_path / "secret" / "table.key"
    before = key.read_bytes()
    running = subprocess.Popen(
        [*TABLED, "run", "--config", str(cfg)], env=ENV, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "j").is_dir() or not journal_writer_running(tmp_path / "j"):
            assert running.poll() is None and time.monotonic() < deadline, "the table ran"
            time.sleep(0.2)
        refused = tabled("keys", "rotate", "--config", str(cfg))
        assert refused.returncode == 3, refused.stderr
        assert refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
        assert "table T07 is running" in refused.stderr
        assert (
            "stop it (`systemctl stop tabled`, or Ctrl-C on `tabled run`), run `tabled keys "
            f"rotate --config {cfg}` again, then start it; nothing was changed"
        ) in refused.stderr
    finally:
        running.send_signal(signal.SIGTERM)
        running.wait(timeout=60)
    assert key.read_bytes() == before
    assert sorted(p.name for p in key.parent.iterdir()) == ["table.key"]  # no .next, no retired
    files = journal_files(tmp_path / "j")
    lines = [json.loads(x) for f in files for x in f.read_bytes().splitlines()]
    assert lines and not [x for x in lines if x["event"] == KEY_ROTATED]
    # Stopped, the same command rotates.
    assert tabled("keys", "rotate", "--config", str(cfg)).returncode == 0
