"""Shoe readers, per serial (and per dealer): how often a card goes past unread, and how often
a card is entered by hand.

A misread is a card the reader saw go by without reading it (`table.tilted`, fault `misread`);
the dealer then enters it by hand for a supervisor to approve (`card.dealt` with `entered`), or
the deal is voided. The misread rate is tested against the limit the house accepts
(`MISREAD_LIMIT`, one card in 1,000 unless `--misread-limit` says otherwise): an exact one-sided
binomial test at `FAMILY_ALPHA`, Holm's step-down over a serial's dealers. Rates carry Wilson
95 % intervals.
"""

from __future__ import annotations

import math

from daemon.analytics.common import FAMILY_ALPHA, Finding, Test, binomial_greater, holm
from daemon.analytics.source import ReaderCounts

MISREAD_LIMIT = 1 / 1000
FAULTY_RATE = 1 / 200  # the faulty reader the power statement is about


def wilson(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    half /= 1 + z * z / trials
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_p(misreads: int, cards: int, limit: float) -> float:
    if cards == 0:
        return 1.0
    return binomial_greater(misreads, cards, limit)


def power(
    cards: int, limit: float, rate: float = FAULTY_RATE, alpha: float = FAMILY_ALPHA
) -> float:
    """The chance the test flags a reader misreading at `rate` over `cards` cards."""
    if cards == 0:
        return 0.0
    low, high = 0, cards + 1  # the fewest misreads c with P(X >= c) <= alpha at the limit
    while high - low > 1:
        middle = (low + high) // 2
        if binomial_greater(middle, cards, limit) <= alpha:
            high = middle
        else:
            low = middle
    return binomial_greater(high, cards, rate) if high <= cards else 0.0


def _rates(counts: ReaderCounts) -> dict[str, float | int | list[float]]:
    cards = counts.cards
    return {
        "cards": cards,
        "misreads": counts.misreads,
        "entered": counts.entered,
        "misread_rate": counts.misreads / cards if cards else 0.0,
        "misread_ci95": list(wilson(counts.misreads, cards)),
        "entered_rate": counts.entered / cards if cards else 0.0,
        "entered_ci95": list(wilson(counts.entered, cards)),
    }


def audit(
    serial: str,
    counts: ReaderCounts,
    by_dealer: dict[str, ReaderCounts],
    limit: float = MISREAD_LIMIT,
) -> Finding:
    cards = counts.cards
    p = binomial_p(counts.misreads, cards, limit)
    dealers = sorted(by_dealer)
    dealer_p = [binomial_p(by_dealer[d].misreads, by_dealer[d].cards, limit) for d in dealers]
    dealer_flags = holm(dealer_p)
    flagged = p <= FAMILY_ALPHA
    rate = counts.misreads / cards if cards else 0.0
    low, high = wilson(counts.misreads, cards)
    one_in = f"1 in {1 / rate:,.0f}" if rate else "none"
    if flagged:
        verdict = (
            f"FLAGGED: {counts.misreads:,} misreads in {cards:,} cards ({one_in}, 95% CI "
            f"{low:.2%}-{high:.2%}) exceed the limit of 1 in {1 / limit:,.0f} (p = {p:.2g})"
        )
    else:
        verdict = (
            f"within the limit: {counts.misreads:,} misreads in {cards:,} cards ({one_in}, "
            f"95% CI {low:.2%}-{high:.2%}; limit 1 in {1 / limit:,.0f}, p = {p:.3g})"
        )
    verdict += f"; {counts.entered:,} card(s) entered by hand"
    heavy = [d for d, f in zip(dealers, dealer_flags, strict=True) if f]
    if heavy:
        verdict += f"; dealers over the limit: {', '.join(heavy)}"
    power_words = (
        f"a reader misreading 1 card in {1 / FAULTY_RATE:,.0f} is flagged over these {cards:,} "
        f"cards with probability {power(cards, limit):.1%}; a reader at the limit is flagged in "
        f"at most {FAMILY_ALPHA:.1%} of audits"
    )
    return Finding(
        "reader",
        serial,
        flagged,
        float(counts.misreads),
        p,
        verdict,
        power_words,
        cards,
        [Test("misread_rate", rate, p, f"misreads against 1 in {1 / limit:,.0f}")],
        {
            **_rates(counts),
            "limit": limit,
            "by_dealer": [
                {"dealer": d, **_rates(by_dealer[d]), "p_value": dp, "flagged": f}
                for d, dp, f in zip(dealers, dealer_p, dealer_flags, strict=True)
            ],
        },
    )
