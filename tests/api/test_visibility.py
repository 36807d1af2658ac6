"""What each role is served of the cards and tiles, phase by phase, for both games: the real
procedures feed the console's view and the journal's records, and every role's share of them
(`daemon.procedures.visibility`) is searched for every card still face down. The same rule
served by the real API, its push feed and the floor is in test_visibility_api.py and
tests/floor; the table of it is docs/visibility.md."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from typing import Any

import pytest

from daemon.cli.status import format_status
from daemon.floor.redact import sees_raw_lines, visible_payload
from daemon.procedures.base import Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.spec import Revealed
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.procedures.visibility import (
    HIDDEN,
    REVIEW,
    TABLE,
    Seen,
    audience,
    redact_record,
    redact_records,
    redact_state,
)
from daemon.rules import paigow
from daemon.rules.cards import DECK
from daemon.table.publish.views import console_snapshot

WALL = 1_796_000_000.0
TABLE_ROLES = ("dealer", "supervisor", "surveillance", "admin", "trainer", "someone")
REVIEW_ROLES = ("supervisor", "surveillance", "admin")


def shown(body: str, values: Iterable[str]) -> set[str]:
    """The values (card or tile names) written anywhere in `body` as a whole token: neither
    neighbour is an ASCII letter or digit. (str.find, not a regex with look-arounds: these
    bodies are whole journals, searched for 52 cards at each step.)"""

    def joined(c: str) -> bool:
        return c.isascii() and c.isalnum()

    found = set()
    for value in values:
        at = body.find(value)
        while at != -1:
            end = at + len(value)
            if not (at and joined(body[at - 1])) and not (end < len(body) and joined(body[end])):
                found.add(value)
                break
            at = body.find(value, at + 1)
    return found


class Table:
    """A procedure fed as the runtime feeds it, keeping the journal's records it would write."""

    def __init__(self, proc: Procedure) -> None:
        self.proc = proc
        self.now = 1000.0
        self.records: list[dict[str, Any]] = []

    def feed(self, action: str, actor: str = "dealer:D1", **payload: Any) -> None:
        self.now += 1
        outcome = self.proc.handle(action, actor, payload, self.now)
        assert outcome.accepted, outcome.violation
        self.records.append(
            {
                "seq": len(self.records) + 1,
                "round": self.proc.round_id,
                "event": "table.input",
                "payload": {"action": action, "actor": actor, "payload": payload},
            }
        )
        for event in outcome.events:
            self.records.append(
                {
                    "seq": len(self.records) + 1,
                    "round": event.payload.get("round", self.proc.round_id),
                    "event": event.name,
                    "payload": dict(event.payload),
                }
            )

    def view(self) -> dict[str, Any]:
        raw = self.proc.snapshot()
        view = console_snapshot(raw, now=self.now, wall_now=WALL)
        if raw.get("dealt") is not None:  # as the table's facade adds it
            view["shoe"] = [d["card"] for d in raw["dealt"]]
        return view

    def served(self, role: str) -> str:
        """Everything `role` is served now: the state and the whole journal, as JSON."""
        view = self.view()
        state = redact_state(None, view, role)
        journal = redact_records(None, self.records, role, view)
        return json.dumps({"state": state, "journal": journal}, ensure_ascii=False)


def test_audiences_are_two_and_unknown_roles_get_the_least() -> None:
    assert {audience(r) for r in ("supervisor", "surveillance", "admin", "audit")} == {REVIEW}
    assert {audience(r) for r in ("dealer", "pit", "trainer", "", "Supervisor")} == {TABLE}


