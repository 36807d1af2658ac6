"""Taiwan Pai Gow (台湾牌九), Macau, Portaria 15/90/M of 18 January 1990.

The game as data: here its constants, its phases and the text a dealer reads in each, and its
journal events; its actions (roles, parameters, bilingual labels, the article each check
cites) in `actions.py` and its transition table in `transitions.py`; and here, the legal
procedure they encode.

Art. 5(1)(2): the doors take the bank in turn (`take_bank`), each bank for two rounds unless
every door's players agree to more (`extend_bank`); a player may decline the bank and pass it
on (`decline_bank`), and the one it passes to must have bet before.

Art. 2(1): the croupier shuffles the 32 tiles face down; the house may bring a new set
(`confirm_tile_shuffle`). Art. 2(6): before the dice, the stacks may be moved (`move_stacks`),
with one hand only, players first, at most two players, then the banker, after whom no player
may move them. Art. 2(7) and 5(3): the players' bets (`place_bet`, `withdraw_bet`, `move_bet`)
and the banker's stake (`place_stake`) are placed before the shake; Art. 5(4): after a first
round the banker won, the stake carries the winnings with it and may only grow. Art. 2(2): the
banker shakes, nobody for him (`shake_dice`); the bets close at the shake (Art. 2(7)). Art. 2(5):
a tilted die or one out of the cup is shaken again by the banker (`dice_landed` with
`valid: false`). The dice total counted from the banker counter-clockwise names the first hand
(头门), and the shaker's total is never edited (Art. 2(2)(3)).

Art. 5(3) 「先出头牌，然後摇骰」: the banker puts out the head tiles (`head_tiles_out`) after the
stacks are moved and before the shake; no stack moves after it. Art. 5(5): the house and guests
who bet on no door may co-bank (`co_bank`) before the shake; the main banker's stake goes first.

Art. 2(4): eight or four hands of four tiles by the house's choice; with four, the other four
hands stay stacked for the next round, which is dealt without a shuffle, and the tiles already
used are shown face up. Art. 2(3): the croupier deals a stack of four to each door in turn,
counter-clockwise from the door the dice name (`deal_hand`); a door out of turn is refused.
Art. 4: a tile dealt face up stays valid and the round goes on (`tile_face_up`, reported for the
door being dealt, and checked against the hand later opened there).

Art. 6(1): each player sets the hand into two pairs face down (`set_hand`: the set is recorded,
its tiles are not), then the banker (`set_banker`). Art. 6(2): the croupier opens each hand
(`open_hand`: the tiles enter the system here), the banker's first, then the doors from 头门
counter-clockwise, and re-sets a hand that the rule set says is wrongly set (`reset_hand`).
Art. 5(3), 6(3), 8: the round is settled counter-clockwise from the first hand, within the
bank's stake, with the 5 % commission (`settle_round`), by the rules engine.

The procedure that plays it is `procedure.py` (on its layers: `round.py`, `bank.py`, `deal.py`);
the settlement of a round, `settle.py`.
"""

from __future__ import annotations

from enum import Enum

from daemon.procedures.events import TABLE_EVENTS, procedure_events
from daemon.procedures.spec import (
    Event,
    PhaseText,
    events,
)

REGULATION = "Portaria 15/90/M"
ART_1 = f"{REGULATION} Art. 1"
ART_2_1 = f"{REGULATION} Art. 2(1)"
ART_2_2 = f"{REGULATION} Art. 2(2)"
ART_2_3 = f"{REGULATION} Art. 2(3)"
ART_2_4 = f"{REGULATION} Art. 2(4)"
ART_2_5 = f"{REGULATION} Art. 2(5)"
ART_2_6 = f"{REGULATION} Art. 2(6)"
ART_2_7 = f"{REGULATION} Art. 2(7)"
ART_3_2 = f"{REGULATION} Art. 3(2)"
ART_4 = f"{REGULATION} Art. 4"
ART_5_1 = f"{REGULATION} Art. 5(1)"
ART_5_2 = f"{REGULATION} Art. 5(2)"
ART_5_3 = f"{REGULATION} Art. 5(3)"
ART_5_4 = f"{REGULATION} Art. 5(4)"
ART_5_5 = f"{REGULATION} Art. 5(5)"
ART_6_1 = f"{REGULATION} Art. 6(1)"
ART_6_2 = f"{REGULATION} Art. 6(2)"
ART_6_8 = f"{REGULATION} Art. 5(3), 6(3), 8"

# Art. 1 names this equipment; a table without it does not start.
REQUIRED_DEVICES = ("dice_shaker",)
DEVICES = ("dice_shaker",)
# Art. 2(7), 5(3): the bets and the banker's stake are placed before the shake, none after it.
BET_ACTIONS = ("place_bet", "withdraw_bet", "move_bet", "place_stake")
ROUNDS_PER_BANK = 2
MAX_STACK_MOVERS = 2
MAX_HANDS = 8  # Art. 2(4): eight hands or four; a door is numbered 0..hands-1


