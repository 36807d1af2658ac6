from __future__ import annotations

import dataclasses
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from daemon.config import (
    DEVICE_NAMES,
    REQUIRED_DEVICES,
    ApprovedFirmware,
    ConfigError,
    JournalConfig,
    TableConfig,
    load_config,
    parse_config,
)
from daemon.tomltext import loads_toml

REPO = Path(__file__).resolve().parents[2]
THIRTEEN_DEVICES = {name: {"port": f"sim://{name}"} for name in REQUIRED_DEVICES["thirteen"]}


def test_embedded_default_simulates_every_device() -> None:
    config = load_config()
    assert config.game == "thirteen"
    assert config.ruleset == "macau-1989"
    assert set(config.devices) == set(DEVICE_NAMES)
    assert all(device.port.startswith("sim://") for device in config.devices.values())
    assert all(device.name == name for name, device in config.devices.items())
    assert config.journal.durability == "fsync"


@pytest.mark.parametrize("path", sorted((REPO / "config").rglob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_config_is_valid(path: Path) -> None:
    load_config(path)


def with_devices(data: dict[str, Any]) -> dict[str, Any]:
    return {"devices": THIRTEEN_DEVICES, **data}


# Each mistake, and the words of its one-line error: the key it is under, then what is wrong.
BAD = [
    ({"journal": 5}, "journal: expected a table ([journal]), got 5"),
    ({"journal": {"rotate_bytes": -1}}, "journal.rotate_bytes: input should be greater than 0"),
    ({"journal": {"rotate_bytes": "big"}}, "journal.rotate_bytes: input should be a valid int"),
    ({"journal": {"durability": "sometimes"}}, "journal.durability: input should be 'fsync'"),
    ({"journal": {"dir": 7}}, "journal.dir:"),
    ({"journal": {"rotate_daily": 1}}, "journal.rotate_daily: input should be a valid boolean"),
    ({"table": {"id": ""}}, "table.id: '': 1-64 letters"),
    ({"table": {"id": "T 01"}}, "table.id: 'T 01': 1-64 letters"),
    ({"table": {"id": 1}}, "table.id: input should be a valid string, got 1"),
    ({"table": {"ruleset": "macau-2024"}}, "table.ruleset: 'macau-2024' is not a thirteen rule"),
    ({"table": {"unit": 0}}, "table.unit: 0 (the money of one unit is at least 1)"),
    ({"table": {"currency": "mop"}}, "table.currency: 'mop' is not an ISO 4217 code"),
    ({"table": {"min_bet": 150}}, "table.min_bet: 150 is not a whole number of units of 100"),
    ({"table": {"min_bet": 500, "max_bet": 300}}, "table.max_bet: 300 is below the minimum 500"),
    ({"table": {"shaker": "anyone"}}, "table.shaker: input should be 'seated-first' or 'highest'"),
    ({"rules": {"equal_rows": True}}, "rules: unknown setting 'equal_rows'"),
    ({"rules": {"stakes": "jackpot"}}, "rules: setting stakes must be one of"),
    (
        {"table": {"ruleset": "hk-points", "min_bet": 200}},
        "table.min_bet: 200 is above one unit (100); with money per point",
    ),
    (
        {"table": {"game": "paigow", "ruleset": "macau-2024"}, "devices": THIRTEEN_DEVICES},
        "table.ruleset: 'macau-2024' is not a paigow rule set (known: macau-1990",
    ),
    ({"table": {"game": "baccarat"}}, "table.game: input should be 'thirteen' or 'paigow'"),
    ({"table": {"paigow_hands": 6}}, "table.paigow_hands: 6 (Art. 2(4) allows 8 or 4)"),
    ({"table": {"colour": "green"}}, "table.colour: unknown key"),
    ({"table": {"rulset": "hk-common"}}, "table.rulset: unknown key; did you mean 'ruleset'?"),
    ({"jornal": {}}, "jornal: unknown key; did you mean 'journal'? (the file's sections: table"),
    ({"journal": {"durabilty": "none"}}, "journal.durabilty: unknown key; did you mean 'dura"),
    ({"devices": {"shufler": {"port": "x"}}}, "devices.shufler: unknown device; did you mean"),
    ({"table": 5}, "table: expected a table ([table]), got 5"),
    ({"game": "paigow"}, "game: unknown key (the file's sections: table, devices"),
    ({"devices": {}}, "devices: a thirteen table needs [devices.shuffler], [devices.shoe_reader]"),
    (
        {"devices": {**THIRTEEN_DEVICES, "shuffler": {"port": "x", "enabled": False}}},
        "devices: a thirteen table needs [devices.shuffler], enabled",
    ),
    (
        {"table": {"game": "paigow"}, "devices": {"timer_bell": {"port": "sim://timer_bell"}}},
        "devices: a paigow table needs [devices.dice_shaker]",
    ),
    ({"devices": 5}, "devices: input should be a valid dictionary, got 5"),
    ({"devices": {"roulette": {"port": "x"}}}, "devices.roulette: unknown device"),
    ({"devices": {"shuffler": 5}}, "devices.shuffler: expected a table ([devices.shuffler])"),
    ({"devices": {"shuffler": {"baudrate": 9600}}}, "devices.shuffler.port: required"),
    ({"devices": {"shuffler": {"port": ""}}}, "devices.shuffler.port: string should have at"),
    ({"devices": {"shuffler": {"port": "x", "name": "y"}}}, "devices.shuffler.name: unknown key"),
    ({"devices": {"shuffler": {"port": "x", "speed": 1}}}, "devices.shuffler.speed: unknown key"),
    ({"devices": {"shuffler": {"port": "x", "baudrate": "fast"}}}, "baudrate: input should be"),
    ({"devices": {"shuffler": {"port": "x", "baudrate": 12}}}, "9600, 19200, 38400, 57600 or"),
    ({"devices": {"shuffler": {"port": "x", "address": 0}}}, "address: 0 is outside 1..127"),
    ({"devices": {"shuffler": {"port": "x", "address": 128}}}, "address: 128 is outside 1..127"),
    ({"devices": {"shuffler": {"port": "x", "address": True}}}, "valid integer, got True"),
    (
        {"devices": {"shuffler": {"port": "sim://dice_shaker?seed=1"}}},
        "devices.shuffler: port 'sim://dice_shaker?seed=1' simulates a dice_shaker, not a shuffler",
    ),
    (
        {"devices": {"shuffler": {"port": "x", "approved": [{"make": "a"}]}}},
        "devices.shuffler.approved[0].model: required",
    ),
    (
        {
            "devices": {
                "shuffler": {
                    "port": "x",
                    "approved": [
                        {"make": "a", "model": "b", "firmware": "1", "firmware_hash": "sha256:ab"}
                    ],
                }
            }
        },
        "devices.shuffler.approved[0].firmware_hash: string should match pattern",
    ),
    ({"api": {"allowed_origins": ["surveillance.example"]}}, "not an http(s):// origin"),
    ({"api": {"allowed_origins": "https://a.example"}}, "api.allowed_origins: input should be"),
    ({"api": {"listen": "8700"}}, "api.listen: listen address '8700': expected HOST:PORT"),
    ({"api": {"listen": "127.0.0.1:99999"}}, "port must be 0-65535"),
    ({"api": {"tokens": "x"}}, "api.tokens: unknown key"),
]


@pytest.mark.parametrize(("data", "message"), BAD, ids=[message for _, message in BAD])
def test_bad_config_is_one_line_naming_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({**with_devices({}), **data}, source="bad.toml")
    text = str(caught.value)
    assert text.startswith("bad.toml: ") and "\n" not in text
    assert message in text


def test_every_mistake_is_reported_at_once() -> None:
    data = with_devices({"journal": {"rotate_bytes": 0, "durability": "x"}})
    with pytest.raises(ConfigError, match=r"journal.durability: .*; journal.rotate_bytes: "):
        parse_config(data)


def test_partial_configs_are_for_the_device_tools_only() -> None:
    one = {"devices": {"shoe_reader": {"port": "sim://shoe_reader"}}}
    with pytest.raises(ConfigError, match="needs"):
        parse_config(one)
    assert set(parse_config(one, partial=True).devices) == {"shoe_reader"}
    with pytest.raises(ConfigError, match=r"no \[devices.NAME\] section is enabled"):
        parse_config({}, partial=True)


BUILD = {"make": "ACME", "model": "SR-8", "firmware": "4.0.2", "firmware_hash": "ab" * 32}


@pytest.mark.parametrize(
    ("port", "durability", "approved", "refused"),
    [
        ("/dev/ttyUSB0", "fsync", [], True),
        ("rfc2217://10.0.0.7:4001", "fsync", [], True),
        ("/dev/ttyUSB0", "fsync", [BUILD], False),
        ("/dev/ttyUSB0", "none", [], False),  # a bench, not a live table
        ("/dev/pts/7", "fsync", [], False),  # what `tabled sim` serves
        ("loop://", "fsync", [], False),
    ],
)
def test_a_live_table_takes_a_real_line_only_with_its_approved_builds(
    port: str, durability: str, approved: list[dict[str, str]], refused: bool
) -> None:
    """With no approved build, any device is admitted unchecked: a live table on real devices
    does not start so. `tabled devices` (a partial config) still probes the line, to show the
    build to approve."""
    shoe = {"port": port, "approved": approved}
    data = with_devices({"journal": {"durability": durability}})
    data["devices"] = {**data["devices"], "shoe_reader": shoe}
    if refused:
        with pytest.raises(ConfigError) as caught:
            parse_config(data, source="t.toml")
        assert str(caught.value) == (
            't.toml: devices.shoe_reader.approved: a live table (journal durability "fsync") '
            f"takes a device on a real line ({port}) only if its build is approved: list the "
            "approved builds ([[devices.shoe_reader.approved]]; `tabled devices` shows what is "
            "on the line)"
        )
    else:
        assert parse_config(data).devices["shoe_reader"].port == port
    assert parse_config(data, partial=True).devices["shoe_reader"].port == port


def test_the_rule_set_defaults_to_the_games() -> None:
    paigow = parse_config(
        {"table": {"game": "paigow"}, "devices": {"dice_shaker": {"port": "sim://dice_shaker"}}}
    )
    assert (paigow.ruleset, paigow.paigow_hands) == ("macau-1990", 8)


def test_relative_paths_resolve_against_the_base(tmp_path: Path) -> None:
    config = parse_config(
        with_devices({"journal": {"dir": "j"}, "api": {"tokens_file": "t.toml"}}), base=tmp_path
    )
    assert config.journal.dir == tmp_path / "j"
    assert config.api.tokens_file == tmp_path / "t.toml"
    absolute = parse_config(with_devices({"journal": {"dir": "/var/tabled"}}), base=tmp_path)
    assert absolute.journal.dir == Path("/var/tabled")


def test_allowed_origins_reach_the_api_config() -> None:
    config = parse_config(with_devices({"api": {"allowed_origins": ["https://a.example/"]}}))
    assert config.api.allowed_origins == ("https://a.example",)


def test_the_classes_check_what_code_builds_too() -> None:
    # Code and tests build these directly (positional builds, dataclasses.replace): the same
    # checks apply, and a relative path stays as given.
    assert JournalConfig(dir=Path("j"), durability="none").dir == Path("j")
    assert ApprovedFirmware("m", "M", "1", "0" * 64).firmware == "1"
    with pytest.raises(ValueError, match="rotate_bytes"):
        JournalConfig(rotate_bytes=-1)
    config = load_config()
    with pytest.raises(ValueError, match="macau-2024"):
        dataclasses.replace(config, ruleset="macau-2024")
    assert isinstance(dataclasses.replace(config, table_id="T02"), TableConfig)


def test_missing_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="cannot read it"):
        load_config(tmp_path)  # a directory
    bad = tmp_path / "bad.toml"
    bad.write_text("[table\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'[table]\nid = "T\xe9"\n')
    with pytest.raises(ConfigError, match="cannot read it"):
        load_config(latin)


# --- the commands that read a config, run as processes: exit 2 and one line, no traceback ------


def _write(tmp_path: Path, data: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(data)
    tomllib.loads(data)  # the file is TOML: what is wrong is the config in it
    return path


DEVICES_TOML = "".join(
    f'[devices.{name}]\nport = "sim://{name}"\n' for name in REQUIRED_DEVICES["thirteen"]
)
BAD_FILES = [
    ("journal = 5\n" + DEVICES_TOML, "journal: expected a table"),
    ("[journal]\nrotate_bytes = -1\n" + DEVICES_TOML, "journal.rotate_bytes"),
    ('[table]\nid = ""\n' + DEVICES_TOML, "table.id"),
    ('[table]\nruleset = "macau-2024"\n' + DEVICES_TOML, "table.ruleset: 'macau-2024'"),
    ('[table]\ngame = "paigow"\nruleset = "macau-2024"\n' + DEVICES_TOML, "paigow rule set"),
    ('[table]\nid = "T01"\n', "devices: a thirteen table needs"),
]


@pytest.mark.parametrize("command", ["run", "devices", "sim"])
@pytest.mark.parametrize(("text", "message"), BAD_FILES, ids=[m for _, m in BAD_FILES])
def test_a_bad_config_stops_each_command_with_exit_2(
    tmp_path: Path, command: str, text: str, message: str
) -> None:
    if command != "run" and "needs" in message:
        message = "no [devices.NAME] section is enabled"  # the device tools take some devices
    path = _write(tmp_path, text)
    result = subprocess.run(
        [sys.executable, "-m", "daemon", command, "--config", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0], result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "var").exists()  # nothing was started, no journal written


# --- pathological files: one line, exit 2, for every command that reads one (daemon.tomltext) --

PATHOLOGICAL = [
    ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than 32 levels deep"),
    ("a = " + "{b=" * 100_000 + "}" * 100_000 + "\n", "nested more than 32 levels deep"),
    ("a = " + "[" * 40 + "]" * 40 + "\n", "nested more than 32 levels deep"),
    (".".join(["x"] * 100_000) + " = 1\n", "line 1: a dotted name of more than 32 parts"),
    ("[table]\n[" + ".".join(["x"] * 100_000) + "]\n", "line 2: a dotted name of more than 32"),
    ('k = "' + "x" * (2 << 20) + '"\n', "larger than 1048576 bytes"),
    # An unterminated string of escaped quotes: the scan once started again from every quote
    # (quadratic: 40 KB took 44 s, and the tokens file is re-read on the table's loop).
    ('a = "' + '\\"' * 400_000 + "\n", "not valid TOML"),
]


@pytest.mark.parametrize(
    "command", [("run",), ("devices",), ("sim",), ("floor",), ("floor", "report")]
)
@pytest.mark.parametrize(("text", "message"), PATHOLOGICAL, ids=[m for _, m in PATHOLOGICAL])
def test_a_pathological_config_is_one_line_and_exit_2(
    tmp_path: Path, command: tuple[str, ...], text: str, message: str
) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text)
    extra = ["--since", "2026-01-01", "--until", "2026-01-02"] if command[-1] == "report" else []
    result = subprocess.run(
        [sys.executable, "-m", "daemon", *command, "--config", str(path), *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0], result.stderr


def test_a_pathological_tokens_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """The tokens file goes through the same bounds: `tabled run` refuses it before it serves."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[[token]]\n" + ".".join(["x"] * 50_000) + " = 1\n")
    tokens.chmod(0o600)
    config = tmp_path / "table.toml"
    config.write_text(
        f'[api]\ntokens_file = "{tokens}"\n'
        + "".join(f'[devices.{n}]\nport = "sim://{n}"\n' for n in REQUIRED_DEVICES["thirteen"])
    )
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "run", "--config", str(config), "--http", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "a dotted name of more than 32 parts" in lines[0], result.stderr


def test_the_bounds_leave_real_files_alone() -> None:
    """Floats, versions, addresses and the shipped configs are not dotted names."""
    version = ".".join(str(n) for n in range(40))
    text = f'a = [{", ".join(["1.5"] * 40)}]\nv = "{version}"\nb.c.d = 1\n'
    assert loads_toml(text)["b"] == {"c": {"d": 1}}
    for path in sorted((REPO / "config").rglob("*.toml")):
        loads_toml(path.read_text())
