"""What a person may see of the cards and tiles: the one redaction every surface calls.

The system knows every card and tile (the journal on disk keeps them all: recovery replays
them); a person sees a face-down one only once the game opens it, whatever the person's role.
Each game declares what opens what (`Game.visibility`: daemon/procedures/thirteen/visibility.py,
daemon/procedures/paigow/visibility.py); this module applies it, the same way for the state
(`/api/state`, the console, the push feed's state, `tabled status`), the journal (`/api/journal`,
the push feed's events, `tabled journal`) and the floor (daemon/floor/redact.py). The table it
makes is docs/visibility.md.

- While a round is in play, a hidden card is served to nobody: its value becomes `HIDDEN`, in
  place, so a seat still shows how many cards it holds, and a card or tile named in free text
  (a fault, a refusal's reason) is blotted out the same way.
- What the game has opened (a hand laid open, a card face up) is served to everyone.
- Once the round is closed (settled or voided), `audience(role) == "review"` (a supervisor,
  surveillance, admin, a floor auditor) sees it whole, for disputes; the others still see only
  what was opened.

Two audiences only, so a cache of what is served keys on `audience(role)`, not on the role.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from daemon.procedures.events import INPUT_EVENT
from daemon.procedures.games import GAMES
from daemon.procedures.spec import BANKER, HIDDEN, Game, Revealed, Seat, Visibility

__all__ = [
    "DIGESTS",
    "HIDDEN",
    "REVIEW",
    "SEES_CLOSED_ROUNDS",
    "TABLE",
    "Seen",
    "audience",
    "opened",
    "redact_record",
    "redact_records",
    "redact_state",
    "redact_value",
    "without_digests",
]

REVIEW = "review"
TABLE = "table"
# Who may see a closed round whole: the table's supervisors, surveillance and IT admins, and
# the floor's auditors. Every other role (dealer, pit, a trainer, one not known) sees only what
# the game opened.
SEES_CLOSED_ROUNDS = frozenset({"supervisor", "surveillance", "admin", "audit"})
# A journal record's digests: its line's SHA-256 and the line before's. Served only with a
# record shown whole (`without_digests`).
DIGESTS = frozenset({"hash", "prev"})

_EVERY_GAME = tuple(g for g in GAMES.values() if g.visibility is not None)


def audience(role: str) -> str:
    """The audience a role belongs to: roles that are served the same share it."""
    return REVIEW if role in SEES_CLOSED_ROUNDS else TABLE


def rules_of(game: Game[Any] | str | None) -> tuple[Game[Any], ...]:
    """A game's declaration; every game's at once when the game is not known (the floor)."""
    found = GAMES.get(game) if isinstance(game, str) else game
    if found is not None and found.visibility is not None:
        return (found,)
    return _EVERY_GAME


def _visibility(game: Game[Any]) -> Visibility:
    if game.visibility is None:  # rules_of returns only games that declare it
        raise ValueError(f"{game.name} declares no visibility")
    return game.visibility


def opened(game: Game[Any] | str | None, snapshot: Mapping[str, Any]) -> Revealed:
    """What the game has opened of the round in a procedure's snapshot."""
    rules = rules_of(game if game is not None else str(snapshot.get("game", "")))
    if len(rules) != 1:
        return Revealed()
    return _visibility(rules[0]).opened(snapshot)


def _opens(game: Game[Any], event: str) -> str | None:
    declared = game.events.get(event)
    return None if declared is None else declared.opens


def learn(games: Sequence[Game[Any]], revealed: Revealed, event: str, payload: Any) -> None:
    """What one journal line opens of its round, and whether it closes it, by the rule each
    game declares of that event (`Game.events`: `Event.opens`, `Event.closes_round`; for a
    journaled input, `Action.opens`), never by the payload's shape."""
    for game in games:
        declared = game.events.get(event)
        if declared is None:
            continue
        if declared.closes_round:
            revealed.closed = True
        opens, given = declared.opens, payload
        if event == INPUT_EVENT and isinstance(payload, Mapping):
            action = game.actions.get(str(payload.get("action")))
            opens, given = (action.opens if action else None), payload.get("payload")
        if opens is not None and isinstance(given, Mapping):
            _visibility(game).reveal(revealed, opens, given)


