"""Redaction by the rule (issue 21): what each role is served of a round is decided by its
game's rule (face up, the phase's openings, the audience), for every event type both games
journal, never by a payload's shape.

A walk plays each game's real procedure as the runtime feeds it: a legal session, with hand
entries after misreads, cards dealt face up, corrections, proposals approved and rejected, voided
deals and rounds, HOLDs and TILTs, and noise (wrong roles, phases, payloads). After every input,
for each role (both audiences and an unknown role), it serves the state (`redact_state` of the
console's view), the journal queried so far (`redact_records`) and the push feed (a `Seen` fed
each record as it is written) exactly as the API does, and fails on any card served that its own
oracle says is face down. The oracle is the regulation read from the procedure's state, written
apart from the redaction: a card is face down unless dealt face up (Art. 4), in the banker's
hand once opened (Art. 2(d)), or in a seat the settlement compared (Art. 7-11); the review
audience sees a closed round whole. Pai Gow's tiles enter the system face up (Art. 6(2)), so its
walk proves the same routes serve no tile of a hand before its own opening.

Hypothesis explores the walk (`test_no_face_down_card_is_served_on_any_route`); a fixed set of
seeded walks proves it reaches every event type each game's procedure declares.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_visibility import shown

from daemon.procedures.base import Input, Procedure
from daemon.procedures.diagram import procedure_of
from daemon.procedures.events import CHECKPOINT_EVENT, INPUT_EVENT
from daemon.procedures.games import GAMES
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import BANKER_SEAT, ThirteenProcedure
from daemon.procedures.visibility import REVIEW, Seen, audience, redact_records, redact_state
from daemon.rules.cards import DECK
from daemon.table.common import RuntimePhases
from daemon.table.publish.views import console_snapshot
from daemon.table.recovery import checkpoint_payload
from tests.procedures.procedure_drive import (
    arrangement,
    bad_setting,
    good_setting,
    paigow_betting,
    paigow_deal,
    paigow_open,
    paigow_round,
    paigow_set,
    paigow_table,
    shuffled_deck,
    tile_groups,
)

T = TypeVar("T")
WALL = 1_796_000_000.0
ROLES = ("dealer", "supervisor", "someone")  # the table audience, review, a role not known
CARDS = [str(c) for c in DECK]
S1, S2, DEALER = "supervisor:S1", "supervisor:S2", "dealer:D1"
FAULTS = ("door_opened", "fault_reported", "link_lost")
DICE = ([1, 2, 3, 4], [6, 6, 5, 1], [2, 2, 2, 3])
BETS = (
    {"player": "P1", "seat": 1, "amount": 300, "units": 3, "seated": True},
    {"player": "P2", "seat": 1, "amount": 100, "units": 1, "seated": True},
    {"player": "P3", "seat": 2, "amount": 200, "units": 2, "seated": True},
)


@dataclass
class Chooser:
    """Where the walk's choices come from: hypothesis's data, or a seeded generator."""

    pick: Callable[[Sequence[Any]], Any]

    def one(self, options: Sequence[T]) -> T:
        result: T = self.pick(options)
        return result

    def chance(self, tenths: int) -> bool:
        return bool(self.pick(range(10)) < tenths)


def _paigow_hands(seed: int) -> int:
    return 4 if seed % 2 else 8  # Art. 2(4): four hands, the first half's tiles shown after


def _paigow_script(seed: int) -> list[Input]:
    """A legal Pai Gow session of two rounds, as the procedure drivers play it, the second with
    a hand wrongly set and re-set (Art. 6(2)), then the bank passed on (a Thirteen walk plays
    from where its round stands: `Walk._thirteen_next`)."""
    table = paigow_table(hands=_paigow_hands(seed))
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    paigow_round(table, seed=seed)
    table.ok("next_round", DEALER)
    if proc.phase == "SHUFFLE":
        table.ok("confirm_tile_shuffle", DEALER, {"new_set": False})
    paigow_betting(table, max(proc.snapshot()["min_stake"], 1))
    table.ok("head_tiles_out", DEALER)
    table.ok("shake_dice", DEALER, {"player": "B"})
    invalid = {"dice": [1, 2, 3, 4], "valid": False, "reason": "a die tilted"}
    table.ok("dice_landed", "device:dice_shaker", invalid)  # shaken again (house rule H3)
    table.ok("dice_landed", "device:dice_shaker", {"dice": [2, 2, 3, 3]})
    paigow_deal(table)
    paigow_set(table)
    groups = tile_groups(seed + 1)
    if proc.hands == 4:  # the second half of the set: the tiles the first round left
        left = Counter(t for g in groups for t in g) - Counter(proc.used_tiles)
        rest = sorted(left.elements())
        random.Random(seed).shuffle(rest)
        groups = [rest[i : i + 4] for i in range(0, len(rest), 4)]
    wrong = {
        s: bad
        for s in proc.opening_order()
        if s != proc.banker_seat and (bad := bad_setting(groups[s])) is not None
    }
    seat = next(iter(wrong), None)
    paigow_open(table, dict(enumerate(groups)), {} if seat is None else {seat: wrong[seat]})
    if seat is not None:
        table.ok("reset_hand", DEALER, {"seat": seat, **good_setting(groups[seat])})
    table.ok("settle_round", DEALER)
    if seed % 3 == 0:  # every guest agrees: the bank plays a third round (Art. 5(1))
        players = sorted({str(b["player"]) for b in proc.bets})
        table.ok("extend_bank", DEALER, {"consents": players})
    table.ok("next_round", DEALER)  # else the bank's two rounds are played: it passes on
    if proc.phase == "BANK_OFFER":
        table.ok("decline_bank", DEALER, {"player": "P1"})
    return list(table.inputs)


@dataclass
class Oracle:
    """Each deal's face-down cards as the rule says, read from the procedure's state: by round
    and deal (a voided deal's cards go back into the deck and are dealt again)."""

    secret: dict[tuple[int, int], set[str]] = field(default_factory=dict)  # the table's
    closed: set[int] = field(default_factory=set)

    def observe(self, proc: Procedure, closing: bool) -> None:
        if closing:
            self.closed.add(proc.round_id)
        if not isinstance(proc, ThirteenProcedure):
            return  # Pai Gow: a tile enters the system face up (its hand's opening, Art. 6(2))
        open_seats: set[int] = {BANKER_SEAT} if proc.banker_opened else set()
        open_seats |= set(proc.opened_hands)  # Art. 8: a hand opened against the banker's
        for entry in proc.settlement or []:
            if isinstance(entry, dict) and not entry.get("late"):
                open_seats.add(entry["seat"])
        opened = {
            d["card"] for d in proc.dealt if d["seat"] in open_seats or d.get("face_up") is True
        }
        hidden = {d["card"] for d in proc.dealt}
        # A voided deal's cards went back unseen (those that lay face up aside).
        hidden |= {d["card"] for deal in proc.voided_deals for d in deal if not d.get("face_up")}
        pending = proc.override or {}
        if isinstance(pending.get("card"), str) and pending.get("seat") not in open_seats:
            hidden.add(pending["card"])  # a card proposed for entry by hand: face down
        # What this deal has opened is open, wherever else the card was before.
        self.secret[(proc.round_id, len(proc.voided_deals))] = hidden - opened

    def forbidden(self, deal: tuple[int, int], role: str, closed_now: bool) -> set[str]:
        if audience(role) == REVIEW and (deal[0] in self.closed or closed_now):
            return set()
        return self.secret.get(deal, set())


class Walk:
    """A procedure fed as the runtime feeds it, its journal records, and what each role was
    pushed so far."""

    def __init__(self, game: str, choose: Chooser, seed: int) -> None:
        self.game = game
        self.proc: Procedure = (
            PaiGowProcedure(hands=_paigow_hands(seed)) if game == "paigow" else procedure_of(game)()
        )
        self.choose = choose
        self.seed = seed
        self.legal = _paigow_script(seed) if game == "paigow" else []
        self.position = 0
        self.now = 1000.0
        self.records: list[dict[str, Any]] = []
        self.feeds = {role: Seen(game) for role in ROLES}
        self.pushed: dict[str, list[dict[str, Any]]] = {role: [] for role in ROLES}
        self.oracle = Oracle()
        self.phases = RuntimePhases.of(self.proc)
        self.inputs = 0
        self.events: set[str] = set()
        self.deal_of: dict[int, tuple[int, int]] = {}  # a record's seq: its (round, deal)
        self.voided: dict[int, int] = {}  # deals voided so far, by round
        # (route, role, seq): the text last checked and the values it was found free of.
        self.checked: dict[tuple[str, str, int], tuple[str, frozenset[str]]] = {}

    # ---- feeding -------------------------------------------------------------------------------

    def feed(self, action: str, actor: str, payload: dict[str, Any]) -> bool:
        self.now += 1.0
        before = self.proc.state
        outcome = self.proc.handle(action, actor, payload, self.now)
        round_id = self.proc.round_id
        lines: list[tuple[str, Any, dict[str, Any]]] = []
        if outcome.accepted:
            replay = Input(action, actor, payload, self.now).as_payload()
            lines.append((INPUT_EVENT, round_id, replay))
        lines += [
            (e.name, e.payload.get("round", round_id), dict(e.payload)) for e in outcome.events
        ]
        if outcome.accepted:
            self.inputs += 1
            checkpoints = self.phases.checkpoint
            if self.proc.state in checkpoints and before not in checkpoints:
                lines.append(
                    (
                        CHECKPOINT_EVENT,
                        round_id,
                        checkpoint_payload(self.proc, self.inputs, self.now),
                    )
                )
        closing = any(GAMES[self.game].events[name].closes_round for name, _, _ in lines)
        self.oracle.observe(self.proc, closing)
        for name, rnd, body in lines:
            record = {"seq": len(self.records) + 1, "round": rnd, "event": name, "payload": body}
            self.records.append(json.loads(json.dumps(record)))  # as the journal holds it
            if isinstance(rnd, int):
                self.deal_of[record["seq"]] = (rnd, self.voided.get(rnd, 0))
                self.voided[rnd] = self.voided.get(rnd, 0) + (name == "deal.voided")
            self.events.add(name)
            for role in ROLES:
                self.pushed[role].append(self.feeds[role].redact(self.records[-1], role))
        return outcome.accepted

    def step(self) -> None:
        held = self.proc.phase in ("HOLD", "TILT")
        # Held, the walk mostly clears (or voids); else it mostly plays the script.
        kinds = ("extra",) * 8 + ("noise",) if held else ("script",) * 12 + ("extra",) * 3
        kind = self.choose.one((*kinds, "noise"))
        if kind == "script" and isinstance(self.proc, ThirteenProcedure):
            move = self._thirteen_next(self.proc)
            if move is not None:
                self.feed(*move)
        elif kind == "script" and self.position < len(self.legal):
            item = self.legal[self.position]
            payload = dict(item.payload)
            if item.action == "card_read" and self.choose.chance(1):
                payload["face_up"] = True  # Art. 4: dealt face up, valid and open
            # A step the round has gone past (a card entered by hand, a void) is skipped.
            self.position += self.feed(item.action, item.actor, payload) or not held
        elif kind in ("script", "extra"):
            options = self.extras()
            if options:
                self.feed(*self.choose.one(options))
        else:
            self.feed(*self.noise())

    def noise(self) -> tuple[str, str, dict[str, Any]]:
        action = self.choose.one([*GAMES[self.game].actions, "bogus"])
        actor = self.choose.one([DEALER, S1, "device:shoe_reader", "device:dice_shaker", "x"])
        card = self.choose.one(CARDS)
        payload = self.choose.one([{}, {"card": card}, {"seat": 1, "card": card}, {"reason": card}])
        return action, actor, payload

    def _undealt(self, proc: ThirteenProcedure) -> str:
        """The card the shoe would draw next in this deal."""
        dealt = {d["card"] for d in proc.dealt}
        deck = shuffled_deck(self.seed * 1000 + proc.round_id * 10 + len(proc.voided_deals))
        return next(c for c in deck if c not in dealt)

    def extras(self) -> list[tuple[str, str, dict[str, Any]]]:
        """The steps beside the script the walk may take now: faults and their clearing, two-
        person steps, and each game's own (hand entries, corrections, face-up tiles)."""
        proc, phase = self.proc, self.proc.phase
        out: list[tuple[str, str, dict[str, Any]]] = []
        reason = {"reason": "seen on camera"}
        if phase in ("HOLD", "TILT"):
            out += [("device_healthy", f"device:{d}", {"device": d}) for d in proc.faults] * 3
            out += [("clear_hold" if phase == "HOLD" else "clear_tilt", S1, reason)] * 3
            out += [("recovered", "system", {})]
            if self.choose.chance(3):
                out += [("void_round", S1, reason)]
        elif self.choose.chance(2):
            device = self.choose.one(["shoe_reader", "dice_shaker", "shuffler"])
            fault = self.choose.one(FAULTS)
            out += [(fault, f"device:{device}", {"device": device, "fault": "jam"})]
            out += [("hold_table", S1, reason)]
        if proc.override is not None:
            out += [("approve_override", S2, reason), ("reject_override", S2, reason)]
        if phase == "SHAKING":
            invalid = {"dice": [1, 2, 3, 4], "valid": False, "reason": "tilted"}
            out += [("dice_landed", "device:dice_shaker", invalid)] * 8
        bets = list(getattr(proc, "bets", []))
        if phase == "BETTING" and bets:
            bet = self.choose.one(bets)
            out += [("withdraw_bet", DEALER, {"player": bet["player"], "seat": bet["seat"]})]
            target = (bet["seat"] % 3) + 1
            move = {"player": bet["player"], "from_seat": bet["seat"], "to_seat": target}
            out += [("move_bet", DEALER, move)]
        if isinstance(proc, ThirteenProcedure):
            out += self._thirteen(proc, phase, reason)
        elif isinstance(proc, PaiGowProcedure):
            out += self._paigow(proc, phase)
        return out

    def _thirteen_next(self, proc: ThirteenProcedure) -> tuple[str, str, dict[str, Any]] | None:
        """The next step of a legal Thirteen round from where the round stands (after a hand
        entry, a voided deal, a HOLD cleared): what the dealer and the devices would do."""
        phase = proc.phase
        if phase == "EQUIPMENT_CHECK":
            for name in proc.devices:
                if name not in proc.identified:
                    return "device_identified", f"device:{name}", {"device": name, "approved": True}
            return "open_table", DEALER, {}
        cut = {"by": "player", "player": "P1", "cards": 20, "one_hand": True}
        simple = {
            "HAND_SHUFFLE": ("confirm_hand_shuffle", DEALER, {}),
            "MACHINE_SHUFFLE": (
                "shuffle_completed",
                "device:shuffler",
                {"count": 52, "mode": "random"},
            ),
            "CUT": ("confirm_cut", DEALER, cut),
            "SHOE_LOADING": ("load_shoe", DEALER, {}),
            "SHAKING": ("dice_landed", "device:dice_shaker", {"dice": self.choose.one(DICE)}),
            "BANKER_ARRANGED": ("open_banker", DEALER, {}),
            "ROUND_OVER": ("start_round", DEALER, {}),
        }
        if phase in simple:
            return simple[phase]
        if phase == "BETTING":
            if len(proc.bets) < len(BETS):
                return "place_bet", DEALER, BETS[len(proc.bets)]
            return "shake_dice", DEALER, {"player": "P1"}
        if phase == "DEALING" and proc.override is not None:
            return "approve_override", S2, {"reason": "seen on camera"}
        if phase == "DEALING" and proc.misread is not None:
            return "propose_card", DEALER, {"card": self._undealt(proc)}
        if phase == "DEALING":
            return "card_read", "device:shoe_reader", {"card": self._undealt(proc)}
        if phase == "BANKER_ARRANGING":
            return "arrange_banker", DEALER, {}  # Art. 2(d): said, the hand face down
        if phase == "PLAYERS_ARRANGING" and BANKER_SEAT not in proc.arrangements:
            rows = arrangement(proc.seat_cards(BANKER_SEAT))  # the banker's hand lies open
            return "enter_arrangement", DEALER, {"seat": BANKER_SEAT, **rows}
        if phase == "PLAYERS_ARRANGING":
            waiting = [s for s in proc.played_seats() if s not in proc.arranged]
            if waiting and not self.choose.chance(3):
                return "player_arranged", DEALER, {"seat": waiting[0]}
            self.now += 300.0  # the five minutes run out
            return "timer_expired", "system", {}
        if phase == "SETTLING":
            for seat in proc.played_seats():
                if seat in proc.late or seat == BANKER_SEAT:
                    continue
                if seat not in proc.opened_hands:
                    return "open_hand", DEALER, {"seat": seat}  # Art. 8: face up to all
                if seat not in proc.arrangements:
                    rows = arrangement(proc.seat_cards(seat))
                    return "enter_arrangement", DEALER, {"seat": seat, **rows}
            return "settle_round", DEALER, {}
        return None

    def _thirteen(
        self, proc: ThirteenProcedure, phase: str, reason: dict[str, str]
    ) -> list[tuple[str, str, dict[str, Any]]]:
        out: list[tuple[str, str, dict[str, Any]]] = []
        if phase == "DEALING":
            out += [("card_read", "device:shoe_reader", {"misread": True})]
            # A card the shoe reads out of the deck's order (a card dealt twice: a misdeal).
            if self.choose.chance(1):
                out += [("card_read", "device:shoe_reader", {"card": self.choose.one(CARDS)})]
            if proc.misread is not None and proc.override is None:
                out += [("propose_card", DEALER, {"card": self._undealt(proc)})] * 3
            if proc.dealt:
                card = self.choose.one(proc.dealt)["card"]
                out += [("correct_misdeal", DEALER, {"cards": [card]})]
        if phase in ("DEALING", "BANKER_ARRANGING", "BANKER_ARRANGED"):
            out += [("void_deal", S1, reason)]
        if phase == "PLAYERS_ARRANGING" and proc.bets:
            bet = self.choose.one(proc.bets)
            seat = bet["seat"]
            advisers = [b["player"] for b in proc.bets if b["seat"] == seat]
            advisers = [p for p in advisers if p != proc.holder(seat)] or ["P9"]
            out += [("advise_holder", DEALER, {"player": advisers[0], "seat": seat})] * 3
            what = self.choose.one(["left_table", "other_seat"])
            out += [
                ("cards_away", DEALER, {"player": bet["player"], "seat": seat, "what": what})
            ] * 3
        if phase == "SETTLING" and proc.arrangements:
            # A placed open hand corrected by two supervisors: its rows the other way round.
            seat = self.choose.one(sorted(proc.arrangements))
            rows = proc.arrangements[seat]
            swapped = {"head": rows["head"], "middle": rows["tail"], "tail": rows["middle"]}
            out += [("correct_arrangement", S1, {"seat": seat, **swapped, **reason})] * 2
        return out

    def _paigow(self, proc: PaiGowProcedure, phase: str) -> list[tuple[str, str, dict[str, Any]]]:
        out: list[tuple[str, str, dict[str, Any]]] = []
        if phase == "DEALING" and len(proc.dealt) < len(proc.deal_order()):
            seat = proc.deal_order()[len(proc.dealt)]
            tile = self.choose.one(tile_groups(0)[0])
            out += [("tile_face_up", DEALER, {"seat": seat, "tile": tile})]
        if phase == "BANK_OFFER":
            out += [("decline_bank", DEALER, {"player": "P7"})]
            out += [("take_bank", DEALER, {"player": "B2", "seat": 0})]
        if phase == "BETTING":
            out += [("co_bank", DEALER, {"player": "C1", "amount": 100})]
        if phase == "ROUND_OVER" and proc.bank_rounds >= proc.bank_limit:
            players = sorted({str(b["player"]) for b in proc.bets})
            out += [("extend_bank", DEALER, {"consents": players})] * 8
        return out

    # ---- serving ------------------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        raw = self.proc.snapshot()
        view = console_snapshot(raw, now=self.now, wall_now=WALL)
        if raw.get("dealt") is not None:  # as the table's facade adds it
            view["shoe"] = [d["card"] for d in raw["dealt"]]
        return view

    def check_state(self) -> None:
        view = self.view()
        deal = (self.proc.round_id, len(getattr(self.proc, "voided_deals", ())))
        for role in ROLES:
            body = json.dumps(redact_state(self.game, view, role), ensure_ascii=False)
            leaked = shown(body, self.oracle.forbidden(deal, role, False))
            assert not leaked, (role, "state", self.proc.phase, leaked)

    def check_records(self, served: Iterable[dict[str, Any]], role: str, route: str) -> None:
        latest = self.proc.round_id
        for record in served:
            deal = self.deal_of.get(record["seq"])
            if deal is None:
                continue  # a line of no round (none is written by a procedure)
            forbidden = self.oracle.forbidden(deal, role, deal[0] < latest)
            key = (route, role, record["seq"])
            before = self.checked.get(key)
            # A pushed record never changes once sent: its text is written once. The journal's
            # is served anew each time, from the view of the moment.
            same = route == "push" and before is not None
            body = before[0] if same and before else json.dumps(record, ensure_ascii=False)
            if before is not None and before[0] == body and forbidden <= before[1]:
                continue  # this very text was found free of each of these values already
            leaked = shown(body, forbidden)
            assert not leaked, (role, route, record["event"], leaked)
            self.checked[key] = (body, frozenset(forbidden))

    def check_journal(self) -> None:
        view = self.view()
        for role in ROLES:
            self.check_records(redact_records(self.game, self.records, role, view), role, "journal")
            self.check_records(self.pushed[role], role, "push")


def walk(game: str, choose: Chooser, seed: int, steps: int, state_every: int = 1) -> Walk:
    """`steps` inputs, the state checked after every `state_every`th, the journal's pages and
    the push feed every 25th and at the end."""
    table = Walk(game, choose, seed)
    for number in range(steps):
        table.step()
        if number % state_every == 0:
            table.check_state()
        if number % 25 == 24:
            table.check_journal()
    table.check_journal()
    return table


@pytest.mark.parametrize("game", sorted(GAMES))
@settings(max_examples=20)  # each example plays up to 160 inputs, every route checked at each
@given(data=st.data())
def test_no_face_down_card_is_served_on_any_route(game: str, data: st.DataObject) -> None:
    choose = Chooser(lambda options: data.draw(st.sampled_from(list(options))))
    seed = data.draw(st.integers(0, 50), label="deck")
    walk(game, choose, seed, data.draw(st.integers(20, 160), label="steps"))


# The procedure events no walk reaches, each with why.
UNREACHED: dict[str, set[str]] = {
    # Only a table without a banker (003 way 3, ruleset hk-four) starts the five minutes at the
    # deal; its redaction is the same rule's (tests/procedures/test_thirteen_ways.py plays it).
    "thirteen": {"timer.started"},
    "paigow": set(),
}
# A device replaced by another unit of its build needs a device on the line that the walk does
# not simulate (tests/table and tests/procedures play it); its line carries no card.
for _unreached in UNREACHED.values():
    _unreached.add("device.replaced")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_walks_reach_every_event_type_the_game_declares(game: str) -> None:
    reached: set[str] = set()
    hand_entered = 0
    for seed in range(10):
        rng = random.Random(seed)
        choose = Chooser(lambda options, r=rng: r.choice(list(options)))
        table = walk(game, choose, seed, 300, state_every=4)  # the search checks every step
        reached |= table.events
        hand_entered += sum(
            1 for r in table.records if r["event"] == "card.dealt" and "entered" in r["payload"]
        )
    declared = {n for n, e in GAMES[game].events.items() if e.by == "procedure"}
    assert declared - reached <= UNREACHED[game], sorted(declared - reached)
    assert {INPUT_EVENT, CHECKPOINT_EVENT} <= reached
    if game == "thirteen":
        assert hand_entered >= 3  # the case, walked through every route
