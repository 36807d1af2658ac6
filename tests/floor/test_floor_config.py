"""The floor's config file: every mistake is one line naming its key, the table's wording."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from daemon.config import ConfigError
from daemon.floor.config import FloorConfig, load_floor_config, parse_floor_config
from tests.floor.floor_support import REPO


def test_a_whole_file_is_read_with_paths_against_its_folder(tmp_path: Path) -> None:
    file = tmp_path / "floor.toml"
    file.write_text(
        '[floor]\nservers = ["nats://10.0.0.1:4222", "tls://10.0.0.2:4222"]\n'
        'database = "postgresql://floor@db/floor"\nbatch = 2000\ndurable = "floor-2"\n'
        "provisional_hide_seconds = 4.5\n"
        '[api]\nlisten = "127.0.0.1:8801"\ntokens_file = "tokens.toml"\n'
        '[pits]\n"Pit A" = ["T01", "T02"]\n"Pit B" = ["T03"]\n'
    )
    config = load_floor_config(file)
    assert config.floor.servers == ("nats://10.0.0.1:4222", "tls://10.0.0.2:4222")
    assert (config.floor.batch, config.floor.durable) == (2000, "floor-2")
    assert config.floor.provisional_hide_seconds == 4.5
    assert FloorConfig().floor.provisional_hide_seconds == 10
    assert config.api.tokens_file == tmp_path / "tokens.toml"
    assert config.pits == {"T01": "Pit A", "T02": "Pit A", "T03": "Pit B"}
    assert config.source == str(file)
    assert load_floor_config(None) == FloorConfig()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"floor": {"batchsize": 5}}, "floor.batchsize: unknown key"),
        ({"floor": {"batch": 0}}, "floor.batch: input should be greater than or equal to 1"),
        ({"floor": {"batch": "500"}}, "floor.batch: input should be a valid integer"),
        ({"floor": {"batch": True}}, "floor.batch: input should be a valid integer"),
        ({"floor": {"servers": []}}, "floor.servers: a non-empty list of nats://"),
        ({"floor": {"servers": ["http://x"]}}, "'http://x' is not a nats:// or tls:// URL"),
        ({"floor": {"stream": "A.B"}}, "floor.stream: 'A.B': letters, digits, _ and - only"),
        ({"floor": {"database": "mysql://x"}}, "floor.database: expected a postgresql:// URL"),
        (
            {"floor": {"provisional_hide_seconds": 0}},
            "floor.provisional_hide_seconds: input should be greater than or equal to 1",
        ),
        ({"floor": 3}, "floor: expected a table ([floor]), got 3"),
        ({"api": {"listen": "nowhere"}}, "api.listen"),
        ({"api": {"console_idle_seconds": 60}}, "api.console_idle_seconds: unknown key"),
        ({"pits": {"A": "T01"}}, "pits.A: input should be a valid list"),
        ({"pits": {"A": ["T01"], "B": ["T01"]}}, "pits.B: T01 is already in pit 'A'"),
        ({"tables": {}}, "tables: unknown key (the file's sections: floor, api, pits, integ"),
        (
            {"integrity": {"period_seconds": -1}},
            "integrity.period_seconds: input should be greater than or equal to 0",
        ),
        ({"integrity": {"misread_limit": 0}}, "integrity.misread_limit: input should be greater"),
        ({"integrity": {"period": 60}}, "integrity.period: unknown key; did you mean 'period_se"),
        ({"pit": {}}, "pit: unknown key; did you mean 'pits'? (the file's sections: floor,"),
        ({"floor": {"servres": []}}, "floor.servres: unknown key; did you mean 'servers'?"),
        ({"api": {"tokens_fil": "x"}}, "api.tokens_fil: unknown key; did you mean 'tokens_file'?"),
        # The floor's broker identity and TLS: the [feed]'s keys and checks.
        (
            {"floor": {"creds": "f.nk", "user": "u", "password": "p"}},
            "one of creds, user/password or token, not several",
        ),
        ({"floor": {"user": "floor"}}, "user and password go together"),
        ({"floor": {"tls_ca": "ca.pem", "tls_cert": "c.pem"}}, "tls_cert and tls_key go together"),
        (
            {"floor": {"tls_cert": "c.pem", "tls_key": "c.key"}},
            "a client certificate needs TLS (tls_ca, or tls:// servers)",
        ),
        ({"floor": {"creds": ""}}, "floor.creds: expected a file's path, got ''"),
        ({"floor": {"tls_ca": 5}}, "floor.tls_ca: expected a file's path, got 5"),
    ],
)
def test_each_mistake_is_named(data: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_floor_config(data, source="floor.toml")
    message = str(refused.value)
    assert message.startswith("floor.toml: ") and words in message, message
    assert "pydantic" not in message and "\n" not in message


def test_the_broker_files_are_read_against_the_files_folder(tmp_path: Path) -> None:
    file = tmp_path / "floor.toml"
    file.write_text(
        '[floor]\nservers = ["tls://10.0.0.1:4222"]\ncreds = "floor.nk"\n'
        'tls_ca = "/etc/nats/ca.pem"\ntls_cert = "c.pem"\ntls_key = "keys/c.key"\n'
    )
    floor = load_floor_config(file).floor
    assert floor.creds == tmp_path / "floor.nk"
    assert floor.tls_ca == Path("/etc/nats/ca.pem")
    assert (floor.tls_cert, floor.tls_key) == (tmp_path / "c.pem", tmp_path / "keys" / "c.key")


def test_every_mistake_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_floor_config({"floor": {"batch": 0, "stream": "a b", "nope": 1}})
    assert str(refused.value).count(";") == 2


def test_tabled_floor_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    file = tmp_path / "floor.toml"
    file.write_text('[floor]\nbatch = "many"\n')
    run = subprocess.run(
        [sys.executable, "-m", "daemon", "floor", "--config", str(file)],
        capture_output=True, text=True, cwd=REPO, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert "floor.batch: input should be a valid integer" in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
