"""The floor's integrity update end to end: a real table played on faulty simulated devices (a
loaded die, a 2-riffle shuffler, a reader that misreads one card in 40), its journal shipped to
a real nats-server, `tabled floor` as a process with a pass every second; the alerts reach the
floor's alert stream per table and serial, once each, are updated by later passes and
acknowledged as chain alerts are; and the sums the passes keep give `tabled audit`'s verdicts
on the table's own journal folder."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from daemon.floor.synthetic import journal_file_lines
from tests.analytics.test_audit_cli import FAULTY, _played
from tests.daemon.cli_support import tabled
from tests.floor.floor_support import FloorEnv, FloorProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _played(tmp_path_factory.mktemp("faulty"), FAULTY, "3")


def _alerts(env: FloorEnv, floor: FloorProcess, kind: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = env.get(floor, "/api/alerts", role="pit", kind=kind)
    return rows


def _wait_for(env: FloorEnv, floor: FloorProcess, kind: str, seq: int) -> list[dict[str, Any]]:
    """The `kind` alerts once a pass has read up to `seq` (an open alert's seq is the last
    line its pass read)."""
    deadline = time.monotonic() + 300  # a loaded machine: the pass runs once a second
    while time.monotonic() < deadline:
        rows = _alerts(env, floor, kind)
        if rows and max(r["seq"] for r in rows) >= seq:
            return rows
        time.sleep(0.5)
    raise AssertionError(f"no {kind} alert at seq {seq}: {_alerts(env, floor, kind)}")


def _device_json(done: Any) -> list[dict[str, Any]]:
    assert done.returncode in (0, 4), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    devices: list[dict[str, Any]] = report["devices"] if "devices" in report else report["groups"]
    for device in devices:
        device.pop("table", None)
    return devices


def test_faulty_devices_raise_one_alert_each_acknowledged_like_chain_alerts(
    env: FloorEnv, faulty: Path
) -> None:
    env.config.write_text(env.config.read_text() + "[integrity]\nperiod_seconds = 1\n")
    lines = list(journal_file_lines(faulty))
    half = len(lines) // 2
    first_seq = json.loads(lines[half - 1])["seq"]
    last_seq = json.loads(lines[-1])["seq"]
    serials = {
        json.loads(line)["payload"]["device"]: json.loads(line)["payload"]["serial"]
        for line in lines
        if b'"event":"device.identified"' in line
    }
    floor = env.start_floor()

    # Half the journal: the pass after it flags the loaded die, by table and serial.
    asyncio.run(env.publish(lines[:half]))
    (dice,) = _wait_for(env, floor, "dice_bias", first_seq)
    assert dice["table"] == "T01" and dice["details"]["subject"] == serials["dice_shaker"]
    details = dice["details"]
    assert details["verdict"].startswith("FLAGGED") and details["p_value"] < 0.001
    assert "0.19" in details["power"] and details["statistic"] > 0 and details["samples"] > 0
    assert dice["resolved_at"] is None and dice["acknowledged_at"] is None

    # The rest: later passes update that alert (its seq, its figures), never open another.
    asyncio.run(env.publish(lines[half:]))
    (again,) = _wait_for(env, floor, "dice_bias", last_seq)
    assert again["id"] == dice["id"] and again["details"]["samples"] > details["samples"]
    (shuffler,) = _wait_for(env, floor, "shuffle_bias", last_seq)
    assert shuffler["details"]["subject"] == serials["shuffler"]
    assert "riffles" in shuffler["details"]["verdict"]
    (misreads,) = _wait_for(env, floor, "reader_misreads", last_seq)
    assert misreads["details"]["subject"] == serials["shoe_reader"]
    time.sleep(2.5)  # more passes, nothing new: still one alert of each
    assert [a["id"] for a in _alerts(env, floor, "dice_bias")] == [dice["id"]]

    # Acknowledged as a chain alert is: the pit takes it in hand, with a note.
    r = httpx.post(
        f"{floor.url}/api/alerts/{dice['id']}/acknowledge",
        json={"note": "shaker taken off the table for the lab"},
        headers={"Authorization": f"Bearer {env.tokens['pit']}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    assert r.json()["acknowledged_by"] == "pit.person"
    # The table's tile still says its chain is whole: these are not chain alerts.
    (tile,) = [t for t in env.get(floor, "/api/tables", role="pit") if t["table"] == "T01"]
    assert tile["chain"] == "ok"
    assert floor.stop() == 0

    # The sums the passes kept give the table's own audit, verdict for verdict.
    for kind in ("dice", "shuffle", "reader", "hold"):
        stored = _device_json(
            tabled("floor", "audit", kind, "--stored", "--json", "--config", str(env.config))
        )
        table = _device_json(tabled("audit", kind, str(faulty), "--json", timeout=300))
        assert [d["verdict"] for d in stored] == [d["verdict"] for d in table], kind
        assert _close(stored, table), (kind, stored, table)


def _close(ours: Any, theirs: Any) -> bool:
    """Equal, floats within 1e-9 relative (the sums' arithmetic is the journal's, reordered)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(_close(ours[k], theirs[k]) for k in ours)
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(map(_close, ours, theirs))
    if isinstance(ours, float) or isinstance(theirs, float):
        return bool(ours == pytest.approx(theirs, rel=1e-9, abs=1e-12))
    return bool(ours == theirs)
