"""Settling a round of Taiwan Pai Gow: the bank's stake, co-banking and commission.

Art. 5(3): before the dice the banker puts the round's stake on the layout; the banker cannot win
or lose more than that stake in the round. Art. 2(3): collecting (杀) and paying (赔) run
counter-clockwise, right to left, so when the stake runs short the doors settled first are
settled in full and the doors after them are limited (their bets, or what is left of them, are
simply returned). Each door is paid even money on its bet.

Art. 5(4): when the banker wins the first round, the winnings join the first stake as the stake
of the second round, which may be raised but not lowered. Art. 5(5): the house, and guests who
bet on no door that round, may co-bank; the main banker goes first (正庄先行). Art. 8: the house
takes 5 % of winnings: of each winning door's gain and of each bank member's net gain.

Money is in whole units of the table's currency (integers), so settlement conserves it exactly:
what the doors gain, the bank members gain and the commission sum to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from daemon.rules.paigow.hands import (
    Correction,
    Hand,
    Outcome,
    check_from_one_set,
    correct_setting,
    hand_outcome,
    normalise,
)
from daemon.rules.paigow.rulesets import MACAU_1990, PaiGowRules

BANKER = "banker"


@dataclass(frozen=True)
class Door:
    """One door as set by its player, with the total bet on it (Art. 3(2)) and who bet."""

    hand: Hand
    bet: int
    bettors: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class CoBanker:
    """A co-banker of Art. 5(5); the house's own share pays no commission to itself."""

    name: str
    stake: int
    is_house: bool = False


@dataclass(frozen=True)
class DoorResult:
    door: int  # 1 = 头门, in the order given
    hand: Hand  # as opened, after any correction by the croupier
    correction: Correction | None
    outcome: Outcome
    bet: int
    won: int  # paid to the door by the bank
    lost: int  # collected from the door by the bank
    commission: int
    limited: bool  # Art. 5(3): the bank's stake kept this door from settling in full

    @property
    def net(self) -> int:
        return self.won - self.commission - self.lost


@dataclass(frozen=True)
class BankShare:
    name: str
    stake: int
    result: int  # this member's part of what the bank won (+) or lost (-)
    commission: int

    @property
    def net(self) -> int:
        return self.result - self.commission

    @property
    def carried(self) -> int:
        """What this member has on the layout after the round: stake + net."""
        return self.stake + self.net


@dataclass(frozen=True)
class RoundSettlement:
    banker_hand: Hand
    banker_correction: Correction | None
    doors: tuple[DoorResult, ...]
    bank_stake: int  # the banker's and the co-bankers' stakes together
    bank_result: int  # collected minus paid, within [-bank_stake, bank_stake]
    shares: tuple[BankShare, ...]  # the main banker first, then co-bankers in order
    commission: int  # everything the house takes this round (Art. 8)

    @property
    def banker(self) -> BankShare:
        return self.shares[0]

    @property
    def banker_new_stake(self) -> int:
        """Art. 5(4): the least stake the banker may put up for the second round."""
        return self.banker.carried


def _commission(gain: int, rules: PaiGowRules) -> int:
    return max(gain, 0) * rules.commission_basis_points // 10_000


def _limit(
    outcomes: Sequence[Outcome], bets: Sequence[int], stake: int, rules: PaiGowRules
) -> list[tuple[int, int]]:
    """(won, lost) for each door so that the bank wins or loses at most `stake` (Art. 5(3))."""
    settled = [(0, 0)] * len(bets)
    if rules.settlement_order == "hand_by_hand":
        balance = stake
        for index, (outcome, bet) in enumerate(zip(outcomes, bets, strict=True)):
            if outcome == "banker":
                taken = min(bet, 2 * stake - balance)
                balance += taken
                settled[index] = (0, taken)
            elif outcome == "player":
                paid = min(bet, balance)
                balance -= paid
                settled[index] = (paid, 0)
        return settled
    owed_to_doors = sum(b for o, b in zip(outcomes, bets, strict=True) if o == "player")
    can_collect = stake + owed_to_doors
    for index, (outcome, bet) in enumerate(zip(outcomes, bets, strict=True)):
        if outcome == "banker":
            taken = min(bet, can_collect)
            can_collect -= taken
            settled[index] = (0, taken)
    can_pay = stake + sum(lost for _, lost in settled)
    for index, (outcome, bet) in enumerate(zip(outcomes, bets, strict=True)):
        if outcome == "player":
            paid = min(bet, can_pay)
            can_pay -= paid
            settled[index] = (paid, 0)
    return settled


