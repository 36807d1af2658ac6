"""`tabled run --http` and the client commands: the address checked before anything is
journaled, a tokens file not made yet a warning that says how, and the client commands finding
the daemon where it runs."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import tomllib
import urllib.request
from pathlib import Path

import pytest

from daemon.api.tokens import new_token, token_entry
from daemon.cli.address import ADDRESS_FILE
from daemon.config import load_config
from tests.daemon.cli_support import REPO, TABLED, environment, serving, tabled

SHIPPED = sorted([REPO / "config" / "table.toml", *(REPO / "config").glob("*.toml"),
                  *(REPO / "config" / "examples").glob("*.toml")])  # fmt: skip


@pytest.mark.parametrize("path", sorted(set(SHIPPED)), ids=lambda p: p.name)
def test_every_shipped_config_names_a_tokens_file(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data.get("api", {}).get("tokens_file"), f"{path.name}: no [api] tokens_file"


def test_the_config_tabled_sim_writes_names_a_tokens_file(tmp_path: Path) -> None:
    written = tmp_path / "pty.toml"
    process = subprocess.Popen(
        [*TABLED, "sim", "--json", "--write-config", str(written)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=environment(),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the control socket is said once the config is written
            if "control" in json.loads(line):
                break
        config = load_config(written)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert config.api.tokens_file is not None
    assert "tokens_file" in written.read_text()


def _taken_port() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("nonsense", "expected HOST:PORT"),
        ("127.0.0.1:99999", "port must be 0-65535"),
        ("TAKEN", "is taken by another program"),
        ("192.0.2.1:8700", "beyond loopback"),
    ],
)
def test_bad_http_values_are_refused_before_the_table_journals(
    tmp_path: Path, value: str, said: str
) -> None:
    with _taken_port() as taken:
        if value == "TAKEN":
            value = f"127.0.0.1:{taken.getsockname()[1]}"
        result = tabled("run", "--http", value, "--journal", str(tmp_path / "j"), cwd=tmp_path)
    assert result.returncode == 2
    assert f"tabled run: --http {value}: " in result.stderr and said in result.stderr
    assert not (tmp_path / "j").exists()  # nothing started, nothing journaled


def test_a_tokens_file_not_made_yet_is_a_warning_naming_the_command(tmp_path: Path) -> None:
    with serving("--http", "127.0.0.1:0", cwd=tmp_path) as (url, _process):
        pass
    said = (tmp_path / "run-stderr.txt").read_text()
    tokens = tmp_path / "var" / "tokens.toml"
    assert f"tabled run: warning: the tokens file {tokens} does not exist yet" in said
    assert f"`tabled token NAME ROLE --append {tokens}` creates it" in said
    assert url.startswith("http://127.0.0.1:")


def test_a_tokens_file_others_may_read_is_still_refused(tmp_path: Path) -> None:
    made = tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    tokens = tmp_path / "var" / "tokens.toml"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    tokens.chmod(0o644)
    result = tabled("run", "--http", "127.0.0.1:0", cwd=tmp_path)
    assert result.returncode == 2
    assert f"chmod 600 {tokens}" in result.stderr
    assert not (tmp_path / "var" / "journal").exists()


def test_the_client_commands_find_the_daemon_where_it_runs(tmp_path: Path) -> None:
    token = tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=tmp_path)
    assert token.returncode == 0, token.stderr
    env = {"TABLED_TOKEN": token.stdout.strip()}
    address = tmp_path / "var" / "journal" / ADDRESS_FILE
    # Port 0: an address no config names; only the daemon knows it, and publishes it.
    with serving("--http", "127.0.0.1:0", cwd=tmp_path) as (url, process):
        assert json.loads(address.read_text()) == {"url": url, "pid": process.pid}
        status = tabled("status", cwd=tmp_path, **env)
        assert status.returncode == 0, status.stderr
        assert "T01 thirteen" in status.stdout
        act = tabled("act", "open_table", cwd=tmp_path, **env)
        assert act.returncode in (0, 1), act.stderr  # accepted, or refused by the table itself
        journal = tabled("journal", "--limit", "3", cwd=tmp_path, **env)
        assert journal.returncode == 0, journal.stderr
        assert [line[0] for line in journal.stdout.splitlines()] == ["#", "#", "#"]
    assert not address.exists()  # the daemon withdrew it on the way out
    # No daemon now: the config's [api] listen, and the message says where it looked.
    gone = tabled("status", cwd=tmp_path, **env)
    assert gone.returncode == 4
    assert "cannot reach the table at http://127.0.0.1:8700 (the config's [api] listen" in (
        gone.stderr
    )


def test_an_address_left_by_a_daemon_that_died_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / "var" / "journal"
    folder.mkdir(parents=True)
    pid = os.getpid()
    while True:  # a pid no process has: the highest below ours that is free
        pid -= 1
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            continue
    (folder / ADDRESS_FILE).write_text(json.dumps({"url": "http://127.0.0.1:1", "pid": pid}))
    result = tabled("status", cwd=tmp_path, **{"TABLED_TOKEN": "x"})
    assert result.returncode == 4
    assert "http://127.0.0.1:8700" in result.stderr and "127.0.0.1:1" not in result.stderr


def test_cli_errors_speak_cli_not_http_nor_pydantic(tmp_path: Path) -> None:
    made = tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=tmp_path)
    dealer = made.stdout.strip()
    with serving("--http", "127.0.0.1:0", cwd=tmp_path):
        none = tabled("status", cwd=tmp_path)
        assert none.returncode == 3
        assert "no token: set TABLED_TOKEN or use --token-file FILE" in none.stderr
        wrong = tabled("status", cwd=tmp_path, **{"TABLED_TOKEN": "not-a-token"})
        assert wrong.returncode == 3
        assert "the token from $TABLED_TOKEN is not one this table knows" in wrong.stderr
        limit = tabled("journal", "--limit", "0", cwd=tmp_path, TABLED_TOKEN=dealer)
        assert limit.returncode == 2
        assert "tabled: --limit: must be at least 1" in limit.stderr
        seat = tabled(
            "act", "place_bet", "player=P1", "seat=x", "amount=5", "units=1", "seated=true",
            cwd=tmp_path, TABLED_TOKEN=dealer,
        )  # fmt: skip
        assert seat.returncode == 2
        assert 'tabled: seat: expected an integer, got "x"' in seat.stderr
        supervisor = tabled("act", "clear_hold", cwd=tmp_path, TABLED_TOKEN=dealer)
        assert supervisor.returncode == 3
        assert "use the token of a person with that role" in supervisor.stderr
        for said in (none, wrong, limit, seat, supervisor):
            for http in ("Authorization", "Bearer", "payload.", "query.", "Input should"):
                assert http not in said.stderr


def test_a_token_given_while_the_table_runs_works_at_its_first_use(tmp_path: Path) -> None:
    """The README's order: `tabled run --http`, then `tabled token --append`, then `tabled
    status` at once. The table's process looks at the tokens file twice a second; a token its
    API process does not know yet is looked for in the file before it is refused."""
    made = tabled("token", "lei.dealer", "dealer", "--append", "var/tokens.toml", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    tokens = tmp_path / "var" / "tokens.toml"
    with serving("--http", "127.0.0.1:0", cwd=tmp_path) as (url, _process):
        for n in range(5):
            token = new_token()
            with tokens.open("a", encoding="utf-8") as out:  # then asked at once, not 0.5 s on
                out.write(token_entry(f"new.dealer{n}", "dealer", token))
            asked = urllib.request.Request(  # noqa: S310 - the daemon on loopback
                f"{url}/api/state", headers={"Authorization": f"Bearer {token}"}
            )
            with urllib.request.urlopen(asked, timeout=30) as answer:  # noqa: S310 - loopback
                assert answer.status == 200
