"""`tabled run` as a process, through its CLI: autoplay to the end, the embedded default from a
fresh directory, SIGTERM with systemd's notifications, and the operator API over the real table.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.table.scenario_support import REPO, journal_lines, table_config, toml

TABLED = [sys.executable, "-m", "daemon"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def tabled(
    *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLED, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=ENV,
    )


def write_config(path: Path, journal: Path, **kwargs: object) -> Path:
    path.write_text(toml(table_config(journal, **kwargs)))  # type: ignore[arg-type]
    return path


def imported(importtime_log: Path) -> set[str]:
    """The modules a `python -X importtime` run imported, from its stderr."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in importtime_log.read_text().splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_autoplay_plays_the_rounds_and_prints_a_summary(tmp_path: Path) -> None:
    config = write_config(tmp_path / "t.toml", tmp_path / "j", durability="fsync")
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "daemon", "run", "--config", str(config),
         "--autoplay", "6", "--seed", "5"],
        check=False, capture_output=True, text=True, timeout=60, env=ENV,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (tmp_path / "stderr.txt").write_text(run.stderr)
    assert "daemon.autoplay" in imported(tmp_path / "stderr.txt")
    assert "autoplay: 6 round(s) of thirteen at table T09" in run.stdout
    assert "violations" in run.stdout and "faults" in run.stdout
    check = tabled("verify-log", str(tmp_path / "j"))
    assert check.returncode == 0, check.stdout
    settled = [r for r in journal_lines(tmp_path / "j") if r["event"] == "round.settled"]
    assert len(settled) == 6


