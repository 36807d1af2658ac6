"""Game protection against the daemon run as a process (issue 9): what the regulation forbids is
a journaled `table.violation` with its article whichever layer catches it, `tabled act`
included; malformed requests stay in the rate-limited summaries; a person looping on refused
actions spends a budget and then is answered 429, so the disk does not fill."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.table.scenario_support import REPO, journal_lines, table_config, toml

TABLED = [sys.executable, "-m", "daemon"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
DEALER_TOKEN = "t0k3n-for-the-dealer-" + "x" * 20
BOSS_TOKEN = "t0k3n-for-the-supervisor-" + "y" * 20
ART_2A = "Portaria 51/89/M Art. 2(a)"


@dataclass
class Daemon:
    url: str
    journal: Path

    def client(self, token: str = DEALER_TOKEN) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, timeout=10, headers={"Authorization": f"Bearer {token}"}
        )

    def act_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in ENV.items() if not k.startswith("TABLED_")}
        env.update(TABLED_URL=self.url, TABLED_TOKEN=DEALER_TOKEN)
        return subprocess.run(
            [*TABLED, "act", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
            check=False,
        )

    def events(self, name: str) -> list[dict[str, Any]]:
        with self.client(BOSS_TOKEN) as client:
            r = client.get("/api/journal", params={"event": name, "limit": 1000})
        assert r.status_code == 200, r.text
        events: list[dict[str, Any]] = r.json()["events"]
        return events

    def wait_phase(self, phase: str) -> None:
        deadline = time.monotonic() + 60  # a hang guard
        with self.client() as client:
            while time.monotonic() < deadline:
                state = client.get("/api/state").json()["state"]
                if state["phase"] == phase:
                    return
                client.get("/api/state")  # a request's round trip is the wait
        pytest.fail(f"the table did not reach {phase}: {state['phase']}")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        "".join(
            f'[[token]]\nactor = "{actor}"\nrole = "{role}"\n'
            f'hash = "sha256:{hashlib.sha256(secret.encode()).hexdigest()}"\n'
            for actor, role, secret in (
                ("D1", "dealer", DEALER_TOKEN),
                ("S1", "supervisor", BOSS_TOKEN),
            )
        )
    )
    tokens.chmod(0o600)
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
        running = Daemon(url, tmp_path / "j")
        running.wait_phase("EQUIPMENT_CHECK")
        deadline = time.monotonic() + 60  # a hang guard: a round trip is the wait
        with running.client() as client:
            while time.monotonic() < deadline:
                if "open_table" in client.get("/api/state").json()["legal"]:
                    break
        yield running
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _to_cut(daemon: Daemon) -> None:
    with daemon.client() as client:
        assert client.post("/api/actions/open_table", json={}).status_code == 200
        assert client.post("/api/actions/confirm_hand_shuffle", json={}).status_code == 200
    daemon.wait_phase("CUT")


@pytest.mark.article("51/89/M", "2(a)")
def test_a_payload_out_of_a_declared_bound_is_a_journaled_violation_with_its_article(
    daemon: Daemon,
) -> None:
    _to_cut(daemon)
    # `tabled act`, as a dealer types it: a cut of nine cards.
    cut = daemon.act_cli("confirm_cut", "by=player", "player=P1", "cards=9", "one_hand=true")
    assert cut.returncode != 0
    assert "cards" in cut.stderr + cut.stdout
    [violation] = daemon.events("table.violation")
    payload = violation["payload"]
    assert violation["actor"] == "dealer:D1"
    assert (payload["actor"], payload["role"], payload["action"]) == (
        "dealer:D1",
        "dealer",
        "confirm_cut",
    )
    assert (payload["field"], payload["article"], payload["phase"]) == ("cards", ART_2A, "CUT")

    with daemon.client() as client:
        # Through the API: the answer is still 422 invalid_payload, now with the violation.
        r = client.post(
            "/api/actions/confirm_cut",
            json={"payload": {"by": "player", "player": "P1", "cards": 51, "one_hand": True}},
        )
        assert r.status_code == 422, r.text
        body = r.json()
        assert body["error"] == "invalid_payload" and "cards" in body["message"]
        assert body["violation"]["article"] == ART_2A and body["violation"]["seq"] > 0
        # Malformed: a value of the wrong kind, an unknown field. No article: summaries only.
        for bad in ({"cards": "nine"}, {"cards": 20, "by": "player", "one_hand": True, "x": 1}):
            r = client.post("/api/actions/confirm_cut", json={"payload": bad})
            assert r.status_code == 422 and "violation" not in r.json()
        assert client.get("/api/state").json()["state"]["phase"] == "CUT"  # nothing changed
    assert len(daemon.events("table.violation")) == 2
    summaries = daemon.events("api.input_refused")
    assert summaries and all("invalid_input" in s["payload"]["by_reason"] for s in summaries)
    counted = sum(s["payload"]["refused"] for s in summaries)
    assert counted <= 2  # the two malformed ones, never the journaled violations


@pytest.mark.article("51/89/M", "2(a)")
def test_a_person_looping_on_refused_actions_spends_a_budget_then_is_answered_429(
    daemon: Daemon,
) -> None:
    """Each refused action is a durable line; the 31st within a minute is not: it is 429 and
    counted in the summaries, so an authenticated client in a loop cannot fill the disk."""
    _to_cut(daemon)
    short = {"by": "player", "player": "P1", "cards": 9, "one_hand": True}
    statuses = []
    with daemon.client() as client:
        for _ in range(40):
            r = client.post("/api/actions/confirm_cut", json={"payload": short})
            statuses.append(r.status_code)
        assert r.headers["Retry-After"]
        assert r.json()["error"] == "refusal_budget"
    assert statuses[:30] == [422] * 30 and statuses[30:] == [429] * 10
    violations = daemon.events("table.violation")
    assert len(violations) == 30
    assert {(v["payload"]["field"], v["payload"]["article"]) for v in violations} == {
        ("cards", ART_2A)
    }
    # The supervisor, another person, is not held back by the dealer's loop.
    with daemon.client(BOSS_TOKEN) as client:
        r = client.post("/api/actions/hold_table", json={"reason": "a dealer keeps trying"})
        assert r.status_code == 200, r.text
    summaries = daemon.events("api.input_refused")
    assert sum(s["payload"]["by_reason"].get("refusal_budget", 0) for s in summaries) >= 1
    lines = journal_lines(daemon.journal)
    assert sum(1 for line in lines if line["event"] == "table.violation") == 30
