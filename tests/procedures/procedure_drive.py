"""Drivers that play whole legal rounds through a procedure and record every input fed.

The rounds are built from the procedure's own state (the cards it dealt to each seat, the seat
it names first), so they stay legal whatever the rules engine decides, and the recorded inputs
are exactly what a journal would hold for replay.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from daemon.procedures.base import Input, Outcome, Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.paigow.visibility import TILE_PATTERN
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.procedures.thirteen.visibility import CARD_PATTERN
from daemon.rules import paigow
from daemon.rules.cards import DECK

# A card or tile as the redaction finds it in free text (daemon/procedures/visibility.py).
NAMED = re.compile(f"{CARD_PATTERN}|{TILE_PATTERN}")
CJK = re.compile("[\u3400-\u9fff]")


def said_in_both(reason: str, zh: str) -> None:
    """Issue 23: a refusal is said in Chinese too, and names no card or tile the English does
    not, each where the redaction finds it (so a hidden one is blotted out in both)."""
    assert CJK.search(zh), (reason, zh)
    assert sorted(NAMED.findall(zh)) == sorted(NAMED.findall(reason)), (reason, zh)


DEALER = "dealer:D1"
SUPERVISOR = "supervisor:S1"
SYSTEM = "system"


def device(name: str) -> str:
    return f"device:{name}"


@dataclass
class Table:
    """A procedure, a clock that advances one second an input, and the inputs fed so far."""

    proc: Procedure
    now: float = 1000.0
    inputs: list[Input] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)

    def feed(self, action: str, actor: str, payload: dict[str, Any] | None = None) -> Outcome:
        payload = payload or {}
        self.now += 1.0
        outcome = self.proc.handle(action, actor, payload, self.now)
        self.inputs.append(Input(action, actor, payload, self.now))
        self.outcomes.append(outcome)
        return outcome

    def ok(self, action: str, actor: str, payload: dict[str, Any] | None = None) -> Outcome:
        outcome = self.feed(action, actor, payload)
        assert outcome.accepted, outcome.violation
        return outcome

    def refused(self, action: str, actor: str, payload: dict[str, Any] | None = None) -> Outcome:
        before = self.proc.snapshot()
        outcome = self.feed(action, actor, payload)
        assert not outcome.accepted, f"{action} was accepted in {before['phase']}"
        assert outcome.violation is not None
        assert outcome.violation.article
        assert [e.name for e in outcome.events] == ["table.violation"]
        assert self.proc.snapshot() == before
        said_in_both(outcome.violation.reason, outcome.violation.reason_zh)
        return outcome


# ---- Thirteen ---------------------------------------------------------------------------------


def identify(table: Table, devices: tuple[str, ...]) -> None:
    for name in devices:
        table.ok("device_identified", device(name), {"device": name, "approved": True})


def thirteen_to_betting(table: Table) -> None:
    table.ok("confirm_hand_shuffle", DEALER)
    table.ok("shuffle_completed", device("shuffler"), {"count": 52, "mode": "random"})
    table.ok("confirm_cut", DEALER, {"by": "player", "player": "P1", "cards": 20, "one_hand": True})
    table.ok("load_shoe", DEALER)


def thirteen_bets(table: Table) -> None:
    table.ok(
        "place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 300, "units": 3, "seated": True}
    )
    table.ok(
        "place_bet", DEALER, {"player": "P2", "seat": 1, "amount": 100, "units": 1, "seated": True}
    )
    table.ok(
        "place_bet", DEALER, {"player": "P3", "seat": 2, "amount": 200, "units": 2, "seated": True}
    )


def arrangement(cards: list[str]) -> dict[str, Any]:
    return {"head": cards[:3], "middle": cards[3:8], "tail": cards[8:13]}


def thirteen_deal(table: Table, deck: list[str]) -> None:
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4], "valid": True})
    for card in deck:
        table.ok("card_read", device("shoe_reader"), {"card": card})


def thirteen_round(table: Table, deck: list[str], late: bool = False) -> None:
    """From HAND_SHUFFLE to ROUND_OVER."""
    assert isinstance(table.proc, ThirteenProcedure)
    thirteen_to_betting(table)
    thirteen_bets(table)
    thirteen_deal(table, deck)
    table.ok("arrange_banker", DEALER)
    table.ok("arrange_banker", DEALER)  # Art. 2(d): again, until the players take their cards
    table.ok("open_banker", DEALER)
    table.ok("enter_arrangement", DEALER, {"seat": 0, **arrangement(table.proc.seat_cards(0))})
    table.ok("player_arranged", DEALER, {"seat": 1})
    if late:
        table.now += 300.0
        table.ok("timer_expired", SYSTEM)
    else:
        table.ok("player_arranged", DEALER, {"seat": 2})
    for seat in (1, 2) if not late else (1,):
        table.ok("open_hand", DEALER, {"seat": seat})
        placed = arrangement(table.proc.seat_cards(seat))
        table.ok("enter_arrangement", DEALER, {"seat": seat, **placed})
    table.ok("settle_round", DEALER)


def shuffled_deck(seed: int) -> list[str]:
    deck = [str(c) for c in DECK]
    random.Random(seed).shuffle(deck)
    return deck


def thirteen_table(**kwargs: Any) -> Table:
    table = Table(ThirteenProcedure(**kwargs))
    identify(table, ("shuffler", "shoe_reader", "dice_shaker", "timer_bell"))
    table.ok("open_table", DEALER)
    return table


# ---- Pai Gow ----------------------------------------------------------------------------------


def tile_groups(seed: int) -> list[list[str]]:
    tiles = [str(t) for t in paigow.TILE_SET]
    random.Random(seed).shuffle(tiles)
    return [tiles[i : i + 4] for i in range(0, 32, 4)]


def good_setting(tiles4: list[str]) -> dict[str, str]:
    front, back = paigow.set_hand(paigow.parse_tiles(" ".join(tiles4)))
    return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}


def bad_setting(tiles4: list[str]) -> dict[str, str] | None:
    """A setting the croupier must re-set (Art. 6(2)), if these four tiles allow one."""
    tiles = paigow.parse_tiles(" ".join(tiles4))
    a, b, c, d = tiles
    for front, back in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
        for hand in ((front, back), (back, front)):
            if paigow.correct_setting(hand).correction == "back_not_largest":
                return {"front": " ".join(map(str, hand[0])), "back": " ".join(map(str, hand[1]))}
    return None


def paigow_table(hands: int = 8, ruleset: str = "macau-1990") -> Table:
    table = Table(PaiGowProcedure(hands=hands, ruleset=ruleset))
    identify(table, ("dice_shaker",))
    table.ok("open_table", DEALER)
    return table


def paigow_betting(table: Table, stake: int = 1000, banker: str = "B") -> None:
    """In BETTING: stacks moved, two bets on the two doors after the banker's, the stake."""
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    seat = proc.banker_seat or 0
    table.ok("move_stacks", DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.ok("move_stacks", DEALER, {"by": "banker", "player": banker, "one_hand": True})
    first, second = (seat + 1) % proc.hands, (seat + 2) % proc.hands
    table.ok("place_bet", DEALER, {"player": "P1", "seat": first, "amount": 100})
    table.ok("place_bet", DEALER, {"player": "P2", "seat": second, "amount": 50})
    table.ok("place_stake", DEALER, {"amount": stake})


def paigow_shake(table: Table, dice: list[int] | None = None, banker: str = "B") -> None:
    """The head tiles out, the banker's shake and the dice (Art. 5(3), 2(2))."""
    table.ok("head_tiles_out", DEALER)
    table.ok("shake_dice", DEALER, {"player": banker})
    table.ok("dice_landed", device("dice_shaker"), {"dice": dice or [2, 2, 3, 3]})


def paigow_deal(table: Table) -> None:
    """Four tiles to every door, counter-clockwise from the one the dice name (Art. 2(3))."""
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    for seat in proc.deal_order()[len(proc.dealt) :]:
        table.ok("deal_hand", DEALER, {"seat": seat})


def paigow_set(table: Table) -> None:
    """Every played door sets face down, then the banker (Art. 6(1))."""
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    for seat in proc.played_seats():
        table.ok("set_hand", DEALER, {"seat": seat})
    table.ok("set_banker", DEALER)


def paigow_open(
    table: Table, hands: dict[int, list[str]], settings: dict[int, dict[str, str]] | None = None
) -> None:
    """The croupier opens each hand in turn (Art. 6(2)): `settings[seat]` as set, else the
    largest back pair of `hands[seat]`."""
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    for seat in proc.opening_order():
        setting = (settings or {}).get(seat) or good_setting(hands[seat])
        table.ok("open_hand", DEALER, {"seat": seat, **setting})


def paigow_play(
    table: Table,
    groups: list[list[str]],
    stake: int = 1000,
    dice: list[int] | None = None,
    banker: str = "B",
) -> None:
    """From BETTING to ROUND_OVER; seat s gets groups[s]."""
    paigow_betting(table, stake, banker)
    paigow_shake(table, dice, banker)
    paigow_deal(table)
    paigow_set(table)
    paigow_open(table, dict(enumerate(groups)))
    table.ok("settle_round", DEALER)


def paigow_round(table: Table, seed: int = 0) -> None:
    """From BANK_OFFER to ROUND_OVER."""
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER, {"new_set": False})
    paigow_play(table, tile_groups(seed))


