"""What a person may see of a Thirteen round's cards (Portaria 51/89/M), declared for the one
redaction engine (`daemon.procedures.visibility`); the table it makes is docs/visibility.md.

Art. 2(b): the cards are dealt face down, so a card read by the shoe is known to the system and
to no person. Art. 4: a card dealt face up stays valid, so it is open at once, and so is a card
the reader missed, which the dealer reads by eye to enter it and a supervisor checks on camera.
Art. 2(d): no player sees a card before the banker has arranged and opened; the banker's hand
is open from `open_banker`. The players' hands are opened against the banker's one by one
(`open_hand`, Art. 8) before the settlement (Art. 7-11); a seat late at the bell loses
unopened, and the cards of a seat nobody bet on are never opened. A voided deal's cards go
back into the deck unseen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from daemon.procedures.spec import BANKER, Revealed, Seat, Visibility

# A card as the rules engine names it (`daemon.rules.cards`: "As", "Td"), or as typed ("10H").
CARD_PATTERN = r"\b(?:10|[2-9TJQKA])[cdhsCDHS]\b"


def declare(*, banker_seat: int, rows: Sequence[str]) -> Visibility:
    """Thirteen's visibility, given the banker's seat and the names of a hand's rows."""

    def opened(snapshot: Mapping[str, Any]) -> Revealed:
        revealed = Revealed()
        if snapshot.get("banker_opened"):
            revealed.seats |= {BANKER, banker_seat}
        revealed.seats |= {s for s in snapshot.get("opened_hands") or [] if isinstance(s, int)}
        _settled(revealed, snapshot.get("settlement"))
        for dealt in snapshot.get("dealt") or []:
            if dealt.get("face_up") or dealt.get("entered"):
                revealed.face_up.append((dealt.get("seat"), str(dealt.get("card"))))
        _entered(revealed, snapshot.get("override"))
        return revealed

    def reveal(revealed: Revealed, event: str, payload: Mapping[str, Any]) -> None:
        if event == "card.dealt" and (payload.get("face_up") or payload.get("entered")):
            revealed.face_up.append((payload.get("seat"), str(payload.get("card"))))
        elif event in ("override.proposed", "override.approved"):
            _entered(revealed, payload)
        elif event == "banker.opened":
            revealed.seats |= {BANKER, banker_seat}
        elif event == "hand.opened" and isinstance(payload.get("seat"), int):
            revealed.seats.add(payload["seat"])
        elif event == "round.settled":
            _settled(revealed, payload.get("settlement"))

    def seat_of(event: str, payload: Mapping[str, Any]) -> Seat | None:
        if event in ("arrangement.banker", "banker.opened"):
            return banker_seat
        if payload.get("action") == "arrange_banker":  # the journaled input
            return banker_seat
        return None

    return Visibility(
        hand_keys=frozenset({"card", "cards", "shoe", "dealt", "voided_deals", *rows}),
        public_keys=frozenset(),
        pattern=CARD_PATTERN,
        unique=True,
        opened=opened,
        reveal=reveal,
        seat_of=seat_of,
    )


def _settled(revealed: Revealed, settlement: Any) -> None:
    """The settlement opens each seat compared with the banker's; a late seat loses unopened."""
    if not isinstance(settlement, list):
        return
    revealed.closed = True
    for entry in settlement:
        seat = entry.get("seat") if isinstance(entry, Mapping) else None
        if isinstance(seat, int) and not entry.get("late"):
            revealed.seats.add(seat)


def _entered(revealed: Revealed, pending: Any) -> None:
    """A card the reader missed is read by eye to be entered by hand: it lies open."""
    if not isinstance(pending, Mapping) or pending.get("kind") != "enter_card":
        return
    if isinstance(pending.get("card"), str):
        revealed.face_up.append((pending.get("seat"), pending["card"]))
