"""Device plug-ins for the tests, installed as a package is: a `NAME-VERSION.dist-info` folder
(METADATA, entry_points.txt) on sys.path beside the plug-in's code, so `drivers.kinds` finds
its kinds through importlib.metadata's entry points, as it finds an installed package's.

`install_example` installs the worked example of docs/devices.md
(examples/tabled-ascii-shoe) that way from its own pyproject.toml, for the whole session
(tests/conftest.py): the device contract and the fuzzing, parametrised over the kinds the
registry knows, take it in as they take the built-in ones. tests/drivers/test_plugin_example.py
installs it with pip too, and runs the CLI on that install."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from drivers.kinds import GROUP, reset

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tabled-ascii-shoe"
EXAMPLE_KIND = "ascii_shoe"


def write_dist_info(
    site: Path,
    name: str,
    version: str,
    entry_points: Mapping[str, Mapping[str, str]],
    code: Iterable[Path] = (),
) -> Path:
    """A dist-info folder in `site` for package `name` declaring `entry_points`, its RECORD
    listing its metadata and the files `code` (as pip's does, paths from `site`), so it has a
    digest to approve (`drivers.kinds.package_digest`)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, entries in entry_points.items():
        lines += [f"[{group}]", *(f"{key} = {value}" for key, value in entries.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))
    listed = [info / "METADATA", info / "entry_points.txt", *code]
    record = [f"{Path(os.path.relpath(path, site)).as_posix()},," for path in listed]
    (info / "RECORD").write_text("\n".join([*record, f"{info.name}/RECORD,,", ""]))
    return info


def on_path(*folders: Path) -> None:
    """Put `folders` on sys.path and read the registry again."""
    for folder in folders:
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    importlib.invalidate_caches()
    reset()


def install_example(site: Path) -> None:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    code = sorted(p for p in (EXAMPLE / "tabled_ascii_shoe").rglob("*.py") if p.is_file())
    write_dist_info(site, project["name"], project["version"], project["entry-points"], code)
    on_path(site, EXAMPLE)


ROW = "from drivers.kinds import DeviceKind\n"  # what a plug-in's module starts with


@contextlib.contextmanager
def plugin_site(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path for a test's own plug-ins (`plugin`); the registry is read again
    when it is gone."""
    folder = tmp_path / "site"
    folder.mkdir()
    on_path(folder)
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        reset()


def plugin(site: Path, package: str, entry: str, value: str, module: str = "") -> None:
    """Package `package` 1.0 in `site`, declaring `entry = value` in tabled.devices, with
    `module` as the source of the module `value` names."""
    source = site / f"{value.partition(':')[0]}.py"
    if module:
        source.write_text(module)
    write_dist_info(site, package, "1.0", {GROUP: {entry: value}}, [source] if module else [])
    on_path(site)
