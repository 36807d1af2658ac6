"""The control channel (and the trainer's panel, daemon/training.py) offers the faults of the
model that is in the table world for a role, a plug-in's kind included (docs/devices.md), not
those of the role's built-in model."""

from __future__ import annotations

from typing import ClassVar

from drivers.clock import ManualClock
from simulators.control import device_faults, handle_control
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import forget_world, get_world


class JammingShoe(ShoeReaderModel):
    """A vendor's shoe whose card can jam in its mouth: a one-shot fault of its own."""

    ONE_SHOT: ClassVar[frozenset[str]] = ShoeReaderModel.ONE_SHOT | {"jam"}


def test_the_faults_offered_are_those_of_the_model_in_the_world() -> None:
    world = get_world("plugin-model-control")
    try:
        assert "jam" not in device_faults("shoe_reader", world)["one_shot"]  # none attached yet
        model = JammingShoe(world=world, scheduler=ManualClock(0.0), output=lambda data: None)
        assert "jam" in device_faults("shoe_reader", world)["one_shot"]
        assert "jam" not in device_faults("shoe_reader")["one_shot"]  # no world: the built-in
        drawn = handle_control(world, {"op": "draw", "fault": "jam"})
        assert drawn["ok"], drawn
        assert "jam" in model.armed  # taken by the model: its own fault, which it knows
        refused = handle_control(world, {"op": "draw", "fault": "melt"})
        assert not refused["ok"] and "jam" in refused["error"]
        model.close()
    finally:
        forget_world("plugin-model-control")
