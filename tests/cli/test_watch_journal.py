"""`tabled status --watch` on a real pseudo-terminal against a running table, `tabled journal`
on a journal folder with no daemon, `tabled completion bash` sourced in bash and `tabled
completion zsh` in an interactive zsh: each as the person at the shell uses it."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import subprocess
import termios
import time
from pathlib import Path

import pytest

from daemon.cli.watch import ENTER, LEAVE
from tests.daemon.cli_support import TABLED, environment, serving, tabled


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pseudo-terminal, so
    a typed Ctrl-C reaches it as a terminal's does."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """`tabled ARGS` with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(
        self, args: list[str], cwd: Path, program: list[str] | None = None, **env: str
    ) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [*(program or TABLED), *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
            env=environment(**env),
            preexec_fn=_own_terminal,  # noqa: PLW1509 - the test's one thread spawns it
        )  # fmt: skip
        os.close(slave)
        self.seen = b""

    def read_until(self, text: str, timeout: float = 60.0) -> str:
        """What the terminal shows from here until `text` appears (AssertionError if not)."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} not shown; the terminal shows:\n{self.seen[-3000:]!r}"
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                assert chunk, f"{text!r} not shown before the end:\n{self.seen[-3000:]!r}"
                self.seen += chunk
        return self.seen[start:].decode(errors="replace")

    def ctrl_c(self) -> int:
        """Ctrl-C typed at the terminal (the line discipline makes it a SIGINT)."""
        os.write(self.master, b"\x03")
        deadline = time.monotonic() + 30
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    break
        status = self.proc.wait(timeout=10)
        os.close(self.master)
        return status


def test_status_watch_is_a_live_view_that_follows_the_table(tmp_path: Path) -> None:
    token = tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=tmp_path)
    assert token.returncode == 0, token.stderr
    env = {"TABLED_TOKEN": token.stdout.strip()}
    with serving("--http", "127.0.0.1:0", cwd=tmp_path) as (url, _process):
        view = Terminal(["status", "--watch", "--interval", "0.3"], tmp_path, **env)
        first = view.read_until("Ctrl-C to quit")
        assert ENTER in first  # the alternate screen: the shell's screen comes back after
        assert "T01 thirteen" in first and "phase EQUIPMENT_CHECK" in first
        assert "device shuffler: link" in first
        # The table moves on; the view follows without a keystroke.
        for _ in range(60):
            act = tabled("act", "open_table", cwd=tmp_path, **env)
            if act.returncode == 0:
                break
            time.sleep(0.5)  # the devices are still being identified
        assert act.returncode == 0, act.stderr
        phase = json.loads(tabled("status", "--json", cwd=tmp_path, **env).stdout)["state"]["phase"]
        assert phase != "EQUIPMENT_CHECK"
        view.read_until(f"phase {phase}")
        assert view.ctrl_c() == 0
        assert view.seen.decode(errors="replace").endswith(LEAVE)
    # The table gone, the view says so and keeps trying (it is not a crash).
    view = Terminal(["status", "--watch", "--url", url], tmp_path, **env)
    said = view.read_until("NOT UPDATED")
    assert "cannot reach the table at" in said
    assert view.ctrl_c() == 0


def test_status_watch_with_a_refused_token_ends_with_the_usual_message(tmp_path: Path) -> None:
    tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=tmp_path)
    with serving("--http", "127.0.0.1:0", cwd=tmp_path):
        wrong = {"TABLED_TOKEN": "not-a-token"}
        view = Terminal(["status", "--watch"], tmp_path, **wrong)
        said = view.read_until("is not one this table knows")
        assert view.proc.wait(timeout=30) == 3
        assert LEAVE in said


def test_journal_reads_a_folder_with_no_daemon(tmp_path: Path) -> None:
    played = tabled(
        "run", "--autoplay", "2", "--seed", "3", "--journal", "var/journal", cwd=tmp_path
    )
    assert played.returncode == 0, played.stderr
    folder = tmp_path / "var" / "journal"
    # No daemon, no --url: the config's journal folder is read from its files.
    last = tabled("journal", "--limit", "2", cwd=tmp_path)
    assert last.returncode == 0, last.stderr
    lines = last.stdout.splitlines()
    assert len(lines) == 2 and lines[-1].startswith("#") and "table.stopped" in lines[-1]
    # --dir names any folder (a copy of an archive); the filters are the API's.
    violations = tabled("journal", "--dir", str(folder), "--event", "table.violation", "--json")
    assert violations.returncode == 0, violations.stderr
    events = [json.loads(line) for line in violations.stdout.splitlines()]
    assert events and all(e["event"] == "table.violation" for e in events)
    assert all(e["payload"]["article"] for e in events)
    by_round = tabled("journal", "--dir", str(folder), "--round", "1", "--limit", "1000", "--json")
    rounds = {json.loads(line)["round"] for line in by_round.stdout.splitlines()}
    assert rounds == {1}
    missing = tabled("journal", "--dir", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr == f"tabled: {tmp_path / 'nowhere'}: no such journal folder\n"


def test_journal_follows_a_folder_as_it_grows(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    assert tabled("run", "--autoplay", "1", "--journal", str(folder)).returncode == 0
    follow = subprocess.Popen(
        [*TABLED, "journal", "--dir", str(folder), "--follow", "--limit", "1"],
        stdout=subprocess.PIPE, text=True, env=environment(),
    )  # fmt: skip
    try:
        assert follow.stdout is not None
        assert "table.stopped" in follow.stdout.readline()
        assert tabled("run", "--autoplay", "1", "--journal", str(folder)).returncode == 0
        seen = ""
        while "table.stopped" not in seen:  # the second run's lines, to its own stop
            line = follow.stdout.readline()
            assert line, "the follower ended"
            seen = line
    finally:
        follow.terminate()
        follow.wait(timeout=30)


def test_bash_completion_sourced_in_bash(tmp_path: Path) -> None:
    script = tabled("completion", "bash")
    assert script.returncode == 0, script.stderr
    (tmp_path / "tabled.bash").write_text(script.stdout)
    probe = r"""
