"""House settings for Taiwan Pai Gow where Portaria 15/90/M is silent or houses differ.

Each field names the article it reads; `docs/rules-paigow.md` gives the reasoning. The default,
`macau-1990`, is the reading this project takes of the text as written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

SettlementOrder = Literal["collect_then_pay", "hand_by_hand"]
CoBankAllocation = Literal["banker_first", "pro_rata"]
BankOrder = Literal["counter-clockwise", "clockwise"]
DeclinedBankTo = Literal["next-door", "any-door"]


@dataclass(frozen=True)
class PaiGowRules:
    name: str = "macau-1990"
    # Art. 8: the house takes 5 % of winnings; in basis points, rounded down to the money unit.
    commission_basis_points: int = 500
    # Art. 2(3) + 5(3): both sweeps run counter-clockwise from 头门; "collect_then_pay" takes
    # every losing bet before paying any winner (杀 then 赔), "hand_by_hand" settles each door in
    # turn against the bank's running balance.
    settlement_order: SettlementOrder = "collect_then_pay"
    # Art. 5(5) "正庄先行": the main banker's stake wins or loses first, then each co-banker's
    # in the order they joined; "pro_rata" shares the bank's result by stake instead.
    co_bank_allocation: CoBankAllocation = "banker_first"
    # Art. 6(2) "闲家须尽量将後对摆大": the croupier re-sets a hand whose back pair is not the
    # largest the four tiles allow. False: only a hand with its larger pair in front is fixed.
    largest_back_required: bool = True
    # Art. 6(2) obliges the player (闲家) to set the back pair as large as possible; the text is
    # silent on the banker, who by default sets freely (the croupier only opens the smaller pair
    # as the front).
    correct_banker_setting: bool = False
    # Art. 5(5) "场方可每门帮庄，数额另定": the house MAY co-bank; a house that does not offers no
    # house share at this table (guests may still co-bank).
    house_co_banks: bool = True
    # Art. 6(2) "牌对由荷官打开" says who opens, not in what order: by default the croupier opens
    # the banker's hand first, then the doors from 头门 counter-clockwise (the order of Art.
    # 2(3)); False opens the doors first and the banker's hand last.
    banker_opened_first: bool = True
    # Art. 5(1) 「各门可轮流做庄」: the doors take the bank in turn, door after door in this order
    # from the door that last held it (seats are numbered counter-clockwise, the order of Art.
    # 2(3)); that door does not keep it, under any name. The table's first bank is any door's.
    bank_order: BankOrder = "counter-clockwise"
    # Art. 5(2) 「客人亦有权拒绝做庄，而把庄交与下一人」: how a guest offered the bank passes it.
    # "next-door": declining passes it to the next door in `bank_order` (the last bank's door
    # skipped); "any-door": to a guest at any door but the last bank's. Either way the one who
    # takes it must have bet before.
    declined_bank_to: DeclinedBankTo = "next-door"

    def __post_init__(self) -> None:
        if not 0 <= self.commission_basis_points <= 10_000:
            raise ValueError("commission_basis_points must be between 0 and 10000")


MACAU_1990 = PaiGowRules()
RULESETS: dict[str, PaiGowRules] = {
    "macau-1990": MACAU_1990,
    # The same text read so that the banker, too, must set the back pair as large as possible.
    "macau-1990-banker-corrected": replace(
        MACAU_1990, name="macau-1990-banker-corrected", correct_banker_setting=True
    ),
    # A house that lets players split freely, only opening the larger pair behind.
    "macau-1990-free-setting": replace(
        MACAU_1990, name="macau-1990-free-setting", largest_back_required=False
    ),
}


def ruleset(name: str) -> PaiGowRules:
    try:
        return RULESETS[name]
    except KeyError:
        known = ", ".join(RULESETS)
        raise ValueError(f"unknown pai gow rule set {name!r} (known: {known})") from None
