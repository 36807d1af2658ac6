"""Which model simulates which device. A device engineer adds a line here for a new model; the
module is imported only when that device is simulated."""

from __future__ import annotations

from drivers.plugins import load_registered
from simulators.base import DeviceModel

MODELS: dict[str, str] = {
    "shuffler": "simulators.shuffler:ShufflerModel",
    "dice_shaker": "simulators.dice_shaker:DiceShakerModel",
    "shoe_reader": "simulators.shoe_reader:ShoeReaderModel",
    "timer_bell": "simulators.timer_bell:TimerBellModel",
}


def model_class(device: str) -> type[DeviceModel]:
    """The model class for `device`; LookupError if none is registered or importable."""
    return load_registered(MODELS, device, DeviceModel, "simulator")
