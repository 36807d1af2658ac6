"""The import direction the layout promises, read from the source: `drivers/` and `simulators/`
never import `daemon`; a simulator imports only the wire (messages, the sans-I/O codec) and the
shared clock and loader, never a driver; the table runtime names no device's own module."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICES = ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")
# What a simulator may take from drivers/: the wire and the shared, I/O-free helpers.
SIMULATOR_MAY_IMPORT = {
    "drivers.messages",
    "drivers.framing",
    "drivers.crc",
    "drivers.clock",
    "drivers.kinds",
    *(f"drivers.{device}.messages" for device in DEVICES),
}


def imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (a lazy import inside a function counts)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def sources(package: str) -> list[Path]:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, package
    return files


def test_drivers_and_simulators_import_nothing_from_daemon() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imports(path) if m.split(".")[0] == "daemon")
        for package in ("drivers", "simulators")
        for path in sources(package)
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_simulators_import_only_the_wire_from_drivers() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imports(path) if m.startswith("drivers") and m not in SIMULATOR_MAY_IMPORT
        )
        for path in sources("simulators")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_device_messages_are_pure() -> None:
    """A device's wire messages import the common messages and the standard library only."""
    for device in DEVICES:
        path = ROOT / "drivers" / device / "messages.py"
        outside = {m for m in imports(path) if m.split(".")[0] in ("drivers", "serial", "asyncio")}
        assert outside == {"drivers.messages"}, (device, outside)


def test_the_table_runtime_names_no_device_module() -> None:
    device_modules = {f"drivers.{device}" for device in DEVICES}
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imports(path) if any(m.startswith(d) for d in device_modules)
        )
        for path in sources("daemon/table")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_tabled_names_no_plugin() -> None:
    """The worked plug-in (examples/tabled-ascii-shoe, docs/devices.md) is found through its
    entry point alone: no module of tabled imports it or names it."""
    offenders = {
        str(path.relative_to(ROOT))
        for package in ("daemon", "drivers", "simulators")
        for path in sources(package)
        if "tabled_ascii_shoe" in path.read_text()
    }
    assert offenders == set()
