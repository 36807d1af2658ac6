"""The journal's files are the daemon's user's alone (daemon/journal/private.py): another local
user of the table PC reads no hidden card from them, with the daemon running or not.

Run as root (as the tests are): `tabled run` as root, the other user `nobody` through setpriv,
each as a process."""

from __future__ import annotations

import json
import os
import pwd
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.api.user import setpriv
from daemon.config import JournalConfig
from daemon.journal import Journal
from daemon.journal.format import file_name, journal_files
from tests.daemon.cli_support import TABLED, environment, journal_lines, serving, tabled

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="runs another user: needs root")


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder another user may reach (pytest's own are root's alone), 0711 like a home."""
    with tempfile.TemporaryDirectory(prefix="tabled-private-") as name:
        folder = Path(name)
        folder.chmod(0o711)
        yield folder


def as_nobody(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`tabled ARGS` as the user `nobody` (one group, no capability)."""
    user = pwd.getpwnam("nobody")
    path = setpriv()
    assert path is not None
    return subprocess.run(
        [path, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
         "--inh-caps=-all", "--bounding-set=-all", "--", *TABLED, *args],
        capture_output=True, text=True, timeout=90, cwd=cwd, env=environment(**env), check=False,
    )  # fmt: skip


def modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.lstat().st_mode) for p in [folder, *folder.iterdir()]}


def test_another_user_reads_no_line_from_the_files_and_old_modes_are_tightened(
    place: Path,
) -> None:
    folder = place / "var" / "journal"
    played = tabled("run", "--autoplay", "2", "--seed", "3", "--journal", str(folder), cwd=place)
    assert played.returncode == 0, played.stderr
    held = modes(folder)
    assert held.pop("journal") == 0o711  # passed through to api.json by name, never listed
    assert held and all(mode == 0o600 for mode in held.values()), held

    # Nobody else reads the lines: not listed, not opened, and `tabled journal` (no daemon
    # runs: it would read the files) says what to do instead.
    refused = as_nobody("journal", "--dir", str(folder), cwd=place)
    assert refused.returncode == 2, refused.stdout
    assert refused.stdout == ""
    assert "ask the running daemon with your token" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    default = as_nobody("journal", cwd=place)  # the config's folder, found from the cwd
    assert default.returncode == 2 and default.stdout == "", default.stdout

    # A folder left open (written before this rule, or copied with its modes): still not shown
    # to another user, whose role nothing decides; then tightened when the table next opens it.
    folder.chmod(0o755)
    for path in folder.iterdir():
        if path.name != ".journal.key":  # the anchor's key, others could read: refused instead
            path.chmod(0o644)
    opened = as_nobody("journal", "--dir", str(folder), "--limit", "1000", cwd=place)
    assert opened.returncode == 2 and opened.stdout == "", opened.stdout
    assert "only their owner (root) reads them without the daemon" in opened.stderr

    again = tabled("run", "--autoplay", "0", "--journal", str(folder), cwd=place)
    assert again.returncode == 0, again.stderr
    held = modes(folder)
    assert held.pop("journal") == 0o711
    assert all(mode == 0o600 for mode in held.values()), held
    opening = [e for e in journal_lines(folder) if e["event"] == "journal.opened"][-1]
    tightened = opening["payload"]["tightened"]
    assert "journal: 0755 -> 0711" in tightened
    assert any(t.startswith("journal-") and t.endswith("0644 -> 0600") for t in tightened)

    # The owner (root here) reads every line from the files as before.
    whole = tabled("journal", "--dir", str(folder), "--limit", "3", cwd=place)
    assert whole.returncode == 0 and len(whole.stdout.splitlines()) == 3, whole.stderr


def test_served_the_folder_is_shared_with_the_api_user_alone(place: Path) -> None:
    token = tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=place)
    assert token.returncode == 0, token.stderr
    api = pwd.getpwnam("tabled-api")
    folder = place / "var" / "journal"
    with serving("--http", "127.0.0.1:0", cwd=place) as (_url, _process):
        st = folder.stat()
        assert stat.S_IMODE(st.st_mode) == 0o2751 and st.st_gid == api.pw_gid
        files = {p.name: p.stat() for p in folder.iterdir()}
        lines = [name for name in files if name.startswith("journal-")]
        assert lines
        for name, file in files.items():
            want = 0o640 if name in lines else 0o644 if name == "api.json" else 0o600
            assert stat.S_IMODE(file.st_mode) == want, (name, oct(file.st_mode))
            if name in lines:
                assert file.st_gid == api.pw_gid
        # Another user finds the daemon through api.json (by name, in the 0711 folder) and is
        # served what a dealer may see, with a dealer's token; the files themselves, nothing.
        served = as_nobody(
            "journal", "--limit", "1000", "--json", cwd=place, TABLED_TOKEN=token.stdout.strip()
        )
        assert served.returncode == 0, served.stderr
        events = [json.loads(line) for line in served.stdout.splitlines()]
        assert events and {e["seq"] for e in events} <= {e["seq"] for e in journal_lines(folder)}
        direct = as_nobody("journal", "--dir", str(folder), cwd=place)
        assert direct.returncode == 2 and direct.stdout == ""