class Phase(Enum):
    EQUIPMENT_CHECK = "EQUIPMENT_CHECK"
    BANK_OFFER = "BANK_OFFER"
    SHUFFLE = "SHUFFLE"
    BETTING = "BETTING"
    SHAKING = "SHAKING"
    DEALING = "DEALING"
    SETTING = "SETTING"
    BANKER_SETTING = "BANKER_SETTING"
    OPENING = "OPENING"
    OPENED = "OPENED"
    ROUND_OVER = "ROUND_OVER"
    HOLD = "HOLD"
    TILT = "TILT"


P = Phase

PHASES: dict[str, PhaseText] = {
    "EQUIPMENT_CHECK": PhaseText(
        "Equipment check", "設備檢查", "identify the dice shaker, open the table", "識別骰盅，開枱"
    ),
    "BANK_OFFER": PhaseText("Bank offer", "做莊", "a player takes the bank", "玩家做莊"),
    "SHUFFLE": PhaseText(
        "Shuffle", "洗牌", "the 32 tiles are shuffled face down", "三十二隻牌面向下洗牌"
    ),
    "BETTING": PhaseText(
        "Betting",
        "下注",
        "stacks moved, bets, the stake and co-bankers, the head tiles out, then the dice",
        "移牌疊，下注、莊家本金及幫莊，出頭牌，然後搖骰",
    ),
    "SHAKING": PhaseText(
        "Dice", "搖骰", "the banker shakes; the shaker reports", "莊家搖骰，等待結果"
    ),
    "DEALING": PhaseText(
        "Dealing",
        "派牌",
        "four tiles to each hand, counter-clockwise from the first hand",
        "由頭門起逆時針每門派四隻牌",
    ),
    "SETTING": PhaseText("Setting", "配牌", "players set their hands face down", "玩家蓋牌配牌"),
    "BANKER_SETTING": PhaseText("Banker sets", "莊家配牌", "the banker sets", "莊家配牌"),
    "OPENING": PhaseText(
        "Opening",
        "開牌",
        "the croupier opens the banker's hand, then each door",
        "荷官先開莊家牌，再開各門",
    ),
    "OPENED": PhaseText("Opened", "已開牌", "re-set wrong hands, settle", "更正配牌，結算"),
    "ROUND_OVER": PhaseText("Round over", "本局完", "the next round", "下一局"),
    "HOLD": PhaseText("HOLD", "暫停", "a supervisor clears the hold", "由主任解除暫停"),
    "TILT": PhaseText("TILT", "故障", "a supervisor clears the tilt", "由主任解除故障"),
}


# Every journal line a Pai Gow table writes: its procedure's own events, the shared layers' and
# the table's around it (daemon/procedures/events.py). `emit` refuses any other name.
EVENTS: dict[str, Event] = events(
    *procedure_events(opened_to="BANK_OFFER"),
    # The shuffle, or betting when the tiles are kept (Art. 2(4)).
    Event("round.started", "Round started", "新一局"),
    Event("bank.taken", "Bank taken", "已坐莊"),
    Event("bank.declined", "Bank declined", "不坐莊", "BANK_OFFER"),
    Event("bank.extended", "Bank extended", "連莊", "ROUND_OVER"),
    Event("bank.passed", "Bank passed on", "換莊", "BANK_OFFER"),
    Event("tiles.shuffled", "Tiles shuffled", "已洗牌", "BETTING"),
    Event("stacks.moved", "Stacks moved", "已移牌墩", "BETTING"),
    Event("stake.placed", "Bank's stake placed", "莊家已下本", "BETTING"),
    Event("bank.co_banked", "Co-banker joined", "已合莊", "BETTING"),
    Event("tiles.head_out", "Head tiles out", "已出頭牌", "BETTING"),
    # Art. 4: a tile dealt face up stays valid and lies open to all.
    Event("tile.face_up", "Tile face up", "翻開的牌", "DEALING", opens="shown"),
    Event("hand.dealt", "Hand dealt", "已派牌"),
    Event("tiles.dealt", "Tiles dealt", "派牌完成", "SETTING"),
    # Art. 6(1): set face down; the system records that it is set, never its tiles.
    Event("hand.set", "Hand set", "已排牌"),
    # Art. 6(2): the croupier opens each hand, the banker's first.
    Event("hand.opened", "Hand opened", "已開牌", opens="door"),
    Event("hands.opened", "All hands open", "全部開牌", "OPENED", opens="all"),
    Event("hand.reset", "Hand re-set", "已重排", "OPENED"),
    # Art. 2(4): with four hands, the first half's tiles are shown face up to all.
    Event("tiles.shown_face_up", "Tiles shown face up", "已亮牌", opens="shown"),
    *TABLE_EVENTS,
)
