"""The audited fields of each line, written at ingest (migration 0022): what the floor's integrity
pass reads instead of the lines themselves (daemon/floor/integrity.py, docs/integrity.md).

`Store.ingest` decodes every line once to judge it; the few fields the integrity audit needs are
taken from that decoded record here, in the batch's transaction, so an hourly pass reads some
fifty narrow rows a round instead of parsing 140 journal lines a round again.

- `integrity_facts`, one row per audited line, or per run of cards:
  - `device` (device.identified): `device`, and the serial in `value`;
  - `shoe` (shoe.loaded): the dealer who loaded the shoe in `value`;
  - `shuffle` (deck.machine_shuffled): `value` `random` for a machine shuffle of 52 in random
    mode (a deck the audit takes), `other` otherwise;
  - `void` (deal.voided); `misread` (table.tilted by the shoe reader for a misread);
  - `started` (table.started): the table's rule set in `value`, the hold's for a round whose
    bets do not name one (Pai Gow's);
  - `dice` (dice.landed): the faces in the order the shaker reports them, a byte each;
  - `cards`: a run of card.dealt lines with no other line of the table missing between them
    (seq .. last_seq, all in one batch, none a fill across a gap): each card's id (0-51,
    `card_id`; 255 for a name that is not one of the 52), its index (1-52; 0 for one
    outside), and how many were entered by hand.
- `integrity_rounds`, one row per round.settled: its dealer (the line's actor), rule set (the
  last bet's that names one; "" when none does: the pass takes the table's, `started`), and
  the sums the hold adds (drop, win, commission, the seat totals' squares and cross terms), as
  `daemon.analytics.hold.HoldSums.add` makes them.

A run of cards never spans a line the floor has not stored: it breaks where the batch skips a
seq (a gap, a duplicate), so a line that fills a gap later is its own row in seq order, and a
pass reading rows in seq order reads what a pass over the lines would.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from daemon.rules.cards import DECK, card_name

if TYPE_CHECKING:
    import psycopg

    from daemon.journal.format import Record

FACT_EVENTS = frozenset(
    (
        "device.identified",
        "shoe.loaded",
        "deck.machine_shuffled",
        "deal.voided",
        "table.tilted",
        "dice.landed",
        "card.dealt",
        "round.settled",
        "table.started",
    )
)
NOT_A_CARD = 255
COPY_FACTS = (
    "COPY integrity_facts (table_id, seq, last_seq, kind, device, value, cards, idx, entered, "
    "dice) FROM STDIN"
)
COPY_ROUNDS = (
    "COPY integrity_rounds (table_id, seq, ts, dealer, ruleset, drop, win, commission, squares, "
    "cross_sum) FROM STDIN"
)


_IDS: dict[str, int] = {str(card): card.index for card in DECK}


def card_id(name: str) -> int | None:
    """A card's id in the audit, the same on the floor and in a journal folder's audit
    (daemon.analytics.source): the rules engine's index, 0-51 (`As`, `10h`, `T♥` alike), None
    for a name that is none of the 52 (a deck holding one is not audited)."""
    found = _IDS.get(name)
    if found is None:
        short = card_name(name)
        found = None if short is None else _IDS[short]
    return found


def _num(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def round_sums(settlement: Any) -> tuple[str, Decimal, Decimal, Decimal, Decimal, Decimal]:
    """A round.settled's settlement as the hold sums it (daemon.analytics.source.
    settlement_bets, then HoldSums.add): (the rule set its bets name or "", drop, win,
    commission, squares, cross terms). Thirteen's: each bet's commission is its rate per unit
    times its units' value (amount / units); the house wins what the players' nets lose. Pai
    Gow's (a dict): the doors' bets; the house wins the commission and its own co-bank share's
    net."""
    seats: dict[int, Decimal] = defaultdict(Decimal)
    ruleset = ""
    drop = win = commission = Decimal(0)
    if isinstance(settlement, Mapping):
        for door in settlement.get("doors") or []:
            if isinstance(door, Mapping):
                amount = _num(door.get("bet")) or Decimal(0)
                drop += amount
                seats[_int(door.get("seat")) or 0] += amount
        commission = _num(settlement.get("commission")) or Decimal(0)
        win = commission + sum(
            (
                _num(c.get("net")) or Decimal(0)
                for c in settlement.get("co_bankers") or []
                if isinstance(c, Mapping) and c.get("house")
            ),
            Decimal(0),
        )
    for item in settlement if isinstance(settlement, list) else []:
        if not isinstance(item, Mapping):
            continue
        rules = item.get("rules")
        rules = rules if isinstance(rules, Mapping) else {}
        amount = _num(item.get("amount")) or Decimal(0)
        units = _num(rules.get("bet")) or Decimal(0)
        if rules.get("ruleset") is not None:
            ruleset = str(rules["ruleset"])
        if units:
            commission += (_num(rules.get("commission")) or Decimal(0)) * amount / units
        drop += amount
        win -= _num(item.get("net")) or Decimal(0)
        seats[_int(item.get("seat")) or 0] += amount
    squares = sum((a * a for a in seats.values()), Decimal(0))
    return ruleset, drop, win, commission, squares, drop * drop - squares


class Facts:
    """The facts of one batch's inserted lines, given table by table in seq order."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.rounds: list[tuple[Any, ...]] = []
        self._run: list[Any] | None = None  # [table, first, last, ids, idx, entered]
        self._last: tuple[str, int] | None = None  # the table and seq of the last line added

    def add(self, rec: Record, ts: datetime) -> None:
        """One inserted line (every one, audited or not: a run of cards breaks where a seq is
        missing)."""
        table, seq, event = rec.table, rec.seq, rec.event
        follows = self._last == (table, seq - 1)
        self._last = (table, seq)
        run = self._run
        # A run of cards goes on over lines the audit does not read (the reader's inputs
        # between cards), never over a missing seq or another audited line.
        audited = event in FACT_EVENTS
        if run is not None and (not follows or (audited and event != "card.dealt")):
            self._close()
            run = None
        if not audited:
            return
        p = rec.payload
        if event == "card.dealt":
            name, index = p.get("card"), _int(p.get("index"))
            ident = card_id(name) if isinstance(name, str) else None
            if run is None:
                run = self._run = [table, seq, seq, bytearray(), bytearray(), 0]
            run[2] = seq
            run[3].append(NOT_A_CARD if ident is None else ident)
            run[4].append(index if index is not None and 0 < index <= 52 else 0)
            run[5] += "entered" in p
            return
        kind, device, value, dice = "", None, None, None
        if event == "device.identified":
            kind = "device"
            device = str(p.get("device"))
            value = str(p.get("serial") or "unknown")
        elif event == "shoe.loaded":
            kind, value = "shoe", rec.actor
        elif event == "deck.machine_shuffled":
            good = p.get("count") == 52 and p.get("mode") == "random"
            kind, value = "shuffle", "random" if good else "other"
        elif event == "deal.voided":
            kind = "void"
        elif event == "table.started":
            kind, value = "started", str(p.get("ruleset") or "")
        elif event == "table.tilted":
            if p.get("device") != "shoe_reader" or not str(p.get("fault", "")).startswith(
                "misread"
            ):
                return
            kind = "misread"
        elif event == "dice.landed":
            faces = p.get("dice")
            if not isinstance(faces, list) or not all(
                isinstance(f, int) and 0 <= f < 256 for f in faces
            ):
                return
            kind, dice = "dice", bytes(faces)
        elif event == "round.settled":
            self.rounds.append((table, seq, ts, rec.actor, *round_sums(p.get("settlement"))))
            return
        self.rows.append((table, seq, seq, kind, device, value, None, None, 0, dice))

    def _close(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            table, first, last, ids, idx, entered = run
            self.rows.append((table, first, last, "cards", None, None, bytes(ids), bytes(idx),
                              entered, None))  # fmt: skip

    def take(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The rows for COPY_FACTS and COPY_ROUNDS, and a fresh start."""
        self._close()
        taken = self.rows, self.rounds
        self.rows, self.rounds, self._last = [], [], None
        return taken

    async def write(self, conn: psycopg.AsyncConnection[Any]) -> None:
        rows, rounds = self.take()
        async with conn.cursor() as cur:
            for statement, items in ((COPY_FACTS, rows), (COPY_ROUNDS, rounds)):
                if items:
                    async with cur.copy(statement) as copy:
                        for row in items:
                            await copy.write_row(row)
