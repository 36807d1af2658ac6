"""Which model simulates which device. A device engineer adds a line here for a new model; the
module is imported only when that device is simulated."""

from __future__ import annotations

import importlib

from simulators.base import DeviceModel

MODELS: dict[str, str] = {
    "shuffler": "simulators.shuffler:ShufflerModel",
    "dice_shaker": "simulators.dice_shaker:DiceShakerModel",
    "shoe_reader": "simulators.shoe_reader:ShoeReaderModel",
    "timer_bell": "simulators.timer_bell:TimerBellModel",
}


def model_class(device: str) -> type[DeviceModel]:
    """The model class for `device`; LookupError if none is registered or importable."""
    try:
        module_name, _, attribute = MODELS[device].partition(":")
    except KeyError:
        raise LookupError(f"no simulator for device {device!r}") from None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise LookupError(f"the {device} simulator ({module_name}) is not installed") from None
    cls = getattr(module, attribute)
    if not (isinstance(cls, type) and issubclass(cls, DeviceModel)):
        raise LookupError(f"{MODELS[device]} is not a DeviceModel")
    return cls
