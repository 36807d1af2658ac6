"""The deployment files: the systemd unit as systemd reads it, the udev rules, and the config the
operations guide tells IT to write."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from daemon.config import DEVICE_NAMES, parse_config

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "systemd" / "tabled.service"
RULES = ROOT / "deploy" / "udev" / "99-tabled.rules"
GUIDE = ROOT / "docs" / "operations.md"


def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def test_the_unit_is_type_notify_with_a_watchdog_and_runs_the_table() -> None:
    s = unit_settings()
    assert s["Type"] == ["notify"]
    assert s["NotifyAccess"] == ["main"]
    assert s["WatchdogSec"] == ["10s"]
    assert s["Restart"] == ["on-failure"]
    command = s["ExecStart"][0].split()
    assert command[1:3] == ["run", "--config"]
    assert command[command.index("--http") + 1].startswith("127.0.0.1:")
    assert "/var/lib/tabled" in s["ReadWritePaths"]
    assert s["User"] == ["tabled"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_reads_the_unit_without_a_complaint(tmp_path: Path) -> None:
    # The installed path of the console script does not exist here; the venv's does.
    tabled = Path(sys.executable).with_name("tabled")
    unit = tmp_path / "tabled.service"
    unit.write_text(UNIT.read_text().replace("/opt/tabled/venv/bin/tabled", str(tabled)))
    r = subprocess.run(
        ["systemd-analyze", "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    complaints = [line for line in r.stderr.splitlines() if str(unit) in line]
    assert r.returncode == 0
    assert complaints == []


RULE_TERM = re.compile(r'^(?P<key>[A-Z_]+)(\{[A-Za-z_]+\})?(?P<op>==|!=|\+=|:=|=)"[^"]*"$')


def test_every_device_gets_a_stable_name_and_every_rule_is_well_formed() -> None:
    named: dict[str, str] = {}
    for line in RULES.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        terms = [t.strip() for t in line.split(", ")]
        for term in terms:
            assert RULE_TERM.match(term), f"not a udev term: {term!r} in {line!r}"
        link = [t for t in terms if t.startswith("SYMLINK+=")]
        if link:
            device = link[0].split('"')[1].removeprefix("tabled/")
            assert f'ENV{{TABLED_DEVICE}}="{device}"' in terms
            named[device] = line
    assert sorted(named) == sorted(DEVICE_NAMES)
    text = RULES.read_text()
    assert 'ENV{ID_MM_DEVICE_IGNORE}="1"' in text
    assert 'LABEL="tabled_end"' in text


def test_the_config_in_the_operations_guide_is_one_the_daemon_accepts() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), flags=re.S)
    configs = [tomllib.loads(b) for b in blocks if "[table]" in b]
    assert configs, "the guide shows a table config"
    config = parse_config(configs[0], source="docs/operations.md")
    assert sorted(config.devices) == sorted(DEVICE_NAMES)
    assert all(d.port == f"/dev/tabled/{name}" for name, d in config.devices.items())
    assert config.api.listen.startswith("127.0.0.1:")
    assert config.journal.durability == "fsync"


def test_the_guides_approved_builds_are_in_the_form_the_drivers_compare() -> None:
    # The drivers compare the hex digest the device reports with `firmware_hash` as written: a
    # "sha256:" prefix would never match, and the device would stay disabled. A device with no
    # approved list at all runs unchecked (R4): the guide lists builds for every device.
    blocks = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), flags=re.S)
    config = parse_config(
        next(tomllib.loads(b) for b in blocks if "[table]" in b), source="docs/operations.md"
    )
    for name, device in config.devices.items():
        assert device.approved, f"{name}: no approved build in the guide's config"
        for build in device.approved:
            assert re.fullmatch(r"[0-9a-f]{64}", build.firmware_hash), (name, build.firmware_hash)


def test_the_guides_client_commands_are_ones_the_table_accepts() -> None:
    from daemon.api.models import check_payload  # noqa: PLC0415 - FastAPI only for this test
    from daemon.cli.act import parse_assignment  # noqa: PLC0415
    from daemon.procedures import thirteen  # noqa: PLC0415
    from daemon.table.publish.views import action_specs  # noqa: PLC0415

    specs = {s.name: s for s in action_specs(thirteen.ACTIONS, "thirteen")}
    commands = re.findall(r"^tabled act (\S+)((?: \w+=\S+)*)", GUIDE.read_text(), flags=re.M)
    assert commands, "the guide shows tabled act"
    for action, args in commands:
        assert action in specs, f"tabled act {action}: no such action"
        payload = dict(parse_assignment(a) for a in args.split())
        assert check_payload(specs[action], payload) is None, f"tabled act {action}{args}"
    phases = re.findall(r"`tabled status` shows (?:phase )?`(\w+)` or `(\w+)`", GUIDE.read_text())
    for phase in [p for pair in phases for p in pair]:
        assert phase in thirteen.Phase.__members__, f"no phase {phase!r}"
    assert all(spec.payload_checked for spec in specs.values())


def test_every_tabled_command_line_in_the_guide_uses_options_that_exist() -> None:
    commands = ("run", "devices", "verify-log", "token", "status", "act", "journal")
    pattern = re.compile(rf"\btabled ({'|'.join(commands)})\b([^`#\n]*)")
    seen: set[str] = set()
    helps: dict[str, str] = {}
    for command, rest in pattern.findall(GUIDE.read_text()):
        if command not in helps:
            helps[command] = subprocess.run(
                [str(Path(sys.executable).with_name("tabled")), command, "--help"],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout
        for option in re.findall(r"(?<!\S)(--[a-z][a-z-]*)", rest):
            assert option in helps[command], f"tabled {command} has no {option}"
            seen.add(f"{command} {option}")
    assert {"journal --follow", "verify-log --expect", "token --append"} <= seen