def test_a_file_held_open_before_the_tightening_reads_no_line_written_after(place: Path) -> None:
    """Another user opened the last line file while it was 0644 and keeps its descriptor: the
    tightening cannot take that back, so the reopened table writes its new lines to a new file
    (the chain unbroken), and the descriptor reads nothing after what it could read before."""
    folder = place / "journal"
    played = tabled("run", "--autoplay", "1", "--seed", "3", "--journal", str(folder), cwd=place)
    assert played.returncode == 0, played.stderr
    folder.chmod(0o755)
    segments = sorted(folder.glob("journal-*.jsonl"))
    for path in segments:
        path.chmod(0o644)
    before = segments[-1].stat().st_size
    user = pwd.getpwnam("nobody")
    path = setpriv()
    assert path is not None
    reader = (
        "import sys; f = open(sys.argv[1], 'rb'); f.seek(0, 2); print('open', flush=True); "
        "sys.stdin.readline(); print(len(f.read()), flush=True)"
    )
    with subprocess.Popen(
        [path, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--",
         sys.executable, "-c", reader, str(segments[-1])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ) as holder:  # fmt: skip
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        again = tabled("run", "--autoplay", "0", "--journal", str(folder), cwd=place)
        assert again.returncode == 0, again.stderr
        holder.stdin.write("\n")
        holder.stdin.flush()
        seen = holder.stdout.readline().strip()
    assert seen == "0"  # nothing written after the reopen reached the held descriptor
    assert segments[-1].stat().st_size == before
    now = sorted(folder.glob("journal-*.jsonl"))
    assert len(now) == len(segments) + 1
    assert all(modes(folder)[p.name] == 0o600 for p in now)
    events = journal_lines(folder)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    first = json.loads(now[-1].read_text().splitlines()[0])  # the reopening's first line
    assert first["event"] == "journal.opened" and "tightened" in first["payload"]
    check = tabled("verify-log", "--json", str(folder))
    assert check.returncode == 0, check.stdout
    assert json.loads(check.stdout)["last_seq"] == events[-1]["seq"]


def hold_open(target: Path, gid: int) -> subprocess.Popen[str]:
    """`nobody`, in group `gid`, opens `target` at its end and waits: a line on its stdin makes
    it print how many bytes it then reads from that descriptor."""
    user = pwd.getpwnam("nobody")
    path = setpriv()
    assert path is not None
    reader = (
        "import sys; f = open(sys.argv[1], 'rb'); f.seek(0, 2); print('open', flush=True); "
        "sys.stdin.readline(); print(len(f.read()), flush=True)"
    )
    holder = subprocess.Popen(
        [path, f"--reuid={user.pw_uid}", f"--regid={gid}", "--clear-groups", "--",
         sys.executable, "-c", reader, str(target)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "open"
    return holder


def bytes_read_after(holder: subprocess.Popen[str]) -> int:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    seen = int(holder.stdout.readline().strip())
    holder.wait(timeout=30)
    return seen


def test_an_empty_last_file_open_to_others_is_replaced_not_reused(place: Path) -> None:
    """A crash right after a rotation leaves the newest file empty; left 0644 (a copy, an old
    version), another user may open it. Its name is the one the next line's file takes, so the
    reopened table replaces it with a new file: the held descriptor reads no line of it."""
    folder = place / "journal"
    played = tabled("run", "--autoplay", "1", "--seed", "3", "--journal", str(folder), cwd=place)
    assert played.returncode == 0, played.stderr
    last = journal_lines(folder)[-1]
    empty = folder / file_name(last["seq"] + 1, last["ts"][:10])
    empty.touch(mode=0o644)
    empty.chmod(0o644)
    folder.chmod(0o755)
    holder = hold_open(empty, pwd.getpwnam("nobody").pw_gid)
    again = tabled("run", "--autoplay", "0", "--journal", str(folder), cwd=place)
    assert again.returncode == 0, again.stderr
    assert bytes_read_after(holder) == 0
    events = journal_lines(folder)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[last["seq"]]["event"] == "journal.opened"  # the first line after the crash
    assert all(mode == 0o600 for name, mode in modes(folder).items() if name != "journal")
    check = tabled("verify-log", "--json", str(folder))
    assert check.returncode == 0, check.stdout


def test_sharing_with_another_group_starts_a_new_file(place: Path, tmp_path: Path) -> None:
    """The folder was shared with one group (an earlier `[api] user`) whose member holds the
    newest file open; shared now with another, what the table writes next goes to a new file,
    which the old group's descriptor cannot read."""
    old_group = pwd.getpwnam("nobody").pw_gid
    new_group = pwd.getpwnam("tabled-api").pw_gid
    config = JournalConfig(dir=place / "journal", durability="none")
    journal = Journal.open(config, "T01")
    try:
        journal.share(old_group)
        journal.append("table.started", actor="table", payload={}, commit=True)
        current = journal_files(config.dir)[-1]
        assert current.stat().st_gid == old_group
        holder = hold_open(current, old_group)
        changed = journal.share(new_group)
        moved = f"{current.name}: group {old_group} -> {new_group}"
        assert any(change.startswith(moved) for change in changed)
        journal.append("table.stopped", actor="table", payload={"hidden": "AS"}, commit=True)
        assert bytes_read_after(holder) == 0
        newest = journal_files(config.dir)[-1]
        assert newest != current and newest.stat().st_gid == new_group
        assert stat.S_IMODE(newest.stat().st_mode) == 0o640
    finally:
        journal.close()
    assert [e["seq"] for e in journal_lines(config.dir)] == [1, 2, 3]