def thirteen_dealt(face_up_at: int = 5, cards: int = 52) -> tuple[Table, list[str]]:
    """A Thirteen round with `cards` read from the shoe (the one at `face_up_at`, counted from
    1, face up), and the shuffled deck they come from."""
    t = Table(ThirteenProcedure())
    for name in ("shuffler", "shoe_reader", "dice_shaker", "timer_bell"):
        t.feed("device_identified", f"device:{name}", device=name, approved=True)
    t.feed("open_table")
    t.feed("confirm_hand_shuffle")
    t.feed("shuffle_completed", "device:shuffler", count=52, mode="random")
    t.feed("confirm_cut", by="player", player="P1", cards=20, one_hand=True)
    t.feed("load_shoe")
    t.feed("place_bet", player="P1", seat=1, amount=300, units=3, seated=True)
    t.feed("place_bet", player="P2", seat=2, amount=200, units=2, seated=True)
    t.feed("shake_dice", player="P1")
    t.feed("dice_landed", "device:dice_shaker", dice=[1, 2, 3, 4], valid=True)
    deck = [str(c) for c in DECK]
    random.Random(3).shuffle(deck)
    for index, card in enumerate(deck[:cards], start=1):
        t.feed("card_read", "device:shoe_reader", card=card, face_up=index == face_up_at)
    return t, deck


def rows(t: Table, seat: int) -> dict[str, list[str]]:
    cards = t.proc.seat_cards(seat)  # type: ignore[attr-defined]
    return {"head": cards[:3], "middle": cards[3:8], "tail": cards[8:13]}


@pytest.mark.article("51/89/M", "2(b)")
@pytest.mark.article("51/89/M", "2(d)")
@pytest.mark.article("51/89/M", "4")
def test_thirteen_every_role_in_every_phase_sees_only_what_the_game_opened() -> None:
    t, deck = thirteen_dealt(face_up_at=5)
    face_up = deck[4]
    seat_cards = {s: set(t.proc.seat_cards(s)) for s in range(4)}  # type: ignore[attr-defined]

    def check(hidden: set[str], whole_to_review: bool = False) -> None:
        for role in TABLE_ROLES:
            body = t.served(role)
            if whole_to_review and role in REVIEW_ROLES:
                assert shown(body, deck) == set(deck), role
            else:
                assert shown(body, hidden) == set(), (t.proc.phase, role)
                assert shown(body, set(deck) - hidden) == set(deck) - hidden, (t.proc.phase, role)

    # Dealt face down (Art. 2(b)): nobody sees a card but the one dealt face up (Art. 4).
    assert t.proc.phase == "BANKER_ARRANGING"
    check(set(deck) - {face_up})
    view = redact_state(None, t.view(), "dealer")
    assert [len(s["cards"]) for s in view["seats"]] == [13, 13, 13, 13]  # counts are public
    assert view["shoe"].count(HIDDEN) == 51 and face_up in view["shoe"]
    # The banker arranges, still face down (Art. 2(d)); the journal's record of it too.
    t.feed("arrange_banker")
    check(set(deck) - {face_up})
    # The banker opens: its 13 cards are open to everyone, where they were dealt too.
    t.feed("open_banker")
    hidden = set(deck) - seat_cards[0] - {face_up}
    check(hidden)
    t.feed("enter_arrangement", seat=0, **rows(t, 0))
    # A player says the hand is arranged: it stays closed until it is opened.
    t.feed("player_arranged", seat=1)
    check(hidden)
    # Seat 2 is late at the bell: its cards are never opened; seat 3 had no bet.
    t.now += 400
    t.feed("timer_expired", "system")
    # Art. 8: seat 1 is opened against the banker's: open to everyone from then on.
    t.feed("open_hand", seat=1)
    hidden -= seat_cards[1]
    check(hidden)
    t.feed("enter_arrangement", seat=1, **rows(t, 1))
    t.feed("settle_round")
    hidden = (seat_cards[2] | seat_cards[3]) - {face_up}
    check(hidden, whole_to_review=True)
    # The next round: the closed one stays whole to review, opened-only to the others.
    t.feed("start_round")
    check(hidden, whole_to_review=True)


def misdeal(t: Table, deck: list[str]) -> None:
    """The reader reads a card dealt already (a second copy: the deck is not one deck): a
    misdeal that cannot be put right is on record, the table in TILT naming the card."""
    t.feed("card_read", "device:shoe_reader", card=deck[3])
    assert t.proc.phase == "TILT"


