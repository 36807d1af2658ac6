"""Which driver drives which device. A device engineer adds a line here for a new driver; the
module is imported only when that device is configured."""

from __future__ import annotations

import importlib

from drivers.base import DeviceDriver

DRIVERS: dict[str, str] = {
    "shuffler": "drivers.shuffler:ShufflerDriver",
    "dice_shaker": "drivers.dice_shaker:DiceShakerDriver",
    "shoe_reader": "drivers.shoe_reader:ShoeReaderDriver",
    "timer_bell": "drivers.timer_bell:TimerBellDriver",
}


def driver_class(device: str) -> type[DeviceDriver]:
    """The driver class for `device`; LookupError if none is registered or importable."""
    try:
        module_name, _, attribute = DRIVERS[device].partition(":")
    except KeyError:
        raise LookupError(f"no driver for device {device!r}") from None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise LookupError(f"the {device} driver ({module_name}) is not installed") from None
    cls = getattr(module, attribute)
    if not (isinstance(cls, type) and issubclass(cls, DeviceDriver)):
        raise LookupError(f"{DRIVERS[device]} is not a DeviceDriver")
    return cls
