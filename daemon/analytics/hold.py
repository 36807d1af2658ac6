"""Game math and hold: does each table pay what its rule set says?

The theory, per rule set with a banker: a player's net result per unit bet, X, from the rules
engine itself (`daemon.rules.thirteen`: `house_way`, `settle`). A Thirteen deal cannot be
enumerated (52! / (13!)^4 deals, each set 3 ways), so it is Monte Carlo: a seeded shuffle, the
banker and every player set the house way (the assumption: players set their hands as the house
does, as the scripted players do), each player settled against the banker. It gives the house
advantage -E[X] with its 95 % interval, Var(X), and the covariance of two seats' results (they
face the same banker hand). `tabled audit game-math` reruns it; gamemath.json keeps the figures
with their seed and number of deals.

The practice, per table, shift (Macau time: day 08-16, swing 16-24, night 00-08) and dealer:
drop = the amounts bet, win = what the house won (minus the players' net, commission
included), hold = win / drop. Against the theory: expected win = -E[X] * drop, variance = the sum
over rounds of Var(X) * (sum of a seat's amounts squared) + Cov * (the cross terms between
seats), plus the Monte Carlo's own variance of the house advantage times the drop squared;
z = (win - expected) / sd. |z| > 3 is an alert (`hold_outlier`).
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from daemon.analytics.common import Finding, Test
from daemon.analytics.source import Round

Z_ALERT = 3.0
GAME_MATH = Path(__file__).with_name("gamemath.json")
MACAU = timedelta(hours=8)
SHIFTS = ((0, "night"), (8, "day"), (16, "swing"))


def simulate(ruleset: str, deals: int, seed: int) -> dict[str, Any]:
    """Monte Carlo of one rule set: `deals` deals of four hands, three players a deal."""
    from daemon.rules.cards import parse_cards  # noqa: PLC0415 - the rules engine, on demand
    from daemon.rules.thirteen import house_way, settle  # noqa: PLC0415
    from daemon.rules.thirteen import ruleset as named  # noqa: PLC0415

    rules = named(ruleset)
    deck = list(parse_cards(" ".join(r + s for s in "shdc" for r in "A23456789TJQK")))
    rng = random.Random(seed)
    results = np.zeros((deals, 3))
    commission = np.zeros((deals, 3))
    for deal in range(deals):
        rng.shuffle(deck)
        banker = house_way(deck[:13], rules)
        for seat in range(3):
            cards = deck[13 * (seat + 1) : 13 * (seat + 2)]
            settled = settle(banker, house_way(cards, rules), rules, 1)
            results[deal, seat] = float(settled.player_net)
            commission[deal, seat] = float(settled.commission)
    flat = results.ravel()
    mean = float(flat.mean())
    variance = float(flat.var(ddof=1))
    half = 1.959964 * math.sqrt(variance / len(flat))
    pairs = [(0, 1), (0, 2), (1, 2)]
    covariance = float(np.mean([np.cov(results[:, a], results[:, b])[0, 1] for a, b in pairs]))
    return {
        "ruleset": ruleset,
        "method": "monte carlo",
        "deals": deals,
        "bets": len(flat),
        "seed": seed,
        "house_way": "banker and players set the house way (daemon.rules.thirteen.house_way)",
        "player_net_per_unit": mean,
        "house_advantage": -mean,
        "house_advantage_ci95": [-mean - half, -mean + half],
        "variance_per_unit": variance,
        "seat_covariance": covariance,
        "commission_per_unit": float(commission.mean()),
    }


def simulate_ruleset(ruleset: str, deals: int, seed: int) -> dict[str, Any]:
    """The Monte Carlo of `ruleset`, a Thirteen or a Taiwan Pai Gow rule set (by its name)."""
    from daemon.rules.paigow import RULESETS  # noqa: PLC0415 - the rules engine, on demand

    if ruleset in RULESETS:
        from daemon.analytics import paigow_math  # noqa: PLC0415

        return paigow_math.simulate(ruleset, deals, seed)
    return simulate(ruleset, deals, seed)


def game_math() -> dict[str, dict[str, Any]]:
    """The stored figures, by rule set."""
    if not GAME_MATH.exists():
        return {}
    figures: dict[str, dict[str, Any]] = json.loads(GAME_MATH.read_text())
    return figures


def shift_of(ts: str) -> str:
    when = datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC) + MACAU
    name = next(label for start, label in reversed(SHIFTS) if when.hour >= start)
    return f"{when:%Y-%m-%d} {name}"


@dataclass
class HoldSums:
    """One group's rounds of one rule set, as sums (what the floor keeps per table, shift,
    dealer and rule set, and adds each pass's rounds to): rounds, drop, win, commission, and
    for the variance the sum of each round's seat totals squared and of its cross terms."""

    rounds: int = 0
    drop: float = 0.0
    win: float = 0.0
    commission: float = 0.0
    squares: float = 0.0
    cross: float = 0.0

    def add(self, played: Round) -> None:
        seats: dict[int, float] = defaultdict(float)
        self.rounds += 1
        for bet in played.bets:
            self.drop += bet.amount
            self.win -= bet.net
            self.commission += bet.commission
            seats[bet.seat] += bet.amount
        amounts = list(seats.values())
        total = sum(amounts)
        squares = sum(a * a for a in amounts)
        self.squares += squares
        self.cross += total * total - squares


