"""The procedure that plays Thirteen cards: `ThirteenProcedure`, the code each action runs.

The legal procedure it follows, article by article, is told in `daemon/procedures/thirteen/game.py`
(with the game's phases, actions and transition table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from daemon.procedures.base import Procedure
from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.faults import shuffle_fault
from daemon.procedures.payload import Refused, dice_reading, flag, integer, need, text
from daemon.procedures.records import Cut, DealtCard, Entered, Misread, Shuffle
from daemon.procedures.spec import Action, Event
from daemon.procedures.stakes import Stakes
from daemon.procedures.thirteen.game import (
    ACTIONS,
    ARRANGEMENT_SECONDS,
    ART_1,
    ART_2A,
    ART_2B,
    ART_2C,
    ART_2D,
    ART_3,
    ART_4,
    ART_5,
    ART_7,
    ART_8,
    ART_11,
    BANKER_SEAT,
    BET_ACTIONS,
    DECK,
    DEVICES,
    EVENTS,
    HK_SCORING,
    HK_STAKES,
    REGULATION,
    ROW_SIZES,
    ROWS,
    SEATS,
    TRANSITIONS,
    P,
    Phase,
)
from daemon.procedures.thirteen.settle import highest_bettor, holder, settle_table, settle_thirteen
from daemon.rules import thirteen as rules13
from daemon.rules.cards import card_name

if TYPE_CHECKING:
    from daemon.config import TableConfig

# The names of the round's state (`STATE`), a line of them at a time.
_STATE = (
    "identified opened shuffle cut bets bet_seq bets_closed shooter dice shakes "
    "first_seat order dealt voided_deals misread override redealing banker_arranged arranged "
    "opened_hands arrangements banker_opened deadline timer_remaining held_deadline late "
    "settlement advice away"
)


class ThirteenProcedure(Procedure):
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
        self.identified: dict[str, dict[str, Any]] = {}
        self.opened = False
        self._new_round_state()
        super().__init__(table_id)

    @classmethod
    def from_config(cls, config: TableConfig, devices: tuple[str, ...]) -> ThirteenProcedure:
        """The procedure a table's configuration describes (`daemon.procedures.build`)."""
        return cls(
            config.table_id,
            ruleset=config.ruleset,
            devices=devices,
            stakes=Stakes(config.unit, config.currency, config.min_bet, config.max_bet),
            rules=config.rules,
            shaker=config.shaker,
            timer_in_hold=config.timer_in_hold,
        )

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
        self.bets: list[dict[str, Any]] = []
        self.bet_seq = 0
        self.bets_closed = False
        self.shooter: str | None = None
        self.dice: list[int] | None = None
        self.shakes: list[dict[str, Any]] = []
        self.first_seat: int | None = None
        self.order: list[int] = []
        self.dealt: list[DealtCard] = []
        self.voided_deals: list[list[DealtCard]] = []
        # The card the reader could not name (its place in the deal) until it is entered.
        self.misread: Misread | None = None
        self.override: dict[str, Any] | None = None
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
        self.settlement: list[dict[str, Any]] | None = None
        # Art. 5 (who advised which holder) and Art. 3 (cards taken away), as the dealer saw.
        self.advice: list[dict[str, Any]] = []
        self.away: list[dict[str, Any]] = []

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

    # ---- equipment --------------------------------------------------------------------------

    def _opened(self) -> dict[str, Any]:
        self.round_id = 1
        return {}

    # ---- shuffle, cut, shoe -----------------------------------------------------------------

    def _apply_confirm_hand_shuffle(self, payload: Mapping[str, Any], now: float) -> None:
        self.emit("deck.hand_shuffled")
        # Only a random shuffle is ever asked for (no sort or sequence mode reaches a live game).
        self.command("shuffler", "shuffle", mode="random")

    def _check_shuffle_completed(self, payload: Mapping[str, Any], now: float) -> None:
        integer(payload, "count", ART_2A, 0)
        mode = payload.get("mode", "random")
        if not isinstance(mode, str):
            raise Refused(ART_2A, "mode must be a string", zh="模式須為文字")
        for kind in ("foreign", "unreadable"):
            if kind in payload:
                integer(payload, kind, ART_2A, 0)

    def _apply_shuffle_completed(self, payload: Mapping[str, Any], now: float) -> None:
        count, mode = payload["count"], payload.get("mode", "random")
        # A good shuffle is 52 known, distinct, genuine cards in random mode (R1-R2): a foreign
        # card or one the machine could not read takes the deck out of play before any deal.
        fault = shuffle_fault(count, mode, payload.get("foreign", 0), payload.get("unreadable", 0))
        good = fault is None
        self.shuffle = {"count": count, "mode": mode, "good": good}
        self.emit("deck.machine_shuffled", count=count, mode=mode, **_odd_cards(payload))
        if fault is not None:
            # The deck is out of play: clearing the TILT starts again from the hand shuffle.
            self.tilt("shuffler", fault, now, resume_to=P.HAND_SHUFFLE.name)

    def _check_confirm_cut(self, payload: Mapping[str, Any], now: float) -> None:
        # Kinds and bounds (by, cards 10..42) are the declared parameters' (game.py).
        if payload["by"] == "player":
            if "player" not in payload:
                raise Refused(ART_2A, "player must be a non-empty string", zh="玩家名稱不可留空")
        elif not payload.get("players_declined", False):
            raise Refused(
                ART_2A,
                "the dealer cuts only when no player will",
                zh="只有在無玩家願意割牌時才由荷官割牌",
            )
        if not payload["one_hand"]:
            raise Refused(ART_2A, "the cut is made with one hand only", zh="割牌只可用一隻手")

    def _apply_confirm_cut(self, payload: Mapping[str, Any], now: float) -> None:
        self.cut = {
            "by": payload["by"],
            "player": payload.get("player"),
            "cards": payload["cards"],
        }
        self.emit("deck.cut", **self.cut)

    def _apply_load_shoe(self, payload: Mapping[str, Any], now: float) -> None:
        self.emit("shoe.loaded", redeal=self.redealing)
        self.command("shoe_reader", "arm", cards=DECK)

    # ---- bets -------------------------------------------------------------------------------

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

    def _check_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_3)
        units = payload["units"]
        if self.units is not None and units not in self.units:
            raise Refused(
                ART_11,
                f"a bet is {', '.join(map(str, self.units))} units, not {units}",
                zh=f"每次投注為 {'、'.join(map(str, self.units))} 注，不是 {units} 注",
            )
        if not self.banker_game:
            self._one_player_a_seat(payload["player"], seat)
            if self._rules.stakes == "per-point" and units != 1:
                raise Refused(
                    HK_STAKES,
                    "money per point (1分×元): a seat is taken with one unit, the points pay",
                    zh="每分×元：每門以一注入座，按分數賠付",
                )

    def _one_player_a_seat(self, player: str, seat: int) -> None:
        """Each against each, a seat is one player's score and a player plays one seat
        (003 way 3, 4人分別比牌)."""
        for bet in self.bets:
            if bet["seat"] == seat and bet["player"] != player:
                raise Refused(
                    HK_SCORING,
                    f"seat {seat} is {bet['player']}'s: one player a seat",
                    zh=f"第{seat}門屬於 {bet['player']}：每門一名玩家",
                )
            if bet["seat"] != seat and bet["player"] == player:
                raise Refused(
                    HK_SCORING,
                    f"{player} plays seat {bet['seat']}: one seat a player",
                    zh=f"{player} 已玩第{bet['seat']}門：每名玩家一門",
                )

    def _check_move_bet(self, payload: Mapping[str, Any], now: float) -> None:
        super()._check_move_bet(payload, now)
        if not self.banker_game:
            target = self._seat(payload, "to_seat", ART_2C)
            taken = next((b["player"] for b in self.bets if b["seat"] == target), None)
            if taken is not None:
                raise Refused(
                    HK_SCORING,
                    f"seat {target} is {taken}'s: one player a seat",
                    zh=f"第{target}門屬於 {taken}：每門一名玩家",
                )

    def _apply_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        old = self._find_bet(payload["player"], payload["seat"])
        if old is not None:
            self.bets.remove(old)
        self.bet_seq += 1
        bet = {
            "seq": self.bet_seq,
            "player": payload["player"],
            "seat": payload["seat"],
            # Art. 11: the money of the units at the table's unit value (checked on admission).
            "amount": self.stakes.bet_amount(payload, ART_11),
            "units": payload["units"],
            "seated": payload["seated"],
        }
        self.bets.append(bet)
        self.emit("bet.placed", replaced=old is not None, **bet)

    # ---- dice -------------------------------------------------------------------------------

    def _check_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        player = payload["player"]
        highest = self.highest_bettor()
        if highest is None:
            raise Refused(
                ART_2B,
                "no bets: the highest bettor shakes, and there is none",
                zh="沒有投注：由投注最高者搖骰，現時沒有",
            )
        if player != highest:
            raise Refused(
                ART_2B,
                f"{highest} is the highest bettor and shakes, not {player}",
                zh=f"投注最高的是 {highest}，由他搖骰，不是 {player}",
            )
        if not self.banker_game and len(self.played_seats()) < 2:
            raise Refused(
                HK_SCORING,
                "each against each: at least two seats play",
                zh="四人對比：至少兩門參與",
            )

    def _apply_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        self.bets_closed = True
        self.shooter = payload["player"]
        self.invalid_shakes = 0
        self.emit(
            "bets.closed",
            bets=clone(self.bets),
            holders={str(s): self.holder(s) for s in self.played_seats()},
        )
        self.command("dice_shaker", "shake")

    def _check_dice_landed(self, payload: Mapping[str, Any], now: float) -> None:
        dice_reading(payload, ART_2B, ART_2B)

    def _dice_counted(self, dice: list[int]) -> dict[str, Any]:
        self._set_deal_order()
        return {"first_seat": self.first_seat}

    def _set_deal_order(self) -> None:
        self.first_seat = rules13.first_seat_from_dice(sum(need(self.dice)))
        self.order = rules13.deal_order(self.first_seat)

    # ---- the deal ---------------------------------------------------------------------------

    def _check_card_read(self, payload: Mapping[str, Any], now: float) -> None:
        # A misread: a card went past the reader unread (the wire names none).
        if flag(payload, "misread", ART_2B, False):
            if payload.get("card") is not None:
                raise Refused(ART_2B, "a misread names no card", zh="誤讀不註明牌")
        elif not isinstance(payload.get("card"), str):
            raise Refused(ART_2B, "card must be a string", zh="牌須為文字")
        if self.override is not None:
            raise Refused(
                ART_4,
                f"card #{self.override['index']} waits for a supervisor's decision",
                zh=f"第{self.override['index']}張牌待主任決定",
            )
        flag(payload, "face_up", ART_4, False)
        if "index" in payload:
            integer(payload, "index", ART_2B, 1)

    def _apply_card_read(self, payload: Mapping[str, Any], now: float) -> None:
        raw = payload.get("card")
        card = None if raw is None else _card_name(raw)
        if card is None:
            due = len(self.dealt) + 1
            if payload.get("index", due) == due and self.misread is None:
                # Its place is known: the dealer may enter it by hand once the reader is
                # healthy, and a supervisor approve it (Art. 4: the deal is put right in order).
                self.misread = {"index": due, "seat": self.order[due - 1], "read": raw}
            self.tilt("shoe_reader", "misread" if raw is None else f"misread {raw!r}", now)
            return
        if self.is_dealt(card):
            self.tilt("shoe_reader", f"duplicate card {card}", now, misdeal=True)
            return
        index = len(self.dealt)
        # The reader numbers its reads: a gap means a card drawn whose read was lost, so the
        # seats of every later card would be wrong.
        if payload.get("index", index + 1) != index + 1:
            gap = f"read #{payload['index']} where #{index + 1} was due"
            self.tilt("shoe_reader", gap, now, misdeal=True)
            return
        seat = self.order[index]
        face_up = payload.get("face_up", False)
        self.dealt.append({"card": card, "seat": seat, "face_up": face_up})
        # Art. 4: a card dealt face up stays valid; it is journaled as such.
        self.emit("card.dealt", card=card, seat=seat, index=index + 1, face_up=face_up)

    def _check_correct_misdeal(self, payload: Mapping[str, Any], now: float) -> None:
        dealt = {d["card"] for d in self.dealt}
        for raw in payload["cards"]:
            card = _card_name(raw)
            if card not in dealt:
                raise Refused(ART_4, f"{raw!r} has not been dealt", zh=f"{raw!r} 尚未派出")

    def _apply_correct_misdeal(self, payload: Mapping[str, Any], now: float) -> None:
        fixed = [d for d in self.dealt if d["card"] in {_card_name(c) for c in payload["cards"]}]
        # The reader's order is the normal order: the cards are moved to the seats recorded.
        self.emit("deal.corrected", cards=[{"card": d["card"], "seat": d["seat"]} for d in fixed])

    def _ready_propose_card(self) -> bool:
        return self.misread is not None and self.override is None

    def _check_propose_card(self, payload: Mapping[str, Any], now: float) -> None:
        raw = payload["card"]
        if self.misread is None:
            # Only what the reader could not name is entered by hand: a card it read stands.
            raise Refused(
                ART_4,
                "no misread card is waiting: the reader's reads are not edited",
                zh="沒有誤讀待輸入的牌：讀牌器讀出的牌不可修改",
            )
        if self.override is not None:
            raise Refused(
                ART_4,
                "a proposal is already pending a supervisor's decision",
                zh="已有提議待主任決定",
            )
        card = _card_name(raw)
        if card is None:
            raise Refused(ART_4, f"{raw!r} is not one card", zh=f"{raw!r} 不是一張牌")
        if self.is_dealt(card):
            raise Refused(ART_4, f"{card} has already been dealt", zh=f"「{card}」已經派出")

    def _apply_propose_card(self, payload: Mapping[str, Any], now: float) -> None:
        misread = need(self.misread)
        self.propose(
            "enter_card",
            ART_4,
            now,
            card=_card_name(payload["card"]),
            index=misread["index"],
            seat=misread["seat"],
            read=misread["read"],
            note=payload.get("note"),
        )

    def _check_override(self, pending: Mapping[str, Any], now: float) -> None:
        if pending["kind"] == "correct_arrangement":
            if self.arrangements.get(pending["seat"]) != pending["placed"]:
                raise Refused(
                    ART_8,
                    f"seat {pending['seat']}'s placement changed since",
                    zh=f"第{pending['seat']}門的排牌在提議後已改變",
                )
            return
        if len(self.dealt) + 1 != pending["index"]:
            raise Refused(
                ART_4,
                f"card #{pending['index']} is no longer the one due",
                zh=f"第{pending['index']}張已不是應派的牌",
            )
        if self.is_dealt(pending["card"]):
            raise Refused(
                ART_4,
                f"{pending['card']} has already been dealt",
                zh=f"「{pending['card']}」已經派出",
            )

    def _apply_override(self, pending: Mapping[str, Any], now: float) -> None:
        if pending["kind"] == "correct_arrangement":
            seat = pending["seat"]
            self.arrangements[seat] = clone(pending["rows"])
            self.emit(
                "arrangement.corrected",
                seat=seat,
                holder=None if seat == BANKER_SEAT and self.banker_game else self.holder(seat),
                placed=clone(pending["placed"]),
                **clone(pending["rows"]),
                reason=pending["reason"],
                proposed_by=pending["proposed_by"],
                approved_by=need(self._input).actor,
                approval_reason=need(self._input).payload["reason"],
            )
            return
        card, seat, index = pending["card"], pending["seat"], pending["index"]
        self.misread = None
        entered: Entered = {"by": pending["proposed_by"], "approved_by": need(self._input).actor}
        self.dealt.append({"card": card, "seat": seat, "face_up": False, "entered": entered})
        self.emit("card.dealt", card=card, seat=seat, index=index, face_up=False, entered=entered)

    # Art. 4 voids the dealt cards only when a misdeal cannot be put right: the misdeal must be
    # on record (a card the reader could not name and nobody entered, a duplicate card, a read
    # lost), and two supervisors decide it (H5: one proposes, another approves).
    def _ready_void_deal(self) -> bool:
        return self.override is None and self._misdeal_on_record() is not None

    def _misdeal_on_record(self) -> str | None:
        if self.misread is not None:
            return f"card #{self.misread['index']} went past the reader unread"
        if self.misdeal is not None and self.misdeal["round"] == self.round_id:
            return str(self.misdeal["fault"])
        return None

    def _check_void_deal_now(self, now: float) -> None:
        if self._misdeal_on_record() is None:
            raise Refused(
                ART_4,
                "no misdeal on record: dealt cards are corrected, not voided",
                zh="沒有記錄在案的派牌失誤：已派的牌應更正，不應作廢",
            )

    def _check_void_deal(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "reason", ART_4)
        if self.override is not None:
            raise Refused(
                ART_4,
                f"a {self.override['kind']} proposal is pending: decide it first",
                zh=f"有待決定的提議（{self.override['kind']}）：請先作決定",
            )
        self._check_void_deal_now(now)

    def _apply_void_deal(self, payload: Mapping[str, Any], now: float) -> None:
        misdeal = self._misdeal_on_record()
        reason = payload["reason"]
        self.propose("void_deal", ART_4, now, reason=reason, phase=self.phase, misdeal=misdeal)

    def _void_deal(self, now: float, **decided: Any) -> None:
        self.voided_deals.append(clone(self.dealt))
        self.emit("deal.voided", cards=[d["card"] for d in self.dealt], **decided)
        self.dealt, self.arrangements, self.banker_opened = [], {}, False
        self.banker_arranged, self.arranged, self.opened_hands = 0, [], []
        self.misread, self.override, self.misdeal = None, None, None
        self.shuffle, self.cut = None, None
        self.redealing = True
        self._target = "VOIDED"

    # ---- arrangements -----------------------------------------------------------------------
    #
    # Art. 2(d): the banker arranges face down and only says so; the players take their cards
    # once the banker has opened, and each says when done within the five minutes. Art. 8: each
    # hand is then opened against the banker's, and only an open hand's cards are placed into
    # its rows (`enter_arrangement`): a person never names cards of a hand nobody has seen, so
    # no refusal can tell whether guessed cards are someone's.

    def _rows(self, payload: Mapping[str, Any], seat: int) -> dict[str, list[str]]:
        rows: dict[str, list[str]] = {}
        for row in ROWS:
            # A list of strings of the row's size: the declared parameter (game.py). Each name
            # `card_name` gives is a str, None where the text is not one card.
            names = [_card_name(c) for c in payload[row]]
            bad = [str(c) for c, n in zip(payload[row], names, strict=True) if n is None]
            if bad:
                raise Refused(
                    ART_7,
                    f"{row}: {', '.join(bad)} is not a card (e.g. As, Td, 9h)",
                    zh=f"{_ROW_ZH[row]}：「{', '.join(bad)}」不是牌（例如 As、Td、9h）",
                )
            if len(names) != ROW_SIZES[row]:
                raise Refused(
                    ART_7,
                    f"{row} must be {ROW_SIZES[row]} cards, not {len(names)}",
                    zh=f"{_ROW_ZH[row]}須為 {ROW_SIZES[row]} 張牌，不是 {len(names)} 張",
                )
            rows[row] = names  # type: ignore[assignment]  # no None in it: refused above
        placed = [*rows["head"], *rows["middle"], *rows["tail"]]
        hand = self.seat_cards(seat)
        # The hand is open: naming its cards (or one not in it) tells nobody anything new.
        strangers = [c for c in placed if c not in hand]
        if strangers:
            raise Refused(
                ART_7,
                f"{', '.join(strangers)} is not in seat {seat}'s open hand",
                zh=f"「{', '.join(strangers)}」不在第{seat}門已開的牌中",
            )
        twice = sorted({c for c in placed if placed.count(c) > 1})
        if twice:
            raise Refused(
                ART_7, f"{', '.join(twice)} is placed twice", zh=f"「{', '.join(twice)}」放了兩次"
            )
        return rows

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

    def _apply_arrange_banker(self, payload: Mapping[str, Any], now: float) -> None:
        self.banker_arranged += 1
        self.emit("arrangement.banker", rearranged=self.banker_arranged > 1)

    def _apply_open_banker(self, payload: Mapping[str, Any], now: float) -> None:
        self.banker_opened = True
        self.deadline = now + ARRANGEMENT_SECONDS
        self.emit("banker.opened", deadline=self.deadline, cards=self.seat_cards(BANKER_SEAT))
        self.command("timer_bell", "start", seconds=ARRANGEMENT_SECONDS)

    def _start_timer(self, now: float) -> None:
        self.deadline = now + ARRANGEMENT_SECONDS
        self.emit("timer.started", deadline=self.deadline)
        self.command("timer_bell", "start", seconds=ARRANGEMENT_SECONDS)

    def _check_player_arranged(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_3)
        if seat not in self.played_seats():
            raise Refused(
                ART_3,
                f"no bet on seat {seat}: its cards are not played",
                zh=f"第{seat}門沒有投注：其牌不參與",
            )
        if seat in self.arranged:
            raise Refused(
                ART_2D, f"seat {seat} has already said it is arranged", zh=f"第{seat}門已表示排好牌"
            )
        if now >= need(self.deadline):
            raise Refused(
                ART_2D,
                "the five minutes are over: a player not done loses",
                zh="五分鐘已過：未排好牌者作輸",
            )

    def _apply_player_arranged(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.arranged.append(seat)
        self.emit("player.arranged", seat=seat, holder=self.holder(seat))

    def _check_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_8)
        if seat not in self.played_seats():
            raise Refused(
                ART_8,
                f"no bet on seat {seat}: its cards are not played",
                zh=f"第{seat}門沒有投注：其牌不參與",
            )
        if seat in self.late:
            raise Refused(
                ART_2D,
                f"seat {seat} was not done at the bell: it loses unopened",
                zh=f"第{seat}門鈴響時未排好：不開牌作輸",
            )
        if seat in self.opened_hands:
            raise Refused(
                ART_8, f"seat {seat}'s hand is already open", zh=f"第{seat}門的牌已經打開"
            )

    def _apply_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.opened_hands.append(seat)
        self.emit("hand.opened", seat=seat, holder=self.holder(seat), cards=self.seat_cards(seat))

    def _check_enter_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        seat = int(payload["seat"])
        if seat != BANKER_SEAT or not self.banker_game:
            seat = self._seat(payload, "seat", ART_3)
            if seat not in self.played_seats():
                raise Refused(
                    ART_3,
                    f"no bet on seat {seat}: its cards are not played",
                    zh=f"第{seat}門沒有投注：其牌不參與",
                )
            if seat in self.late:
                raise Refused(
                    ART_2D,
                    f"seat {seat} was not done at the bell: it loses unopened",
                    zh=f"第{seat}門鈴響時未排好：不開牌作輸",
                )
        if not self.is_open(seat):
            raise Refused(
                ART_2D,
                f"{self._whose(seat)} hand is not open yet: its cards are placed once it is opened",
                zh=f"{self._whose_zh(seat)}的牌尚未打開：打開後才可排入三道",
            )
        if seat in self.arrangements:
            # Art. 2(d): the banker arranges again only until the players take their cards;
            # Art. 8: each hand is judged as it was opened. Placed once, a hand is final.
            raise Refused(
                ART_2D if seat == BANKER_SEAT and self.banker_game else ART_8,
                f"{self._whose(seat)} open hand is placed and final: a correction is a "
                "supervisor's, approved by a second supervisor",
                zh=f"{self._whose_zh(seat)}已開的牌已排入三道，不可再改：更正須由一位主任提出、另一位主任批准",
            )
        self._rows(payload, seat)

    def _whose(self, seat: int) -> str:
        return "the banker's" if seat == BANKER_SEAT and self.banker_game else f"seat {seat}'s"

    def _whose_zh(self, seat: int) -> str:
        return "莊家" if seat == BANKER_SEAT and self.banker_game else f"第{seat}門"

    def _apply_enter_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.arrangements[seat] = self._rows(payload, seat)
        self.emit(
            "arrangement.entered",
            seat=seat,
            holder=None if seat == BANKER_SEAT and self.banker_game else self.holder(seat),
            **self.arrangements[seat],
        )

    # A placed open hand corrected (the dealer tapped a card into the wrong row): one supervisor
    # proposes the rows as the hand lies open, a second, named one approves (two persons, as a
    # void: `daemon.procedures.overrides`); until then the settlement waits.
    def _ready_correct_arrangement(self) -> bool:
        return self.override is None and bool(self.arrangements)

    def _check_correct_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "reason", ART_8)
        if self.override is not None:
            raise Refused(
                ART_8,
                f"a {self.override['kind']} proposal is pending: decide it first",
                zh=f"有待決定的提議（{self.override['kind']}）：請先作決定",
            )
        seat = int(payload["seat"])
        if seat not in self.arrangements:
            raise Refused(
                ART_8,
                f"{self._whose(seat)} hand is not placed: the dealer places it once open",
                zh=f"{self._whose_zh(seat)}的牌尚未排入三道：由荷官在開牌後排入",
            )
        rows = self._rows(payload, seat)
        if rows == self.arrangements[seat]:
            raise Refused(
                ART_8,
                f"{self._whose(seat)} hand is placed so already",
                zh=f"{self._whose_zh(seat)}的牌已是這樣排的",
            )

    def _apply_correct_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.propose(
            "correct_arrangement",
            ART_8,
            now,
            seat=seat,
            reason=payload["reason"],
            placed=clone(self.arrangements[seat]),
            rows=self._rows(payload, seat),
        )

    # ---- Art. 5 advice, Art. 3 cards taken away (dealer's records) ------------------------

    def _check_advise_holder(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_5)
        adviser = payload["player"]
        if self._find_bet(adviser, seat) is None:
            raise Refused(
                ART_5,
                f"{adviser} has no bet on seat {seat}: only its bettors advise",
                zh=f"{adviser} 沒有在第{seat}門下注：只有該門的投注者可提建議",
            )
        if self.holder(seat) == adviser:
            raise Refused(
                ART_5,
                f"{adviser} holds seat {seat}'s cards: the others advise",
                zh=f"{adviser} 持有第{seat}門的牌：由其他人提建議",
            )
        if seat in self.arranged:
            raise Refused(ART_5, f"seat {seat} has already arranged", zh=f"第{seat}門已排好牌")

    def _apply_advise_holder(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        entry = {"seat": seat, "adviser": payload["player"], "holder": self.holder(seat)}
        self.advice.append(entry)
        self.emit("holder.advised", **entry)

    def _check_cards_away(self, payload: Mapping[str, Any], now: float) -> None:
        seat = int(payload["seat"])
        if payload["what"] == "other_seat" and self.holder(seat) == payload["player"]:
            raise Refused(
                ART_3,
                f"{payload['player']} holds seat {seat}: those are their cards",
                zh=f"{payload['player']} 持有第{seat}門：那是他自己的牌",
            )

    def _apply_cards_away(self, payload: Mapping[str, Any], now: float) -> None:
        # Recorded for the pit: the table cannot see a hand leave; a supervisor may void.
        entry = {
            "seat": payload["seat"],
            "player": payload["player"],
            "what": payload["what"],
            "holder": self.holder(payload["seat"]),
        }
        self.away.append(entry)
        self.emit("cards.away", **entry)

    def _check_timer_expired(self, payload: Mapping[str, Any], now: float) -> None:
        if now < need(self.deadline):
            raise Refused(
                ART_2D,
                f"the five minutes end at {self.deadline}, not yet at {now}",
                zh=f"五分鐘於 {self.deadline} 結束，現在（{now}）未到",
            )

    def _apply_timer_expired(self, payload: Mapping[str, Any], now: float) -> None:
        self.late = [s for s in self.played_seats() if s not in self.arranged]
        self.emit("timer.expired", deadline=self.deadline, late=self.late)
        # The table's clock is the authority: the bell is told to ring even if it already has.
        self.command("timer_bell", "ring")

    # ---- settlement -------------------------------------------------------------------------

    def _ready_settle_round(self) -> bool:
        return not self._to_place() and self.override is None

    def _check_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.override is not None:
            raise Refused(
                ART_8,
                f"a {self.override['kind']} proposal is pending: a supervisor decides first",
                zh=f"有待決定的提議（{self.override['kind']}）：須先由主任決定",
            )
        waiting = self._to_place()
        if waiting:
            unopened = [s for s in waiting if not self.is_open(s)]
            if unopened:
                raise Refused(
                    ART_8,
                    f"open seat {unopened[0]}'s hand first, then place its cards",
                    zh=f"請先打開第{unopened[0]}門的牌，然後排入三道",
                )
            raise Refused(
                ART_7,
                f"seat {waiting[0]}'s open cards are not yet placed in rows",
                zh=f"第{waiting[0]}門已開的牌尚未排入三道",
            )

    def _apply_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.banker_game:
            self.settlement = settle_thirteen(self.arrangements, self.bets, self.late, self._rules)
        else:
            self.settlement = settle_table(
                self.arrangements, self.bets, self.late, self._rules, self.stakes.unit
            )
        self.emit("round.settled", settlement=clone(self.settlement))

    def _apply_start_round(self, payload: Mapping[str, Any], now: float) -> None:
        self.round_id += 1
        self._new_round_state()
        self.emit("round.started")

    # ---- entering phases, HOLD and TILT -----------------------------------------------------

    def _on_enter(self, previous: str, now: float) -> None:
        if previous == P.DEALING.name:
            # The reader is armed only while dealing is allowed: a card drawn after the deal,
            # or while the table is held, is out of phase.
            self.command("shoe_reader", "disarm")
            if self.phase == P.PLAYERS_ARRANGING.name:
                # No banker to open (003 way 3, 四人对比): the five minutes start at the deal's end.
                self._start_timer(now)
        if self.phase == P.SETTLING.name:
            if not self.late:
                self.command("timer_bell", "stop")  # every seat done before the bell
            self.deadline = None

    def _on_suspend(self, now: float) -> None:
        if self.deadline is None or self.phase != P.PLAYERS_ARRANGING.name:
            return
        if self._timer_in_hold == "running":
            # The house lets the five minutes run on (`timer_in_hold = "running"`): the bell
            # keeps counting, and a seat not done when the table resumes after it rang is late.
            self.held_deadline, self.deadline = self.deadline, None
            return
        # By default the five minutes do not run while the table is held: the players hold
        # their cards but cannot place an arrangement.
        self.timer_remaining = max(self.deadline - now, 0.0)
        self.deadline = None
        self.command("timer_bell", "stop")

    def _on_resume(self, phase: str, now: float) -> None:
        if self.held_deadline is not None:
            self.deadline, self.held_deadline = self.held_deadline, None
        if self.timer_remaining is not None:
            self.deadline = now + self.timer_remaining
            self.command("timer_bell", "start", seconds=self.timer_remaining)
            self.timer_remaining = None
        # A device whose answer the phase waits for may have lost it while the table was held:
        # it is asked again. Its answer is read fresh (a shuffle counted again, dice shaken
        # again), never re-entered by hand; a stale answer arriving later is out of phase.
        if phase == P.MACHINE_SHUFFLE.name:
            self.command("shuffler", "shuffle", mode="random")
        elif phase == P.SHAKING.name:
            self.command("dice_shaker", "shake")
        elif phase == P.DEALING.name:
            # A misread card has left the shoe too: it is not in the cards left to draw.
            drawn = len(self.dealt) + (self.misread is not None)
            self.command("shoe_reader", "arm", cards=DECK - drawn)

    def _on_redirect(self, target: str, now: float) -> None:
        if target == P.HAND_SHUFFLE.name:
            self.shuffle, self.cut = None, None

    def _on_void(self, now: float) -> None:
        if self.opened:
            self.emit("bets.returned", bets=clone(self.bets))
            self.round_id += 1
            self._new_round_state()

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

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        confirm_hand_shuffle=Hooks(apply=_apply_confirm_hand_shuffle),
        shuffle_completed=Hooks(check=_check_shuffle_completed, apply=_apply_shuffle_completed),
        confirm_cut=Hooks(check=_check_confirm_cut, apply=_apply_confirm_cut),
        load_shoe=Hooks(apply=_apply_load_shoe),
        place_bet=Hooks(check=_check_place_bet, apply=_apply_place_bet),
        move_bet=Hooks(check=_check_move_bet),
        shake_dice=Hooks(check=_check_shake_dice, apply=_apply_shake_dice),
        dice_landed=Hooks(check=_check_dice_landed),
        card_read=Hooks(check=_check_card_read, apply=_apply_card_read),
        correct_misdeal=Hooks(check=_check_correct_misdeal, apply=_apply_correct_misdeal),
        propose_card=Hooks(
            check=_check_propose_card, apply=_apply_propose_card, ready=_ready_propose_card
        ),
        void_deal=Hooks(check=_check_void_deal, apply=_apply_void_deal, ready=_ready_void_deal),
        arrange_banker=Hooks(apply=_apply_arrange_banker),
        open_banker=Hooks(apply=_apply_open_banker),
        player_arranged=Hooks(check=_check_player_arranged, apply=_apply_player_arranged),
        open_hand=Hooks(check=_check_open_hand, apply=_apply_open_hand),
        enter_arrangement=Hooks(check=_check_enter_arrangement, apply=_apply_enter_arrangement),
        correct_arrangement=Hooks(
            check=_check_correct_arrangement,
            apply=_apply_correct_arrangement,
            ready=_ready_correct_arrangement,
        ),
        advise_holder=Hooks(check=_check_advise_holder, apply=_apply_advise_holder),
        cards_away=Hooks(check=_check_cards_away, apply=_apply_cards_away),
        timer_expired=Hooks(check=_check_timer_expired, apply=_apply_timer_expired),
        settle_round=Hooks(
            check=_check_settle_round, apply=_apply_settle_round, ready=_ready_settle_round
        ),
        start_round=Hooks(apply=_apply_start_round),
    )


def _odd_cards(payload: Mapping[str, Any]) -> dict[str, int]:
    return {k: payload[k] for k in ("foreign", "unreadable") if payload.get(k)}


# A row's name in a Chinese refusal.
_ROW_ZH = {"head": "頭道", "middle": "中道", "tail": "尾道"}


# The rules engine's name of one card, or None when the text is not exactly one card: the
# rules' own function, called without a wrapper (a round names about 130 cards).
_card_name = card_name
