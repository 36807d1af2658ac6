"""requirements.lock is the approved build's dependencies: pinned, hashed, and in step with
pyproject.toml (docs/operations.md, "The approved build")."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements.lock"
SELF = "tabled (pyproject.toml)"
# Console pretty-printers structlog picks up when installed: never in the production venv.
DEV_ONLY = {"rich", "colorama", "better-exceptions"}


def _direct() -> dict[str, Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(text) for text in project["dependencies"]]
    return {canonicalize_name(r.name): r for r in requirements}


def _locked() -> dict[str, tuple[Version, list[str], set[str]]]:
    """name -> (pinned version, its hashes, what it is there for)."""
    entries: dict[str, tuple[Version, list[str], set[str]]] = {}
    current = ""
    via_block = False
    for line in LOCK.read_text().splitlines():
        pin = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", line)
        if pin:
            current = canonicalize_name(pin.group(1))
            assert current not in entries, f"{current} pinned twice"
            entries[current] = (Version(pin.group(2)), [], set())
            via_block = False
            continue
        assert not re.match(r"^[A-Za-z0-9]", line), f"not pinned with ==: {line!r}"
        stripped = line.strip()
        if stripped.startswith("--hash=sha256:"):
            digest = stripped.removeprefix("--hash=sha256:").rstrip(" \\")
            assert re.fullmatch(r"[0-9a-f]{64}", digest), line
            entries[current][1].append(digest)
        elif stripped.startswith("# via "):
            entries[current][2].add(stripped.removeprefix("# via ").strip())
        elif stripped == "# via":
            via_block = True
        elif via_block and stripped.startswith("#   "):
            entries[current][2].add(stripped.removeprefix("#   ").strip())
    return entries


def test_every_pin_has_hashes_so_pip_require_hashes_accepts_it() -> None:
    locked = _locked()
    assert locked
    for name, (_, hashes, via) in locked.items():
        assert hashes, f"{name}: no --hash"
        assert via, f"{name}: no '# via' (regenerate the lock with pip-compile)"


def test_the_lock_pins_exactly_pyprojects_dependencies_within_their_ranges() -> None:
    direct, locked = _direct(), _locked()
    pinned_for_us = {name for name, (_, _, via) in locked.items() if SELF in via}
    assert pinned_for_us == set(direct), "regenerate requirements.lock (docs/operations.md)"
    for name, requirement in direct.items():
        version = locked[name][0]
        assert requirement.specifier.contains(version), f"{name} {version} not {requirement}"


def test_every_locked_package_is_needed_by_something_locked() -> None:
    locked = _locked()
    for name, (_, _, via) in locked.items():
        needers = {canonicalize_name(v) for v in via if v != SELF}
        assert SELF in via or needers & locked.keys(), f"{name}: needed by {via}, none locked"
    assert not DEV_ONLY & locked.keys()
