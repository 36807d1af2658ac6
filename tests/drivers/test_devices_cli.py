"""`tabled devices` in process: what IT reads when a device is not there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from drivers.cli import main


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
address = 200
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
    shoe = reports["shoe_reader"]
    assert shoe["link"] == "down" and shoe["error"].startswith("config: bus address 200")
    for report in reports.values():
        assert {"device", "link", "serial", "model", "firmware", "approved"} <= set(report)