def test_a_card_named_in_a_fault_is_named_to_nobody() -> None:
    t, deck = thirteen_dealt(face_up_at=0, cards=10)
    misdeal(t, deck)
    assert deck[3] in json.dumps(t.view()["faults"])
    for role in TABLE_ROLES:
        body = t.served(role)
        assert shown(body, deck) == set(), role
        assert "duplicate card hidden" in body


def test_a_voided_deal_stays_face_down_and_a_voided_round_is_whole_to_review() -> None:
    t, deck = thirteen_dealt(face_up_at=0, cards=10)
    misdeal(t, deck)
    t.feed("device_healthy", "device:shoe_reader", device="shoe_reader")
    t.feed("clear_tilt", "supervisor:S1", reason="reader checked")
    # Art. 4's last resort, decided by two supervisors (H5): the dealt cards go back unseen.
    t.feed("void_deal", "supervisor:S1", reason="a duplicate card in the shoe")
    t.feed("approve_override", "supervisor:S2", reason="seen on camera")
    assert t.proc.snapshot()["dealt"] == []
    for role in TABLE_ROLES:
        assert shown(t.served(role), deck) == set(), role
    t.feed("door_opened", "device:shoe_reader", device="shoe_reader", fault="shoe removed")
    t.feed("device_healthy", "device:shoe_reader", device="shoe_reader")
    t.feed("void_round", "supervisor:S1", reason="voided")
    if t.proc.snapshot()["override"] is not None:  # cards of it known: a second supervisor
        t.feed("approve_override", "supervisor:S2", reason="agreed")
    for role in TABLE_ROLES:
        expected = set(deck[:10]) if role in REVIEW_ROLES else set()
        assert shown(t.served(role), deck) == expected, role


# A Pai Gow round to the shake: the banker at door 0, bets on doors 1 and 2, the stake and the
# head tiles out before the dice (Art. 5(3)).
PAIGOW_TO_SHAKE: tuple[tuple[str, dict[str, Any]], ...] = (
    ("open_table", {}),
    ("take_bank", {"player": "B", "seat": 0}),
    ("confirm_tile_shuffle", {"new_set": False}),
    ("place_bet", {"player": "P1", "seat": 1, "amount": 100}),
    ("place_bet", {"player": "P2", "seat": 2, "amount": 200}),
    ("place_stake", {"amount": 1000}),
    ("head_tiles_out", {}),
    ("shake_dice", {"player": "B"}),
)


@pytest.mark.article("15/90/M", "6(1)")
@pytest.mark.article("15/90/M", "6(2)")
@pytest.mark.article("15/90/M", "4")
def test_pai_gow_each_hand_is_open_from_its_own_opening_the_bankers_first() -> None:
    """Set face down, a hand's tiles are known to nobody (the system too); the croupier opens
    the banker's hand, then each door in turn: each is open to everyone from its own opening,
    in the state, the journal's page and a stream of records alike."""
    t = Table(PaiGowProcedure(hands=8))
    t.feed("device_identified", "device:dice_shaker", device="dice_shaker", approved=True)
    for action, payload in PAIGOW_TO_SHAKE:
        t.feed(action, **payload)
    t.feed("dice_landed", "device:dice_shaker", dice=[2, 2, 3, 3])
    tiles = [str(x) for x in paigow.TILE_SET]
    random.Random(5).shuffle(tiles)
    # Twelve tiles in play, each name once among them (a name shared by a pair would make a
    # face-down copy and an open one indistinguishable in a text search).
    hands: dict[int, list[str]] = {}
    pool = list(tiles)
    for seat in (0, 1, 2):
        group: list[str] = []
        for tile in pool:
            if tile not in group and all(tile not in h for h in hands.values()) and len(group) < 4:
                group.append(tile)
        hands[seat] = group
        pool = [x for x in pool if x not in group]
    in_play = {x for h in hands.values() for x in h}
    face_up = hands[1][0]  # Art. 4: dealt face up to door 1, it stays in its hand

    def setting(group: list[str]) -> dict[str, str]:
        front, back = paigow.set_hand(paigow.parse_tiles(" ".join(group)))
        return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}

    for seat in t.proc.deal_order():  # type: ignore[attr-defined]
        if seat == 1:
            t.feed("tile_face_up", seat=1, tile=face_up)
        t.feed("deal_hand", seat=seat)
    t.feed("set_hand", seat=1)
    t.feed("set_hand", seat=2)
    t.feed("set_banker")
    order = t.proc.opening_order()  # type: ignore[attr-defined]
    assert order[0] == 0  # the banker's hand first

    def check(opened: set[str]) -> None:
        for role in TABLE_ROLES:
            assert shown(t.served(role), in_play) == opened | {face_up}, (t.proc.phase, role)
        seen = Seen("paigow")
        streamed = json.dumps([seen.redact(record, "dealer") for record in t.records])
        assert shown(streamed, in_play) == opened | {face_up}

    # Set face down (Art. 6(1)): no tile of a hand is anywhere but the one dealt face up.
    check(set())
    opened: set[str] = set()
    for seat in order:
        t.feed("open_hand", seat=seat, **setting(hands[seat]))
        opened |= set(hands[seat])
        check(opened)
        view = redact_state(None, t.view(), "dealer")
        assert sorted(view["seats"][seat]["cards"]) == sorted(hands[seat])
    assert t.proc.phase == "OPENED"
    t.feed("settle_round")
    check(in_play)


