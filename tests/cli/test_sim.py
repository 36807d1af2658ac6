"""`tabled sim` and `tabled devices` run as processes, with drivers on real pseudo-terminals."""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drivers.dice_shaker.driver import DiceInvalid, DiceShakerDriver, DiceThrown
from drivers.events import DeviceFault, LinkDown, LinkLost, LinkUp
from drivers.link import LinkTiming
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from simulators.base import firmware_digest
from simulators.dice_shaker import DiceShakerModel
from simulators.shuffler import ShufflerModel

TIMING = LinkTiming(poll_interval=3600.0)
CONFIG = """
[table]
id = "T77"

[devices.shuffler]
port = "sim://shuffler"

[devices.dice_shaker]
port = "sim://dice_shaker"
"""


def tabled(*args: str) -> list[str]:
    return [sys.executable, "-m", "daemon", *args]


class Lines:
    """Lines from a child's stdout with a deadline (unbuffered: select sees every byte)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buffer = b""

    def next(self, timeout: float = 20.0) -> str:
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                if not selector.select(timeout):
                    self.proc.kill()
                    raise AssertionError("tabled sim printed nothing in time")
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    raise AssertionError("tabled sim exited early")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


class Sim:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.ports: dict[str, str] = {}
        self.written: Path | None = None
        lines = Lines(proc)
        while True:
            item = json.loads(lines.next())
            if "control" in item:
                self.control = item["control"]
                break
            self.ports[item["device"]] = item["port"]

    async def control_request(self, request: dict[str, Any]) -> dict[str, Any]:
        reader, writer = await asyncio.open_unix_connection(self.control)
        writer.write(json.dumps(request).encode() + b"\n")
        reply: dict[str, Any] = json.loads(await reader.readline())
        writer.close()
        await writer.wait_closed()
        return reply


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Sim]:
    config = tmp_path / "table.toml"
    config.write_text(CONFIG)
    written = tmp_path / "written.toml"
    proc = subprocess.Popen(
        tabled(
            "sim",
            "--config",
            str(config),
            "--json",
            "--seed",
            "4",
            "--speed",
            "0",
            "--fault",
            "dice_shaker:die_tilted",
            "--write-config",
            str(written),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        running = Sim(proc)
        running.written = written
        yield running
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err.decode()


def test_sim_prints_one_pseudo_terminal_per_device_and_a_control_socket(sim: Sim) -> None:
    assert set(sim.ports) == {"shuffler", "dice_shaker"}
    assert all(port.startswith("/dev/pts/") for port in sim.ports.values())
    assert Path(sim.control).is_socket()


def test_shuffler_over_a_real_pseudo_terminal(sim: Sim) -> None:
    async def body() -> None:
        driver = ShufflerDriver(sim.ports["shuffler"], timing=TIMING)
        assert await driver.start()
        assert isinstance(driver.pending_events()[0], LinkUp)
        await driver.shuffle()
        completed = await asyncio.wait_for(driver.next_event(), 10)
        assert completed == ShuffleCompleted("shuffler", 52, 52, 0, 0)
        state = await sim.control_request({"op": "state"})
        assert state["ok"] and state["world"] == "T77" and state["generation"] == 1
        assert driver.link.counters.protocol_errors == {}
        await driver.close()

    asyncio.run(body())


def test_dice_shaker_over_a_real_pseudo_terminal_with_faults(sim: Sim) -> None:
    async def body() -> None:
        driver = DiceShakerDriver(sim.ports["dice_shaker"], timing=TIMING)
        assert await driver.start()
        driver.pending_events()
        await driver.shake()  # --fault dice_shaker:die_tilted spoils the first throw
        tilted = await asyncio.wait_for(driver.next_event(), 10)
        assert isinstance(tilted, DiceInvalid) and tilted.reason == "die_tilted"
        reply = await sim.control_request(
            {"op": "inject", "device": "dice_shaker", "fault": "die_out_of_cup"}
        )
        assert reply == {"ok": True}
        await driver.shake()
        out = await asyncio.wait_for(driver.next_event(), 10)
        assert isinstance(out, DiceInvalid) and out.reason == "die_out_of_cup"
        await driver.shake()
        assert isinstance(await asyncio.wait_for(driver.next_event(), 10), DiceThrown)
        reply = await sim.control_request({"op": "inject", "device": "dice_shaker", "fault": "x"})
        assert not reply["ok"] and "no fault 'x'" in reply["error"]
        await sim.control_request({"op": "inject", "device": "dice_shaker", "fault": "reader_lost"})
        fault = await asyncio.wait_for(driver.next_event(), 10)
        assert fault == DeviceFault("dice_shaker", "reader_lost", 4)
        await driver.close()

    asyncio.run(body())


def test_a_cable_pulled_through_the_control_channel(sim: Sim) -> None:
    """The pty stays (as a USB adapter's tty does) but nothing crosses: the link goes down for
    no response, and comes back when the cable is put back."""
    quick = LinkTiming(
        reply_timeout=0.05, tries=2, poll_interval=3600.0, reconnect_initial=0.05, reconnect_max=0.1
    )

    async def body() -> None:
        driver = ShufflerDriver(sim.ports["shuffler"], timing=quick)
        assert await driver.start()
        driver.pending_events()
        assert await sim.control_request({"op": "unplug", "device": "shuffler"}) == {"ok": True}
        with pytest.raises(LinkLost):
            await driver.status()
        assert await asyncio.wait_for(driver.next_event(), 5) == LinkDown("shuffler", "no_response")
        await asyncio.sleep(0.3)
        assert not driver.link_up  # reconnects fail while the cable is out
        assert await sim.control_request({"op": "plug", "device": "shuffler"}) == {"ok": True}
        assert isinstance(await asyncio.wait_for(driver.next_event(), 5), LinkUp)
        await driver.close()

    asyncio.run(body())


def test_devices_reports_identity_approval_and_link(sim: Sim, tmp_path: Path) -> None:
    shuffler_hash = firmware_digest(ShufflerModel.MODEL, ShufflerModel.FIRMWARE).hex()
    config = tmp_path / "real.toml"
    config.write_text(
        f"""
[devices.shuffler]
port = "{sim.ports["shuffler"]}"
[[devices.shuffler.approved]]
make = "tabled-sim"
model = "{ShufflerModel.MODEL}"
firmware = "{ShufflerModel.FIRMWARE}"
firmware_hash = "{shuffler_hash}"

[devices.dice_shaker]
port = "{sim.ports["dice_shaker"]}"
[[devices.dice_shaker.approved]]
make = "tabled-sim"
model = "{DiceShakerModel.MODEL}"
firmware = "0.9.0"
firmware_hash = "{"00" * 32}"

[devices.timer_bell]
port = "/dev/tabled-no-such-port"
"""
    )
    result = subprocess.run(
        tabled("devices", "--config", str(config), "--json"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    reports = {r["device"]: r for r in json.loads(result.stdout)}
    assert result.returncode == 1  # one device down, one unapproved
    shuffler = reports["shuffler"]
    assert shuffler["link"] == "up" and shuffler["approved"] is True
    assert shuffler["model"] == "SHUF-52" and shuffler["serial"] == "SIM-SHUF-52-0004"
    assert shuffler["firmware"] == ShufflerModel.FIRMWARE
    assert shuffler["round_trip_ms"] > 0 and shuffler["counters"]["protocol_errors"] == 0
    assert reports["dice_shaker"]["link"] == "up" and reports["dice_shaker"]["approved"] is False
    assert reports["timer_bell"]["link"] == "down" and reports["timer_bell"]["error"]

    text = subprocess.run(
        tabled("devices", "--config", str(config)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "shuffler" in text.stdout and "SHUF-52" in text.stdout and "NO" in text.stdout


def test_sim_refuses_an_unknown_fault(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text(CONFIG)
    result = subprocess.run(
        tabled("sim", "--config", str(config), "--fault", "dice_shaker:melted"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "no fault 'melted'" in result.stderr
    assert result.stdout == ""  # refused before any port was opened or printed


def test_sim_refuses_a_speed_that_is_not_a_finite_number(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text(CONFIG)
    result = subprocess.run(
        tabled("sim", "--config", str(config), "--speed", "nan"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "--speed nan" in result.stderr
    assert result.stdout == ""


def test_sim_stops_cleanly_on_sigint_and_removes_its_socket(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text(CONFIG)
    proc = subprocess.Popen(
        tabled("sim", "--config", str(config), "--speed", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines = Lines(proc)
    shuffler, dice, control = (lines.next() for _ in range(3))
    assert shuffler.startswith("shuffler\t/dev/pts/") and dice.startswith("dice_shaker\t")
    path = Path(control.removeprefix("control\t"))
    assert path.is_socket()
    with socket.socket(socket.AF_UNIX) as client:  # a trainer's session left open
        client.connect(str(path))
        client.sendall(b'{"op": "state"}\n')
        assert json.loads(client.makefile().readline())["ok"] is True
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert client.recv(1) == b""  # the session was ended, not left hanging
    assert proc.returncode == 0, err.decode()
    assert "Traceback" not in err.decode()
    assert not path.exists()


def test_the_written_config_points_a_daemon_at_the_ports_with_the_builds_approved(sim: Sim) -> None:
    assert sim.written is not None
    result = subprocess.run(
        tabled("devices", "--config", str(sim.written), "--json"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    reports = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout
    assert {r["device"]: (r["link"], r["approved"]) for r in reports} == {
        "shuffler": ("up", True),
        "dice_shaker": ("up", True),
    }
    assert {r["device"]: r["port"] for r in reports} == sim.ports
