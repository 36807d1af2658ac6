"""Which driver drives which device, and which adapter tells the table what it means. A device
engineer adds a line to each table here for a new device; its modules are imported only when
that device is configured."""

from __future__ import annotations

from drivers.adapter import DeviceAdapter
from drivers.base import DeviceDriver
from drivers.plugins import load_registered

DRIVERS: dict[str, str] = {
    "shuffler": "drivers.shuffler.driver:ShufflerDriver",
    "dice_shaker": "drivers.dice_shaker.driver:DiceShakerDriver",
    "shoe_reader": "drivers.shoe_reader.driver:ShoeReaderDriver",
    "timer_bell": "drivers.timer_bell.driver:TimerBellDriver",
}

ADAPTERS: dict[str, str] = {
    "shuffler": "drivers.shuffler.adapter:ShufflerAdapter",
    "dice_shaker": "drivers.dice_shaker.adapter:DiceShakerAdapter",
    "shoe_reader": "drivers.shoe_reader.adapter:ShoeReaderAdapter",
    "timer_bell": "drivers.timer_bell.adapter:TimerBellAdapter",
}


def driver_class(device: str) -> type[DeviceDriver]:
    """The driver class for `device`; LookupError if none is registered or importable."""
    return load_registered(DRIVERS, device, DeviceDriver, "driver")


def adapter_class(device: str) -> type[DeviceAdapter]:
    """The adapter class for `device`: the generic `DeviceAdapter` (common facts only, commands
    by method name) when none is registered; LookupError if a registered one is not importable."""
    if device not in ADAPTERS:
        return DeviceAdapter
    return load_registered(ADAPTERS, device, DeviceAdapter, "adapter")
