"""A simulated electronic dice shaker with four dice.

A shake takes SHAKE_SECONDS (times the speed factor), then the reader reports four dice rolled
with the model's RNG (seeded: reproducible; unseeded: the system CSPRNG), or an invalid throw.
In a world operated by hand (training) the throw waits for a person (`world.release`), and
lands as the faults armed by then say.

A loaded die is an option of the URL: `bias=6:0.19` gives face 6 probability 0.19 and the other
faces equal shares of the rest (`bias=6:0.19,1:0.1` loads two faces); `die=2` loads only the die
in position 2 (1-4, as DICE_RESULT orders them), else every die is loaded alike. Unloaded dice
are rolled as before (`randrange(6) + 1`), so a seed gives the same throws it always did.

Faults: one-shot `die_tilted`, `dice_stacked`, `die_out_of_cup`, `short_shake`, `no_shake`
(the next throw is invalid for that reason); conditions `reader_lost` (FAULT_RAISED, shakes
refused), `shaker_detached` (the base door opens: tamper), and the common `no_response`,
`bad_crc`, `unapproved_firmware`.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Loading:
    """How the dice are loaded: each face's probability (faces 1-6) and which dice."""

    faces: tuple[float, ...]
    die: int | None = None  # one position (1-4), or None: every die

    def cumulative(self) -> list[float]:
        return list(itertools.accumulate(self.faces))


def parse_bias(text: str) -> tuple[float, ...]:
    """`6:0.19[,1:0.1]` -> the six faces' probabilities (the faces not named share the rest
    equally); ValueError naming what is wrong."""
    named: dict[int, float] = {}
    for part in text.split(","):
        face_text, sep, p_text = part.partition(":")
        try:
            face, p = int(face_text), float(p_text)
        except ValueError:
            face, p = 0, -1.0
        if not sep or not 1 <= face <= 6 or not 0 <= p <= 1 or face in named:
            raise ValueError(f"bias={text}: expected FACE:PROBABILITY[,...], faces 1-6 once")
        named[face] = p
    rest = 1.0 - sum(named.values())
    others = 6 - len(named)
    if rest < -1e-9 or (others == 0 and abs(rest) > 1e-9) or (others and rest < 0):
        raise ValueError(f"bias={text}: the probabilities must sum to 1 over the six faces")
    share = rest / others if others else 0.0
    return tuple(named.get(face, share) for face in range(1, 7))


class DiceShakerModel(DeviceModel):
    DEVICE: ClassVar[str] = "dice_shaker"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, DICE_MESSAGES)
    MODEL: ClassVar[str] = "DICE-4"
    FIRMWARE: ClassVar[str] = "1.7.0"
    FAULT_NAMES: ClassVar[Mapping[int, str]] = WIRE_FAULT_NAMES
    DOOR_NAMES: ClassVar[Mapping[int, str]] = WIRE_DOOR_NAMES
    ONE_SHOT: ClassVar[frozenset[str]] = frozenset(_INVALID)
    CONDITIONS: ClassVar[frozenset[str]] = frozenset({"reader_lost", "shaker_detached"})
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"bias", "die"})
    loading: Loading | None = None

    @classmethod
    def parse_options(cls, options: Mapping[str, str]) -> Loading | None:
        super().parse_options(options)
        if "bias" not in options:
            if "die" in options:
                raise ValueError("die= names the loaded die: give its bias= too")
            return None
        die = None
        if "die" in options:
            if options["die"] not in ("1", "2", "3", "4"):
                raise ValueError(f"die={options['die']}: a position 1-4")
            die = int(options["die"])
        return Loading(parse_bias(options["bias"]), die)

    def configure(self, options: Loading | None) -> None:
        self.loading = options

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
        if self.loading is not None:
            dice = self._loaded(self.loading)
        else:
            roll = self.rng.randrange
            dice = (roll(6) + 1, roll(6) + 1, roll(6) + 1, roll(6) + 1)
        self.emit(lambda n: DiceResult(n, dice))

    def _loaded(self, loading: Loading) -> tuple[int, int, int, int]:
        cumulative = loading.cumulative()

        def face(position: int) -> int:
            if loading.die is not None and position != loading.die:
                return self.rng.randrange(6) + 1
            return min(bisect.bisect_right(cumulative, self.rng.random()) + 1, 6)

        return (face(1), face(2), face(3), face(4))

    def on_condition(self, fault: str, active: bool) -> None:
        if fault == "reader_lost" and active:
            self.raise_fault(DiceFault.READER_LOST)
        elif fault == "shaker_detached":
            self.set_door(BASE, active)

    def active_causes(self) -> set[int]:
        return {DiceFault.READER_LOST} if "reader_lost" in self.conditions else set()
