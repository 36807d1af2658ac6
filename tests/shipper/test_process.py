"""`tabled run` with a [feed] as a process, `tabled feed status|ship|replay`, bad configs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from daemon.config import ConfigError, load_config
from tests.shipper.support import (
    ENV,
    TABLED,
    NatsServer,
    assert_stream_is_journal,
    free_port,
    journal_lines,
    stream_messages,
    tabled,
    write_table_config,
)


def feed_section(url: str, **more: object) -> dict[str, object]:
    return {"servers": [url], "drain_seconds": 5.0, "connect_timeout_seconds": 1.0, **more}


def test_autoplay_ships_every_line_before_it_exits(tmp_path: Path, nats_server: NatsServer) -> None:
    config = write_table_config(
        tmp_path / "t.toml", tmp_path / "j", feed=feed_section(nats_server.url)
    )
    run = tabled("run", "--config", str(config), "--autoplay", "3", "--seed", "4")
    assert run.returncode == 0, run.stderr
    assert "autoplay: 3 round(s)" in run.stdout
    lines = journal_lines(tmp_path / "j")
    assert len(lines) > 100
    assert not any(b'"event":"feed.degraded"' in line for line in lines)
    assert_stream_is_journal(nats_server.url, "T09", tmp_path / "j")

    status = tabled("feed", "status", "--config", str(config), "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["cursor"] == report["head"] == len(lines)
    assert report["lag_lines"] == 0 and report["daemon_running"] is False
    assert report["broker"]["reachable"] is True
    stream = report["broker"]["stream"]
    # Beside the lines, the table's signed heads (docs/floor.md, "Signed heads").
    heads = [m for m in stream_messages(nats_server.url) if m[0] == "tabled.T09.head"]
    assert heads and stream["messages"] == len(lines) + len(heads)
    assert stream["subjects"] == ["tabled.>"]
    assert stream["last_seq_of_table"] == len(lines) and stream["takes_our_subjects"]
    assert all(f["shipped"] for f in report["files"])

    replay = tabled("feed", "replay", "--config", str(config), "--from", "1")
    assert replay.returncode == 0, replay.stderr
    assert f": 0 stored, {len(lines)} already in the stream, 0 refused" in replay.stdout
    assert_stream_is_journal(nats_server.url, "T09", tmp_path / "j")


def test_no_broker_the_table_plays_then_feed_ship_catches_up(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats")
    feed = feed_section(server.url, drain_seconds=1.0)
    config = write_table_config(tmp_path / "t.toml", tmp_path / "j", feed=feed)
    run = tabled("run", "--config", str(config), "--autoplay", "2", "--seed", "3")
    assert run.returncode == 0, run.stderr
    assert "autoplay: 2 round(s)" in run.stdout and "Traceback" not in run.stderr
    lines = journal_lines(tmp_path / "j")
    degraded = [json.loads(x) for x in lines if b'"event":"feed.degraded"' in x]
    assert degraded[0]["payload"]["reason"] == f"no NATS server answers at {server.url}"

    status = tabled("feed", "status", "--config", str(config))
    assert status.returncode == 1 and "Traceback" not in status.stderr
    assert f"broker: NOT reachable ({server.url})" in status.stdout
    assert f"cursor 0, journal head {len(lines)}: lag {len(lines)} lines" in status.stdout
    assert "NOT fully shipped: keep" in status.stdout

    server.start()
    try:
        ship = tabled("feed", "ship", "--config", str(config))
        assert ship.returncode == 0, ship.stderr
        assert f"shipped: cursor {len(lines)}, journal head {len(lines)}" in ship.stdout
        assert_stream_is_journal(server.url, "T09", tmp_path / "j")
        status = tabled("feed", "status", "--config", str(config))
        assert status.returncode == 0, status.stdout
        assert "shipped, safe to archive" in status.stdout
    finally:
        server.stop()


def test_sigkill_of_the_daemon_then_restart_ships_exactly_once(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    config = write_table_config(
        tmp_path / "t.toml", tmp_path / "j", feed=feed_section(nats_server.url)
    )
    for kill_after in (1, 2):
        child = subprocess.Popen(
            [*TABLED, "run", "--config", str(config), "--autoplay", "40", "--progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
        )  # fmt: skip
        assert child.stdout is not None
        for _ in range(kill_after):
            assert child.stdout.readline()
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=30)
    run = tabled("run", "--config", str(config), "--autoplay", "1")
    assert run.returncode == 0, run.stderr
    assert_stream_is_journal(nats_server.url, "T09", tmp_path / "j")


def test_bad_feed_config_is_one_clear_line(tmp_path: Path) -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    cases = {
        "serverz": ([url], "feed.serverz: unknown key; did you mean 'servers'?"),
        "window": (0, "feed.window: input should be greater than or equal to 1, got 0"),
        "servers": (["http://x"], "feed.servers: 'http://x' is not a nats:// or tls:// URL"),
        "user": ("u", "feed: user and password go together"),
        "stream": ("A.B", "feed.stream: 'A.B': letters, digits, - and _ only"),
        "drain_seconds": ("5", "feed.drain_seconds: input should be a valid number, got '5'"),
    }
    for key, (value, message) in cases.items():
        config = write_table_config(tmp_path / f"{key}.toml", tmp_path / "j", feed={key: value})
        with pytest.raises(ConfigError) as refused:
            load_config(config)
        # the config's own form: the file, then the key and what is wrong with it
        assert str(refused.value) == f"{config}: {message}"
    # As the daemon and the CLI say it: one line, exit 2, no traceback.
    config = tmp_path / "serverz.toml"
    run = tabled("run", "--config", str(config), "--autoplay", "1")
    typo = "feed.serverz: unknown key; did you mean 'servers'?"
    assert (run.returncode, run.stderr) == (2, f"tabled run: {config}: {typo}\n")
    status = tabled("feed", "status", "--config", str(config))
    assert (status.returncode, status.stderr) == (2, f"tabled feed status: {config}: {typo}\n")
    config = write_table_config(tmp_path / "t.toml", tmp_path / "j")
    status = tabled("feed", "status", "--config", str(config))
    assert status.returncode == 2
    assert "no [feed] section: this table ships nothing" in status.stderr


def test_a_table_id_that_cannot_be_a_subject_token(tmp_path: Path) -> None:
    config = write_table_config(tmp_path / "t.toml", tmp_path / "j", table="T.1", feed={})
    with pytest.raises(ConfigError, match=r"table.id: 'T.1' cannot be a NATS subject token"):
        load_config(config)
    assert (
        load_config(write_table_config(tmp_path / "u.toml", tmp_path / "j", table="T.1")).feed
        is None
    )


def test_the_embedded_default_ships_nothing() -> None:
    assert load_config(None).feed is None