# ---- the phases of each game, each reached by a recorded legal prefix -------------------------


def _record(table: Table, found: dict[str, list[Input]]) -> None:
    replayed = type(table.proc)(**_config(table.proc))
    prefix: list[Input] = []
    found.setdefault(replayed.phase, [])
    for item in table.inputs:
        replayed.handle(item.action, item.actor, item.payload, item.now)
        prefix.append(item)
        found.setdefault(replayed.phase, list(prefix))


def _config(proc: Procedure) -> dict[str, Any]:
    if isinstance(proc, PaiGowProcedure):
        return {"hands": proc.hands, "ruleset": proc.ruleset}
    return {}


def _with_faults(found: dict[str, list[Input]]) -> None:
    betting = found["BETTING"]
    for action, phase in (("door_opened", "HOLD"), ("fault_reported", "TILT")):
        found[phase] = [
            *betting,
            Input(
                action,
                device("dice_shaker"),
                {"device": "dice_shaker", "fault": "lid open"},
                betting[-1].now + 1,
            ),
        ]


def thirteen_prefixes() -> dict[str, list[Input]]:
    found: dict[str, list[Input]] = {}
    table = thirteen_table()
    thirteen_round(table, shuffled_deck(1))
    table.ok("start_round", DEALER)
    _record(table, found)
    _with_faults(found)
    return found


def paigow_prefixes() -> dict[str, list[Input]]:
    found: dict[str, list[Input]] = {}
    table = paigow_table()
    paigow_round(table)
    table.ok("next_round", DEALER)
    _record(table, found)
    _with_faults(found)
    return found


class Prefixes(dict[str, dict[str, list[Input]]]):
    """Each game's prefixes, computed the first time a test asks for that game."""

    def __missing__(self, game: str) -> dict[str, list[Input]]:
        self[game] = thirteen_prefixes() if game == "thirteen" else paigow_prefixes()
        return self[game]


def fresh(game: str) -> Procedure:
    return ThirteenProcedure() if game == "thirteen" else PaiGowProcedure()


def at_phase(game: str, phase: str, prefixes: dict[str, dict[str, list[Input]]]) -> Table:
    """A table in `phase`, reached by replaying its recorded prefix."""
    table = Table(fresh(game))
    for item in prefixes[game][phase]:
        table.now = item.now - 1.0
        table.ok(item.action, item.actor, dict(item.payload))
    assert table.proc.phase == phase
    return table