def test_the_floor_applies_the_tables_rule() -> None:
    dealt = {"card": "Qh", "seat": 2, "index": 7, "face_up": False}
    for role in ("pit", "surveillance", "audit", "admin"):
        assert visible_payload(role, "card.dealt", dealt, False) == (
            {**dealt, "card": HIDDEN},
            True,
        )
        assert not sees_raw_lines(role, False)
    assert visible_payload("pit", "card.dealt", dealt, True)[1]
    for role in ("surveillance", "audit", "admin"):
        assert visible_payload(role, "card.dealt", dealt, True) == (dealt, False)
        assert sees_raw_lines(role, True)
    assert not sees_raw_lines("pit", True)
    face_up = {**dealt, "face_up": True}
    assert visible_payload("pit", "card.dealt", face_up, False) == (face_up, False)


def test_a_stream_learns_the_reveal_and_the_close_in_order() -> None:
    seen = Seen("thirteen")
    dealt = {"round": 4, "event": "card.dealt", "payload": {"card": "As", "seat": 0}}
    assert seen.redact(dealt, "supervisor")["payload"]["card"] == HIDDEN
    opened = {"round": 4, "event": "banker.opened", "payload": {"head": ["As", "Kd", "2c"]}}
    assert seen.redact(opened, "dealer")["payload"]["head"] == ["As", "Kd", "2c"]
    assert seen.show(dealt, "dealer")["payload"]["card"] == "As"
    entered = {"round": 4, "event": "arrangement.entered", "payload": {"seat": 1, "head": ["3c"]}}
    assert seen.redact(entered, "supervisor")["payload"]["head"] == [HIDDEN]
    seen.learn({"round": 5, "event": "round.started", "payload": {}})
    assert seen.show(entered, "supervisor")["payload"]["head"] == ["3c"]
    assert seen.show(entered, "dealer")["payload"]["head"] == [HIDDEN]
    assert redact_record(None, entered, "admin", round_closed=True) == entered


def test_tabled_status_counts_the_cards_face_down() -> None:
    t, deck = thirteen_dealt(face_up_at=5)
    who = {"actor": "lei.dealer", "role": "dealer"}
    text = format_status(redact_state(None, t.view(), "dealer"), [], who)
    assert shown(text, set(deck) - {deck[4]}) == set()
    assert "(13 face down)" in text and "(12 face down)" in text and deck[4] in text


