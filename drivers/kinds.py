"""The device kinds: one row per kind of device, naming its driver, adapter, simulator and the
config it takes, and the one registry everything reads (the table, `tabled devices`, `tabled
sim`, the config, the replay tool and the tests).

A kind is a make of device that can fill one of the table's device roles (`role`: shuffler,
dice_shaker, shoe_reader, timer_bell; the role is the `[devices.ROLE]` section and the
`device:ROLE` actor the procedures know). The built-in kinds are named after their role; a
vendor's package adds kinds of its own through the `tabled.devices` entry-point group, each
entry naming a `DeviceKind` row, and a table's config picks it with
`[devices.shoe_reader] kind = "ascii_shoe"` (docs/devices.md).

Nothing of a device is imported until it is used: a row names its classes as `module:Class`
text, so reading the registry imports only the plug-ins' small modules that hold their rows.
This module imports no driver and does no I/O but read a plug-in package's installed files for
its digest (`package_digest`): the simulators read it too. A plug-in's module
is imported only when its kind is asked for (`find`, as the config does for the kinds it names)
or when every kind is listed (`kinds`). A plug-in that cannot be read is kept out with one line
that names its package (`broken()`), never a traceback; a plug-in never replaces a built-in
kind, and a kind two packages declare is neither's.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

GROUP = "tabled.devices"  # the entry-point group a vendor's package declares its kinds in
ROLES = ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")
# The line speeds the devices' RS-232 links use; a kind may take fewer.
BAUDRATES = (9600, 19200, 38400, 57600, 115200)
# The types a kind's own config options may have (`[devices.ROLE.options]`).
OPTION_TYPES = (str, int, float, bool)

T = TypeVar("T")
# One of a kind's options: its type, or the values it may take (all of one type).
Option = type | tuple[str | int | float | bool, ...]


@dataclass(frozen=True)
class DeviceKind:
    """One kind of device: everything the table needs to drive it, simulate it and configure it.

    `driver`, `adapter` and `simulator` are `module:Class` text: a `drivers.base.DeviceDriver`,
    a `drivers.adapter.DeviceAdapter` (None: the generic one, which knows the facts every
    device shares and sends a command by the driver's method of that name) and a
    `simulators.base.DeviceModel` (None: the kind has no simulator, so `sim://` cannot serve
    it). `baudrates` are the line speeds it can run at; `options` its own config keys and their
    types, given to the driver as `options` (from `[devices.ROLE.options]`)."""

    name: str
    role: str
    driver: str
    adapter: str | None = None
    simulator: str | None = None
    baudrates: tuple[int, ...] = BAUDRATES
    options: Mapping[str, Option] = field(default_factory=dict)
    package: str = "tabled"  # the distribution that provides it (filled in for a plug-in)
    version: str = ""

    def check(self) -> None:
        """ValueError naming what is wrong with this row."""
        if not (self.name.isascii() and self.name.isidentifier()):
            # ASCII only: a kind named with a look-alike letter (Cyrillic "ѕ") would read as a
            # built-in one in the journal and on `tabled devices`.
            raise ValueError(f"kind {self.name!r} is not a name (ASCII letters, digits, _)")
        if self.role not in ROLES:
            raise ValueError(f"role {self.role!r} is not a table device ({', '.join(ROLES)})")
        for part, spec in (
            ("driver", self.driver),
            ("adapter", self.adapter),
            ("simulator", self.simulator),
        ):
            if spec is not None and not _is_class_path(spec):
                raise ValueError(f"{part} {spec!r} is not 'module:Class'")
        if not self.baudrates or set(self.baudrates) - set(BAUDRATES):
            raise ValueError(f"baudrates {self.baudrates}: some of {BAUDRATES}")
        for key, option in self.options.items():
            types = {type(value) for value in option} if isinstance(option, tuple) else {option}
            if len(types) != 1 or not types <= set(OPTION_TYPES):
                raise ValueError(f"option {key!r}: {option!r} is not str, int, float or bool")

    def check_option(self, key: str, value: object) -> None:
        """ValueError naming what is wrong with `value` for this kind's option `key`."""
        option = self.options.get(key)
        if option is None:
            known = ", ".join(sorted(self.options)) or "none"
            raise ValueError(f"options.{key}: unknown key (a {self.name} takes: {known})")
        if isinstance(option, tuple):
            if value not in option or type(value) is not type(option[0]):
                said = ", ".join(map(repr, option))
                raise ValueError(f"options.{key}: one of {said}, got {value!r}")
        elif type(value) is not option and not (option is float and type(value) is int):
            raise ValueError(f"options.{key}: a {option.__name__}, got {value!r}")

    @property
    def origin(self) -> str:
        """Where the kind comes from, for people: `tabled` or `package 1.2`."""
        return f"{self.package} {self.version}".strip()


def _is_class_path(spec: str) -> bool:
    module, sep, attribute = spec.partition(":")
    return bool(sep and attribute.isidentifier() and module.replace(".", "_").isidentifier())


BUILTIN: tuple[DeviceKind, ...] = tuple(
    DeviceKind(
        name=role,
        role=role,
        driver=f"drivers.{role}.driver:{cls}Driver",
        adapter=f"drivers.{role}.adapter:{cls}Adapter",
        simulator=f"simulators.{role}:{cls}Model",
    )
    for role, cls in (
        ("shuffler", "Shuffler"),
        ("dice_shaker", "DiceShaker"),
        ("shoe_reader", "ShoeReader"),
        ("timer_bell", "TimerBell"),
    )
)


@functools.cache
def _builtin() -> dict[str, DeviceKind]:
    try:
        ours = importlib.metadata.version("tabled")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
        ours = ""
    return {row.name: dataclasses.replace(row, version=ours) for row in BUILTIN}


@functools.cache
def _declared() -> dict[str, list[importlib.metadata.EntryPoint]]:
    """The installed packages' `tabled.devices` entries by kind name: their metadata only,
    nothing of theirs imported."""
    entries: dict[str, list[importlib.metadata.EntryPoint]] = {}
    for entry in importlib.metadata.entry_points(group=GROUP):
        entries.setdefault(entry.name, []).append(entry)
    return entries


def _origin(entry: importlib.metadata.EntryPoint) -> tuple[str, str]:
    dist = entry.dist
    return (dist.name, dist.version) if dist is not None else ("?", "")


@functools.cache
def _plugin(name: str) -> DeviceKind | str:
    """Kind `name` as the one package that declares it gives it, or the one line that says
    why it is kept out. Only this entry's module is imported."""
    entries = _declared()[name]
    package, version = _origin(entries[0])
    said = f"{GROUP} plug-in {name!r} of package {package} {version}".rstrip()
    if len(entries) > 1:
        packages = ", ".join(sorted(" ".join(_origin(entry)).strip() for entry in entries))
        return f"{GROUP} plug-in {name!r}: declared by {packages}; none is used"
    if name in _builtin():
        return f"{said}: kind {name!r} is taken by {_builtin()[name].origin}"
    if package.lower().replace("_", "-") == "tabled":
        # Another distribution calling itself tabled would journal its kind as ours.
        return f"{said}: only tabled's own kinds are tabled's; a plug-in has its own package"
    (entry,) = entries
    try:
        row = entry.load()
    except Exception as exc:  # a plug-in's bug of any kind: the line says which
        return f"{said}: cannot load {entry.value}: {_one_line(exc)}"
    try:
        if not isinstance(row, DeviceKind):
            raise ValueError(f"{entry.value} is a {type(row).__name__}, not a DeviceKind")
        if row.name != name:
            raise ValueError(f"its row is named {row.name!r}, its entry point {name!r}")
        row.check()
    except ValueError as exc:
        return f"{said}: {exc}"
    return dataclasses.replace(row, package=package, version=version)


def reset() -> None:
    """Read the installed packages again (after one was installed or removed in-process)."""
    for cached in (_builtin, _declared, _plugin):
        cached.cache_clear()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def kinds() -> Mapping[str, DeviceKind]:
    """Every kind: the built-in ones and every plug-in's that can be read (each plug-in's
    module is imported: this is the listing, `tabled devices --kinds`)."""
    found = dict(_builtin())
    for name in sorted(_declared()):
        row = _plugin(name)
        if isinstance(row, DeviceKind):
            found[name] = row
    return found


def broken() -> Mapping[str, str]:
    """The plug-ins kept out, each with the one line that says why (each plug-in's module is
    imported to know)."""
    return {name: row for name in sorted(_declared()) if isinstance(row := _plugin(name), str)}


# What a package's digest leaves out of its RECORD: files the installer writes per install
# (which installer, from where, the RECORD itself) and byte code Python writes beside the code.
_PER_INSTALL = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})