def group_key(played: Round, by: str) -> str:
    return {"table": played.table, "shift": shift_of(played.ts), "dealer": played.dealer}[by]


def sums_of(rounds: Iterable[Round], by: str) -> dict[str, dict[str, HoldSums]]:
    """The rounds' sums by group (`by`: table | shift | dealer) and rule set."""
    groups: dict[str, dict[str, HoldSums]] = defaultdict(lambda: defaultdict(HoldSums))
    for played in rounds:
        groups[group_key(played, by)][played.ruleset].add(played)
    return groups


def audit(rounds: Iterable[Round], by: str, figures: dict[str, dict[str, Any]]) -> list[Finding]:
    """Hold against theory per `by` (table | shift | dealer)."""
    groups = sums_of(rounds, by)
    return [judge(f"{by} {key}", groups[key], by, figures) for key in sorted(groups)]


def judge(
    subject: str, sums: dict[str, HoldSums], by: str, figures: dict[str, dict[str, Any]]
) -> Finding:
    """One group's hold against theory, from its sums by rule set."""
    drop = win = commission = expected = variance = 0.0
    rounds = 0
    for name, one in sums.items():
        rounds += one.rounds
        drop += one.drop
        win += one.win
        commission += one.commission
        math_ = figures.get(name)
        if math_ is None:
            continue
        expected += math_["house_advantage"] * one.drop
        variance += math_["variance_per_unit"] * one.squares + math_["seat_covariance"] * one.cross
        # The Monte Carlo's own uncertainty of the house advantage, carried into the z.
        low, high = math_["house_advantage_ci95"]
        variance += ((high - low) / (2 * 1.959964) * one.drop) ** 2
    hold = win / drop if drop else 0.0
    sd = math.sqrt(variance) if variance > 0 else 0.0
    z = (win - expected) / sd if sd else 0.0
    p = math.erfc(abs(z) / math.sqrt(2)) if sd else 1.0
    theory = expected / drop if drop else 0.0
    flagged = abs(z) > Z_ALERT
    words = (
        f"hold {hold:.2%} on a drop of {drop:,.0f} over {rounds:,} rounds against "
        f"{theory:.2%} in theory (z = {z:+.2f}); commission {commission:,.0f}"
    )
    if not sd:
        words = f"{rounds:,} rounds, drop {drop:,.0f}: no game math for rule set(s) " + (
            ", ".join(sorted(sums)) or "unknown"
        )
    verdict = ("FLAGGED: " if flagged else "within 3 sd of theory: ") + words
    band = 3 * sd / drop if drop and sd else 0.0
    power = (
        f"|z| > 3 flags a hold that differs from the rule set's by more than {band:.1%} of "
        f"this drop (a fair table does so 0.27% of the time)"
        if sd
        else "no power statement without the rule set's game math"
    )
    return Finding(
        "hold",
        subject,
        flagged,
        z,
        p,
        verdict,
        power,
        rounds,
        [Test("hold_z", z, p, "hold against the rule set's house advantage")],
        {
            "by": by,
            "drop": drop,
            "win": win,
            "hold": hold,
            "theoretical_hold": theory,
            "commission": commission,
            "rulesets": sorted(sums),
        },
    )


def main_game_math(rulesets: list[str], deals: int, seed: int) -> dict[str, dict[str, Any]]:
    figures = game_math()
    for name in rulesets:
        figures[name] = simulate_ruleset(name, deals, seed)
    GAME_MATH.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return figures
