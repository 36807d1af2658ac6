"""What a person may see of a Pai Gow round's tiles (Portaria 15/90/M), declared for the one
redaction engine (`daemon.procedures.visibility`); the table it makes is docs/visibility.md.

Art. 2(1): the tiles are shuffled and dealt face down; each player sets a hand and then the
banker (Art. 6(1)), and a hand set is laid face down until the croupier opens every hand at once
(Art. 6(2), `open_hands`): from then on all the hands are open. Art. 4: a tile dealt face up
stays valid and is open at once: its own record shows it (a tile's name is shared by its pair,
so a face-up tile is not recognised by its name inside a hand still closed). Art. 2(4): with
four hands the tiles of the first half are shown face up to all for the second.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from daemon.procedures.spec import BANKER, Revealed, Seat, Visibility

# A tile written by its pips, low-high ("4-5"), as the procedure journals it.
TILE_PATTERN = r"\b[1-6]-[1-6]\b"


def declare() -> Visibility:
    """Pai Gow's visibility."""

    def opened(snapshot: Mapping[str, Any]) -> Revealed:
        revealed = Revealed(
            closed=snapshot.get("settlement") is not None,
            all_open=bool(snapshot.get("opened_hands")) or snapshot.get("settlement") is not None,
        )
        face_up = snapshot.get("face_up") or []
        revealed.face_up = [(f.get("seat"), str(f.get("tile"))) for f in face_up]
        return revealed

    def reveal(revealed: Revealed, event: str, payload: Mapping[str, Any]) -> None:
        if event == "tile.face_up":
            revealed.face_up.append((payload.get("seat"), str(payload.get("tile"))))
        elif event == "hands.opened":
            revealed.all_open = True
        elif event == "round.settled" and isinstance(payload.get("settlement"), Mapping):
            revealed.closed = revealed.all_open = True

    def seat_of(event: str, payload: Mapping[str, Any]) -> Seat | None:
        if payload.get("action") == "set_banker":  # the journaled input names no door
            return BANKER
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
