from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config import DEVICE_NAMES, ConfigError, load_config, parse_config


def test_embedded_default_simulates_every_device() -> None:
    config = load_config()
    assert config.game == "thirteen"
    assert config.ruleset == "macau-1989"
    assert set(config.devices) == set(DEVICE_NAMES)
    assert all(device.port.startswith("sim://") for device in config.devices.values())
    assert config.journal.durability == "fsync"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"table": {"game": "baccarat"}}, "table.game: 'baccarat'"),
        ({"table": {"paigow_hands": 6}}, "Art. 2(4)"),
        ({"table": {"colour": "green"}}, "table: unknown key(s) colour"),
        ({"devices": {"roulette": {"port": "x"}}}, "devices.roulette: unknown device"),
        ({"devices": {"shuffler": {"baudrate": 9600}}}, "devices.shuffler.port: required"),
        ({"devices": {"shuffler": {"port": "x", "baudrate": "fast"}}}, "expected int"),
        ({"journal": {"durability": "sometimes"}}, "journal.durability"),
        ({"devices": {"shuffler": {"port": "x", "baudrate": 12}}}, "baudrate: 12 is not one of"),
        ({"api": {"allowed_origins": ["surveillance.example"]}}, "not an http(s):// origin"),
        ({"api": {"allowed_origins": "https://a.example"}}, "expected list"),
        ({"devices": {"shuffler": {"port": "x", "address": 0}}}, "address: 0 is outside 1..127"),
        ({"devices": {"shuffler": {"port": "x", "address": 128}}}, "address: 128 is outside"),
        (
            {"devices": {"shuffler": {"port": "sim://dice_shaker?seed=1"}}},
            "simulates a dice_shaker, not a shuffler",
        ),
    ],
)
def test_bad_config_names_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(data)


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[table\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_allowed_origins_reach_the_api_config() -> None:
    config = parse_config({"api": {"allowed_origins": ["https://surveillance.example/"]}})
    assert config.api.allowed_origins == ("https://surveillance.example",)
