"""What the audit needs, read from a table's journal folder in one streaming pass.

`daemon.journal.scan` hands over only the lines of the events below (by their bytes; no other
line is decoded), in journal order; each is parsed for the few fields the audit uses, and kept
in compact arrays, so a year of a table (25 M lines) is read in one pass with memory in
proportion to the throws and decks, never to the journal.

- `device.identified`: which serial each device has from then on (a device swapped mid-shift
  is audited under its own serial).
- `dice.landed`: a valid throw; the dice in the order the shaker reports them (the position).
- `deck.machine_shuffled`, `card.dealt`, `deal.voided`: a deck is the cards dealt (index 1-52)
  after a machine shuffle of 52 in random mode. It is audited against the deck before it (the
  order the cards went in: the previous deck as dealt) when both are whole and no deal was
  voided between them.
- `card.dealt` (read or `entered` by hand), `table.tilted` (shoe reader, misread): the reader's
  reads, misreads and manual entries, by the dealer who loaded the shoe (`shoe.loaded`).
- `round.settled`: each bet's amount, its net to the player and the commission, for the hold
  (Thirteen: the bets, each naming its rule set; Pai Gow: the doors' bets, and what the house
  takes: the commission and its own co-bank share's net); `table.started`: the table's rule
  set, for a round whose bets do not name one (Pai Gow's).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from daemon.floor.facts import card_id
from daemon.journal import scan
from daemon.journal.format import journal_files

# What each audit reads (a kind that needs fewer events skips the others' lines unparsed: the
# dice read one line in a hundred of a Thirteen journal, the shuffles two in five).
EVENTS_BY_KIND = {
    "dice": ("device.identified", "dice.landed"),
    "shuffle": ("device.identified", "deck.machine_shuffled", "card.dealt", "deal.voided"),
    "reader": ("device.identified", "card.dealt", "shoe.loaded", "table.tilted"),
    "hold": ("table.started", "round.settled"),
}
EVENTS = tuple(sorted({event for events in EVENTS_BY_KIND.values() for event in events}))
UNKNOWN = "unknown"
NOT_A_CARD = 255  # the id of a card name that is none of the 52: its deck is not audited

# card.dealt's payload as the procedure writes it (anything else is decoded as JSON).
_CARDS = re.compile(
    rb'"event":"card\.dealt","payload":\{[^\n]*?"card":"([^"]+)","seat":\d+,"index":(\d+),'
    rb'"face_up":(?:true|false)(,"entered")?'
)
# The same card line, found in a block of lines (`Pass.read_files`): groups 1-3 the card, its
# index and the manual entry mark.
_FAST_CARD = (
    rb'card\.dealt","payload":\{[^\n]*?"card":"([^"\n]+)","seat":\d+,"index":(\d+),'
    rb'"face_up":(?:true|false)(,"entered")?'
)
BLOCK = 1 << 22  # the bytes read at a time: files are streamed, never read whole
_DICE = re.compile(rb'"dice":\[([0-9,]+)\]')
_EVENT = b'"event":"'  # the line's own: it comes before the payload
_CARD_EVENT = b'card.dealt"'


@dataclass
class ReaderCounts:
    reads: int = 0
    misreads: int = 0
    entered: int = 0

    @property
    def cards(self) -> int:
        """Cards that went past the reader: read, or misread (then entered or not)."""
        return self.reads + self.misreads


@dataclass
class Bet:
    seat: int
    amount: float
    net: float  # to the player, in money
    commission: float  # in money


@dataclass
class Round:
    table: str
    ts: str
    dealer: str
    ruleset: str
    bets: list[Bet]


@dataclass
class AuditData:
    """Everything one pass over the journal keeps, by device serial."""

    lines: int = 0  # lines of the audited events read
    dice: dict[str, bytearray] = field(default_factory=lambda: defaultdict(bytearray))
    dice_count: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    deck_inputs: dict[str, bytearray] = field(default_factory=lambda: defaultdict(bytearray))
    deck_outputs: dict[str, bytearray] = field(default_factory=lambda: defaultdict(bytearray))
    decks_skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    reader: dict[str, ReaderCounts] = field(default_factory=lambda: defaultdict(ReaderCounts))
    reader_by_dealer: dict[tuple[str, str], ReaderCounts] = field(
        default_factory=lambda: defaultdict(ReaderCounts)
    )
    rounds: list[Round] = field(default_factory=list)

    def throws(self, serial: str) -> npt.NDArray[np.int8]:
        raw = np.frombuffer(bytes(self.dice[serial]), dtype=np.int8)
        dice = len(raw) // max(self.dice_count[serial], 1)
        return raw.reshape(-1, dice) if dice else raw.reshape(0, 4)

    def decks(self, serial: str) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16]]:
        inputs = np.frombuffer(bytes(self.deck_inputs[serial]), dtype=np.uint8)
        outputs = np.frombuffer(bytes(self.deck_outputs[serial]), dtype=np.uint8)
        return (
            inputs.reshape(-1, 52).astype(np.int16),
            outputs.reshape(-1, 52).astype(np.int16),
        )


class _Reading:
    """The pass's state: current serials, the deck being dealt, the dealer at the shoe."""

    def __init__(self, data: AuditData, serial: str | None) -> None:
        self.data = data
        self.only = serial
        self.serials: dict[str, str] = {}
        self.card_ids: dict[bytes, int] = {}  # a name's id (`facts.card_id`), as met
        self.deck: list[int] | None = None  # card ids by index-1, -1 for not dealt
        self.deck_serial = UNKNOWN
        self.deck_good = False
        self.previous: bytes | None = None  # the last whole deck as dealt
        self.dealer = UNKNOWN
        self.ruleset = ""  # the table's, as its last table.started says

    def serial(self, device: str) -> str:
        return self.serials.get(device, UNKNOWN)

    def wanted(self, serial: str) -> bool:
        return self.only is None or serial == self.only

    def finish_deck(self) -> None:
        deck, self.deck = self.deck, None
        if deck is None:
            return
        whole = self.deck_good and min(deck) >= 0 and max(deck) < 52 and len(set(deck)) == 52
        if not whole:
            self.previous = None
            if self.wanted(self.deck_serial):
                self.data.decks_skipped[self.deck_serial] += 1
            return
        order = bytes(deck)
        if self.previous is not None and self.wanted(self.deck_serial):
            self.data.deck_inputs[self.deck_serial] += self.previous
            self.data.deck_outputs[self.deck_serial] += order
        elif self.wanted(self.deck_serial):
            self.data.decks_skipped[self.deck_serial] += 1  # the order it went in is unknown
        self.previous = order

    def card_id(self, name: bytes) -> int:
        """0-51 (`facts.card_id`), NOT_A_CARD for a name that is none of the 52."""
        found = self.card_ids.get(name)
        if found is None:
            known = card_id(name.decode(errors="replace"))
            found = self.card_ids[name] = NOT_A_CARD if known is None else known
        return found

    def json(self) -> dict[str, Any]:
        """Where the pass is, to go on from there later (the floor's next pass)."""
        return {
            "serials": self.serials,
            "deck": self.deck,
            "deck_serial": self.deck_serial,
            "deck_good": self.deck_good,
            "previous": None if self.previous is None else list(self.previous),
            "dealer": self.dealer,
            "ruleset": self.ruleset,
        }

    def resume(self, saved: dict[str, Any]) -> None:
        self.serials = dict(saved["serials"])
        self.deck = saved["deck"]
        self.deck_serial = saved["deck_serial"]
        self.deck_good = saved["deck_good"]
        self.previous = None if saved["previous"] is None else bytes(saved["previous"])
        self.dealer = saved["dealer"]
        self.ruleset = str(saved.get("ruleset", ""))