def test_autoplay_summary_as_json_counts_what_the_journal_holds(tmp_path: Path) -> None:
    config = write_config(tmp_path / "t.toml", tmp_path / "j")
    run = tabled(
        "run", "--config", str(config), "--autoplay", "8", "--seed", "11",
        "--fault-share", "1", "--violation-share", "1", "--json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["rounds"] == 8
    lines = journal_lines(tmp_path / "j")
    violations = [r for r in lines if r["event"] == "table.violation"]
    assert sum(summary["violations_by_article"].values()) == len(violations) > 0
    held = [r for r in lines if r["event"] in ("table.tilted", "table.held")]
    assert sum(summary["faults_by_device"].values()) == len(held) > 0
    assert sum(summary["faults_played"].values()) == 8


def test_a_paigow_table_beside_the_default(tmp_path: Path) -> None:
    run = tabled(
        "run", "--config", str(REPO / "config" / "paigow.toml"), "--journal", str(tmp_path / "j"),
        "--autoplay", "5", "--seed", "2",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "autoplay: 5 round(s) of paigow at table T02" in run.stdout
    assert tabled("verify-log", str(tmp_path / "j")).returncode == 0


def test_the_readme_command_works_from_a_fresh_directory(tmp_path: Path) -> None:
    run = tabled("run", "--autoplay", "3", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "autoplay: 3 round(s) of thirteen" in run.stdout
    assert (tmp_path / "var" / "journal").is_dir()
    # A second run on the same journal comes back in HOLD and the supervisor clears it.
    again = tabled("run", "--autoplay", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    events = [r["event"] for r in journal_lines(tmp_path / "var" / "journal")]
    assert events.count("table.recovered") == 1
    assert tabled("verify-log", str(tmp_path / "var" / "journal")).returncode == 0


def test_sigterm_stops_cleanly_after_telling_systemd_and_feeding_its_watchdog(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path / "t.toml", tmp_path / "j")
    address = str(tmp_path / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(address)
    notify.settimeout(30)
    # -X importtime: every module the process imports is named on stderr (to a file: a pipe
    # nobody reads would fill up).
    stderr = (tmp_path / "stderr.txt").open("w")
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "daemon", "run", "--config", str(config)],
        env={**ENV, "NOTIFY_SOCKET": address, "WATCHDOG_USEC": "200000"},
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    try:
        said: set[str] = set()
        while not {"READY=1", "WATCHDOG=1"} <= said:
            said |= set(notify.recv(4096).decode().split("\n"))
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        while "STOPPING=1" not in said:
            said |= set(notify.recv(4096).decode().split("\n"))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        notify.close()
        stderr.close()
    # The production daemon does not load the scripted players.
    assert imported(tmp_path / "stderr.txt") & {"daemon.autoplay", "daemon.table"} == {
        "daemon.table"
    }
    events = [r["event"] for r in journal_lines(tmp_path / "j")]
    assert events[-1] == "table.stopped"
    assert "device.identified" in events
    assert tabled("verify-log", str(tmp_path / "j")).returncode == 0


def test_the_api_serves_the_real_table(tmp_path: Path) -> None:
    token = "t0k3n-for-the-dealer-" + "x" * 20
    boss = "t0k3n-for-the-supervisor-" + "y" * 20
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        "".join(
            f'[[token]]\nactor = "{actor}"\nrole = "{role}"\n'
            f'hash = "sha256:{hashlib.sha256(secret.encode()).hexdigest()}"\n'
            for actor, role, secret in (("D1", "dealer", token), ("S1", "supervisor", boss))
        )
    )
    tokens.chmod(0o600)  # the daemon refuses a tokens file others may read
    data = table_config(tmp_path / "j")
    data["api"] = {"tokens_file": str(tokens)}
    config = tmp_path / "t.toml"
    config.write_text(toml(data))
    process = subprocess.Popen(
        [*TABLED, "run", "--config", str(config), "--http", "127.0.0.1:0"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["http"]
        dealer = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, timeout=10) as client:
            deadline = time.monotonic() + 60  # a hang guard: a round trip is the wait
            while time.monotonic() < deadline:
                state = client.get("/api/state", headers=dealer).json()
                if "open_table" in state["legal"]:
                    break
            assert "open_table" in state["legal"], state
            opened = client.post("/api/actions/open_table", headers=dealer, json={})
            assert opened.status_code == 200, opened.text
            assert opened.json()["accepted"] is True
            # Out of phase: refused by the procedure, journaled, 409 with the article.
            refused = client.post("/api/actions/settle_round", headers=dealer, json={})
            assert refused.status_code == 409, refused.text
            state = client.get("/api/state", headers=dealer).json()
            assert state["state"]["phase"] == "HAND_SHUFFLE"
            devices = client.get("/api/devices", headers=dealer).json()["devices"]
            assert {d["name"]: d["link"] for d in devices} == {
                "dice_shaker": "up", "shoe_reader": "up", "shuffler": "up", "timer_bell": "up",
            }  # fmt: skip
            events = client.get("/api/journal", headers=dealer, params={"event": "table."})
            assert any(e["event"] == "table.violation" for e in events.json()["events"])
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert tabled("verify-log", str(tmp_path / "j")).returncode == 0


def test_autoplay_drives_tabled_sim_on_pseudo_terminals(tmp_path: Path) -> None:
    base = write_config(tmp_path / "sim.toml", tmp_path / "unused")
    written = tmp_path / "pty.toml"
    sim = subprocess.Popen(
        [*TABLED, "sim", "--config", str(base), "--speed", "0", "--seed", "4", "--json",
         "--write-config", str(written)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    try:
        assert sim.stdout is not None
        ports = {}
        for line in sim.stdout:
            item = json.loads(line)
            if "control" in item:
                control = item["control"]
                break
            ports[item["device"]] = item["port"]
        assert all(port.startswith("/dev/pts/") for port in ports.values()), ports
        run = tabled(
            "run", "--config", str(written), "--journal", str(tmp_path / "j"),
            "--autoplay", "4", "--seed", "4", "--control", control, "--json",
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout.strip().splitlines()[-1])["rounds"] == 4
    finally:
        sim.terminate()
        sim.wait(timeout=10)
    assert tabled("verify-log", str(tmp_path / "j")).returncode == 0