class _Redactor:
    def __init__(self, games: Sequence[Game[Any]], revealed: Revealed) -> None:
        rules = [_visibility(g) for g in games]
        self.hand_keys = frozenset().union(*(r.hand_keys for r in rules))
        self.public_keys = frozenset().union(*(r.public_keys for r in rules))
        self.unseen_keys = frozenset().union(*(r.unseen_keys for r in rules))
        self.revealed = revealed
        self.unique = [re.compile(r.pattern) for r in rules if r.unique]
        self.tokens = re.compile("|".join(f"(?:{r.pattern})" for r in rules))
        self.face_up = {value for _seat, value in revealed.face_up}
        self.hid = False
        # An input's payload is what someone sent, not what the table made of it: its `seat`
        # (or `banker`) is a claim, never what opens a card (a device adding "seat": 1 to a
        # card read would have its card shown with seat 1's opened hand).
        self.claims = False

    def visible(self, seats: frozenset[Seat], value: str) -> bool:
        revealed = self.revealed
        if revealed.all_open or seats & revealed.seats:
            return True
        # A face-up card is known by its value where cards are one of a kind.
        return value in self.face_up and any(p.fullmatch(value) for p in self.unique)

    def unseen(self, value: Any) -> Any:
        """Every card or tile in `value` hidden, its shape kept (a voided deal's)."""
        if isinstance(value, Mapping):
            return {key: self.unseen(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.unseen(item) for item in value]
        if isinstance(value, str) and self.tokens.fullmatch(value):
            return self.hide()
        return value

    def hide(self) -> str:
        self.hid = True
        return HIDDEN

    def walk(self, value: Any, seats: frozenset[Seat], in_hand: bool) -> Any:
        if isinstance(value, Mapping):
            seat = value.get("seat")
            if self.claims:
                pass
            elif isinstance(seat, int) and not isinstance(seat, bool):
                seats = frozenset({seat})
            if value.get("banker") is True and not self.claims:
                seats |= {BANKER}
            out: dict[Any, Any] = {}
            for key, item in value.items():
                if key in self.public_keys:
                    out[key] = item
                elif key in self.unseen_keys:
                    out[key] = self.unseen(item)
                else:
                    out[key] = self.walk(item, seats, in_hand or key in self.hand_keys)
            return out
        if isinstance(value, list | tuple):
            return [self.walk(item, seats, in_hand) for item in value]
        if isinstance(value, str):
            if in_hand:
                return value if self.visible(seats, value) else self.hide()
            return self.tokens.sub(lambda m: self._token(m, seats), value)
        return value

    def _token(self, match: re.Match[str], seats: frozenset[Seat]) -> str:
        text = match.group(0)
        if self.revealed.all_open or self.visible(frozenset(), text):
            return text
        return self.hide()


def redact_state(
    game: Game[Any] | str | None, state: Mapping[str, Any], role: str
) -> dict[str, Any]:
    """The table's state as `role` may see it. `state` is the console's view
    (`daemon.table.publish.views.console_snapshot`), which carries what the game has opened
    (`revealed`); without it nothing counts as opened."""
    return dict(redact_value(game, state, role, state))


def redact_value(
    game: Game[Any] | str | None, value: Any, role: str, state: Mapping[str, Any]
) -> Any:
    """Any value naming cards or tiles of the round now (the table's state, a simulated device's
    report of what it drew) as `role` may see it, with what the game has opened of that round:
    `state` is the console's view, with its `revealed`."""
    revealed = Revealed.from_json(state.get("revealed"))
    if revealed.closed and audience(role) == REVIEW:
        return value
    rules = rules_of(game if game is not None else str(state.get("game", "")))
    return _Redactor(rules, revealed).walk(value, frozenset(), False)


def redact_record(
    game: Game[Any] | str | None,
    record: Mapping[str, Any],
    role: str,
    *,
    round_closed: bool,
    revealed: Revealed | None = None,
) -> dict[str, Any]:
    """A journal record (`{"event", "payload", ...}`) as `role` may see it. `revealed` is what
    the game had opened of the record's round (`Seen` learns it); the record itself opens what
    it carries (a card dealt face up, the banker's hand at its opening)."""
    return _redact_record(rules_of(game), record, role, round_closed, revealed)[0]


def _redact_record(
    rules: Sequence[Game[Any]],
    record: Mapping[str, Any],
    role: str,
    round_closed: bool,
    revealed: Revealed | None,
) -> tuple[dict[str, Any], bool]:
    event, payload = str(record.get("event", "")), record.get("payload")
    base = revealed or Revealed()
    own = Revealed(base.closed, base.all_open, set(base.seats), list(base.face_up))
    learn(rules, own, event, payload)
    if (round_closed or own.closed) and audience(role) == REVIEW:
        return dict(record), False
    if not isinstance(payload, Mapping):
        return {key: value for key, value in record.items() if key not in DIGESTS}, False
    of = (_visibility(game).seat_of(event, payload) for game in rules)
    seats = frozenset(s for s in of if s is not None)
    redactor = _Redactor(rules, own)
    if event == INPUT_EVENT:
        redactor.claims, seats = True, frozenset()
    shown = redactor.walk(payload, seats, False)
    return without_digests(record, shown), redactor.hid


def without_digests(record: Mapping[str, Any], payload: Any) -> dict[str, Any]:
    """`record` with `payload`, without its line's digests (`DIGESTS`): a record served
    through the redaction. The digest of a line is the SHA-256 of every byte of it, cards
    included: a reader shown the rest of the line (or of the line before, whose digest is
    `prev`) finds a hidden card by trying the 52, so a digest goes only with a record shown
    whole (to review's audience, its round closed)."""
    shown = {key: value for key, value in record.items() if key not in DIGESTS}
    shown["payload"] = payload
    return shown


class Seen:
    """What the game has opened, round by round, learnt from journal records in their order,
    and from the table's state now (the console's view, with its `revealed`): how a stream of
    records (the push feed) or a page of them (a journal query) is redacted."""

    def __init__(
        self, game: Game[Any] | str | None = None, state: Mapping[str, Any] | None = None
    ) -> None:
        if game is None and state is not None:
            game = str(state.get("game", ""))
        self.rules = rules_of(game)
        self.rounds: dict[str, Revealed] = {}
        # A round's deals voided so far: (the seq of the `deck` line, what the voided deal had
        # opened), so its records are shown with that, not with what the next deal opens.
        self.voided: dict[str, list[tuple[int, Revealed]]] = {}
        self.own: dict[str, Revealed] = {}
        self.latest: int | None = None
        if state is not None:
            self.rounds[str(state.get("round"))] = Revealed.from_json(state.get("revealed"))
            self._later(state.get("round"))

    def _later(self, round_id: Any) -> None:
        if isinstance(round_id, int) and (self.latest is None or round_id > self.latest):
            self.latest = round_id

    def learn(self, record: Mapping[str, Any]) -> None:
        round_id = record.get("round")
        revealed = self.rounds.setdefault(str(round_id), Revealed())
        # What the records alone have opened (the state's `revealed` is the deal now's).
        own = self.own.setdefault(str(round_id), Revealed())
        event, seq = str(record.get("event", "")), record.get("seq")
        if isinstance(seq, int) and any(_opens(game, event) == "deck" for game in self.rules):
            kept = Revealed(own.closed, own.all_open, set(own.seats))
            kept.face_up = list(own.face_up)
            self.voided.setdefault(str(round_id), []).append((seq, kept))
        learn(self.rules, revealed, event, record.get("payload"))
        learn(self.rules, own, event, record.get("payload"))
        self._later(round_id)

    def _revealed(self, record: Mapping[str, Any]) -> Revealed | None:
        """What the game had opened of the deal `record` belongs to."""
        round_id, seq = str(record.get("round")), record.get("seq")
        if isinstance(seq, int):
            for until, kept in self.voided.get(round_id, ()):
                if seq < until:
                    return kept
        return self.rounds.get(round_id)

    def closed(self, round_id: Any) -> bool:
        """A round is closed once settled or voided, or once a later round has begun."""
        revealed = self.rounds.get(str(round_id))
        if revealed is not None and revealed.closed:
            return True
        return isinstance(round_id, int) and self.latest is not None and round_id < self.latest

    def show(self, record: Mapping[str, Any], role: str) -> dict[str, Any]:
        """`record` as `role` may see it, with what is known of its round."""
        round_id = record.get("round")
        return _redact_record(
            self.rules, record, role, self.closed(round_id), self._revealed(record)
        )[0]

    def redact(self, record: Mapping[str, Any], role: str) -> dict[str, Any]:
        """The next record of a stream: learnt from, then shown as `role` may see it."""
        self.learn(record)
        return self.show(record, role)


def redact_records(
    game: Game[Any] | str | None,
    records: Iterable[Mapping[str, Any]],
    role: str,
    state: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """A page of journal records as `role` may see them: all of them are learnt from first, so
    a card opened later in the page (the banker's at `banker.opened`) shows where it was dealt."""
    records = list(records)
    seen = Seen(game, state)
    for record in records:
        seen.learn(record)
    return [seen.show(record, role) for record in records]