def _payload(line: bytes) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(line)["payload"]
    return payload


def read_journal(
    path: Path | str,
    *,
    serial: str | None = None,
    since: str | None = None,
    kinds: Iterable[str] = tuple(EVENTS_BY_KIND),
) -> AuditData:
    """One pass over the journal at `path` (a folder or a file) for the audits `kinds`;
    `serial` keeps one device's, `since` (an ISO time, e.g. 2027-01-15 or 2027-01-15T08:00)
    starts there."""
    events = {event for kind in kinds for event in EVENTS_BY_KIND[kind]}
    if since is not None:
        return read_events(scan(path, events, from_time=since), serial=serial)
    reading = Pass(serial=serial)
    root = Path(path)
    data = reading.read_files([root] if root.is_file() else journal_files(root), events)
    reading.state.finish_deck()
    return data


def read_events(events: Iterable[tuple[str, bytes]], *, serial: str | None = None) -> AuditData:
    """The same pass over (event, line) pairs of one table in seq order, wherever they come
    from (a journal folder, or the floor's `journal_lines`): the same data, the same result."""
    reading = Pass(serial=serial)
    data = reading.read(events)
    reading.state.finish_deck()
    return data


class Pass:
    """A pass over one table's lines that goes on across calls (the floor's incremental
    update): `read` takes the lines since the last call and returns what they add (the deck
    being dealt at the end stays open); `json` is where it stands; `pending` what the open
    deck would add if the lines stopped here (as a pass over all of them finishes it)."""

    def __init__(self, saved: dict[str, Any] | None = None, serial: str | None = None) -> None:
        self.state = _Reading(AuditData(), serial)
        if saved is not None:
            self.state.resume(saved)

    def read(self, events: Iterable[tuple[str, bytes]]) -> AuditData:
        data = self.state.data = AuditData()
        cards: list[bytes] = []
        lines = 0
        for event, line in events:
            lines += 1
            if event == "card.dealt":
                cards.append(line)
                continue
            if cards:
                _cards_dealt(self.state, cards)
                cards = []
            _one(self.state, event, line)
        if cards:
            _cards_dealt(self.state, cards)
        data.lines = lines
        return data

    def read_files(self, files: Iterable[Path], events: Iterable[str]) -> AuditData:
        """`read` of whole journal files, `BLOCK` bytes at a time, for the lines of `events`:
        one regex pass a block finds them, and a card.dealt line in the procedure's form gives
        its card, index and manual entry in that same match (no line cut out, no second
        pattern, nothing per card but a tuple), so a year of cards streams through in runs."""
        data = self.state.data = AuditData()
        wanted = sorted(set(events))
        names = b"|".join(re.escape(name.encode()) for name in wanted)
        fast = _FAST_CARD if "card.dealt" in wanted else b"(?!)()()()"  # groups 1-3 all the same
        # One literal prefix for both branches: the engine searches for it at C speed.
        marker = re.compile(b',"event":"(?:' + fast + b"|(" + names + b')","payload":)')
        state, lines = self.state, 0
        for file in files:
            with file.open("rb") as fh:
                carry = b""
                while block := fh.read(BLOCK):
                    chunk = carry + block
                    end = chunk.rfind(b"\n") + 1
                    body, carry = chunk[:end], chunk[end:]
                    run: list[tuple[bytes, bytes, bytes]] = []
                    for found in marker.finditer(body):
                        if found.group(1) is not None:
                            run.append(cast(tuple[bytes, bytes, bytes], found.groups(b"")[:3]))
                            continue
                        if run:
                            lines += len(run)
                            _cards_found(state, run)
                            run = []
                        lines += 1
                        start = body.rfind(b"\n", 0, found.start()) + 1
                        line = body[start : body.index(b"\n", found.end()) + 1]
                        event = found.group(4).decode()
                        if event == "card.dealt":
                            _cards_dealt(state, [line])
                        else:
                            _one(state, event, line)
                    if run:
                        lines += len(run)
                        _cards_found(state, run)
        data.lines = lines
        return data

    def read_facts(self, rows: Iterable[tuple[Any, ...]]) -> AuditData:
        """`read` of the floor's facts of the lines (daemon/floor/facts.py), in seq order:
        (kind, device, value, cards, idx, entered, dice, lines) each, `lines` the audited
        lines a row stands for. The same data as the lines give, without their JSON."""
        state = self.state
        data = state.data = AuditData()
        for kind, device, value, cards, idx, entered, dice, lines in rows:
            data.lines += lines
            if kind == "cards":
                _place(state, list(cards), list(idx), entered)
            elif kind == "dice":
                shaker = state.serial("dice_shaker")
                if state.wanted(shaker):
                    data.dice[shaker] += dice
                    data.dice_count[shaker] += 1
            elif kind == "shuffle":
                state.finish_deck()
                state.deck = [-1] * 52
                state.deck_serial = state.serial("shuffler")
                state.deck_good = value == "random"
            elif kind == "shoe":
                state.dealer = value
            elif kind == "device":
                state.serials[device] = value
            elif kind == "void":
                state.deck_good = False
            elif kind == "misread":
                reader = state.serial("shoe_reader")
                if state.wanted(reader):
                    data.reader[reader].misreads += 1
                    data.reader_by_dealer[(reader, state.dealer)].misreads += 1
        return data

    def pending(self) -> AuditData:
        ghost = _Reading(AuditData(), None)
        ghost.resume(self.json())
        ghost.finish_deck()
        return ghost.data

    def json(self) -> dict[str, Any]:
        return self.state.json()


