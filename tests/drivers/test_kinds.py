"""The device kinds' one registry (drivers/kinds.py): the built-in rows and the plug-ins'
(`tabled.devices` entry points, read through importlib.metadata as an installed package's are),
a plug-in that cannot be read kept out with one line naming its package, and the config picking
a kind for a device's role and checking what that kind takes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.config import ConfigError, load_config
from drivers.adapter import DeviceAdapter, adapter_class
from drivers.base import DeviceDriver, driver_class
from drivers.kinds import BUILTIN, GROUP, ROLES, broken, find, kinds, package_digest
from drivers.shoe_reader.adapter import ShoeReaderAdapter
from drivers.shoe_reader.driver import ShoeReaderDriver
from simulators.base import DeviceModel
from simulators.spec import model_class
from simulators.world import forget_world
from tests.device_plugins import EXAMPLE_KIND, ROW, plugin, plugin_site
from tests.table.scenario_support import make_table, new_world, table_config


def test_every_kind_names_a_driver_an_adapter_and_a_simulator_of_its_role() -> None:
    assert {row.name for row in BUILTIN} == set(ROLES)  # a built-in kind is named after its role
    for name, row in kinds().items():
        assert issubclass(driver_class(name), DeviceDriver), name
        assert issubclass(adapter_class(name), DeviceAdapter), name
        model = model_class(name)
        assert issubclass(model, DeviceModel), name
        assert row.role == model.DEVICE, name  # in the simulated table it is that device


def test_the_example_plugin_is_found_through_its_entry_point() -> None:
    row = find(EXAMPLE_KIND)
    assert (row.role, row.package, row.version) == ("shoe_reader", "tabled-ascii-shoe", "0.1.0")
    # A shoe reader of another wire: the shoe's own driver semantics and adapter.
    assert issubclass(driver_class(EXAMPLE_KIND), ShoeReaderDriver)
    assert adapter_class(EXAMPLE_KIND) is ShoeReaderAdapter
    assert EXAMPLE_KIND not in broken()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    with plugin_site(tmp_path) as folder:
        yield folder


@pytest.mark.parametrize(
    "case",
    [
        ("acme-gone", "gone", "acme_gone:KIND", "", "cannot load acme_gone:KIND"),
        (
            "acme-boom",
            "boom",
            "acme_boom:KIND",
            "raise RuntimeError('the vendor\\'s bug,\\n on two lines')",
            "RuntimeError: the vendor's bug, on two lines",
        ),
        ("acme-what", "what", "acme_what:KIND", "KIND = 3", "is a int, not a DeviceKind"),
        (
            "acme-named",
            "named",
            "acme_named:KIND",
            ROW + "KIND = DeviceKind('other', 'shoe_reader', 'm:C')",
            "its row is named 'other', its entry point 'named'",
        ),
        (
            "acme-shadow",
            "shoe_reader",
            "acme_shadow:KIND",
            ROW + "KIND = DeviceKind('shoe_reader', 'shoe_reader', 'acme_shadow:Evil')",
            "kind 'shoe_reader' is taken by tabled",
        ),
        (
            "acme-role",
            "roulette",
            "acme_role:KIND",
            ROW + "KIND = DeviceKind('roulette', 'wheel', 'm:C')",
            "role 'wheel' is not a table device",
        ),
    ],
    ids=["not-installed", "raises", "not-a-row", "misnamed", "shadows-a-built-in", "no-role"],
)
def test_a_broken_plugin_is_kept_out_with_one_line_naming_its_package(
    site: Path, case: tuple[str, str, str, str, str]
) -> None:
    package, entry, value, module, said = case
    plugin(site, package, entry, value, module)
    line = broken()[entry]
    assert line.startswith(f"{GROUP} plug-in {entry!r} of package {package} 1.0: "), line
    assert said in line and "\n" not in line and "Traceback" not in line
    if entry == "shoe_reader":  # the built-in kind stands: a plug-in never replaces one
        assert driver_class("shoe_reader") is ShoeReaderDriver
        return
    with pytest.raises(LookupError) as raised:
        find(entry)
    assert str(raised.value) == line
    assert all(kinds()[row.name].driver == row.driver for row in BUILTIN)  # still there


def test_a_plugins_class_that_does_not_import_is_one_line(site: Path) -> None:
    plugin(
        site,
        "acme-half",
        "half",
        "acme_half:KIND",
        ROW + "KIND = DeviceKind('half', 'timer_bell', 'acme_half_driver:Driver')",
    )
    assert "half" in kinds()
    with pytest.raises(
        LookupError, match=r"^the half driver \(acme_half_driver\) is not installed$"
    ):
        driver_class("half")
    assert adapter_class("half") is DeviceAdapter  # the row names none: the generic one
    with pytest.raises(LookupError, match="has no simulator"):
        model_class("half")


SHOE = """
[table]
id = "T7"
[devices.shoe_reader]
{lines}
"""


APPROVED = "package_sha256 = APPROVED"  # the installed example's digest, as the casino approved it


def config_of(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "table.toml"
    digest = f'package_sha256 = "{package_digest(EXAMPLE_KIND)}"'
    path.write_text(SHOE.format(lines="\n".join(lines)).replace(APPROVED, digest))
    return path


def test_the_config_picks_a_plugins_kind_for_a_role(tmp_path: Path) -> None:
    config = load_config(
        config_of(
            tmp_path,
            'kind = "ascii_shoe"',
            APPROVED,
            'port = "sim://ascii_shoe"',
            "baudrate = 19200",
            "[devices.shoe_reader.options]",
            'line_end = "lf"',
        ),
        partial=True,
    )
    device = config.devices["shoe_reader"]
    assert (device.kind, device.baudrate, device.options) == (
        "ascii_shoe",
        19200,
        {"line_end": "lf"},
    )
    driver = driver_class(device.kind).from_config(device)
    assert driver.name == "shoe_reader" and driver.link.line_end == b"\n"  # type: ignore[attr-defined]
    # without a kind, the built-in one of the role
    plain = load_config(config_of(tmp_path, 'port = "sim://shoe_reader"'), partial=True)
    assert plain.devices["shoe_reader"].kind == "shoe_reader"


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            ['kind = "rfid_shoe"', 'port = "/dev/ttyS0"'],
            "kind: no device kind 'rfid_shoe' (known: ",
        ),
        (['kind = "timer_bell"', 'port = "/dev/ttyS0"'], ") is a timer_bell, not a shoe_reader"),
        (
            ['kind = "ascii_shoe"', APPROVED, 'port = "/dev/ttyS0"'],
            "baudrate: a ascii_shoe runs at 9600, 19200, not 115200",
        ),
        (
            ['kind = "ascii_shoe"', APPROVED, 'port = "sim://shoe_reader"', "baudrate = 9600"],
            "simulates a shoe_reader, not a ascii_shoe",
        ),
        (
            [
                'kind = "ascii_shoe"',
                APPROVED,
                'port = "x"',
                "baudrate = 9600",
                "options = { line_end = 1 }",
            ],
            "options.line_end: one of 'crlf', 'lf', got 1",
        ),
        (
            ['port = "x"', "options = { line_end = 'lf' }"],
            "options.line_end: unknown key (a shoe_reader takes: none)",
        ),
        (
            ['kind = "ascii_shoe"', 'port = "x"', "baudrate = 9600"],
            "package_sha256: the ascii_shoe kind is a plug-in's: give the digest of the package",
        ),
        (
            [
                'kind = "ascii_shoe"',
                f'package_sha256 = "{"0" * 64}"',
                'port = "x"',
                "baudrate = 9600",
            ],
            f"not the approved {'0' * 64}: it is not the package the casino approved",
        ),
        (
            [f'package_sha256 = "{"0" * 64}"', 'port = "x"'],
            "package_sha256: the shoe_reader kind is not a plug-in's",
        ),
        (['kind = "ascii_shoe"', 'package_sha256 = "SHA"', 'port = "x"'], "package_sha256: "),
    ],
    ids=[
        "unknown",
        "another-role",
        "baudrate",
        "sim-port",
        "option-value",
        "option-key",
        "no-digest",
        "wrong-digest",
        "builtin-digest",
        "not-a-digest",
    ],
)
def test_a_kind_the_config_cannot_use_is_one_line(
    tmp_path: Path, lines: list[str], said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(config_of(tmp_path, *lines), partial=True)
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert "devices.shoe_reader" in str(raised.value)


def test_a_plugin_the_config_does_not_name_never_runs(site: Path, tmp_path: Path) -> None:
    """Its module is imported only when its kind is asked for (or every kind is listed)."""
    marker = tmp_path / "imported"
    plugin(
        site,
        "acme-idle",
        "idle_bell",
        "acme_idle:KIND",
        f"open({str(marker)!r}, 'w').close()\n"
        + ROW
        + "KIND = DeviceKind('idle_bell', 'timer_bell', 'acme_idle_driver:Driver')",
    )
    load_config(config_of(tmp_path, 'port = "sim://shoe_reader"'), partial=True)
    assert find("shoe_reader").package == "tabled"
    assert not marker.exists()
    # A whole table of built-in kinds, its devices built and started: nothing of the plug-in.
    key, _ = new_world()
    try:
        table, _ = make_table(table_config(tmp_path / "journal", world=key, durability="none"))

        async def start_and_stop() -> None:
            await table.start(connect=False)
            await table.stop()

        asyncio.run(start_and_stop())
    finally:
        forget_world(key)
    assert not marker.exists()
    assert "idle_bell" in kinds()  # the listing reads them all
    assert marker.exists()


def test_a_plugin_runs_only_from_the_package_the_casino_approved(
    site: Path, tmp_path: Path
) -> None:
    """Its digest covers the files its package installed, read from disk: one byte changed in
    its code after the approval and the config refuses it, before any of it is imported."""
    marker = tmp_path / "imported"
    module = (
        f"open({str(marker)!r}, 'w').close()\n"
        + ROW
        + "KIND = DeviceKind('acme_bell', 'timer_bell', 'acme_bell_driver:Driver')\n"
    )
    plugin(site, "acme-bell", "acme_bell", "acme_bell:KIND", module)
    approved = package_digest("acme_bell")
    assert approved == package_digest("acme_bell") and len(approved) == 64
    (site / "acme_bell.py").write_text(module.replace("'timer_bell'", "'timer_bell' "))
    assert package_digest("acme_bell") != approved
    path = tmp_path / "bell.toml"
    path.write_text(
        f'[devices.timer_bell]\nkind = "acme_bell"\npackage_sha256 = "{approved}"\nport = "x"\n'
    )
    with pytest.raises(ConfigError, match="not the package the casino approved"):
        load_config(path, partial=True)
    assert not marker.exists()
    (site / "acme_bell.py").unlink()  # a file it installed, gone
    with pytest.raises(LookupError, match=r"acme-bell 1.0: acme_bell.py it installed cannot be"):
        package_digest("acme_bell")
    with pytest.raises(LookupError, match="'shoe_reader' is not a plug-in's kind"):
        package_digest("shoe_reader")


def test_a_kind_two_packages_declare_is_neithers(site: Path) -> None:
    module = ROW + "KIND = DeviceKind('twin', 'timer_bell', 'm:C')"
    plugin(site, "acme-one", "twin", "acme_one:KIND", module)
    plugin(site, "acme-two", "twin", "acme_two:KIND", module)
    with pytest.raises(LookupError, match=r"declared by acme-one 1.0, acme-two 1.0; none is used"):
        find("twin")
    assert "twin" not in kinds() and "twin" in broken()


@pytest.mark.parametrize(
    ("package", "entry", "said"),
    [
        ("acme-lookalike", "\u0455hoe_reader", "is not a name (ASCII letters, digits, _)"),
        ("tabled", "tabled_shoe", "only tabled's own kinds are tabled's"),
    ],
    ids=["cyrillic-name", "calls-itself-tabled"],
)
def test_a_plugin_that_would_read_as_a_built_in_is_kept_out(
    site: Path, package: str, entry: str, said: str
) -> None:
    """The journal and `tabled devices` name a device's kind and package: a plug-in may not
    borrow either so that its device reads as tabled's own shoe reader."""
    module = ROW + f"KIND = DeviceKind({entry!r}, 'shoe_reader', 'acme_look:Driver')"
    if package == "tabled":
        # importlib.metadata reads one distribution a name, the first on sys.path: a package
        # calling itself tabled is seen only ahead of the real one.
        sys.path.remove(str(site))
        sys.path.insert(0, str(site))
    plugin(site, package, entry, "acme_look:KIND", module)
    assert said in broken()[entry]
    assert entry not in kinds()
