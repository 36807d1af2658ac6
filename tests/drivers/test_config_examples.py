"""Every shipped example config loads, names only real devices, and approves the simulators'
builds where it claims to (the hashes are the ones the simulators report)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from daemon.config import load_config
from drivers.messages import Identity
from drivers.settings import is_approved
from simulators.base import SIM_MAKE, firmware_digest
from simulators.spec import model_class

EXAMPLES = sorted((Path(__file__).parents[2] / "config" / "examples").glob("*.toml"))


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 2


# A rule set's example (`<game>-<ruleset>.toml`) plays as shipped (`tabled run --autoplay N`), so
# its devices are simulated; every other example is for real ports.
RULESET_EXAMPLE = re.compile(r"^(thirteen|paigow)-(macau|hk)-")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_loads(path: Path) -> None:
    config = load_config(path)
    assert config.devices
    for device in config.devices.values():
        simulated = device.port.startswith("sim://")
        assert simulated == bool(RULESET_EXAMPLE.match(path.name)), device.port


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_device_of_an_example_has_an_approved_build(path: Path) -> None:
    """An empty list means "not configured": commands allowed with a warning. A config meant
    for a live table must approve every device's build (DOMAIN R4)."""
    for name, device in load_config(path).devices.items():
        assert device.approved, f"{path.name}: devices.{name} lists no approved build"


def test_the_pty_example_approves_the_simulators() -> None:
    config = load_config(Path(EXAMPLES[0]).with_name("sim-pty.toml"))
    for name in config.devices:
        model = model_class(name)
        identity = Identity(
            SIM_MAKE,
            model.MODEL,
            "SIM-1",
            model.FIRMWARE,
            firmware_digest(model.MODEL, model.FIRMWARE),
        )
        assert is_approved(identity, config.devices[name].approved) is True
