"""Taiwan Pai Gow's game math (Portaria 15/90/M, the rules engine `daemon.rules.paigow`): what
the house takes per unit bet on a door, for the hold's z (daemon/analytics/hold.py).

In Taiwan Pai Gow the bank is a guest's (Art. 5): the house does not play against the doors, it
takes 5 % of every winning (Art. 8: a door's win, and the bank's net gain of the round). The
house's "win" at a Pai Gow table is that commission (plus the result of its own co-bank share,
Art. 5(5), when it takes one), its drop the amounts bet on the doors. The figures per unit bet
on a door:

- X = the commission the house takes because of that bet: the door's own commission when it
  wins, and its part of the bank's commission when the bank gains (the bank's commission shared
  over the doors by what each lost to it), so the doors' X add up to the round's commission.
- house advantage E[X], its variance Var(X) and the covariance of two doors' X (they face the
  same banker hand, and share the bank's commission).

A deal cannot be enumerated (32 tiles in 8 hands of 4: 32! / (4!^8) / 2^4 deals), so it is
Monte Carlo: a seeded shuffle of the 32 tiles, 8 hands (`paigow_hands = 8`, the default: the
banker and seven doors, each door bet 100, the bank's stake large enough that no door is
limited, no co-banker), every hand set the house way (`set_hand`: the largest back pair, then
the largest front, Art. 6(2)), settled by `settle_round` under the rule set. The rule sets of
this project differ in who is corrected and in what order doors settle; with every hand set the
house way and no door limited those give the same rounds, so their figures agree (the same
seed), as they should.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

DOORS = 7  # 8 hands: the banker and seven doors
BET = 100  # a door's bet: the commission is 5 % of whole money units (Art. 8, rounded down)


def simulate(ruleset: str, deals: int, seed: int) -> dict[str, Any]:
    """Monte Carlo of one Pai Gow rule set: `deals` rounds of the banker and seven doors."""
    from daemon.rules.paigow import TILE_SET, Door, set_hand, settle_round  # noqa: PLC0415
    from daemon.rules.paigow import ruleset as named  # noqa: PLC0415

    rules = named(ruleset)
    tiles = list(TILE_SET)
    rng = random.Random(seed)
    taken = np.zeros((deals, DOORS))
    for deal in range(deals):
        rng.shuffle(tiles)
        hands = [set_hand(tiles[4 * i : 4 * i + 4]) for i in range(DOORS + 1)]
        doors = [Door(hand, BET, frozenset({f"door {i}"})) for i, hand in enumerate(hands[1:])]
        done = settle_round(hands[0], doors, BET * DOORS * 2, rules=rules)
        lost = sum(r.lost for r in done.doors)
        bank = done.banker.commission
        for i, door in enumerate(done.doors):
            share = bank * door.lost / lost if lost else 0.0
            taken[deal, i] = (door.commission + share) / BET
    flat = taken.ravel()
    mean = float(flat.mean())
    variance = float(flat.var(ddof=1))
    half = 1.959964 * math.sqrt(variance / len(flat))
    pairs = [(a, b) for a in range(DOORS) for b in range(a + 1, DOORS)]
    covariance = float(np.mean([np.cov(taken[:, a], taken[:, b])[0, 1] for a, b in pairs]))
    return {
        "ruleset": ruleset,
        "game": "paigow",
        "method": "monte carlo",
        "deals": deals,
        "bets": len(flat),
        "seed": seed,
        "house_way": "banker and doors set the house way (daemon.rules.paigow.set_hand: the "
        "largest back pair, then the largest front); 8 hands, seven doors bet 100 each, no "
        "door limited by the bank's stake, no co-banker",
        "house_advantage": mean,
        "house_advantage_ci95": [mean - half, mean + half],
        "variance_per_unit": variance,
        "seat_covariance": covariance,
        "commission_per_unit": mean,
    }