source ./tabled.bash
complete -p tabled
c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _tabled
      echo "$*|${COMPREPLY[*]}"; }
c tabled ''
c tabled fl
c tabled floor ''
c tabled run --pa
c tabled run --log-level w
c tabled status --w
c tabled feed ''
c tabled diagram ''
c tabled diagram paigow ''
c tabled completion ''
"""
    run = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", probe],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "complete -o default -F _tabled tabled"
    got = dict(line.split("|", 1) for line in lines[1:])
    assert set(got["tabled "].split()) >= {"run", "status", "journal", "floor", "completion"}
    assert got["tabled fl"] == "floor"
    assert set(got["tabled floor "].split()) >= {"report", "enrol", "tables", "demo"}
    assert got["tabled run --pa"] == "--pace"
    assert got["tabled run --log-level w"] == "warning"
    assert got["tabled status --w"] == "--watch"
    assert set(got["tabled feed "].split()) >= {"status", "ship", "replay"}
    assert got["tabled diagram "] == "paigow thirteen"
    assert got["tabled diagram paigow "] == ""  # then file names (complete -o default)
    assert got["tabled completion "] == "bash zsh"
    zsh = tabled("completion", "zsh")
    assert zsh.stdout.startswith("#compdef tabled\n") and "bashcompinit" in zsh.stdout


ZSH = shutil.which("zsh", path=os.environ.get("PATH", "") + ":/usr/bin:/bin")


@pytest.mark.skipif(ZSH is None, reason="needs zsh (apt-get install -y zsh)")
def test_zsh_completion_on_a_real_tab_in_an_interactive_zsh(tmp_path: Path) -> None:
    """`tabled completion zsh > "${fpath[1]}/_tabled"` as the docs say, then TAB pressed in an
    interactive zsh on a terminal: the line each TAB leaves (issue 23; zsh once completed
    nothing: it reads `${map["$key"]}` with the quotes in the key, and `path` is its PATH)."""
    script = tabled("completion", "zsh")
    assert script.returncode == 0, script.stderr
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_tabled").write_text(script.stdout)
    lines = tmp_path / "lines"
    lines.write_text("")
    # The completion system as a user's .zshrc starts it; Ctrl-X writes the line and clears it.
    (tmp_path / ".zshrc").write_text(
        f"fpath=({functions} $fpath)\n"
        "autoload -U compinit && compinit -u -D\n"
        f'said() {{ print -r -- "$BUFFER" >> {lines}; BUFFER=; }}\n'
        "zle -N said; bindkey '^X' said\nPS1='> '\n"
    )
    typed = {
        "tabled fl": "tabled floor ",  # the first TAB: the function is autoloaded, then completes
        "tabled run --pa": "tabled run --pace ",
        "tabled run --log-level w": "tabled run --log-level warning ",
        "tabled diagram pa": "tabled diagram paigow ",
        "tabled feed st": "tabled feed status ",
        "tabled completion z": "tabled completion zsh ",
    }
    assert ZSH is not None
    shell = Terminal(
        ["-i"], tmp_path, [ZSH], ZDOTDIR=str(tmp_path), HOME=str(tmp_path), TERM="xterm"
    )
    try:
        shell.read_until("> ")  # the prompt: compinit has run
        for number, line in enumerate(typed, start=1):
            # TAB, then Ctrl-X: zle reads keys in order, so the TAB completes first.
            os.write(shell.master, f"{line}\t\x18".encode())
            deadline = time.monotonic() + 60  # a hang guard: the shell answers as it reads
            while len(lines.read_text().splitlines()) < number:
                assert time.monotonic() < deadline, shell.seen[-2000:]
                if select.select([shell.master], [], [], 0.2)[0]:
                    shell.seen += os.read(shell.master, 65536)  # so zsh never blocks on it
        assert lines.read_text().splitlines() == list(typed.values())
    finally:
        shell.proc.kill()
        shell.proc.wait(timeout=10)
        os.close(shell.master)
