"""The procedure that plays Taiwan Pai Gow: `PaiGowProcedure`, the code each action runs.

The legal procedure it follows, article by article, is told in `daemon/procedures/paigow/game.py`
(with the game's phases, actions and transition table).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from daemon.procedures.base import Procedure
from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.paigow.game import (
    ACTIONS,
    ART_1,
    ART_2_2,
    ART_2_3,
    ART_2_5,
    ART_2_6,
    ART_2_7,
    ART_3_2,
    ART_4,
    ART_5_1,
    ART_5_2,
    ART_5_3,
    ART_5_4,
    ART_5_5,
    ART_6_1,
    ART_6_2,
    BET_ACTIONS,
    DEVICES,
    EVENTS,
    MAX_STACK_MOVERS,
    REGULATION,
    ROUNDS_PER_BANK,
    TRANSITIONS,
    P,
    Phase,
)
from daemon.procedures.paigow.settle import settle_paigow, wrongly_set
from daemon.procedures.payload import Refused, dice_reading, integer, need
from daemon.procedures.records import FaceUp, Reset, Setting, StackMove
from daemon.procedures.spec import Action, Event
from daemon.procedures.stakes import Stakes
from daemon.rules import paigow
from daemon.rules.paigow.tiles import (
    TILE_SET,
    TileParseError,
    format_tiles,
    parse_deal,
    parse_tiles,
)
from daemon.rules.paigow.tiles import Tile as _Tile

if TYPE_CHECKING:
    from daemon.config import TableConfig

# The names of the round's state (`STATE`), a line of them at a time.
_STATE = (
    "identified opened banker banker_seat bank_rounds bank_limit declined last_banker "
    "bank_door last_bank_seat "
    "bettors_seen min_stake tiles_kept_for_next used_tiles set_number new_sets "
    "stack_moves bets bet_seq stake co_bankers head_out bets_closed dice shakes first_hand "
    "dealt face_up set_seats settings wrongly_set resets opened_hands settlement "
    "extension_consents"
)


class PaiGowProcedure(Procedure):
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
        self.identified: dict[str, dict[str, Any]] = {}
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

    @classmethod
    def from_config(cls, config: TableConfig, devices: tuple[str, ...]) -> PaiGowProcedure:
        """The procedure a table's configuration describes (`daemon.procedures.build`), its
        bets in table units (daemon/procedures/stakes.py)."""
        procedure = cls(
            config.table_id, hands=config.paigow_hands, ruleset=config.ruleset, devices=devices
        )
        procedure.stakes = Stakes(config.unit, config.currency, config.min_bet, config.max_bet)
        return procedure

    def _new_round_state(self) -> None:
        self.stack_moves: list[StackMove] = []
        self.bets: list[dict[str, Any]] = []
        self.bet_seq = 0
        self.stake: int | None = None
        # Art. 5(5): the house and guests who co-bank this round, in the order they joined.
        self.co_bankers: list[dict[str, Any]] = []
        self.head_out = False  # Art. 5(3) 「先出头牌」
        self.bets_closed = False
        self.dice: list[int] | None = None
        self.shakes: list[dict[str, Any]] = []
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
        self.settlement: dict[str, Any] | None = None
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

    def _check_take_bank(self, payload: Mapping[str, Any], now: float) -> None:
        player = payload["player"]
        seat = integer(payload, "seat", ART_5_1, 0, self.hands - 1)  # four hands: doors 0-3
        if player == self.last_banker:
            raise Refused(
                ART_5_1,
                f"{player} has just held the bank its rounds; it passes on",
                zh=f"{player} 剛做完莊的局數；莊家輪替",
            )
        if seat == self.last_bank_seat:
            raise Refused(
                ART_5_1,
                f"door {seat} has just held the bank; it passes on, under any name",
                zh=f"第{seat}門剛做完莊；莊家輪替，換名亦然",
            )
        rules = paigow.ruleset(self.ruleset)
        free = self.declined and rules.declined_bank_to == "any-door"
        if self.bank_door is not None and seat != self.bank_door and not free:
            turn = f"the bank passes {rules.bank_order} to door {self.bank_door}, not door {seat}"
            raise Refused(
                ART_5_2 if self.declined else ART_5_1,
                turn,
                zh=f"做莊依序（{rules.bank_order}）輪到第{self.bank_door}門，不是第{seat}門",
            )
        if self.declined and player not in self.bettors_seen:
            raise Refused(
                ART_5_2,
                f"the bank passes only to a player who has bet; {player} has not",
                zh=f"莊家只傳給已下注的玩家；{player} 沒有下注",
            )

    def _apply_take_bank(self, payload: Mapping[str, Any], now: float) -> None:
        self.banker, self.banker_seat = payload["player"], payload["seat"]
        self.bank_rounds, self.bank_limit, self.declined = 0, ROUNDS_PER_BANK, []
        self.bank_door = None
        self.min_stake = 0
        self.round_id += 1
        self._new_round_state()
        self.emit("bank.taken", player=self.banker, seat=self.banker_seat)

    def _check_decline_bank(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["player"] == self.last_banker:
            raise Refused(
                ART_5_2,
                f"{payload['player']} has just held the bank: none to decline",
                zh=f"{payload['player']} 剛做完莊：無莊可讓",
            )

    def _apply_decline_bank(self, payload: Mapping[str, Any], now: float) -> None:
        self.declined.append(payload["player"])
        door = self.bank_door
        if door is not None and paigow.ruleset(self.ruleset).declined_bank_to == "next-door":
            self.bank_door = self.next_bank_door(door)  # 「把庄交与下一人」: the next door's
        self.emit("bank.declined", player=payload["player"], door=door, next_door=self.bank_door)

    # ---- shuffle, stacks, bets, stake -------------------------------------------------------

    def _apply_confirm_tile_shuffle(self, payload: Mapping[str, Any], now: float) -> None:
        new_set = payload.get("new_set", False)
        self.set_number += 1
        self.new_sets += int(new_set)
        self.used_tiles = []
        self.emit("tiles.shuffled", new_set=new_set)

    def _check_move_stacks(self, payload: Mapping[str, Any], now: float) -> None:
        by, player = payload["by"], payload["player"]
        if not payload["one_hand"]:
            raise Refused(ART_2_6, "the stacks are moved with one hand only", zh="只可單手移動牌墩")
        if self.head_out:
            raise Refused(
                ART_5_3,
                "the head tiles are out: the stacks are not moved again",
                zh="頭牌已出：牌墩不再移動",
            )
        banker_moved = any(m["by"] == "banker" for m in self.stack_moves)
        if by == "banker":
            if player != self.banker:
                raise Refused(ART_2_6, f"{player} is not the banker", zh=f"{player} 不是莊家")
        else:
            if player == self.banker:
                raise Refused(
                    ART_2_6,
                    "the banker moves as the banker, after the players",
                    zh="莊家以莊家身分在玩家之後移動",
                )
            if banker_moved:
                raise Refused(
                    ART_2_6,
                    "the banker has moved the stacks; players may not now",
                    zh="莊家已移動牌墩；玩家現在不可再移",
                )
            movers = {m["player"] for m in self.stack_moves if m["by"] == "player"}
            if player not in movers and len(movers) >= MAX_STACK_MOVERS:
                raise Refused(
                    ART_2_6, "only two players may move the stacks", zh="只有兩名玩家可移動牌墩"
                )

    def _apply_move_stacks(self, payload: Mapping[str, Any], now: float) -> None:
        move: StackMove = {"by": payload["by"], "player": payload["player"]}
        self.stack_moves.append(move)
        self.emit("stacks.moved", **move)

    def _check_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["player"] == self.banker:
            raise Refused(ART_3_2, "the banker does not bet on a door", zh="莊家不在門上下注")
        if any(c["player"] == payload["player"] for c in self.co_bankers):
            raise Refused(
                ART_5_5,
                f"{payload['player']} co-banks this round: no bet on a door",
                zh=f"{payload['player']} 本局幫莊：不可在門上下注",
            )
        self._seat(payload, "seat", ART_3_2)

    def _apply_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        old = self._find_bet(payload["player"], payload["seat"])
        if old is not None:
            self.bets.remove(old)
        self.bet_seq += 1
        bet = {
            "seq": self.bet_seq,
            "player": payload["player"],
            "seat": payload["seat"],
            "amount": payload["amount"],
        }
        self.bets.append(bet)
        if bet["player"] not in self.bettors_seen:
            self.bettors_seen.append(bet["player"])
        self.emit("bet.placed", replaced=old is not None, **bet)

    def _check_place_stake(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["amount"] < self.min_stake:
            raise Refused(
                ART_5_4,
                f"the stake carries the first round's winnings: at least {self.min_stake}",
                zh=f"莊本須包括首局贏得的款項：至少 {self.min_stake}",
            )

    def _apply_place_stake(self, payload: Mapping[str, Any], now: float) -> None:
        self.stake = payload["amount"]
        self.emit("stake.placed", player=self.banker, amount=self.stake)

    def _check_co_bank(self, payload: Mapping[str, Any], now: float) -> None:
        player, house = payload["player"], payload.get("house", False)
        if player == self.banker:
            raise Refused(
                ART_5_5,
                "the banker holds the bank; co-banking is for others",
                zh="莊家自己做莊；幫莊是他人的事",
            )
        if house and not paigow.ruleset(self.ruleset).house_co_banks:
            raise Refused(
                ART_5_5,
                f"the house does not co-bank under {self.ruleset}",
                zh=f"{self.ruleset} 規則下賭場不幫莊",
            )
        if not house and any(b["player"] == player for b in self.bets):
            raise Refused(
                ART_5_5,
                f"{player} bets on a door this round and cannot co-bank",
                zh=f"{player} 本局在門上下注，不可幫莊",
            )
        if any(c["player"] == player for c in self.co_bankers):
            raise Refused(
                ART_5_5, f"{player} already co-banks this round", zh=f"{player} 本局已幫莊"
            )

    def _apply_co_bank(self, payload: Mapping[str, Any], now: float) -> None:
        share = {
            "player": payload["player"],
            "amount": payload["amount"],
            "house": payload.get("house", False),
        }
        self.co_bankers.append(share)
        self.emit("bank.co_banked", position=len(self.co_bankers), **share)

    def _check_head_tiles_out(self, payload: Mapping[str, Any], now: float) -> None:
        if self.head_out:
            raise Refused(ART_5_3, "the head tiles are already out", zh="頭牌已經出了")
        if self.stake is None:
            raise Refused(
                ART_5_3,
                "the banker's stake goes on the layout before the head tiles",
                zh="莊本須在頭牌之前放上枱面",
            )

    def _apply_head_tiles_out(self, payload: Mapping[str, Any], now: float) -> None:
        self.head_out = True
        self.emit("tiles.head_out", banker=self.banker)

    def _check_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["player"] != self.banker:
            raise Refused(
                ART_2_2,
                f"the banker ({self.banker}) shakes; nobody for him",
                zh=f"由莊家（{self.banker}）搖骰，他人不可代搖",
            )
        if self.stake is None:
            raise Refused(
                ART_5_3, "the banker's stake is placed before the shake", zh="莊本須在搖骰之前放好"
            )
        if not self.head_out:
            raise Refused(
                ART_5_3,
                "the banker puts out the head tiles first, then shakes",
                zh="莊家先出頭牌，然後搖骰",
            )
        if not self.bets:
            raise Refused(
                ART_2_7,
                "the players' bets are placed before the shake; there is none",
                zh="玩家須在搖骰前下注；現時沒有投注",
            )

    def _apply_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        self.bets_closed = True
        self.invalid_shakes = 0
        self.emit(
            "bets.closed",
            bets=clone(self.bets),
            stake=self.stake,
            co_bankers=clone(self.co_bankers),
            holders={str(s): self.holder(s) for s in self.played_seats()},
        )
        self.command("dice_shaker", "shake")

    def _check_dice_landed(self, payload: Mapping[str, Any], now: float) -> None:
        dice_reading(payload, ART_2_2, ART_2_5)

    def _dice_counted(self, dice: list[int]) -> dict[str, Any]:
        # Art. 2(5): an invalid throw never gets here; the banker has shaken again.
        offset = paigow.first_hand_from_dice(sum(dice), self.hands)
        self.first_hand = (self._banker_seat() + offset) % self.hands
        return {"first_hand": self.first_hand}

    def _check_tile_face_up(self, payload: Mapping[str, Any], now: float) -> None:
        seat = integer(payload, "seat", ART_4, 0, self.hands - 1)
        try:
            tiles = parse_tiles(payload["tile"])
        except TileParseError as exc:
            raise Refused(ART_4, str(exc), zh=f"無法辨認的牌：{exc}") from None
        if len(tiles) != 1:
            raise Refused(ART_4, "name one tile", zh="請只報一張牌")
        # The tile turned while a door was dealt: the door being dealt, or one dealt before.
        being_dealt = self.deal_order()[len(self.dealt)]
        if seat != being_dealt and seat not in self.dealt:
            raise Refused(
                ART_4,
                f"door {seat} is not dealt yet (door {being_dealt} is next)",
                zh=f"第{seat}門尚未派牌（下一門是第{being_dealt}門）",
            )
        if sum(1 for f in self.face_up if f["seat"] == seat) >= 4:
            raise Refused(
                ART_4,
                f"door {seat} has four tiles; all four are reported face up",
                zh=f"第{seat}門已有四張牌，四張都已報為翻開",
            )

    def _apply_tile_face_up(self, payload: Mapping[str, Any], now: float) -> None:
        tile = str(parse_tiles(payload["tile"])[0])
        by_name = not any(ch.isdigit() for ch in payload["tile"])
        self.face_up.append({"seat": payload["seat"], "tile": tile, "by_name": by_name})
        self.emit("tile.face_up", seat=payload["seat"], tile=tile, by_name=by_name)

    def _check_deal_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = integer(payload, "seat", ART_2_3, 0, self.hands - 1)
        turn = self.deal_order()[len(self.dealt)]
        if seat != turn:
            raise Refused(
                ART_2_3,
                f"the deal runs counter-clockwise from door {self.first_hand}: "
                f"door {turn} is dealt next, not door {seat}",
                zh=f"由第{self.first_hand}門起逆時針派牌：下一門是第{turn}門，不是第{seat}門",
            )

    def _apply_deal_hand(self, payload: Mapping[str, Any], now: float) -> None:
        self.dealt.append(payload["seat"])
        self.emit("hand.dealt", seat=payload["seat"], turn=len(self.dealt))
        if len(self.dealt) == self.hands:
            self.emit("tiles.dealt", hands=self.hands, first_hand=self.first_hand)

    # ---- setting and opening ----------------------------------------------------------------

    def _setting(self, payload: Mapping[str, Any], seat: int, article: str) -> Setting:
        raws = [str(payload[key]) for key in ("front", "back")]  # strings: the declared params
        try:
            # One deal, not two parses: a name shared by two faces (杂九 is 4-5 or 3-6) must
            # resolve to both faces when it stands once in front and once behind.
            pairs = parse_deal([str(raw) for raw in raws])
        except TileParseError as exc:
            raise Refused(article, str(exc), zh=f"無法辨認的牌：{exc}") from None
        for key, tiles in zip(("front", "back"), pairs, strict=True):
            if len(tiles) != 2:
                raise Refused(
                    article,
                    f"{key} must be two tiles, not {len(tiles)}",
                    zh=f"{'前手' if key == 'front' else '後手'}須為兩張牌，不是 {len(tiles)} 張",
                )
        front, back = (format_tiles(tiles).split() for tiles in pairs)
        setting: Setting = {"front": front, "back": back}
        others = [t for s, h in self.settings.items() if s != seat for t in h["front"] + h["back"]]
        _check_in_set([*self.used_tiles, *others, *setting["front"], *setting["back"]], article)
        return setting

    def _check_set_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_6_1)
        if seat not in self.played_seats():
            raise Refused(
                ART_6_1,
                f"no bet on door {seat}: its tiles are not played",
                zh=f"第{seat}門沒有投注：其牌不參與",
            )
        if seat in self.set_seats:
            raise Refused(ART_6_1, f"door {seat} has set its hand", zh=f"第{seat}門已配好牌")

    def _apply_set_hand(self, payload: Mapping[str, Any], now: float) -> None:
        # Set face down (Art. 6(1)): the system records that the door has set, not its tiles,
        # which nobody may learn before the croupier opens the hand (Art. 6(2)).
        seat = payload["seat"]
        self.set_seats.append(seat)
        self.emit("hand.set", seat=seat, holder=self.holder(seat))

    def _banker_seat(self) -> int:
        return need(self.banker_seat)

    def _apply_set_banker(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._banker_seat()
        self.set_seats.append(seat)
        self.emit("hand.set", seat=seat, holder=self.banker, banker=True)

    def _check_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = integer(payload, "seat", ART_6_2, 0, self.hands - 1)
        turn = next(s for s in self.opening_order() if s not in self.settings)
        if seat != turn:
            raise Refused(
                ART_6_2,
                f"door {turn} is opened next, not door {seat}",
                zh=f"下一門開牌的是第{turn}門，不是第{seat}門",
            )
        setting = self._setting(payload, seat, ART_6_2)
        _check_face_up(self.face_up, seat, [*setting["front"], *setting["back"]])

    def _apply_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        banker = seat == self.banker_seat
        setting = self.settings[seat] = self._setting(payload, seat, ART_6_2)
        wrong = wrongly_set(setting, self.ruleset, banker=banker)
        if wrong:
            self.wrongly_set.append(seat)
        holder = self.banker if banker else self.holder(seat)
        extra = {"banker": True} if banker else {}
        self.emit("hand.opened", seat=seat, holder=holder, wrongly_set=wrong, **extra, **setting)
        if self.all_open(None):
            self.opened_hands = True
            self.emit("hands.opened", wrongly_set=list(self.wrongly_set))

    def _check_reset_hand(self, payload: Mapping[str, Any], now: float) -> None:
        # The banker's door too, when the rule set corrects the banker (it is then in the list).
        seat = integer(payload, "seat", ART_6_2, 0, self.hands - 1)
        if seat not in self.wrongly_set:
            raise Refused(
                ART_6_2,
                f"door {seat} is set as the rule asks; it is not re-set",
                zh=f"第{seat}門已按規則配牌，不須重配",
            )
        setting = self._setting(payload, seat, ART_6_2)
        if sorted(setting["front"] + setting["back"]) != sorted(
            self.settings[seat]["front"] + self.settings[seat]["back"]
        ):
            raise Refused(ART_6_2, "a re-set uses the same four tiles", zh="重新配牌須用同樣四張牌")
        if wrongly_set(setting, self.ruleset, banker=seat == self.banker_seat):
            raise Refused(
                ART_6_2,
                "the re-set hand must put the largest pair behind",
                zh="重新配牌須把大對放在後手",
            )

    def _apply_reset_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        before = self.settings[seat]
        self.settings[seat] = self._setting(payload, seat, ART_6_2)
        self.wrongly_set.remove(seat)
        self.resets.append({"seat": seat, "before": before, "after": self.settings[seat]})
        extra = {"banker": True} if seat == self.banker_seat else {}
        self.emit("hand.reset", seat=seat, before=before, **extra, **self.settings[seat])

    def _check_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.wrongly_set:
            raise Refused(
                ART_6_2,
                f"doors {self.wrongly_set} must be re-set by the croupier",
                zh=f"第 {self.wrongly_set} 門須由荷官重新配牌",
            )

    def _apply_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        stake = need(self.stake)
        self.settlement = settle_paigow(
            self.settings,
            self.bets,
            banker_seat=self._banker_seat(),
            total=sum(need(self.dice)),
            hands=self.hands,
            stake=stake,
            ruleset=self.ruleset,
            co_bankers=self.co_bankers,
        )
        self.bank_rounds += 1
        # Art. 5(4): the next round's stake is at least what this one left on the layout (the
        # winnings join the stake); it may grow, never shrink.
        self.min_stake = max(int(self.settlement["banker_carried"]), 0)
        if self.hands == 4 and not self.tiles_kept_for_next:
            self.used_tiles = [t for h in self.settings.values() for t in h["front"] + h["back"]]
            self.tiles_kept_for_next = True
            self.emit("tiles.shown_face_up", tiles=self.used_tiles)
        else:
            self.tiles_kept_for_next = False
        self.emit("round.settled", settlement=clone(self.settlement))

    def _check_extend_bank(self, payload: Mapping[str, Any], now: float) -> None:
        consents = payload["consents"]
        if self.bank_rounds < self.bank_limit:
            raise Refused(
                ART_5_1,
                "the bank has rounds left; there is nothing to extend",
                zh="做莊局數未滿：無須續莊",
            )
        # 「除取得各门客人同意外」: every guest of every door, not one voice a door.
        missing = sorted({str(b["player"]) for b in self.bets} - set(consents))
        if missing:
            raise Refused(
                ART_5_1,
                f"every door's guests must agree; {missing} have not",
                zh=f"各門客人須全部同意；{missing} 尚未同意",
            )

    def _apply_extend_bank(self, payload: Mapping[str, Any], now: float) -> None:
        self.bank_limit += 1
        self.extension_consents = sorted(set(payload["consents"]))
        self.emit("bank.extended", consents=self.extension_consents, limit=self.bank_limit)

    def _apply_next_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.bank_rounds >= self.bank_limit:
            self.last_bank_seat = self._banker_seat()
            self.bank_door = self.next_bank_door(self.last_bank_seat)
            self.emit(
                "bank.passed", player=self.banker, rounds=self.bank_rounds, door=self.bank_door
            )
            self.last_banker, self.banker, self.banker_seat = self.banker, None, None
            self.min_stake = 0
            self._new_round_state()
            return
        self.round_id += 1
        self._new_round_state()
        self.emit("round.started", banker=self.banker, min_stake=self.min_stake)

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

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        take_bank=Hooks(check=_check_take_bank, apply=_apply_take_bank),
        decline_bank=Hooks(check=_check_decline_bank, apply=_apply_decline_bank),
        confirm_tile_shuffle=Hooks(apply=_apply_confirm_tile_shuffle),
        move_stacks=Hooks(check=_check_move_stacks, apply=_apply_move_stacks),
        place_bet=Hooks(check=_check_place_bet, apply=_apply_place_bet),
        place_stake=Hooks(check=_check_place_stake, apply=_apply_place_stake),
        co_bank=Hooks(check=_check_co_bank, apply=_apply_co_bank),
        head_tiles_out=Hooks(check=_check_head_tiles_out, apply=_apply_head_tiles_out),
        shake_dice=Hooks(check=_check_shake_dice, apply=_apply_shake_dice),
        dice_landed=Hooks(check=_check_dice_landed),
        tile_face_up=Hooks(check=_check_tile_face_up, apply=_apply_tile_face_up),
        deal_hand=Hooks(check=_check_deal_hand, apply=_apply_deal_hand),
        set_hand=Hooks(check=_check_set_hand, apply=_apply_set_hand),
        set_banker=Hooks(apply=_apply_set_banker),
        open_hand=Hooks(check=_check_open_hand, apply=_apply_open_hand),
        reset_hand=Hooks(check=_check_reset_hand, apply=_apply_reset_hand),
        settle_round=Hooks(check=_check_settle_round, apply=_apply_settle_round),
        extend_bank=Hooks(check=_check_extend_bank, apply=_apply_extend_bank),
        next_round=Hooks(apply=_apply_next_round),
    )


def _check_face_up(face_up: Sequence[FaceUp], seat: int, hand: Sequence[str]) -> None:
    """Art. 4: a tile dealt face up at a door stays in play, so the hand opened there holds it
    (issue 9: a hand entered without it would put another tile in its place)."""
    left = list(hand)
    # Faces named by pips first, so a name (杂九) does not take the face a pip entry needs.
    shown_here = sorted(
        (f for f in face_up if f["seat"] == seat), key=lambda f: bool(f.get("by_name"))
    )
    for shown in shown_here:
        names = [_name(t) for t in left]
        if shown.get("by_name") and _name(shown["tile"]) in names:
            left.pop(names.index(_name(shown["tile"])))
        elif not shown.get("by_name") and shown["tile"] in left:
            left.remove(shown["tile"])
        else:
            what = _name(shown["tile"]) if shown.get("by_name") else shown["tile"]
            raise Refused(
                ART_4,
                f"door {seat} was dealt {what} face up; the hand opened lacks it",
                zh=f"第{seat}門派牌時翻開了 {what}；開出的牌中沒有它",
            )


def _name(tile: str) -> str:
    low, high = (int(x) for x in tile.split("-"))
    return _Tile(low, high).name


def _check_in_set(tiles: Sequence[str], article: str) -> None:
    """The tiles named so far fit in one 32-tile set (with the used half of a 4-hand set)."""
    available = Counter(str(t) for t in TILE_SET)
    named = Counter(tiles)
    over = sorted(t for t, n in named.items() if n > available[t])
    if over:
        raise Refused(
            article,
            f"one set holds fewer of {', '.join(over)} than were named",
            zh=f"一副牌九中 {', '.join(over)} 的數目少於所列",
        )