def _one(state: _Reading, event: str, line: bytes) -> None:
    """One audited line other than a card (those go in runs: `_cards_dealt`)."""
    data = state.data
    if event == "device.identified":
        payload = _payload(line)
        state.serials[str(payload.get("device"))] = str(payload.get("serial") or UNKNOWN)
    elif event == "table.tilted":
        payload = _payload(line)
        fault = str(payload.get("fault", ""))
        reader = state.serial("shoe_reader")
        misread = payload.get("device") == "shoe_reader" and fault.startswith("misread")
        if misread and state.wanted(reader):
            data.reader[reader].misreads += 1
            data.reader_by_dealer[(reader, state.dealer)].misreads += 1
    else:
        _other(state, event, line)


def _cards_dealt(state: _Reading, lines: list[bytes]) -> None:
    """A run of card.dealt lines: one regex pass over them all, each line's card, index and
    whether it was entered by hand (a line the pattern does not fit is decoded as JSON)."""
    found = _CARDS.findall(b"\n".join(lines))  # the floor's lines come without their newline
    if len(found) != len(lines):
        found = []
        for line in lines:
            payload = _payload(line)
            mark = b',"entered"' if "entered" in payload else b""
            found.append((str(payload["card"]).encode(), str(payload["index"]).encode(), mark))
    if found:
        _cards_found(state, found)


