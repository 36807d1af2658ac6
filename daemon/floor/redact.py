"""What a floor reader may see of a table's journal: the table's own rule, applied per event.

The floor holds every table's journal lines (the truth, cards and all). What a person is served
is decided by the tables' visibility declarations (`daemon.procedures.visibility`, the table of
docs/visibility.md), the same rule the table's own API applies: while a round is in play a
face-down card or tile is served to no role; what the game opened (a card or tile dealt face
up, Thirteen's banker's hand once opened, a Pai Gow hand from its own opening) is served to all;
once the round is closed (settled or voided) `surveillance`, `audit` and `admin` see it whole,
and `pit` still only what was opened. A row is read by the rule of its table's game (the floor
learns it from the table's `table.started`); only a table whose game is not known yet gets every
game's rules at once (their events do not clash, but one game's name for a hand may be another's
setting: Pai Gow's `settings` are hands, Thirteen's the table's configuration). The raw line
bytes, which carry every card, are served only to those who may see the whole of the round, once
it is closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from daemon.procedures.visibility import HIDDEN, REVIEW, audience, redact_record

__all__ = ["HIDDEN", "blotted", "sees_raw_lines", "visible_alert", "visible_payload", "visible_row"]


def sees_raw_lines(role: str, round_closed: bool = False) -> bool:
    """Whether `role` may have a line's raw bytes (every card in it)."""
    return round_closed and audience(role) == REVIEW


def visible_payload(
    role: str,
    event: str,
    payload: Mapping[str, Any],
    round_closed: bool,
    game: str | None = None,
) -> tuple[dict[str, Any], bool]:
    """(the payload this role may see, whether anything was hidden), by the rule of the
    table's `game` (every game's at once when it is not known)."""
    record = redact_record(
        game, {"event": event, "payload": payload}, role, round_closed=round_closed
    )
    shown: dict[str, Any] = record["payload"]
    return shown, shown != payload


# A row's free text, written by the table or a person, that may name a card or tile: a
# violation's or an override's reason ("Qh has already been dealt", "3d seen on camera 3"), a
# device's fault, a held table's reason, the note a person typed acknowledging it ("confirmed
# on camera: Qh to seat 3").
TEXTS = ("reason", "fault", "ack_note")
# The columns a query adds for `visible_row` (queries.judged), taken off the row it serves.
ROUND_CLOSED, TABLE_GAME = "round_closed", "table_game"


def visible_row(row: dict[str, Any], role: str | None) -> dict[str, Any]:
    """A violation, override, fault or table summary as `role` may see it (None: whoever is
    pushed it, as for a round in play): each card or tile its free text (`TEXTS`) names blotted
    out by the table's game's rule, as the table's own API blots a refusal's reason; whole to a
    role that sees its round whole once the round is closed. The row's `round_closed` and
    `table_game` (queries.judged) are used and taken off; without them the round counts as in
    play and every game's rule applies."""
    closed = bool(row.pop(ROUND_CLOSED, False)) and role is not None
    game = row.pop(TABLE_GAME, None)
    texts = {key: row[key] for key in TEXTS if isinstance(row.get(key), str)}
    if texts:
        shown, _ = visible_payload(role or "", "", texts, closed, game)
        row.update(shown)
    return row


def blotted(text: str) -> str:
    """Free text of no known round or game (a note on a chain alert, a floor action's note)
    with every card or tile it names blotted out, as for a round in play."""
    shown, _ = visible_payload("", "", {"text": text}, False)
    return str(shown["text"])


# The keys of an alert's details that carry a line's SHA-256 (the line's own or its `prev`).
DIGEST_DETAILS = frozenset(
    {"next_prev", "stored_hash", "received_hash", "expected_prev", "prev", "hash"}
)


def visible_alert(alert: dict[str, Any], role: str | None) -> dict[str, Any]:
    """A chain alert as `role` may see it (None: anyone, the push feed). Its digests (expected
    and actual hash, and those in its details) are SHA-256 of lines that carry cards: one
    tried against the 52 cards finds a face-down one. So they go only where the raw line may:
    to a role that sees a round whole, once the round of the line at the alert's seq is closed
    (`line_closed`, computed by the query; an alert without it is taken as in play)."""
    shown = dict(alert)
    closed = bool(shown.pop("line_closed", False))
    if role is not None and sees_raw_lines(role, closed):
        return shown
    if isinstance(shown.get("ack_note"), str):  # a person's note may name a card: as in play
        shown["ack_note"] = blotted(shown["ack_note"])
    details = shown.get("details")
    if (
        shown.get("expected_hash")
        or shown.get("actual_hash")
        or (isinstance(details, dict) and DIGEST_DETAILS & set(details))
    ):
        shown["expected_hash"] = shown["actual_hash"] = None
        if isinstance(details, dict):
            shown["details"] = {k: v for k, v in details.items() if k not in DIGEST_DETAILS}
            shown["details"]["digests"] = "withheld"
    return shown
