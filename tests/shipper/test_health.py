"""The feed's state where IT looks: /api/health, /metrics and `tabled status`, on a live daemon
whose broker goes away and comes back while the table keeps answering."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.shipper.support import (
    ENV,
    TABLED,
    NatsServer,
    assert_stream_is_journal,
    tabled,
    write_table_config,
)

TOKEN = "t0k3n-for-the-dealer-" + "x" * 20


def until(client: httpx.Client, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Ask /api/health until `check` holds for its feed (each ask is a real round trip)."""
    feed: dict[str, Any] = {}
    for _ in range(2000):
        feed = client.get("/api/health").json()["feed"]
        if check(feed):
            return feed
    raise AssertionError(f"the feed never got there: {feed}")


def test_health_metrics_and_status_follow_the_broker(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    tokens = tmp_path / "tokens.toml"
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    tokens.write_text(f'[[token]]\nactor = "D1"\nrole = "dealer"\nhash = "sha256:{digest}"\n')
    tokens.chmod(0o600)  # the daemon refuses a tokens file others can read
    feed = {"servers": [nats_server.url], "connect_timeout_seconds": 0.5,
            "backoff_max_seconds": 0.2, "ack_timeout_seconds": 1.0}  # fmt: skip
    config = write_table_config(tmp_path / "t.toml", tmp_path / "j", feed=feed, tokens=tokens)
    process = subprocess.Popen(
        [*TABLED, "run", "--config", str(config), "--http", "127.0.0.1:0"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["http"]
        with httpx.Client(base_url=url, timeout=10) as client:
            shipped = until(client, lambda f: f["state"] == "shipping" and f["lag_lines"] == 0)
            assert shipped["connected"] and shipped["stream"] == "TABLED"
            metrics = client.get("/metrics").text
            assert f'tabled_feed_cursor_seq{{table="T09"}} {shipped["cursor"]}' in metrics
            assert 'tabled_feed_connected{table="T09"} 1' in metrics
            status = tabled("status", "--url", url, env={"TABLED_TOKEN": TOKEN})
            assert status.returncode == 0, status.stderr
            assert "feed shipping: cursor" in status.stdout

            nats_server.stop()
            # `last_error` is the latest failure: "the connection to the NATS server was lost"
            # as the connection drops, then, from the first retry on (0.05-0.3 s later with this
            # back-off) and for as long as the broker is away, that no server answers. The first
            # lasts only until that retry, so a poll that comes later (a loaded machine) never
            # sees it: what IT reads during an outage, and what is checked, is the second.
            no_server = f"no NATS server answers at {nats_server.url}"
            down = until(
                client, lambda f: f["state"] == "degraded" and f["last_error"] == no_server
            )
            assert down["connected"] is False
            dealer = {"Authorization": f"Bearer {TOKEN}"}
            opened = client.post("/api/actions/open_table", headers=dealer, json={})
            assert opened.status_code == 200 and opened.json()["accepted"] is True
            lagging = until(client, lambda f: f["lag_lines"] > 0)
            assert lagging["lag_seconds"] >= 0
            assert 'tabled_feed_degraded{table="T09"} 1' in client.get("/metrics").text
            status = tabled("status", "--url", url, env={"TABLED_TOKEN": TOKEN})
            assert "feed degraded:" in status.stdout

            nats_server.start()
            until(client, lambda f: f["state"] == "shipping" and f["lag_lines"] == 0)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert_stream_is_journal(nats_server.url, "T09", tmp_path / "j")
