from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from daemon.api.tokens import TokenFileError, TokenStore, hash_token, parse_tokens, token_entry


def run_token(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon.api.tokens", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_tabled_token_appends_only_the_hash_and_the_printed_token_works(tmp_path: Path) -> None:
    file = tmp_path / "tokens.toml"
    r = run_token("chan.tai.man", "dealer", "--append", str(file))
    assert r.returncode == 0, r.stderr
    token = r.stdout.splitlines()[-1]
    assert len(token) >= 40
    text = file.read_text()
    assert token not in text
    assert hash_token(token) in text
    assert (file.stat().st_mode & 0o777) == 0o600

    r = run_token("wong", "supervisor", "--append", str(file))
    second = r.stdout.splitlines()[-1]
    store = TokenStore(file)
    first = store.lookup(token)
    assert first is not None
    assert (first.actor, first.role) == ("chan.tai.man", "dealer")
    assert store.lookup(second) is not None
    assert store.lookup(second + "x") is None


def test_tabled_token_without_a_file_prints_the_entry_to_paste() -> None:
    r = run_token("ho.surv", "surveillance")
    assert r.returncode == 0
    token = r.stdout.splitlines()[1].removeprefix("# ")
    entries = parse_tokens("\n".join(r.stdout.splitlines()[2:]))
    [principal] = entries.values()
    assert principal.role == "surveillance"
    assert hash_token(token) in entries


def test_tabled_token_refuses_bad_names_and_roles() -> None:
    assert run_token("bad name", "dealer").returncode == 2
    r = run_token("lee", "croupier")
    assert r.returncode == 2
    assert "invalid choice" in r.stderr


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[[token]]\nactor = 'a'\nrole = 'boss'\nhash = 'sha256:" + "0" * 64 + "'", "role"),
        ("[[token]]\nactor = 'a'\nrole = 'dealer'\nhash = 'md5:00'", "hash"),
        ("[[token]]\nactor = 'a b'\nrole = 'dealer'\nhash = 'sha256:" + "0" * 64 + "'", "actor"),
        ("[[token]]\nactor = 'a'\nrole = 'dealer'\nhash = 'sha256:" + "0" * 64 + "'\nx = 1", "x"),
        ("token = 5", "array of tables"),
        ("[[token]\n", "not valid TOML"),
        (
            "[[token]]\nactor = 'a'\nrole = 'dealer'\nhash = 'sha256:" + "0" * 64 + "'\n"
            "[[token]]\nactor = 'b'\nrole = 'dealer'\nhash = 'sha256:" + "0" * 64 + "'",
            "already given",
        ),
    ],
)
def test_a_malformed_tokens_file_is_refused_naming_the_entry(text: str, words: str) -> None:
    with pytest.raises(TokenFileError, match=words):
        parse_tokens(text, "tokens.toml")


def test_disabled_tokens_are_refused_and_a_broken_file_keeps_the_last_good_set(
    tmp_path: Path,
) -> None:
    file = tmp_path / "tokens.toml"
    file.write_text(token_entry("a", "dealer", "token-a") + token_entry("b", "admin", "token-b"))
    file.chmod(0o600)
    store = TokenStore(file)
    assert store.lookup("token-a") is not None
    file.write_text(token_entry("a", "dealer", "token-a") + "disabled = true\n")
    assert store.lookup("token-a") is None
    file.write_text(token_entry("a", "dealer", "token-a") + "[[broken\n")
    with capture_logs() as logs:
        assert store.lookup("token-a") is None  # the last good set had it disabled
    [problem] = [e for e in logs if e["event"] == "api.tokens_unreadable"]
    assert problem["kept"] == 0  # the last good set: only "a", disabled
    assert problem["log_level"] == "error"
    assert store.last_error is not None
    assert "not valid TOML" in store.last_error
    missing = TokenStore(tmp_path / "none.toml")
    assert missing.lookup("token-a") is None
    assert "no such tokens file" in (missing.last_error or "")
