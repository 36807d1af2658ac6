"""What a floor reader may see of a round still in play: the one place that decides it.

The table's own visibility table (issue 9) is not built yet, so the floor applies a
conservative rule of its own until it is: while a round is neither settled nor voided, the
cards and tiles in it are hidden from every role but `admin` and `audit` (whose job is the
record, after the fact or under a warrant). Hidden means: the whole payload of an event that
exists to carry a hand (`card.dealt`, `tiles.dealt`, arrangements, ...), and any card- or
hand-valued key of any other event's payload. The raw line bytes (which carry the same cards)
are served to `admin` and `audit` only, whatever the round's state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SEES_EVERYTHING = frozenset({"admin", "audit"})
HAND_EVENTS = frozenset(
    {
        "card.dealt",
        "tiles.dealt",
        "tile.face_up",
        "arrangement.entered",
        "arrangement.banker",
        "hand.set",
        "hand.reset",
        "deal.corrected",
    }
)
HAND_KEYS = frozenset(
    {"card", "cards", "tile", "tiles", "hand", "hands", "head", "middle", "tail", "low", "high"}
)
HIDDEN = "hidden"


def sees_raw_lines(role: str) -> bool:
    return role in SEES_EVERYTHING


def visible_payload(
    role: str, event: str, payload: Mapping[str, Any], round_closed: bool
) -> tuple[dict[str, Any], bool]:
    """(the payload this role may see, whether anything was hidden)."""
    if role in SEES_EVERYTHING or round_closed:
        return dict(payload), False
    if event in HAND_EVENTS:
        keep = {k: v for k, v in payload.items() if k in ("round", "actor", "seat", "index")}
        return {**keep, HIDDEN: True}, True
    hidden = False
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if key in HAND_KEYS:
            out[key], hidden = HIDDEN, True
        else:
            out[key] = value
    return out, hidden