def _allocate(result: int, stakes: Sequence[int], rules: PaiGowRules) -> list[int]:
    """Each bank member's part of the bank's result (Art. 5(5))."""
    if rules.co_bank_allocation == "pro_rata":
        # Largest remainders, ties to the earlier member: no part exceeds its stake.
        total, size = sum(stakes), abs(result)
        floors = [size * stake // total for stake in stakes]
        by_remainder = sorted(range(len(stakes)), key=lambda i: (-(size * stakes[i] % total), i))
        for i in by_remainder[: size - sum(floors)]:
            floors[i] += 1
        return [part if result >= 0 else -part for part in floors]
    parts = []
    remaining = abs(result)
    for stake in stakes:
        part = min(stake, remaining)
        remaining -= part
        parts.append(part if result >= 0 else -part)
    return parts


def settle_round(
    banker: Hand,
    doors: Sequence[Door],
    banker_stake: int,
    *,
    co_bankers: Sequence[CoBanker] = (),
    rules: PaiGowRules = MACAU_1990,
) -> RoundSettlement:
    """Settle one round: `doors` in counter-clockwise order from 头门 (see `door_order`).

    Each player's hand is checked and, if its back pair is not the largest possible, set again
    (Art. 6(2)); the banker's too if `rules.correct_banker_setting`. Outcomes follow Art. 6(3);
    the bank's stake (the banker's plus the co-bankers') bounds its win and its loss (Art. 5(3)).
    """
    if banker_stake <= 0:
        raise ValueError("the banker's stake must be positive (Art. 5(3))")
    if not 1 <= len(doors) <= 7:
        raise ValueError(f"a round has one to seven doors besides the banker, not {len(doors)}")
    for door in doors:
        if door.bet < 0:
            raise ValueError(f"a bet cannot be negative: {door.bet}")
    names = [BANKER, *(co.name for co in co_bankers)]
    if len(set(names)) != len(names):
        raise ValueError(f"bank members must have distinct names: {names}")
    for co in co_bankers:
        if co.stake <= 0:
            raise ValueError(f"co-banker {co.name!r} must stake a positive amount")
        if any(co.name in door.bettors for door in doors):
            raise ValueError(f"co-banker {co.name!r} also bets on a door (Art. 5(5) forbids it)")
    check_from_one_set(
        tile for hand in (banker, *(door.hand for door in doors)) for pair in hand for tile in pair
    )

    if rules.correct_banker_setting:
        banker_check = correct_setting(banker, largest_back=rules.largest_back_required)
        banker_hand, banker_correction = banker_check.hand, banker_check.correction
    else:
        banker_hand, banker_correction = normalise(banker), None
    checks = [
        correct_setting(door.hand, largest_back=rules.largest_back_required) for door in doors
    ]
    outcomes = [hand_outcome(banker_hand, check.hand) for check in checks]
    bets = [door.bet for door in doors]
    stakes = [banker_stake, *(co.stake for co in co_bankers)]
    bank_stake = sum(stakes)
    settled = _limit(outcomes, bets, bank_stake, rules)

    results = tuple(
        DoorResult(
            door=index,
            hand=check.hand,
            correction=check.correction,
            outcome=outcome,
            bet=bet,
            won=won,
            lost=lost,
            commission=_commission(won, rules),
            limited=outcome != "push" and max(won, lost) < bet,
        )
        for index, (check, outcome, bet, (won, lost)) in enumerate(
            zip(checks, outcomes, bets, settled, strict=True), start=1
        )
    )
    bank_result = sum(r.lost for r in results) - sum(r.won for r in results)
    house = [False, *(co.is_house for co in co_bankers)]
    shares = tuple(
        BankShare(name, stake, part, 0 if is_house else _commission(part, rules))
        for name, stake, part, is_house in zip(
            names, stakes, _allocate(bank_result, stakes, rules), house, strict=True
        )
    )
    commission = sum(r.commission for r in results) + sum(s.commission for s in shares)
    return RoundSettlement(
        banker_hand=banker_hand,
        banker_correction=banker_correction,
        doors=results,
        bank_stake=bank_stake,
        bank_result=bank_result,
        shares=shares,
        commission=commission,
    )


def second_round_stake(first: RoundSettlement, added: int = 0) -> int:
    """Art. 5(4): the second round's stake is what the first left on the layout, plus `added`.

    The stake may only grow: `added` cannot be negative. A banker whose first stake is all lost
    must add a new stake to play the second round (the text is silent; see the docs).
    """
    if added < 0:
        raise ValueError("the second round's stake may be raised, not lowered (Art. 5(4))")
    stake = first.banker_new_stake + added
    if stake <= 0:
        raise ValueError("the first stake is lost: the banker must put up a new stake")
    return stake
