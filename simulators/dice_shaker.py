"""A simulated electronic dice shaker with four dice.

A shake takes SHAKE_SECONDS (times the speed factor), then the reader reports four dice rolled
with the model's RNG (seeded: reproducible; unseeded: the system CSPRNG), or an invalid throw.
In a world operated by hand (training) the throw waits for a person (`world.release`), and
lands as the faults armed by then say.

Faults: one-shot `die_tilted`, `dice_stacked`, `die_out_of_cup`, `short_shake`, `no_shake`
(the next throw is invalid for that reason); conditions `reader_lost` (FAULT_RAISED, shakes
refused), `shaker_detached` (the base door opens: tamper), and the common `no_response`,
`bad_crc`, `unapproved_firmware`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from drivers.dice_shaker.messages import (
    BASE,
    DICE_MESSAGES,
    DiceFault,
    DiceResult,
    InvalidReason,
    InvalidThrow,
    Shake,
)
from drivers.dice_shaker.messages import (
    DOOR_NAMES as WIRE_DOOR_NAMES,
)
from drivers.dice_shaker.messages import (
    FAULT_NAMES as WIRE_FAULT_NAMES,
)
from drivers.messages import COMMON_MESSAGES, Ack, Message, Nak, message_set
from simulators.base import DeviceModel

SHAKE_SECONDS = 4.0

_INVALID = {
    "die_tilted": InvalidReason.DIE_TILTED,
    "dice_stacked": InvalidReason.DICE_STACKED,
    "die_out_of_cup": InvalidReason.DIE_OUT_OF_CUP,
    "short_shake": InvalidReason.SHORT_SHAKE,
    "no_shake": InvalidReason.NO_SHAKE,
}


class DiceShakerModel(DeviceModel):
    DEVICE: ClassVar[str] = "dice_shaker"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, DICE_MESSAGES)
    MODEL: ClassVar[str] = "DICE-4"
    FIRMWARE: ClassVar[str] = "1.7.0"
    FAULT_NAMES: ClassVar[Mapping[int, str]] = WIRE_FAULT_NAMES
    DOOR_NAMES: ClassVar[Mapping[int, str]] = WIRE_DOOR_NAMES
    ONE_SHOT: ClassVar[frozenset[str]] = frozenset(_INVALID)
    CONDITIONS: ClassVar[frozenset[str]] = frozenset({"reader_lost", "shaker_detached"})

    def handle(self, message: Message) -> Message:
        if isinstance(message, Shake):
            refusal = self.refusal()
            if refusal is not None:
                return Nak(refusal)
            self.busy = True
            if self.by_hand(lambda: self._land(self._spoilt())):
                return Ack()  # a person throws (training): how it lands is decided then
            spoilt = self._spoilt()
            seconds = SHAKE_SECONDS / 4 if spoilt == "short_shake" else SHAKE_SECONDS
            self.after(seconds, lambda: self._land(spoilt))
            return Ack()
        return super().handle(message)

    def _spoilt(self) -> str | None:
        return next((name for name in _INVALID if self.take(name)), None)

    def _land(self, spoilt: str | None) -> None:
        self.busy = False
        if spoilt is not None:
            reason = _INVALID[spoilt]
            die = (
                0
                if reason in (InvalidReason.SHORT_SHAKE, InvalidReason.NO_SHAKE)
                else (self.rng.randrange(4) + 1)
            )
            self.emit(lambda n: InvalidThrow(n, reason, die))
            return
        roll = self.rng.randrange
        dice = (roll(6) + 1, roll(6) + 1, roll(6) + 1, roll(6) + 1)
        self.emit(lambda n: DiceResult(n, dice))

    def on_condition(self, fault: str, active: bool) -> None:
        if fault == "reader_lost" and active:
            self.raise_fault(DiceFault.READER_LOST)
        elif fault == "shaker_detached":
            self.set_door(BASE, active)

    def active_causes(self) -> set[int]:
        return {DiceFault.READER_LOST} if "reader_lost" in self.conditions else set()
