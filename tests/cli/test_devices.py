"""`tabled devices` in process: what IT reads when a device is not there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from daemon.cli.devices import main
from simulators.base import firmware_digest
from simulators.timer_bell import TimerBellModel


@pytest.fixture(autouse=True)
def _structlog_restored() -> Iterator[None]:
    """main() points structlog at this test's captured stderr: put it back afterwards."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


DEAD = """
[table]
id = "T5"
[devices.shuffler]
port = "{missing}"
[devices.dice_shaker]
port = "sim://dice_shaker?fault=no_response"
[devices.timer_bell]
port = "sim://timer_bell"
[devices.shoe_reader]
port = "sim://shoe_reader"
"""


def test_each_dead_device_says_why(tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "table.toml"
    config.write_text(DEAD.format(missing=tmp_path / "ttyUSB9"))
    assert main(["--config", str(config), "--json"]) == 1
    reports = {r["device"]: r for r in json.loads(capsys.readouterr().out)}
    shuffler, dice, bell = reports["shuffler"], reports["dice_shaker"], reports["timer_bell"]
    assert shuffler["link"] == "down" and "cannot open the port" in shuffler["error"]
    assert "ttyUSB9" in shuffler["error"]
    assert dice["link"] == "down" and dice["error"].startswith("no answer")
    assert dice["counters"]["timeouts"] == 3
    assert bell["link"] == "up" and bell["error"] is None
    assert reports["shoe_reader"]["link"] == "up"
    for report in reports.values():
        assert {"device", "link", "serial", "model", "firmware", "approved"} <= set(report)


def test_the_text_report_names_the_firmware_hash_to_approve(tmp_path: Path, capsys: Any) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "T5"\n[devices.timer_bell]\nport = "sim://timer_bell"\n')
    assert main(["--config", str(config)]) == 0
    digest = firmware_digest(TimerBellModel.MODEL, TimerBellModel.FIRMWARE).hex()
    assert f"timer_bell: firmware_hash {digest}" in capsys.readouterr().out


def test_a_reader_that_goes_away_is_no_traceback(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text(DEAD.format(missing=tmp_path / "ttyUSB9"))
    read, write = os.pipe()
    os.close(read)  # `tabled devices | head` after head has exited
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "devices", "--config", str(config), "--json"],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )
    os.close(write)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1  # a device is down: the status still tells it


def test_an_address_the_frame_cannot_carry_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[devices.shoe_reader]\nport = "sim://shoe_reader"\naddress = 200\n')
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "devices", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "devices.shoe_reader.address: 200 is outside 1..127" in result.stderr
