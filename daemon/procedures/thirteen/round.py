"""Thirteen cards' round as the procedure keeps it: `ThirteenRound`, the state every step reads.

The configuration (rule set, stakes, who shakes, the timer in a HOLD), the round's state and
its snapshot, the conditions the transition table names, and what the steps ask of the seats.
The steps themselves are the layers above it: the bets and dice (`betting.py`), the shuffle,
cut and deal (`deal.py`), the arrangements (`arrange.py`), composed with the settlement and
the phases' entries in `ThirteenProcedure` (`procedure.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, ClassVar

from daemon.procedures.base import Procedure
from daemon.procedures.checkpoint import clone
from daemon.procedures.payload import Refused, need
from daemon.procedures.records import (
    Advice,
    Away,
    Bet,
    BetSettled,
    Cut,
    DealtCard,
    Identity,
    Misread,
    Proposal,
    SeatScored,
    Shuffle,
    Throw,
)
from daemon.procedures.spec import Action, Event
from daemon.procedures.stakes import Stakes
from daemon.procedures.thirteen.actions import ACTIONS
from daemon.procedures.thirteen.game import (
    ARRANGEMENT_SECONDS,
    ART_1,
    ART_2C,
    ART_3,
    BANKER_SEAT,
    BET_ACTIONS,
    DECK,
    DEVICES,
    EVENTS,
    REGULATION,
    SEATS,
    P,
    Phase,
)
from daemon.procedures.thirteen.settle import highest_bettor, holder
from daemon.procedures.thirteen.transitions import TRANSITIONS
from daemon.rules import thirteen as rules13

# The names of the round's state (`STATE`), a line of them at a time.
_STATE = (
    "identified opened shuffle cut bets bet_seq bets_closed shooter dice shakes "
    "first_seat order dealt voided_deals misread override redealing banker_arranged arranged "
    "opened_hands arrangements banker_opened deadline timer_remaining held_deadline late "
    "settlement advice away"
)


class ThirteenRound(Procedure):
    GAME: ClassVar[str] = "thirteen"
    REGULATION: ClassVar[str] = REGULATION
    Phase: ClassVar[type[Enum]] = Phase
    TRANSITIONS: ClassVar[list[dict[str, Any]]] = TRANSITIONS
    ACTIONS: ClassVar[Mapping[str, Action]] = ACTIONS
    EVENTS: ClassVar[Mapping[str, Event]] = EVENTS
    INITIAL: ClassVar[Enum] = P.EQUIPMENT_CHECK
    CONFIG_ATTRS: ClassVar[tuple[str, ...]] = (
        "table_id",
        "ruleset",
        "units",
        "settings",
        "devices",
    )
    EQUIPMENT_ARTICLE: ClassVar[str] = ART_1
    # The state of play a checkpoint records (besides the engine's), by name.
    STATE: ClassVar[tuple[str, ...]] = tuple(_STATE.split())
    BET_ACTIONS: ClassVar[tuple[str, ...]] = BET_ACTIONS
    BETS_CLOSED_ARTICLE: ClassVar[str] = ART_2C
    BETWEEN_ROUNDS: ClassVar[frozenset[str]] = frozenset(
        {"EQUIPMENT_CHECK", "HAND_SHUFFLE", "ROUND_OVER"}
    )

    def between_rounds(self) -> bool:
        # A hand shuffle for a redeal (Art. 4: the bets and dice stand) is inside a round.
        if self.phase == P.HAND_SHUFFLE.name and (self.bets or self.redealing):
            return False
        return super().between_rounds()

    def __init__(
        self,
        table_id: str = "T01",
        ruleset: str = "macau-1989",
        devices: Sequence[str] = DEVICES,
        *,
        stakes: Stakes | None = None,
        rules: Mapping[str, Any] | None = None,
        shaker: str = "seated-first",
        timer_in_hold: str = "paused",
    ) -> None:
        # Configuration, not state (a checkpoint records `settings`): kept private.
        self._rules = rules13.ruleset(ruleset, **dict(rules or {}))
        self.ruleset = ruleset
        self.units = self._rules.bets
        self._stakes = stakes or Stakes()
        if shaker not in ("seated-first", "highest"):
            raise ValueError(f"shaker: {shaker!r} (seated-first or highest)")
        if timer_in_hold not in ("paused", "running"):
            raise ValueError(f"timer_in_hold: {timer_in_hold!r} (paused or running)")
        self._shaker = shaker
        self._timer_in_hold = timer_in_hold
        # What the configuration set besides the rule set's name (a checkpoint records it).
        self.settings = {
            "rules": clone(dict(rules or {})),
            "stakes": self.stakes.as_dict(),
            "shaker": shaker,
            "timer_in_hold": timer_in_hold,
        }
        self.devices = tuple(devices)
        self.identified: dict[str, Identity] = {}
        self.opened = False
        self._new_round_state()
        super().__init__(table_id)

    @property
    def rules(self) -> rules13.RuleSet:
        """The rule set played, with the table's `[rules]` settings."""
        return self._rules

    @property
    def banker_game(self) -> bool:
        """Whether seats play against the banker (else each against each, 003 way 3 / 四人对比)."""
        return self._rules.scoring == "banker"

    @property
    def stakes(self) -> Stakes:
        """The table's unit of money and limits: the table's, or one unit of 100 MOP bare."""
        return self._stakes

    @stakes.setter
    def stakes(self, value: Stakes | None) -> None:
        self._stakes = value or Stakes()

    def _new_round_state(self) -> None:
        self.shuffle: Shuffle | None = None
        self.cut: Cut | None = None
        self.bets: list[Bet] = []
        self.bet_seq = 0
        self.bets_closed = False
        self.shooter: str | None = None
        self.dice: list[int] | None = None
        self.shakes: list[Throw] = []
        self.first_seat: int | None = None
        self.order: list[int] = []
        self.dealt: list[DealtCard] = []
        self.voided_deals: list[list[DealtCard]] = []
        # The card the reader could not name (its place in the deal) until it is entered.
        self.misread: Misread | None = None
        self.override: Proposal | None = None
        self.redealing = False
        # Art. 2(d): how often the banker said "arranged" (face down, no cards), the seats whose
        # players said so in the five minutes, the hands opened (Art. 8), and each open hand's
        # cards as the dealer placed them into rows.
        self.banker_arranged = 0
        self.arranged: list[int] = []
        self.opened_hands: list[int] = []
        self.arrangements: dict[int, dict[str, list[str]]] = {}
        self.banker_opened = False
        self.deadline: float | None = None
        self.timer_remaining: float | None = None
        # The deadline kept while the table is held when the five minutes run on in a HOLD.
        self.held_deadline: float | None = None
        self.late: list[int] = []
        self.settlement: list[BetSettled] | list[SeatScored] | None = None
        # Art. 5 (who advised which holder) and Art. 3 (cards taken away), as the dealer saw.
        self.advice: list[Advice] = []
        self.away: list[Away] = []

    # ---- conditions (read after the action's effects) ---------------------------------------

    def shuffle_good(self, event: object) -> bool:
        return self.shuffle is not None and self.shuffle["good"]

    def redeal(self, event: object) -> bool:
        return self.redealing

    def shoe_faulted(self, event: object) -> bool:
        return "shoe_reader" in self.faults

    def deal_complete(self, event: object) -> bool:
        return len(self.dealt) == DECK

    def all_arranged(self, event: object) -> bool:
        return all(seat in self.arranged for seat in self.played_seats())

    def table_open(self, event: object) -> bool:
        return self.opened

    def no_banker(self, event: object) -> bool:
        return not self.banker_game

    # ---- seats and bets ---------------------------------------------------------------------

    def holder(self, seat: int) -> str | None:
        return holder(self.bets, seat)

    def highest_bettor(self) -> str | None:
        return highest_bettor(self.bets, seated_first=self._shaker == "seated-first")

    # An index of `dealt`'s card names: (the list it indexes, how many of its cards, their
    # names). `dealt` only grows by appending or is replaced whole (a round, a voided deal, a
    # restore), so the index follows it by identity and length: O(1) a card read.
    _dealt_index: tuple[list[DealtCard], int, set[str]] | None = None

    def is_dealt(self, card: str) -> bool:
        """Whether `card` (its rules-engine name) has been dealt this round."""
        dealt, index = self.dealt, self._dealt_index
        if index is None or index[0] is not dealt or index[1] > len(dealt):
            index = self._dealt_index = (dealt, 0, set())
        count = len(dealt)
        if index[1] < count:
            if index[1] == count - 1:  # one card more, as in a deal: no slice, no generator
                index[2].add(dealt[-1]["card"])
            else:
                index[2].update(d["card"] for d in dealt[index[1] :])
            index = self._dealt_index = (dealt, count, index[2])
        return card in index[2]

    def seat_cards(self, seat: int) -> list[str]:
        return [d["card"] for d in self.dealt if d["seat"] == seat]

    def is_open(self, seat: int) -> bool:
        """Whether seat's 13 cards lie face up (the banker's from `open_banker`)."""
        if seat == BANKER_SEAT and self.banker_game:
            return self.banker_opened
        return seat in self.opened_hands

    def _to_place(self) -> list[int]:
        """The hands still to be placed into rows before the settlement: the banker's and each
        played seat's not late at the bell."""
        seats = [s for s in self.played_seats() if s not in self.late]
        if self.banker_game:
            seats = [BANKER_SEAT, *seats]
        return [s for s in seats if s not in self.arrangements]

    def _whose(self, seat: int) -> str:
        return "the banker's" if seat == BANKER_SEAT and self.banker_game else f"seat {seat}'s"

    def _whose_zh(self, seat: int) -> str:
        return "莊家" if seat == BANKER_SEAT and self.banker_game else f"第{seat}門"

    def _seat(self, payload: Mapping[str, Any], key: str, article: str) -> int:
        # The declared parameter bounds it to seats 0-3; seat 0 is the banker's when there is
        # one (Art. 3: the four seats include the banker's, players bet on the other three).
        seat = int(payload[key])
        if seat == BANKER_SEAT and self.banker_game:
            raise Refused(
                ART_3,
                "seat 0 is the banker's: players bet on seats 1-3",
                zh="第0門是莊家的：閒家在第 1-3 門下注",
            )
        return seat

    def _set_deal_order(self) -> None:
        self.first_seat = rules13.first_seat_from_dice(sum(need(self.dice)))
        self.order = rules13.deal_order(self.first_seat)

    def _start_timer(self, now: float) -> None:
        self.deadline = now + ARRANGEMENT_SECONDS
        self.emit("timer.started", deadline=self.deadline)
        self.command("timer_bell", "start", seconds=ARRANGEMENT_SECONDS)

    # ---- equipment --------------------------------------------------------------------------

    def _opened(self) -> dict[str, Any]:
        self.round_id = 1
        return {}

    def _game_snapshot(self) -> dict[str, Any]:
        seats = []
        for seat in range(SEATS):
            seats.append(
                {
                    "seat": seat,
                    "banker": seat == BANKER_SEAT and self.banker_game,
                    "holder": None
                    if seat == BANKER_SEAT and self.banker_game
                    else self.holder(seat),
                    "cards": self.seat_cards(seat),
                    "arrangement": clone(self.arrangements.get(seat)),
                    "arranged": seat in self.arranged
                    or (seat == BANKER_SEAT and self.banker_game and self.banker_arranged > 0),
                    "open": self.is_open(seat),
                    "late": seat in self.late,
                }
            )
        return {
            "ruleset": self.ruleset,
            "scoring": self._rules.scoring,
            "devices": clone(self.identified),
            "opened": self.opened,
            "shuffle": clone(self.shuffle),
            "cut": clone(self.cut),
            "bets": clone(self.bets),
            "bets_closed": self.bets_closed,
            "shooter": self.shooter,
            "dice": self.dice,
            "shakes": clone(self.shakes),
            "first_seat": self.first_seat,
            "dealt": clone(self.dealt),
            "voided_deals": clone(self.voided_deals),
            "misread": clone(self.misread),
            "redealing": self.redealing,
            "seats": seats,
            "banker_opened": self.banker_opened,
            "banker_arranged": self.banker_arranged,
            "arranged": list(self.arranged),
            "opened_hands": list(self.opened_hands),
            "timer": {
                "deadline": self.deadline,
                "paused_remaining": self.timer_remaining,
                "held_deadline": self.held_deadline,
            },
            "advice": clone(self.advice),
            "away": clone(self.away),
            "settlement": clone(self.settlement),
        }