def is_builtin(name: str) -> bool:
    """Kind `name` is one of tabled's own (nothing of a plug-in is read to know)."""
    return name in _builtin()


def is_plugin(name: str) -> bool:
    """Kind `name` is declared by an installed package (its metadata read, nothing imported)."""
    return name in _declared() and not is_builtin(name)


def package_digest(name: str) -> str:
    """The SHA-256 of what plug-in kind `name`'s package installed, as the casino approves it
    (`[devices.ROLE] package_sha256`, docs/devices.md): over each file its RECORD lists, read
    from disk now (its code, its METADATA and entry points; not the per-install files nor byte
    code), in path order, as ``path TAB sha256 NEWLINE`` lines. Nothing of the package is
    imported. LookupError of one line when the kind is not a plug-in's, or its package lists no
    files (an editable or hand-made install: nothing to approve) or lost one."""
    if not is_plugin(name):
        raise LookupError(f"{name!r} is not a plug-in's kind")
    entries = _declared()[name]
    dist = entries[0].dist
    package, version = _origin(entries[0])
    files = dist.files if dist is not None else None
    if dist is None or not files:
        raise LookupError(
            f"package {package} {version} lists no installed files (RECORD): only a package "
            "installed by pip from its wheel can be approved"
        )
    lines = []
    for file in sorted(files, key=lambda f: f.as_posix()):
        parts = file.parts
        if file.suffix == ".pyc" or "__pycache__" in parts:
            continue
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in _PER_INSTALL:
            continue
        try:
            data = Path(str(dist.locate_file(file))).read_bytes()
        except OSError as exc:
            raise LookupError(
                f"package {package} {version}: {file.as_posix()} it installed cannot be read "
                f"({exc.strerror or exc})"
            ) from None
        lines.append(f"{file.as_posix()}\t{hashlib.sha256(data).hexdigest()}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def package_problem(kind: str, approved: str) -> str | None:
    """Why a config may not run kind `kind` with `approved` as its package's approved digest
    (`[devices.ROLE] package_sha256`), as one `key: what is wrong` line, or None. A plug-in's
    kind runs only from the package the casino approved, checked before its code is imported;
    a built-in kind takes no digest; a kind no package declares is `find`'s to name."""
    if not is_plugin(kind):
        if approved:
            return (
                f"package_sha256: the {kind} kind is not a plug-in's: only a plug-in's package "
                "is approved by its digest"
            )
        return None
    try:
        digest = package_digest(kind)
    except LookupError as exc:
        return f"kind: {exc}"
    if not approved:
        return (
            f"package_sha256: the {kind} kind is a plug-in's: give the digest of the package "
            "the casino approved (`tabled devices --kinds` shows the installed one's, to compare)"
        )
    if approved != digest:
        return (
            f"package_sha256: the installed package's digest is {digest}, not the approved "
            f"{approved}: it is not the package the casino approved"
        )
    return None


def find(name: str) -> DeviceKind:
    """The row of kind `name`; LookupError of one line if there is none. A built-in kind
    imports nothing; a plug-in's imports that plug-in's module alone, so the code of a package
    the config does not name never runs in the table's process."""
    row = _builtin().get(name)
    if row is not None:
        return row
    if name in _declared():
        got = _plugin(name)
        if isinstance(got, str):
            raise LookupError(got)
        return got
    known = ", ".join(sorted({*_builtin(), *_declared()}))
    raise LookupError(f"no device kind {name!r} (known: {known})")


def load_class(name: str, part: str, base: type[T]) -> type[T]:
    """The class that `part` ("driver", "adapter", "simulator") of kind `name` names, checked
    to be a `base`; a row that names no adapter gets `base` itself (the generic adapter).
    LookupError of one line if the kind is unknown, names no such class or it cannot be
    imported."""
    row = find(name)
    spec = getattr(row, part)
    if spec is None:
        if part == "adapter":
            return base
        raise LookupError(f"the {name} kind ({row.origin}) has no {part}")
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise LookupError(f"the {name} {part} ({spec}): {_one_line(exc)}") from None
        raise LookupError(f"the {name} {part} ({module_name}) is not installed") from None
    except Exception as exc:
        raise LookupError(f"the {name} {part} ({spec}): {_one_line(exc)}") from None
    cls = getattr(module, attribute, None)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise LookupError(f"the {name} {part} {spec} is not a {base.__name__}")
    return cls
