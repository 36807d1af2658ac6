"""`tabled run --http` as root runs its API process as `[api] user` (daemon.api.user): a user of
its own with no group, no capability, no write access to the journal's folder and no read access
to the tokens file or the table's signing key, while the consoles are served as before (the
people and the TLS key sent by the table's process, older journal lines read through a read-only
descriptor). Proven on the real daemon, as root; skipped only when the tests are not root."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import TOKENS, auth, write_tokens

from daemon.api.tokens import token_entry
from daemon.api.user import setpriv
from daemon.journal.provenance import TableKey, write_key
from tests.daemon.cli_support import journal_lines, serving, tabled
from tests.table.scenario_support import table_config, toml

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="only root can start the API process as another user"
)

API_USER = "tabled-api"  # [api] user's default; tests/conftest.py makes it when missing


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A table's folder every user may reach (as /var/lib/tabled is; pytest's own are root's
    alone), so that only each file's own owner and mode stand between the API process and it."""
    folder = Path(tempfile.mkdtemp(prefix="tabled-api-user-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


PEERED = "tabled-t-peered"  # made by `peered_user` with a group of its own
PEER = "tabled-t-peer"  # put in PEERED's group by the test


def _useradd(*args: str) -> None:
    tool = shutil.which(args[0], path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    assert tool is not None, args[0]
    subprocess.run([tool, *args[1:]], check=True, capture_output=True)


def add_user(name: str, *options: str) -> str:
    _useradd("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
             *options, name)  # fmt: skip
    return name


@pytest.fixture(autouse=True)
def peered_user(request: pytest.FixtureRequest) -> Iterator[None]:
    """PEERED (with its own group) for the tests of a group with other members; removed after
    with PEER, whom the test adds."""
    if "peer_" not in request.node.name:
        yield
        return
    for name in (PEER, PEERED):
        subprocess.run([shutil.which("userdel", path="/usr/sbin:/sbin") or "userdel", name],
                       capture_output=True, check=False)  # fmt: skip
    add_user(PEERED, "--user-group")
    try:
        yield
    finally:
        for name in (PEER, PEERED):
            _useradd("userdel", name)


def _setup(tmp_path: Path, **api: Any) -> Path:
    data = table_config(tmp_path / "journal")
    tokens = write_tokens(tmp_path / "tokens.toml")
    data["api"] = {"tokens_file": str(tokens), **api}
    path = tmp_path / "table.toml"
    path.write_text(toml(data))
    write_key(tmp_path / "table.key", TableKey.generate())  # beside the tokens file, 0600
    return path


def _api_pid(daemon: int) -> int:
    children = Path(f"/proc/{daemon}/task/{daemon}/children").read_text().split()
    for child in children:
        if b"daemon.api.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
            return int(child)
    raise AssertionError("no API process")


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


PROBE = """
import json, os, sys
journal, tokens, key = sys.argv[1:4]
out = {}
def attempt(name, f):
    try:
        f()
        out[name] = "allowed"
    except PermissionError:
        out[name] = "denied"
attempt("list_journal", lambda: os.listdir(journal))
first = sorted(n for n in os.listdir(journal) if n.startswith("journal-"))[0]
attempt("read_journal", lambda: open(os.path.join(journal, first), "rb").read(1))
attempt("append_journal", lambda: open(os.path.join(journal, first), "ab"))
attempt("create_in_journal", lambda: open(os.path.join(journal, "forged.jsonl"), "xb"))
attempt("rename_journal", lambda: os.rename(os.path.join(journal, first), journal + "/x"))
attempt("read_tokens", lambda: open(tokens, "rb").read(1))
attempt("write_tokens", lambda: open(tokens, "ab"))
attempt("read_key", lambda: open(key, "rb").read(1))
print(json.dumps(out))
"""


def test_the_api_process_runs_as_its_own_user_and_cannot_touch_the_journal_or_secrets(
    tmp_path: Path,
) -> None:
    config = _setup(tmp_path)
    user = pwd.getpwnam(API_USER)
    journal, tokens, key = tmp_path / "journal", tmp_path / "tokens.toml", tmp_path / "table.key"
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        # Served as before: a person signs in (the people were sent, not read), the journal's
        # first lines are read from its files (through the read-only descriptor).
        assert httpx.get(f"{url}/api/state", headers=auth("dealer"), timeout=30).status_code == 200
        first = httpx.get(
            f"{url}/api/journal", params={"limit": 3}, headers=auth("surveillance"), timeout=30
        )
        assert first.status_code == 200, first.text
        events = first.json()["events"]
        on_disk = {line["seq"]: line for line in journal_lines(tmp_path / "journal")}
        assert events and all(e["event"] == on_disk[e["seq"]]["event"] for e in events)

        pid = _api_pid(daemon.pid)
        status = _status(pid)
        assert status["Uid"].split() == [str(user.pw_uid)] * 4  # real, effective, saved, fs
        assert status["Gid"].split() == [str(user.pw_gid)] * 4
        assert status["Groups"] == ""
        assert int(status["CapEff"], 16) == int(status["CapBnd"], 16) == 0
        assert status["NoNewPrivs"] == "1"
        # What it holds open: nothing of the tokens or key file, the journal's folder read-only.
        secret = {tokens.resolve(), key.resolve()}
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            # A descriptor closed between the listing and the look (a socket the server is done
            # with) held nothing worth checking.
            try:
                target = Path(os.readlink(fd))
                fdinfo = Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text()
            except FileNotFoundError:
                continue
            assert target not in secret, target
            if target == journal.resolve() or journal.resolve() in target.parents:
                flags = int(fdinfo.split()[3], 8)
                assert flags & os.O_ACCMODE == os.O_RDONLY, (target, oct(flags))

        # What its user, with its credentials exactly (one group, no capability), may do.
        setpriv_path = setpriv()
        assert setpriv_path is not None
        probe = subprocess.run(
            [setpriv_path, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
             "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
             sys.executable, "-c", PROBE, str(journal), str(tokens), str(key)],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert json.loads(probe.stdout) == {
            "list_journal": "allowed",
            "read_journal": "allowed",
            "append_journal": "denied",
            "create_in_journal": "denied",
            "rename_journal": "denied",
            "read_tokens": "denied",
            "write_tokens": "denied",
            "read_key": "denied",
        }

        # A token withdrawn from the file is refused by the API process soon after: the table's
        # process sends it the people again when the file changes.
        tokens.write_text(
            "\n".join(token_entry(a, r, t) for r, (a, t) in TOKENS.items() if r != "dealer")
        )
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/api/state", headers=auth("dealer"), timeout=30).status_code == 200:
            assert time.monotonic() < deadline, "the withdrawn token is still served"
            time.sleep(0.2)
        assert httpx.get(f"{url}/api/state", headers=auth("dealer"), timeout=30).status_code == 401
        assert httpx.get(f"{url}/api/state", headers=auth("supervisor")).status_code == 200


@pytest.mark.parametrize(
    ("api", "change", "message"),
    [
        (
            {"user": "no-such-api-user"},
            None,
            "[api] user 'no-such-api-user' does not exist: the API process runs as its own "
            "unprivileged user when tabled runs as root; create it with `useradd --system "
            "--no-create-home --shell /usr/sbin/nologin no-such-api-user`",
        ),
        ({"user": "root"}, None, "[api] user 'root' has uid 0 and gid 0"),
        (
            {"user": "nobody"},
            None,
            "[api] user 'nobody' has uid 65534 and gid 65534 (nobody/nogroup, shared by many "
            "services), and the journal's lines are shared with its group: the API process's "
            "user needs a dedicated user and group",
        ),
        ({"user": PEERED}, "peer_by_primary_group", f"[api] user '{PEERED}': its group "),
        ({"user": PEERED}, "peer_listed_in_group", f"[api] user '{PEERED}': its group "),
        ({}, "own_tokens", "tokens.toml is readable by [api] user 'tabled-api'"),
        ({}, "open_journal", "is writable by [api] user 'tabled-api' (the API process)"),
    ],
)
def test_an_api_user_that_could_not_or_should_not_be_used_stops_the_start(
    tmp_path: Path, api: dict[str, str], change: str | None, message: str
) -> None:
    config = _setup(tmp_path, **api)
    if change is not None and change.startswith("peer_"):
        # A user whose group is not its own: another user has it as its group, or is listed in
        # it. Other members would read the journal's lines shared with that group.
        if change == "peer_by_primary_group":
            add_user(PEER, "--gid", PEERED)
        else:
            add_user(PEER, "--user-group", "--groups", PEERED)
        gid = pwd.getpwnam(PEERED).pw_gid
        message += f"{gid} has other members ({PEER}), and the journal's lines are shared with it"
    if change == "own_tokens":
        user = pwd.getpwnam(API_USER)
        os.chown(tmp_path / "tokens.toml", user.pw_uid, user.pw_gid)
    if change == "open_journal":
        (tmp_path / "journal").mkdir(mode=0o777)
        (tmp_path / "journal").chmod(0o777)
    result = tabled("run", "--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[-1], result.stderr
    assert "Traceback" not in result.stderr
