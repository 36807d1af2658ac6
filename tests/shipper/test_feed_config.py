"""`[feed]`'s broker identity and TLS keys: each mistake is one line naming its keys, the same
words as `[floor]`'s (tests/floor/test_floor_config.py); relative files are the config folder's.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from daemon.api.process import config_for_api
from daemon.config import REQUIRED_DEVICES, ConfigError, parse_config
from daemon.floor.config import parse_floor_config
from daemon.shipper.config import FeedConfig
from daemon.shipper.nkey import make_seed
from tests.shipper.support import tabled, write_table_config


def _feed(section: dict[str, object], base: Path | None = None) -> FeedConfig | None:
    data = {
        "table": {"id": "T41"},
        "feed": {"servers": ["tls://10.0.0.1:4222"], **section},
        "devices": {"dice_shaker": {"port": "sim://dice_shaker"}},
    }
    return parse_config(data, source="T41.toml", base=base, partial=True).feed


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ({"creds": "t.nk", "user": "u", "password": "p"},
         "one of creds, user/password or token, not several"),
        ({"creds": "t.nk", "token": "x"}, "one of creds, user/password or token, not several"),
        ({"password": "p"}, "user and password go together"),
        ({"tls_key": "c.key"}, "tls_cert and tls_key go together"),
        ({"servers": ["nats://10.0.0.1:4222"], "tls_cert": "c.pem", "tls_key": "c.key"},
         "a client certificate needs TLS (tls_ca, or tls:// servers)"),
        ({"creds": ""}, "feed.creds: an empty path"),
        ({"credentials": "t.creds"}, "feed.credentials: unknown key"),
    ],
)  # fmt: skip
def test_each_mistake_is_one_line_naming_its_keys(section: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _feed(section)
    message = str(refused.value)
    assert words in message and "\n" not in message, message


def test_the_files_are_the_config_folders(tmp_path: Path) -> None:
    section = {
        "servers": ["tls://10.0.0.1:4222"], "creds": "keys/t.nk", "tls_ca": "/etc/nats/ca.pem",
        "tls_cert": "c.pem", "tls_key": "c.key",
    }  # fmt: skip
    feed = _feed(section, base=tmp_path)  # as `load_config` reads [feed] from a file there
    assert feed is not None
    assert feed.creds == tmp_path / "keys" / "t.nk"
    assert feed.tls_ca == Path("/etc/nats/ca.pem")
    assert feed.tls_key == tmp_path / "c.key"


def test_tabled_run_refuses_a_broker_secret_others_may_read_before_it_journals(
    tmp_path: Path,
) -> None:
    seed = tmp_path / "feed.nk"
    make_seed(seed, "feed.creds")
    seed.chmod(0o640)
    journal = tmp_path / "journal"
    config = write_table_config(
        tmp_path / "t.toml", journal, table="T41",
        feed={"servers": ["nats://127.0.0.1:9"], "creds": str(seed)},
    )  # fmt: skip
    run = tabled("run", "--config", str(config), "--autoplay", "1", timeout=60)
    assert run.returncode == 2
    assert run.stderr.strip() == (
        f"tabled run: feed.creds: {seed}: mode 0640 lets group or others read or write a "
        f"secret; it must be private to the daemon's user: chmod 600 {seed}"
    )
    assert not journal.exists() or not any(journal.iterdir())


def test_the_api_process_is_not_sent_the_brokers_password() -> None:
    """A taken-over API process holding `[feed]`'s password or token could publish as the
    table: the config it is sent has no `[feed]` (the API only knows there is one)."""
    secret = "s3cret-pw"  # noqa: S105 - made up for the test
    data = {
        "table": {"id": "T41"},
        "feed": {"servers": ["nats://127.0.0.1:4222"], "user": "T41", "password": secret},
        "devices": {name: {"port": f"sim://{name}"} for name in REQUIRED_DEVICES["thirteen"]},
    }
    config = parse_config(data, source="T41.toml")
    assert config.feed is not None and config.feed.password == secret
    sent = config_for_api(config)
    assert sent.feed is None and sent.table_id == config.table_id
    assert secret.encode() not in pickle.dumps(sent) and secret.encode() in pickle.dumps(config)


def test_the_servers_of_a_cluster_or_one_written_alone(tmp_path: Path) -> None:
    """`[feed]` and `[floor]` take the cluster's nodes as a list; one URL alone may be a string
    (the single-server form); a list that is empty or holds anything but nats:// or tls:// URLs
    is one line naming the key."""
    nodes = ["nats://floor-1:4222", "nats://floor-2:4222", "nats://floor-3:4222"]
    cluster = _feed({"servers": nodes}, base=tmp_path)
    assert cluster is not None and cluster.servers == tuple(nodes)
    alone = _feed({"servers": "tls://pit-3:4222"}, base=tmp_path)
    assert alone is not None and alone.servers == ("tls://pit-3:4222",)
    floor = parse_floor_config({"floor": {"servers": "nats://floor-1:4222", "replicas": 3}})
    assert (floor.floor.servers, floor.floor.replicas) == (("nats://floor-1:4222",), 3)
    for bad, words in (("http://x", "'http://x' is not a nats:// or tls:// URL"),
                       ([], "a non-empty list of nats://")):  # fmt: skip
        with pytest.raises(ConfigError) as refused:
            _feed({"servers": bad})
        assert "feed.servers" in str(refused.value) and words in str(refused.value)
    with pytest.raises(ConfigError, match=r"floor\.replicas"):
        parse_floor_config({"floor": {"replicas": 7}})
