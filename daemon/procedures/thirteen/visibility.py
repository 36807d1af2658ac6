"""What a person may see of a Thirteen round's cards (Portaria 51/89/M), declared for the one
redaction engine (`daemon.procedures.visibility`); the table it makes is docs/visibility.md.

Art. 2(b): the cards are dealt face down, so a card read by the shoe is known to the system and
to no person. Art. 4: a card dealt face up stays valid, so it is open at once. A card the reader
missed, which the dealer enters by hand and a supervisor approves, is dealt face down like any
other (`card.dealt` says `face_up: false`): open only when its seat is.
Art. 2(d): no player sees a card before the banker has arranged and opened; the banker's hand
is open from `open_banker`. The players' hands are opened against the banker's one by one
(`open_hand`, Art. 8) before the settlement (Art. 7-11); a seat late at the bell loses
unopened, and the cards of a seat nobody bet on are never opened. A voided deal's cards go
back into the deck unseen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from daemon.procedures.spec import BANKER, Opens, Revealed, Seat, Visibility

# A card as the rules engine names it (`daemon.rules.cards`: "As", "Td"), or as a person types it
# ("10H", "qh", "Q♥", "10♠", "a♥", "aS"). A lower case ace before a lower case suit letter is
# left out: "as", "ad", "ah", "ac" are words, and blotting them would garble every reason.
CARD_PATTERN = r"\b(?:(?:10|[2-9TJQKAtjqk])[cdhsCDHS♣♦♥♠♧♢♡♤]|a[CDHS♣♦♥♠♧♢♡♤])(?!\w)"


def declare(*, banker_seat: int, rows: Sequence[str]) -> Visibility:
    """Thirteen's visibility, given the banker's seat and the names of a hand's rows."""

    def opened(snapshot: Mapping[str, Any]) -> Revealed:
        revealed = Revealed()
        if snapshot.get("banker_opened"):
            revealed.seats |= {BANKER, banker_seat}
        revealed.seats |= {s for s in snapshot.get("opened_hands") or [] if isinstance(s, int)}
        _settled(revealed, snapshot.get("settlement"))
        for dealt in snapshot.get("dealt") or []:
            if dealt.get("face_up") is True:
                revealed.face_up.append((dealt.get("seat"), str(dealt.get("card"))))
        return revealed

    def reveal(revealed: Revealed, opens: Opens, payload: Mapping[str, Any]) -> None:
        # The rules each event declares it opens by (game.py, `EVENTS`).
        if opens == "face_up" and payload.get("face_up") is True:  # Art. 4
            revealed.face_up.append((payload.get("seat"), str(payload.get("card"))))
        elif opens == "banker":  # Art. 2(d)
            revealed.seats |= {BANKER, banker_seat}
        elif opens == "door":  # Art. 8: a hand opened against the banker's, face up
            if isinstance(payload.get("seat"), int):
                revealed.seats.add(payload["seat"])
        elif opens == "settled":  # Art. 7-11
            _settled(revealed, payload.get("settlement"))
        elif opens == "deck":  # Art. 4: a voided deal's cards go back, to be dealt again
            revealed.face_up.clear()
            revealed.seats.clear()

    def seat_of(event: str, payload: Mapping[str, Any]) -> Seat | None:
        if event in ("arrangement.banker", "banker.opened"):
            return banker_seat
        if payload.get("action") == "arrange_banker":  # the journaled input
            return banker_seat
        return None

    return Visibility(
        hand_keys=frozenset({"card", "cards", "shoe", "dealt", *rows}),
        public_keys=frozenset(),
        # Art. 4: a voided deal's cards went back into the deck unseen; the seats opened after
        # (of the deal that replaced it) open none of them.
        unseen_keys=frozenset({"voided_deals"}),
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