def _cards_found(state: _Reading, found: list[tuple[bytes, bytes, bytes]]) -> None:
    """A run of cards as (name, index, `,"entered"` or empty) each."""
    names, index_texts, marks = zip(*found, strict=True)
    entered = len(marks) - marks.count(b"")
    known = list(map(state.card_ids.get, names))
    ids: list[int] = list(map(state.card_id, names)) if None in known else cast(list[int], known)
    _place(state, ids, list(map(int, index_texts)), entered)


def _place(state: _Reading, ids: list[int], indexes: list[int], entered: int) -> None:
    """A run of cards dealt: the reader's reads and manual entries, each card at its index
    (1-52; another index counts as a read, not as a place in the deck)."""
    reader = state.serial("shoe_reader")
    if state.wanted(reader):
        for counts in (
            state.data.reader[reader],
            state.data.reader_by_dealer[(reader, state.dealer)],
        ):
            counts.reads += len(ids) - entered
            counts.entered += entered
    deck = state.deck
    if deck is None:
        return
    first, count = indexes[0], len(indexes)
    if first > 0 and first + count - 1 <= 52 and indexes == list(range(first, first + count)):
        # The usual run: the next cards of the deck, in order (no Python step per card).
        if deck[first - 1 : first - 1 + count].count(-1) != count:
            state.deck_good = False  # dealt twice at one index: a redeal
        deck[first - 1 : first - 1 + count] = ids
        return
    for index, card in zip(indexes, ids, strict=True):
        if 0 < index <= 52:
            if deck[index - 1] != -1:
                state.deck_good = False
            deck[index - 1] = card


def _other(state: _Reading, event: str, line: bytes) -> None:
    """The audited events other than cards, the reader's serial and its misreads."""
    data = state.data
    if event == "dice.landed":
        found = _DICE.search(line)
        dice = (
            [int(d) for d in found.group(1).split(b",")] if found else list(_payload(line)["dice"])
        )
        shaker = state.serial("dice_shaker")
        if state.wanted(shaker):
            data.dice[shaker] += bytes(dice)
            data.dice_count[shaker] += 1
    elif event == "deck.machine_shuffled":
        state.finish_deck()
        payload = _payload(line)
        state.deck = [-1] * 52
        state.deck_serial = state.serial("shuffler")
        state.deck_good = payload.get("count") == 52 and payload.get("mode") == "random"
    elif event == "deal.voided":
        state.deck_good = False
    elif event == "shoe.loaded":
        state.dealer = json.loads(line)["actor"]
    elif event == "table.started":
        state.ruleset = str(_payload(line).get("ruleset") or "")
    elif event == "round.settled":
        _round(data, line, state.ruleset)


def settlement_bets(settlement: Any) -> tuple[str, list[Bet]]:
    """A round.settled's settlement as the hold reads it: (the rule set its bets name, or "";
    the bets). Thirteen's is a list of bets, each with its net to the player. Pai Gow's (a
    dict) is the doors' bets, the house being no party to them (the bank is a guest's), and
    what the house takes as one bet of nothing: the commission, and its own co-bank share's
    net (docs/integrity.md, "Game math and hold")."""
    if isinstance(settlement, dict):
        doors = [d for d in settlement.get("doors") or [] if isinstance(d, dict)]
        placed = [Bet(int(d.get("seat", 0)), float(d.get("bet", 0)), 0.0, 0.0) for d in doors]
        commission = float(settlement.get("commission") or 0)
        house = sum(
            float(c.get("net", 0))
            for c in settlement.get("co_bankers") or []
            if isinstance(c, dict) and c.get("house")
        )
        return "", [*placed, Bet(-1, 0.0, -(commission + house), commission)]
    bets: list[Bet] = []
    ruleset = ""
    for entry in settlement or []:
        rules = entry.get("rules") or {}
        amount = float(entry.get("amount", 0))
        units = float(rules.get("bet") or 0)
        unit = amount / units if units else 0.0
        ruleset = str(rules.get("ruleset", ruleset))
        bets.append(
            Bet(
                int(entry.get("seat", 0)),
                amount,
                float(entry.get("net", 0)),
                float(rules.get("commission") or 0) * unit,
            )
        )
    return ruleset, bets


def _round(data: AuditData, line: bytes, table_ruleset: str) -> None:
    record = json.loads(line)
    ruleset, bets = settlement_bets(record["payload"].get("settlement"))
    data.rounds.append(
        Round(record["table"], record["ts"], record["actor"], ruleset or table_ruleset, bets)
    )
