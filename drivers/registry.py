"""Which driver drives which device. A device engineer adds a line here for a new driver; the
module is imported only when that device is configured."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TypeVar

from drivers.base import DeviceDriver

T = TypeVar("T")

DRIVERS: dict[str, str] = {
    "shuffler": "drivers.shuffler:ShufflerDriver",
    "dice_shaker": "drivers.dice_shaker:DiceShakerDriver",
    "shoe_reader": "drivers.shoe_reader:ShoeReaderDriver",
    "timer_bell": "drivers.timer_bell:TimerBellDriver",
}


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


def driver_class(device: str) -> type[DeviceDriver]:
    """The driver class for `device`; LookupError if none is registered or importable."""
    return load_registered(DRIVERS, device, DeviceDriver, "driver")
