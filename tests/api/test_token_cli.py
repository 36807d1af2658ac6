"""`tabled token`: how an admin gives a person a token, run as the admin runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from daemon.api.tokens import Principal, hash_token, parse_tokens


def tabled_token(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", "token", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_tokens_are_appended_hashed_into_a_new_file_and_its_folder(tmp_path: Path) -> None:
    tokens = tmp_path / "var" / "tokens.toml"
    first = tabled_token("lei.dealer", "dealer", "--append", str(tokens))
    second = tabled_token("wong.pit", "supervisor", "--append", str(tokens))
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    # stdout is exactly the token (TOKEN=$(tabled token ...)); the explanation is on stderr.
    given = [result.stdout.removesuffix("\n") for result in (first, second)]
    assert all(len(token.split()) == 1 and token == token.strip() for token in given)
    assert all("give it to them" in result.stderr for result in (first, second))
    text = tokens.read_text()
    assert all(token not in text for token in given)
    assert parse_tokens(text) == {
        hash_token(given[0]): Principal("lei.dealer", "dealer"),
        hash_token(given[1]): Principal("wong.pit", "supervisor"),
    }
    assert tokens.stat().st_mode & 0o077 == 0


def test_an_unwritable_tokens_file_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    result = tabled_token("lei.dealer", "dealer", "--append", str(blocker / "tokens.toml"))
    assert result.returncode == 1
    assert "cannot write" in result.stderr and "Traceback" not in result.stderr
    assert blocker.read_text() == ""


def test_a_malformed_tokens_file_is_refused_not_extended(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[[token]]\nactor = 'x'\n")
    tokens.chmod(0o600)
    result = tabled_token("lei.dealer", "dealer", "--append", str(tokens))
    assert result.returncode == 1
    assert "token[0]" in result.stderr
    assert tokens.read_text() == "[[token]]\nactor = 'x'\n"


def test_a_tokens_file_others_may_read_is_not_extended(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tabled_token("lei.dealer", "dealer", "--append", str(tokens))
    tokens.chmod(0o644)
    before = tokens.read_text()
    result = tabled_token("wong.pit", "supervisor", "--append", str(tokens))
    assert result.returncode == 1
    assert f"chmod 600 {tokens}" in result.stderr
    assert result.stdout == ""  # no token handed out that the daemon would never accept
    assert tokens.read_text() == before
