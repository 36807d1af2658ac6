"""What one pass over a journal keeps for the audit: serials, throws, decks against the deck
before, the reader's counts by dealer, settlements; written by the journal's own writer."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from daemon.analytics.shuffle import permutations
from daemon.analytics.source import EVENTS, read_events, read_journal
from daemon.config import JournalConfig
from daemon.journal import Journal, scan

CARDS = [r + s for s in "shdc" for r in "A23456789TJQK"]


class Table:
    def __init__(self, folder: Path) -> None:
        self.journal = Journal.open(JournalConfig(dir=folder, durability="none"), "T01")
        self.rng = random.Random(1)

    def put(self, event: str, actor: str, **payload: Any) -> None:
        self.journal.stage(event, actor, 1, payload, False)

    def deck(self, order: list[str], dealer: str = "dealer:D1", **odd: Any) -> None:
        self.put("deck.machine_shuffled", "device:shuffler", count=52, mode="random")
        self.put("shoe.loaded", dealer, redeal=False)
        self.put("dice.landed", "device:dice_shaker", dice=[1, 2, 3, 4], total=10)
        for index, card in enumerate(order, start=1):
            if index == odd.get("misread"):
                self.put(
                    "table.tilted", "device:shoe_reader", device="shoe_reader", fault="misread"
                )
                entered = {"by": dealer, "approved_by": "supervisor:S1"}
                self.put("card.dealt", "device:shoe_reader", card=card, seat=0, index=index,
                         face_up=False, entered=entered)  # fmt: skip
            elif index == odd.get("reordered"):
                # Keys in another order: the line is decoded as JSON instead.
                self.put("card.dealt", "device:shoe_reader", index=index, card=card, seat=0)
            else:
                self.put("card.dealt", "device:shoe_reader", card=card, seat=0, index=index,
                         face_up=False)  # fmt: skip
        if odd.get("voided"):
            self.put("deal.voided", "supervisor:S1", cards=order[:5])


def test_one_pass_keeps_what_each_audit_needs(tmp_path: Path) -> None:
    table = Table(tmp_path)
    for device, serial in (("shuffler", "SH-1"), ("dice_shaker", "DI-1"), ("shoe_reader", "RE-1")):
        table.put("device.identified", f"device:{device}", device=device, serial=serial)
    decks = [random.Random(i).sample(CARDS, 52) for i in range(6)]
    table.deck(decks[0])  # no deck before it: not audited
    table.deck(decks[1], misread=7, reordered=9)
    table.deck(decks[2], dealer="dealer:D2", voided=True)  # voided: neither it nor the next
    table.deck(decks[3])
    table.put("device.identified", "device:shuffler", device="shuffler", serial="SH-2")
    table.deck(decks[4])  # its own serial: against deck 3, as dealt
    table.put("round.settled", "dealer:D1", settlement=[
        {"seat": 1, "amount": 200, "net": "98.00", "rules": {"ruleset": "macau-1989", "bet": 2,
                                                               "commission": "0.02"}},
        {"seat": 2, "amount": 100, "net": "-100", "rules": {"ruleset": "macau-1989", "bet": 1,
                                                              "commission": "0"}},
    ])  # fmt: skip
    table.journal.close()

    data = read_journal(tmp_path)
    assert data.throws("DI-1").shape == (5, 4)
    inputs, outputs = data.decks("SH-1")
    assert len(outputs) == 1 and data.decks_skipped["SH-1"] == 3
    # A card's id is the rules engine's index: deck 1 as a permutation of deck 0, as dealt.
    perm = permutations(inputs, outputs)[0].tolist()
    assert [decks[0][p] for p in perm] == decks[1]
    (_, out2) = data.decks("SH-2")
    assert len(out2) == 1 and data.decks_skipped.get("SH-2", 0) == 0
    reader = data.reader["RE-1"]
    assert (reader.reads, reader.misreads, reader.entered) == (52 * 5 - 1, 1, 1)
    assert data.reader_by_dealer[("RE-1", "dealer:D2")].reads == 52
    (played,) = data.rounds
    assert played.ruleset == "macau-1989" and played.dealer == "dealer:D1"
    assert [(b.amount, b.net, b.commission) for b in played.bets] == [
        (200.0, 98.0, 2.0),
        (100.0, -100.0, 0.0),
    ]
    only = read_journal(tmp_path, serial="SH-2")
    assert list(only.deck_outputs) == ["SH-2"] and not only.dice


def test_the_block_reader_reads_what_the_line_scan_reads(tmp_path: Path) -> None:
    """`read_journal` reads whole files a block at a time (no line cut out); the line scan
    (`scan`, which `--since` uses) reads the same journal to the same data, odd lines too."""
    table = Table(tmp_path)
    for device, serial in (("shuffler", "SH-1"), ("dice_shaker", "DI-1"), ("shoe_reader", "RE-1")):
        table.put("device.identified", f"device:{device}", device=device, serial=serial)
    rng = random.Random(3)
    for i in range(40):
        odd = {"misread": rng.randint(1, 52)} if i % 7 == 3 else {}
        odd |= {"reordered": rng.randint(1, 52)} if i % 5 == 1 else {}
        odd |= {"voided": True} if i % 11 == 5 else {}
        table.deck(rng.sample(CARDS, 52), dealer=f"dealer:D{i % 3}", **odd)
        if i == 20:
            table.put("device.identified", "device:shuffler", device="shuffler", serial="SH-2")
    table.put("card.dealt", "device:shoe_reader", card="Zz", seat=0, index=1, face_up=False)
    table.journal.close()

    fast = read_journal(tmp_path)
    slow = read_events(scan(tmp_path, set(EVENTS)))
    assert fast.lines == slow.lines
    for name in ("dice", "dice_count", "deck_inputs", "deck_outputs", "decks_skipped", "reader",
                 "reader_by_dealer", "rounds"):  # fmt: skip
        assert dict(getattr(fast, name)) == dict(getattr(slow, name)), name
    assert sum(fast.decks_skipped.values()) > 4 and fast.reader["RE-1"].misreads == 6
