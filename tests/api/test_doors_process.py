"""The API's doors on `tabled run --http` as a process, over the real table with simulated
devices: TLS served by the daemon (a self-signed certificate made here with openssl), the refusal
to listen beyond loopback in clear or with a tokens file others may read (before anything is
journaled), and bad tokens from 60 loopback addresses against the journal's size."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import TOKENS, auth, write_tokens
from websockets.sync.client import connect

from tests.table.scenario_support import REPO, journal_lines, table_config, toml

TABLED = [sys.executable, "-m", "daemon"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
OPENSSL = Path("/usr/bin/openssl")


def write_config(tmp_path: Path, **api: Any) -> Path:
    data = table_config(tmp_path / "journal")
    data["api"] = {"tokens_file": str(write_tokens(tmp_path / "tokens.toml")), **api}
    path = tmp_path / "table.toml"
    path.write_text(toml(data))
    return path


@contextmanager
def tabled_run(config: Path, listen: str = "127.0.0.1:0") -> Iterator[str]:
    """`tabled run --http` until the test is done; yields the URL it prints."""
    process = subprocess.Popen(
        [*TABLED, "run", "--config", str(config), "--http", listen],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, "tabled run exited before serving"
        yield json.loads(line)["http"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def refused_to_start(config: Path, listen: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLED, "run", "--config", str(config), "--http", listen],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_plain_http_beyond_loopback_is_refused_before_the_table_starts(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    run = refused_to_start(config, "0.0.0.0:8799")
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("tabled run: --http 0.0.0.0:8799: ")
    assert "tls_cert" in line and "plain_http_behind_proxy" in line
    assert not (tmp_path / "journal").exists()


def test_a_tokens_file_others_may_read_stops_the_start_before_the_journal(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    (tmp_path / "tokens.toml").chmod(0o644)
    run = refused_to_start(config, "127.0.0.1:0")
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert "mode 0644" in line and f"chmod 600 {tmp_path / 'tokens.toml'}" in line
    assert not (tmp_path / "journal").exists()


def test_the_plain_http_opt_out_is_journaled_at_every_start(tmp_path: Path) -> None:
    config = write_config(tmp_path, plain_http_behind_proxy=True)
    with tabled_run(config) as url:
        assert url.startswith("http://")
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/api/state", headers=auth("dealer")).status_code == 200
    [said] = [
        line for line in journal_lines(tmp_path / "journal")
        if line["event"] == "api.plain_http_behind_proxy"
    ]  # fmt: skip
    assert said["actor"] == "api"
    assert said["payload"]["port"] == int(url.rsplit(":", 1)[1])


@pytest.mark.skipif(not OPENSSL.exists(), reason="needs the openssl command")
def test_tls_is_served_by_the_daemon_end_to_end(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [str(OPENSSL), "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", "/CN=table07", "-addext",
         "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    key.chmod(0o600)
    config = write_config(tmp_path, tls_cert=str(cert), tls_key=str(key))
    trust = ssl.create_default_context(cafile=str(cert))
    with tabled_run(config) as url:
        assert url.startswith("https://127.0.0.1:")
        port = int(url.rsplit(":", 1)[1])
        with httpx.Client(base_url=url, verify=trust, timeout=10) as client:
            state = client.get("/api/state", headers=auth("dealer"))
            assert state.status_code == 200
            assert state.json()["actor"] == TOKENS["dealer"][0]
            rebound = client.get("/api/health", headers={"Host": "rebind.example"})
            assert rebound.status_code == 421
        # The same port does not answer in clear.
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)
        # The push feed over wss, from the console's own origin.
        with connect(
            f"wss://127.0.0.1:{port}/api/events",
            ssl=trust,
            origin=f"https://127.0.0.1:{port}",  # type: ignore[arg-type]
            open_timeout=10,
        ) as ws:
            ws.send(json.dumps({"token": TOKENS["dealer"][1], "after": None}))
            assert json.loads(ws.recv(timeout=10))["type"] == "hello"


def test_guesses_from_sixty_addresses_are_stopped_and_journaled_in_a_few_lines(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    statuses: list[int] = []
    with tabled_run(config) as url:
        before = len(journal_lines(tmp_path / "journal"))
        # One TLS context for the sixty clients (each would read the CA bundle again); unused
        # on plain HTTP, it only saves the test's own CPU.
        tls = ssl.create_default_context()
        for n in range(60):
            transport = httpx.HTTPTransport(local_address=f"127.0.0.{n + 2}", verify=tls)
            with httpx.Client(base_url=url, transport=transport, timeout=10) as client:
                for guess in range(9):  # under each address's own budget of ten
                    bad = {"Authorization": f"Bearer guess-{n}-{guess}"}
                    statuses.append(client.get("/api/state", headers=bad).status_code)
        # The dealer's console, which never guessed, is not locked out by someone else's guesses.
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/api/state", headers=auth("dealer")).status_code == 200
        during = len(journal_lines(tmp_path / "journal")) - before
    # A hundred guesses spend the global budget; after that each address gets one more.
    assert statuses.count(401) <= 100 + 60
    assert statuses.count(429) == 540 - statuses.count(401)
    assert during <= 2  # 540 refusals: the first at once (the summary may be due meanwhile)
    after = [line for line in journal_lines(tmp_path / "journal") if line["seq"] > before]
    summaries = [line for line in after if line["event"] == "api.auth_refused"]
    assert sum(s["payload"]["refused"] for s in summaries) == 540
    assert summaries[-1]["payload"]["global_budget_spent"] is True
    assert "guess-" not in json.dumps(after)
    check = subprocess.run(
        [*TABLED, "verify-log", str(tmp_path / "journal")],
        env=ENV,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert check.returncode == 0, check.stdout


def test_one_persons_wrong_tokens_do_not_lock_out_the_consoles_working_behind_one_address(
    tmp_path: Path,
) -> None:
    """Consoles behind one proxy share its address. The dealer's and the supervisor's consoles
    are signed in and working when someone at the same address tries ten wrong tokens (a floor
    token, say): the address is locked out for its guesses, and a console signing in for the
    first time waits for the lockout's end, but the working consoles read, act and reconnect
    their push feed as before."""
    config = write_config(tmp_path)
    with tabled_run(config) as url, httpx.Client(base_url=url, timeout=30) as proxy:
        assert proxy.get("/api/state", headers=auth("dealer")).status_code == 200
        assert proxy.get("/api/state", headers=auth("supervisor")).status_code == 200
        wrong = [
            proxy.get("/api/state", headers={"Authorization": f"Bearer floor-{n}"})
            for n in range(10)
        ]
        assert [r.status_code for r in wrong] == [401] * 10
        # The guessing budget is kept: the next guess is not looked up, whatever it is.
        guess = proxy.get("/api/state", headers={"Authorization": "Bearer floor-10"})
        assert guess.status_code == 429
        assert int(guess.headers["Retry-After"]) > 0
        # A token not yet used from this address is refused the same way until the lockout ends.
        assert proxy.get("/api/state", headers=auth("surveillance")).status_code == 429
        # The working consoles go on: they read, the dealer opens the table, the supervisor's
        # push feed connects again.
        assert proxy.get("/api/state", headers=auth("dealer")).status_code == 200
        opened = proxy.post("/api/actions/open_table", json={"payload": {}}, headers=auth("dealer"))
        assert opened.status_code == 200 and opened.json()["accepted"] is True, opened.text
        with connect(url.replace("http://", "ws://") + "/api/events", open_timeout=30) as ws:
            ws.send(json.dumps({"token": TOKENS["supervisor"][1], "after": 0}))
            hello = json.loads(ws.recv(timeout=30))
            assert hello == {"type": "hello", "actor": "wong.supervisor", "role": "supervisor"}
    lines = journal_lines(tmp_path / "journal")
    opened_by = [line["actor"] for line in lines if line["event"] == "table.opened"]
    assert opened_by == [f"dealer:{TOKENS['dealer'][0]}"]
    refused = [line["payload"] for line in lines if line["event"] == "api.auth_refused"]
    assert sum(p["refused"] for p in refused) == 12  # ten wrong tokens, two refused while locked
    assert any(p.get("locked_out") == ["127.0.0.1"] for p in refused)
