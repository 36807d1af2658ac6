"""What a person may see of a Pai Gow round's tiles (Portaria 15/90/M), declared for the one
redaction engine (`daemon.procedures.visibility`); the table it makes is docs/visibility.md.

Art. 2(1): the tiles are shuffled and dealt face down. Art. 6(1): each player sets a hand face
down, then the banker; the system records that a hand is set, never its tiles (`set_hand`,
`set_banker` carry none). Art. 6(2): the croupier opens each hand, the banker's first, then the
doors from 头门 counter-clockwise (`open_hand`): a hand's tiles enter the system there, face up
at the table, so a hand is open from its own `open_hand` (the accepted input and its
`hand.opened`), each door on its own; once every hand is open (`hands.opened`) the round is.
Art. 4: a tile dealt face up stays valid and is open at once: its own record shows it (a tile's
name is shared by its pair, so a face-up tile is not recognised by its name inside a hand still
closed). Art. 2(4): with four hands the tiles of the first half are shown face up to all for the
second. A closed round is whole to the review audience (the engine's rule, not this game's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from daemon.procedures.spec import BANKER, Opens, Revealed, Seat, Visibility

# A tile written by its pips, low-high ("4-5"), as the procedure journals it.
TILE_PATTERN = r"\b[1-6]-[1-6]\b"


def declare() -> Visibility:
    """Pai Gow's visibility."""

    def opened(snapshot: Mapping[str, Any]) -> Revealed:
        settled = snapshot.get("settlement") is not None
        revealed = Revealed(closed=settled, all_open=bool(snapshot.get("opened_hands")) or settled)
        for seat in snapshot.get("seats") or []:
            if isinstance(seat, Mapping) and seat.get("setting"):  # opened: its tiles known
                _open(revealed, seat.get("seat"), seat.get("banker") is True)
        face_up = snapshot.get("face_up") or []
        revealed.face_up = [(f.get("seat"), str(f.get("tile"))) for f in face_up]
        return revealed

    def reveal(revealed: Revealed, opens: Opens, payload: Mapping[str, Any]) -> None:
        # The rules each event (and `open_hand`'s input) declares it opens by (game.py).
        if opens == "shown" and isinstance(payload.get("tile"), str):  # Art. 4
            revealed.face_up.append((payload.get("seat"), payload["tile"]))
        elif opens == "door":  # Art. 6(2): `open_hand` (its input, then its `hand.opened`)
            _open(revealed, payload.get("seat"), payload.get("banker") is True)
        elif opens == "all":
            revealed.all_open = True
        elif opens == "settled" and isinstance(payload.get("settlement"), Mapping):
            # A door's settlement (a Thirteen one is a list: the floor reads every game's rule)
            revealed.closed = revealed.all_open = True

    def seat_of(event: str, payload: Mapping[str, Any]) -> Seat | None:
        # Every record carrying a hand's tiles names its door (`hand.opened`, `hand.reset`,
        # the `open_hand` and `reset_hand` inputs); the hands set name no tile.
        return None

    return Visibility(
        hand_keys=frozenset(
            {"cards", "front", "back", "before", "after", "setting", "settings", "banker_hand"}
        ),
        # A tile dealt face up (`tile.face_up`, the snapshot's `face_up`) and the tiles of the
        # first half of a four-hand set, shown face up (Art. 2(4)).
        public_keys=frozenset({"tile", "used_tiles", "tiles"}),
        pattern=TILE_PATTERN,
        unique=False,
        opened=opened,
        reveal=reveal,
        seat_of=seat_of,
    )


def _open(revealed: Revealed, seat: Any, banker: bool) -> None:
    """The croupier has opened the hand at `seat` (the banker's, when `banker`)."""
    if isinstance(seat, int) and not isinstance(seat, bool):
        revealed.seats.add(seat)
    if banker:
        revealed.seats.add(BANKER)
