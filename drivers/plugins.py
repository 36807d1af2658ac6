"""The lazy `module:Class` loader behind the driver, adapter and simulator registries: nothing of
a device is imported until that device is used. No I/O, no asyncio: simulators use it too."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


def load_registered(registry: Mapping[str, str], device: str, base: type[T], what: str) -> type[T]:
    """Import the `module:Class` registered for `device` and check it is a `base`.

    LookupError, naming `what` (driver, simulator), if none is registered or importable."""
    try:
        module_name, _, attribute = registry[device].partition(":")
    except KeyError:
        raise LookupError(f"no {what} for device {device!r}") from None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise LookupError(f"the {device} {what} ({module_name}) is not installed") from None
    cls = getattr(module, attribute)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise LookupError(f"{registry[device]} is not a {base.__name__}")
    return cls
