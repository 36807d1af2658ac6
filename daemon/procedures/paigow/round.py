"""Taiwan Pai Gow's round as the procedure keeps it: `PaiGowRound`, the state every step reads.

The configuration (hands, rule set, devices), the bank's state across rounds and the round's
own, its snapshot, the conditions the transition table names, and the doors' orders (dealing,
collecting and paying, opening). The steps are the layers above it: the bank, the bets and the
stake (`bank.py`), the tiles from the shuffle to the deal (`deal.py`), composed with the hands'
setting, opening and settlement in `PaiGowProcedure` (`procedure.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, ClassVar

from daemon.procedures.base import Procedure
from daemon.procedures.checkpoint import clone
from daemon.procedures.paigow.actions import ACTIONS
from daemon.procedures.paigow.game import (
    ART_1,
    ART_2_7,
    BET_ACTIONS,
    DEVICES,
    EVENTS,
    REGULATION,
    ROUNDS_PER_BANK,
    P,
    Phase,
)
from daemon.procedures.paigow.transitions import TRANSITIONS
from daemon.procedures.payload import Refused, integer, need
from daemon.procedures.records import (
    Bet,
    CoBanker,
    FaceUp,
    Identity,
    Reset,
    RoundSettled,
    Setting,
    StackMove,
    Throw,
)
from daemon.procedures.spec import Action, Event
from daemon.rules import paigow

# The names of the round's state (`STATE`), a line of them at a time.
_STATE = (
    "identified opened banker banker_seat bank_rounds bank_limit declined last_banker "
    "bank_door last_bank_seat "
    "bettors_seen min_stake tiles_kept_for_next used_tiles set_number new_sets "
    "stack_moves bets bet_seq stake co_bankers head_out bets_closed dice shakes first_hand "
    "dealt face_up set_seats settings wrongly_set resets opened_hands settlement "
    "extension_consents"
)


class PaiGowRound(Procedure):
    GAME: ClassVar[str] = "paigow"
    REGULATION: ClassVar[str] = REGULATION
    Phase: ClassVar[type[Enum]] = Phase
    TRANSITIONS: ClassVar[list[dict[str, Any]]] = TRANSITIONS
    ACTIONS: ClassVar[Mapping[str, Action]] = ACTIONS
    EVENTS: ClassVar[Mapping[str, Event]] = EVENTS
    INITIAL: ClassVar[Enum] = P.EQUIPMENT_CHECK
    CONFIG_ATTRS: ClassVar[tuple[str, ...]] = ("table_id", "hands", "ruleset", "devices")
    EQUIPMENT_ARTICLE: ClassVar[str] = ART_1
    # The state of play a checkpoint records (besides the engine's), by name.
    STATE: ClassVar[tuple[str, ...]] = tuple(_STATE.split())
    BET_ACTIONS: ClassVar[tuple[str, ...]] = BET_ACTIONS
    BETS_CLOSED_ARTICLE: ClassVar[str] = ART_2_7
    # No round on the table: the bank not yet taken, the tiles not yet bet on, a round settled.
    BETWEEN_ROUNDS: ClassVar[frozenset[str]] = frozenset(
        {"EQUIPMENT_CHECK", "BANK_OFFER", "SHUFFLE", "ROUND_OVER"}
    )

    def between_rounds(self) -> bool:
        if self.phase == P.SHUFFLE.name and self.bets:
            return False
        return super().between_rounds()

    SEAT_NAME: ClassVar[str] = "door"

    def __init__(
        self,
        table_id: str = "T01",
        hands: int = 8,
        ruleset: str = "macau-1990",
        devices: Sequence[str] = DEVICES,
    ) -> None:
        if hands not in (4, 8):
            raise ValueError(f"{hands} hands: Art. 2(4) allows 8 or 4")
        self.hands = hands
        paigow.ruleset(ruleset)  # an unknown rule set stops the table at start-up
        self.ruleset = ruleset
        self.devices = tuple(devices)
        self.identified: dict[str, Identity] = {}
        self.opened = False
        # The bank (Art. 5): who holds it, for how many rounds, and who has ever bet.
        self.banker: str | None = None
        self.banker_seat: int | None = None
        self.bank_rounds = 0
        self.bank_limit = ROUNDS_PER_BANK
        self.declined: list[str] = []
        self.last_banker: str | None = None
        # Art. 5(1)(2): the door whose turn it is to take the bank (None: any door, the table's
        # first bank) and the door that last held it, which does not keep it.
        self.bank_door: int | None = None
        self.last_bank_seat: int | None = None
        self.bettors_seen: list[str] = []
        self.min_stake = 0
        # Art. 2(4) with four hands: the tiles used by the first half of a shuffled set.
        self.tiles_kept_for_next = False
        self.used_tiles: list[str] = []
        self.set_number = 0
        self.new_sets = 0
        self._new_round_state()
        super().__init__(table_id)

    def _new_round_state(self) -> None:
        self.stack_moves: list[StackMove] = []
        self.bets: list[Bet] = []
        self.bet_seq = 0
        self.stake: int | None = None
        # Art. 5(5): the house and guests who co-bank this round, in the order they joined.
        self.co_bankers: list[CoBanker] = []
        self.head_out = False  # Art. 5(3) 「先出头牌」
        self.bets_closed = False
        self.dice: list[int] | None = None
        self.shakes: list[Throw] = []
        self.first_hand: int | None = None
        self.dealt: list[int] = []  # Art. 2(3): the doors dealt, in the order dealt
        self.face_up: list[FaceUp] = []
        # Art. 6(1): the hands set face down (the banker's last): recorded, their tiles unknown.
        self.set_seats: list[int] = []
        # Art. 6(2): the hands the croupier has opened, with their tiles (the first the system
        # learns of them).
        self.settings: dict[int, Setting] = {}
        self.wrongly_set: list[int] = []
        self.resets: list[Reset] = []
        self.opened_hands = False
        self.settlement: RoundSettled | None = None
        self.extension_consents: list[str] = []

    # ---- conditions -------------------------------------------------------------------------

    def tiles_kept(self, event: object) -> bool:
        return self.tiles_kept_for_next

    def all_dealt(self, event: object) -> bool:
        return len(self.dealt) == self.hands

    def all_set(self, event: object) -> bool:
        return all(seat in self.set_seats for seat in self.played_seats())

    def all_open(self, event: object) -> bool:
        return all(seat in self.settings for seat in self.opening_order())

    def bank_over(self, event: object) -> bool:
        return self.banker is None

    def no_banker(self, event: object) -> bool:
        return self.opened and self.banker is None

    def table_open(self, event: object) -> bool:
        return self.opened and self.banker is not None

    # ---- seats ------------------------------------------------------------------------------

    def holder(self, seat: int) -> str | None:
        """Art. 3(2): the largest bettor on a door holds and sets its tiles (ties: first bet)."""
        on_seat = [b for b in self.bets if b["seat"] == seat]
        if not on_seat:
            return None
        return str(max(on_seat, key=lambda b: (b["amount"], -b["seq"]))["player"])

    def deal_order(self) -> list[int]:
        """Art. 2(2)-(3): every door (the banker's too), counter-clockwise from the one the dice
        name. Seats are numbered counter-clockwise, so the next door is the next seat."""
        first = need(self.first_hand)
        return [(first + step) % self.hands for step in range(self.hands)]

    def door_seats(self) -> list[int]:
        """The doors played, 头门 first, counter-clockwise: the order of collecting and paying."""
        banker, played = self._banker_seat(), set(self.played_seats())
        offsets = paigow.door_order(sum(need(self.dice)), self.hands)
        return [s for s in ((banker + d) % self.hands for d in offsets) if s in played]

    def opening_order(self) -> list[int]:
        """Art. 6(2): the hands the croupier opens, in the order of the rule set."""
        if paigow.ruleset(self.ruleset).banker_opened_first:
            return [self._banker_seat(), *self.door_seats()]
        return [*self.door_seats(), self._banker_seat()]

    def _seat(self, payload: Mapping[str, Any], key: str, article: str) -> int:
        seat = integer(payload, key, article, 0, self.hands - 1)
        if seat == self.banker_seat:
            raise Refused(article, f"door {seat} is the banker's", zh=f"第{seat}門是莊家的")
        return seat

    # ---- equipment and the bank -------------------------------------------------------------

    def _opened(self) -> dict[str, Any]:
        return {"hands": self.hands}

    def next_bank_door(self, after: int) -> int:
        """Art. 5(1): the door after `after` in the rule set's order, never the last bank's."""
        step = 1 if paigow.ruleset(self.ruleset).bank_order == "counter-clockwise" else -1
        door = (after + step) % self.hands
        return (door + step) % self.hands if door == self.last_bank_seat else door

    def _banker_seat(self) -> int:
        return need(self.banker_seat)

    # ---- HOLD, TILT, void -------------------------------------------------------------------

    def _on_resume(self, phase: str, now: float) -> None:
        # The result may have been lost while held: the banker's shake is asked for again.
        if phase == P.SHAKING.name:
            self.command("dice_shaker", "shake")

    def _on_void(self, now: float) -> None:
        if self.opened and self.banker is not None:
            self.emit(
                "bets.returned",
                bets=clone(self.bets),
                stake=self.stake,
                co_bankers=clone(self.co_bankers),
            )
            self.round_id += 1
            # A void round does not count toward the bank's two (Art. 5(1) counts rounds played).
            self._new_round_state()
            self.tiles_kept_for_next, self.used_tiles = False, []

    def _game_snapshot(self) -> dict[str, Any]:
        seats = []
        for seat in range(self.hands):
            seats.append(
                {
                    "seat": seat,
                    "banker": seat == self.banker_seat,
                    "holder": self.banker if seat == self.banker_seat else self.holder(seat),
                    "dealt": seat in self.dealt,
                    "set": seat in self.set_seats,
                    "setting": clone(self.settings.get(seat)),
                    "wrongly_set": seat in self.wrongly_set,
                }
            )
        return {
            "hands": self.hands,
            "ruleset": self.ruleset,
            "devices": clone(self.identified),
            "opened": self.opened,
            "banker": self.banker,
            "banker_seat": self.banker_seat,
            "bank_rounds": self.bank_rounds,
            "bank_limit": self.bank_limit,
            "declined": list(self.declined),
            "last_banker": self.last_banker,
            "bank_door": self.bank_door,
            "last_bank_seat": self.last_bank_seat,
            "bettors_seen": list(self.bettors_seen),
            "min_stake": self.min_stake,
            "stake": self.stake,
            "co_bankers": clone(self.co_bankers),
            "head_out": self.head_out,
            "set_number": self.set_number,
            "new_sets": self.new_sets,
            "tiles_kept": self.tiles_kept_for_next,
            "used_tiles": list(self.used_tiles),
            "stack_moves": clone(self.stack_moves),
            "bets": clone(self.bets),
            "bets_closed": self.bets_closed,
            "dice": self.dice,
            "shakes": clone(self.shakes),
            "first_hand": self.first_hand,
            "dealt_doors": list(self.dealt),
            "face_up": clone(self.face_up),
            "seats": seats,
            "opened_hands": self.opened_hands,
            "resets": clone(self.resets),
            "settlement": clone(self.settlement),
        }
