"""Bets in table units: the table's unit of money, its currency, its minimum and maximum.

Thirteen cards, Portaria 51/89/M Art. 11: 「闲家得以一注、二注或三注下注」: a bet is one, two or
three units (注) of the table's unit value, and its money follows from them. Pai Gow's text
(Portaria 15/90/M) names no unit: a bet there is a whole number of the table's units, its
`amount` given in money (or its `units`), so the same chips and the same limits hold at
either table. The table's minimum and maximum are the house's (the texts set none); a bet
outside them is refused, a journaled violation citing the article of the bet it breaks.

The values come from the table's config (`[table]`: `unit`, `currency`, `min_bet`, `max_bet`;
daemon/config.py); `daemon.procedures.build` gives them to the procedure it builds, and
`base.Procedure` checks every `place_bet` against them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from daemon.procedures.payload import Refused

DEFAULT_UNIT = 100
DEFAULT_CURRENCY = "MOP"


@dataclass(frozen=True)
class Stakes:
    """The money of one unit (一注) and the table's limits, in whole units of `currency`."""

    unit: int = DEFAULT_UNIT
    currency: str = DEFAULT_CURRENCY
    minimum: int | None = None  # None: one unit
    maximum: int | None = None  # None: no maximum but the rule set's units

    @property
    def floor(self) -> int:
        return self.unit if self.minimum is None else self.minimum

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def money(self, amount: int) -> str:
        return f"{amount} {self.currency}"

    def bet_amount(self, payload: Mapping[str, Any], article: str) -> int:
        """The money of the bet `payload` names (its `units` times the unit, or its `amount`),
        refused when its units and amount disagree, when the amount is not a whole number of
        units, or when it is outside the table's minimum and maximum."""
        units, given = payload.get("units"), payload.get("amount")
        if units is None:
            if given is None:
                raise Refused(
                    article, "a bet names its units (or its amount)", zh="投注須註明注數（或金額）"
                )
            amount = int(given)
            if amount % self.unit:
                raise Refused(
                    article,
                    f"a bet is a whole number of units of {self.money(self.unit)}: {amount} is not",
                    zh=f"投注須為 {self.money(self.unit)} 的整數倍：{amount} 不是",
                )
        else:
            amount = int(units) * self.unit
            if given is not None and given != amount:
                raise Refused(
                    article,
                    f"a bet of {units} unit{'s' if units != 1 else ''} is "
                    f"{self.money(amount)} (one unit is {self.money(self.unit)}), "
                    f"not {given}",
                    zh=f"{units}注是 {self.money(amount)}"
                    f"（每注 {self.money(self.unit)}），不是 {given}",
                )
        if amount < self.floor:
            raise Refused(
                article,
                f"{self.money(amount)} is below the table minimum {self.money(self.floor)}",
                zh=f"{self.money(amount)} 低於本枱最低投注 {self.money(self.floor)}",
            )
        if self.maximum is not None and amount > self.maximum:
            raise Refused(
                article,
                f"{self.money(amount)} is above the table maximum {self.money(self.maximum)}",
                zh=f"{self.money(amount)} 高於本枱最高投注 {self.money(self.maximum)}",
            )
        return amount