@pytest.mark.article("51/89/M", "2(d)", "4", "7", "8", "9 I", "9 II", "10", "11")
def test_a_stream_of_a_thirteen_round_opens_each_card_as_its_record_passes() -> None:
    """The push feed learns what the game opens from the records alone, in their order (no
    state to read): a card dealt face up is open from its own record (Art. 4), the banker's
    hand from `banker.opened` (Art. 2(d)), a player's from `hand.opened` (Art. 8), and the
    rows entered of an open hand are shown with it (Art. 7); a hand nobody opened stays
    hidden to the table's audience, in every record. The settlement (Art. 7-11) closes the
    round: a page of its records is then whole to the review audience."""
    t, deck = thirteen_dealt(face_up_at=5)
    seat_cards = {s: set(t.proc.seat_cards(s)) for s in range(4)}  # type: ignore[attr-defined]
    t.feed("arrange_banker")
    t.feed("open_banker")
    t.feed("enter_arrangement", seat=0, **rows(t, 0))
    t.feed("player_arranged", seat=1)
    t.feed("player_arranged", seat=2)
    t.feed("open_hand", seat=1)
    t.feed("enter_arrangement", seat=1, **rows(t, 1))
    seen = Seen("thirteen")
    streamed = [(r["event"], r["payload"], seen.redact(r, "dealer")) for r in t.records]

    def shown_in(event: str, seat: int | None = None) -> set[str]:
        return shown(
            json.dumps([s for e, p, s in streamed if e == event and p.get("seat", seat) == seat]),
            deck,
        )

    face_up = deck[4]
    assert shown_in("card.dealt", next(s for s, c in seat_cards.items() if face_up in c)) == {
        face_up
    }
    assert shown_in("banker.opened") == seat_cards[0]
    assert shown_in("arrangement.entered", 0) == seat_cards[0]
    assert shown_in("hand.opened", 1) == seat_cards[1]
    assert shown_in("arrangement.entered", 1) == seat_cards[1]
    hidden = seat_cards[2] | seat_cards[3]
    assert shown(json.dumps([s for _, _, s in streamed]), hidden) == ({face_up} & hidden)
    review = json.dumps(redact_records("thirteen", t.records, "supervisor"))
    assert shown(review, hidden) == {face_up} & hidden  # the round is not settled yet
    t.feed("open_hand", seat=2)
    t.feed("enter_arrangement", seat=2, **rows(t, 2))
    t.feed("settle_round")
    dealt = set(deck)  # all 52 were read: seat 3's too, which nobody bet on
    assert shown(json.dumps(redact_records("thirteen", t.records, "supervisor")), deck) == dealt
    table_page = json.dumps(redact_records("thirteen", t.records, "dealer"))
    assert shown(table_page, deck) == dealt - seat_cards[3] | ({face_up} & seat_cards[3])


@pytest.mark.parametrize("role", ["dealer", "supervisor", "surveillance"])
def test_an_inputs_own_seat_never_shows_a_card(role: str) -> None:
    """A card read whose sender added `"seat": 1` (a device fact's fields are its own) went to
    seat 3: once seat 1's hand is open, the input line must not show the card as seat 1's
    (found by test_visibility_rule's walk in CI: Td served to the dealer)."""
    record = {
        "seq": 169, "round": 1, "event": "table.input",
        "payload": {"action": "card_read", "actor": "device:shoe_reader",
                    "payload": {"seat": 1, "card": "Td"}, "now": 1090.0},
    }  # fmt: skip
    opened = Revealed(seats={1})
    shown = redact_record("thirteen", record, role, round_closed=False, revealed=opened)
    assert "Td" not in json.dumps(shown)
    # The table's own event says where the card went: shown with seat 1 open only if seat 1's.
    dealt = {
        "seq": 170, "round": 1, "event": "card.dealt",
        "payload": {"round": 1, "actor": "device:shoe_reader", "card": "Td", "seat": 1,
                    "index": 35, "face_up": False},
    }  # fmt: skip
    assert "Td" in json.dumps(redact_record("thirteen", dealt, role, round_closed=False,
                                            revealed=opened))  # fmt: skip
