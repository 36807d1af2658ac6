"""What each role is served of the cards and tiles, phase by phase, for both games: the real
procedures feed the console's view and the journal's records, and every role's share of them
(`daemon.procedures.visibility`) is searched for every card still face down. The same rule
served by the real API, its push feed and the floor is in test_visibility_api.py and
tests/floor; the table of it is docs/visibility.md."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from typing import Any

import pytest

from daemon.api.views import console_snapshot
from daemon.client import format_status
from daemon.floor.redact import sees_raw_lines, visible_payload
from daemon.procedures.base import Procedure
from daemon.procedures.paigow import PaiGowProcedure
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

WALL = 1_796_000_000.0
TABLE_ROLES = ("dealer", "supervisor", "surveillance", "admin", "trainer", "someone")
REVIEW_ROLES = ("supervisor", "surveillance", "admin")


def shown(body: str, values: Iterable[str]) -> set[str]:
    """The values (card or tile names) written anywhere in `body` as a whole token."""
    return {v for v in values if re.search(rf"(?<![0-9A-Za-z]){re.escape(v)}(?![0-9A-Za-z])", body)}


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


def thirteen_dealt(face_up_at: int = 5) -> tuple[Table, list[str]]:
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
    for index, card in enumerate(deck, start=1):
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
    t.feed("arrange_banker", **rows(t, 0))
    check(set(deck) - {face_up})
    # The banker opens: its 13 cards are open to everyone, where they were dealt too.
    t.feed("open_banker")
    hidden = set(deck) - seat_cards[0] - {face_up}
    check(hidden)
    # A player's arrangement is entered: it stays closed until the settlement.
    t.feed("enter_arrangement", seat=1, **rows(t, 1))
    check(hidden)
    # Seat 2 is late at the bell: its cards are never opened; seat 3 had no bet.
    t.now += 400
    t.feed("timer_expired", "system")
    t.feed("settle_round")
    hidden = (seat_cards[2] | seat_cards[3]) - {face_up}
    check(hidden, whole_to_review=True)
    # The next round: the closed one stays whole to review, opened-only to the others.
    t.feed("start_round")
    check(hidden, whole_to_review=True)


def test_a_card_named_in_a_fault_is_named_to_nobody() -> None:
    t, deck = thirteen_dealt(face_up_at=0)
    t.feed("void_deal", "supervisor:S1", reason="misdeal that cannot be put right")
    t.feed("confirm_hand_shuffle")
    t.feed("shuffle_completed", "device:shuffler", count=52, mode="random")
    t.feed("confirm_cut", by="player", player="P1", cards=20, one_hand=True)
    t.feed("load_shoe")
    for card in deck[:10]:
        t.feed("card_read", "device:shoe_reader", card=card)
    t.feed("card_read", "device:shoe_reader", card=deck[3])  # the reader reads one twice
    assert t.proc.phase == "TILT"
    assert deck[3] in json.dumps(t.view()["faults"])
    for role in TABLE_ROLES:
        body = t.served(role)
        assert shown(body, deck) == set(), role
        assert "duplicate card hidden" in body


def test_a_voided_deal_stays_face_down_and_a_voided_round_is_whole_to_review() -> None:
    t, deck = thirteen_dealt(face_up_at=0)
    t.feed("void_deal", "supervisor:S1", reason="misdeal that cannot be put right")
    for role in TABLE_ROLES:
        assert shown(t.served(role), deck) == set(), role
    t.feed("door_opened", "device:shoe_reader", device="shoe_reader", fault="shoe removed")
    t.feed("device_healthy", "device:shoe_reader", device="shoe_reader")
    t.feed("void_round", "supervisor:S1", reason="voided")
    for role in TABLE_ROLES:
        expected = set(deck) if role in REVIEW_ROLES else set()
        assert shown(t.served(role), deck) == expected, role


@pytest.mark.article("15/90/M", "6(1)")
@pytest.mark.article("15/90/M", "6(2)")
@pytest.mark.article("15/90/M", "4")
def test_pai_gow_hands_set_stay_face_down_until_the_croupier_opens_them() -> None:
    t = Table(PaiGowProcedure(hands=8))
    t.feed("device_identified", "device:dice_shaker", device="dice_shaker", approved=True)
    t.feed("open_table")
    t.feed("take_bank", player="B", seat=0)
    t.feed("confirm_tile_shuffle", new_set=False)
    t.feed("place_bet", player="P1", seat=1, amount=100)
    t.feed("place_bet", player="P2", seat=2, amount=50)
    t.feed("place_stake", amount=1000)
    t.feed("shake_dice", player="B")
    t.feed("dice_landed", "device:dice_shaker", dice=[2, 2, 3, 3])
    tiles = [str(x) for x in paigow.TILE_SET]
    random.Random(5).shuffle(tiles)
    # Twelve tiles in play, each name once among them (a name shared by a pair would make a
    # face-down copy and an open one indistinguishable in a text search).
    hands: list[list[str]] = []
    pool = list(tiles)
    while len(hands) < 3:
        group = []
        for tile in pool:
            if tile not in group and all(tile not in h for h in hands) and len(group) < 4:
                group.append(tile)
        hands.append(group)
        pool = [x for x in pool if x not in group]
    in_play = {x for h in hands for x in h}
    face_up = next(x for x in pool if x not in in_play)

    def setting(group: list[str]) -> dict[str, str]:
        front, back = paigow.set_hand(paigow.parse_tiles(" ".join(group)))
        return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}

    t.feed("tile_face_up", seat=5, tile=face_up)  # Art. 4: open at once
    t.feed("confirm_deal")
    t.feed("set_hand", seat=1, **setting(hands[1]))
    t.feed("set_hand", seat=2, **setting(hands[2]))
    t.feed("set_banker", **setting(hands[0]))
    for role in TABLE_ROLES:
        body = t.served(role)
        assert shown(body, in_play) == set(), role
        assert face_up in body, role
    view = redact_state(None, t.view(), "dealer")
    assert view["seats"][1]["cards"] == [HIDDEN] * 4
    t.feed("open_hands")
    for role in TABLE_ROLES:
        assert shown(t.served(role), in_play) == in_play, role


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
