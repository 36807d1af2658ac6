"""Thirteen cards, the deal (Art. 2(b)): the dice pick the seat dealt first, then one card at a
time counter-clockwise until every seat holds 13."""

from __future__ import annotations

from daemon.rules.thirteen.rulesets import RulesError

SEATS = 4


# --- the deal (Art. 2(b)) -------------------------------------------------------------------


def first_seat_from_dice(total: int) -> int:
    """The seat dealt first for a four-dice total (4..24), Art. 2(b).

    Seats are numbered 0..3 counter-clockwise from the banker (seat 0). Counting starts at the
    banker as 1, so a total of 1, 5, 9, ... is the banker, 2, 6, 10, ... the seat after it.
    """
    if isinstance(total, bool) or not isinstance(total, int) or not 4 <= total <= 24:
        raise RulesError(f"a total of four dice is 4..24, not {total!r}")
    return (total - 1) % SEATS


def deal_order(first_seat: int) -> list[int]:
    """The seat receiving each of the 52 cards, one at a time counter-clockwise (Art. 2(b))."""
    if isinstance(first_seat, bool) or first_seat not in range(SEATS):
        raise RulesError(f"a seat is 0..3, not {first_seat!r}")
    return [(first_seat + i) % SEATS for i in range(52)]
