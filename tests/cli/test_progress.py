"""The progress bar: drawn in place on a terminal, never into a pipe or a file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from daemon.cli.progress import DELAY, Progress
from daemon.journal.format import journal_files
from daemon.journal.verifier import verify
from tests.daemon.cli_support import TABLED, environment, tabled


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_bar_is_drawn_in_place_on_a_terminal_after_a_moment_then_erased() -> None:
    master, slave = os.openpty()
    clock = Clock()
    with os.fdopen(slave, "w") as terminal:
        bar = Progress("verify-log", 10, stream=terminal, clock=clock, unit=" lines")
        assert bar.enabled  # a terminal
        bar.advance(5)  # too soon: short work never flickers a bar
        clock.now += DELAY
        bar.advance()
        assert bar.line() == "verify-log [" + "#" * 18 + "." * 12 + "]  60%  6/10 lines"
        bar.close()
    said = _read_all(master)
    os.close(master)
    assert said.count("verify-log [") == 1
    assert said.startswith("\rverify-log [") and said.endswith("\r")


def test_no_bar_into_a_pipe() -> None:
    read, write = os.pipe()
    with os.fdopen(write, "w") as pipe:
        bar = Progress("trace", 3, stream=pipe, clock=Clock())
        assert not bar.enabled
        bar.advance(3)
        bar.close()
    with os.fdopen(read) as got:
        assert got.read() == ""


def test_verify_log_feeds_its_bar_every_byte_of_the_journal(tmp_path: Path) -> None:
    run = tabled("run", "--autoplay", "2", "--journal", str(tmp_path / "j"))
    assert run.returncode == 0, run.stderr
    total = sum(p.stat().st_size for p in journal_files(tmp_path / "j"))
    seen: list[int] = []
    assert verify(tmp_path / "j", progress=seen.append).ok
    assert sum(seen) == total
    # Through a pipe (a script, a test, systemd): the output is the result alone.
    piped = tabled("verify-log", str(tmp_path / "j"))
    assert piped.returncode == 0 and piped.stderr == ""


def test_a_long_autoplay_shows_its_rounds_on_a_terminal_and_nothing_in_a_pipe(
    tmp_path: Path,
) -> None:
    master, slave = os.openpty()
    process = subprocess.Popen(
        [*TABLED, "run", "--autoplay", "40", "--journal", str(tmp_path / "j")],
        stdout=subprocess.PIPE, stderr=slave, env=environment(), text=True,
    )  # fmt: skip
    os.close(slave)
    said = _read_all(master)
    os.close(master)
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0
    assert "autoplay thirteen [" in said and "/40 rounds" in said
    assert "\r" in said and said.rstrip(" ").endswith("\r")  # erased before the summary
    assert "autoplay: 40 round(s)" in out and "[" not in out.splitlines()[0]
    piped = tabled("run", "--autoplay", "40", "--journal", str(tmp_path / "k"))
    assert piped.returncode == 0 and "rounds" not in piped.stderr
