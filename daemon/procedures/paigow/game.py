"""Taiwan Pai Gow (台湾牌九), Macau, Portaria 15/90/M of 18 January 1990.

The game as data: its phases and the text a dealer reads in each, its actions (roles,
parameters, bilingual labels, the article each check cites) and its transition table; and
here, the legal procedure it encodes.

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

The procedure that plays it is `procedure.py`; the settlement of a round, `settle.py`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from daemon.procedures.common import (
    HOUSE_VOID,
    common_actions,
    fault_transitions,
    override_actions,
)
from daemon.procedures.events import TABLE_EVENTS, procedure_events
from daemon.procedures.spec import (
    Action,
    Event,
    Param,
    PhaseText,
    actions,
    amount,
    events,
    one_hand,
    player,
    seat,
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


def _door(en: str = "Door", zh: str = "門", article: str | None = None) -> Param:
    return seat(0, MAX_HANDS - 1, en, zh, article)


_PAIR = {
    "front": Param("str", max_length=64, label_en="Front pair", label_zh="前手"),
    "back": Param("str", max_length=64, label_en="Back pair", label_zh="後手"),
}
DEALER, DEVICE = frozenset({"dealer"}), frozenset({"device"})

ACTIONS: dict[str, Action] = actions(
    Action(
        "device_identified",
        DEVICE,
        ART_1,
        "a device's identity is read",
        label_en="Device identified",
        label_zh="設備已識別",
    ),
    Action(
        "open_table",
        DEALER,
        ART_1,
        "open the table, equipment checked",
        label_en="Open table",
        label_zh="開枱",
        params={},
    ),
    Action(
        "take_bank",
        DEALER,
        ART_5_1,
        "a player takes the bank",
        label_en="Take the bank",
        label_zh="做莊",
        params={"player": player(), "seat": _door()},
    ),
    Action(
        "decline_bank",
        DEALER,
        ART_5_2,
        "a player declines the bank",
        label_en="Decline the bank",
        label_zh="不做莊",
        params={"player": player()},
    ),
    Action(
        "confirm_tile_shuffle",
        DEALER,
        ART_2_1,
        "the tiles are shuffled",
        label_en="Tiles shuffled",
        label_zh="洗牌完成",
        params={"new_set": Param("bool", required=False, label_en="New set", label_zh="新牌")},
    ),
    Action(
        "move_stacks",
        DEALER,
        ART_2_6,
        "a player or the banker moves",
        label_en="Move stacks",
        label_zh="移牌疊",
        params={
            "by": Param(
                "str", choices=("player", "banker"), label_en="Moved by", label_zh="移牌者"
            ),
            "player": player(),
            "one_hand": one_hand(),
        },
    ),
    Action(
        "place_bet",
        DEALER,
        ART_2_7,
        "a player's bet on a door",
        label_en="Place bet",
        label_zh="下注",
        params={
            "player": player(),
            "seat": _door(article=ART_3_2),
            # A whole number of the table's units, within its minimum and maximum (the text
            # names no unit: daemon/procedures/stakes.py); `units`, when given, must agree.
            "amount": amount(),
            "units": Param(
                "int", required=False, minimum=1, maximum=10**6, label_en="Units", label_zh="注數"
            ),
        },
    ),
    Action(
        "withdraw_bet",
        DEALER,
        ART_2_7,
        "a bet is taken back",
        label_en="Withdraw bet",
        label_zh="撤注",
        params={"player": player(), "seat": _door()},
    ),
    Action(
        "move_bet",
        DEALER,
        ART_2_7,
        "a bet moves to another door",
        label_en="Move bet",
        label_zh="移注",
        params={
            "player": player(),
            "from_seat": _door("From door", "原門"),
            "to_seat": _door("To door", "新門"),
        },
    ),
    Action(
        "place_stake",
        DEALER,
        ART_5_3,
        "the banker's stake",
        label_en="Banker's stake",
        label_zh="莊家本金",
        params={"amount": amount()},
    ),
    Action(
        "co_bank",
        DEALER,
        ART_5_5,
        "the house or a guest co-banks",
        label_en="Co-bank",
        label_zh="幫莊",
        params={
            "player": player("Co-banker", "幫莊者"),
            "amount": amount(),
            "house": Param("bool", required=False, label_en="The house", label_zh="場方"),
        },
    ),
    Action(
        "head_tiles_out",
        DEALER,
        ART_5_3,
        "the banker puts out the head tiles",
        label_en="Head tiles out",
        label_zh="出頭牌",
        params={},
    ),
    Action(
        "shake_dice",
        DEALER,
        ART_2_2,
        "the banker shakes",
        label_en="Shake dice",
        label_zh="搖骰",
        params={"player": player("Banker", "莊家")},
    ),
    Action(
        "dice_landed",
        DEVICE,
        ART_2_2,
        "the shaker reports the dice",
        label_en="Dice landed",
        label_zh="骰子結果",
    ),
    Action(
        "tile_face_up",
        DEALER,
        ART_4,
        "a tile dealt face up stays valid",
        label_en="Tile face up",
        label_zh="牌面朝上",
        params={"seat": _door(), "tile": player("Tile", "牌")},
    ),
    Action(
        "deal_hand",
        DEALER,
        ART_2_3,
        "four tiles dealt to a door, in turn",
        label_en="Deal to door",
        label_zh="派牌到門",
        params={"seat": _door()},
    ),
    Action(
        "set_hand",
        DEALER,
        ART_6_1,
        "a player has set, face down",
        label_en="Hand set",
        label_zh="已配牌",
        params={"seat": _door()},
    ),
    Action(
        "set_banker",
        DEALER,
        ART_6_1,
        "the banker has set, face down",
        label_en="Banker set",
        label_zh="莊家已配牌",
        params={},
    ),
    Action(
        "open_hand",
        DEALER,
        ART_6_2,
        "the croupier opens a hand: its pairs",
        label_en="Open hand",
        label_zh="開牌",
        params={"seat": _door(), **_PAIR},
        opens="door",  # Art. 6(2): its tiles enter the system face up at the table
    ),
    Action(
        "reset_hand",
        DEALER,
        ART_6_2,
        "the croupier re-sets a hand",
        label_en="Re-set hand",
        label_zh="重新配牌",
        params={"seat": _door(), **_PAIR},
    ),
    Action(
        "settle_round",
        DEALER,
        ART_6_8,
        "settle the round",
        label_en="Settle",
        label_zh="結算",
        params={},
    ),
    Action(
        "extend_bank",
        DEALER,
        ART_5_1,
        "every door agrees to more",
        label_en="Extend the bank",
        label_zh="續莊",
        params={
            "consents": Param(
                "list[str]",
                max_length=64,
                label_en="Guests agreeing",
                label_zh="同意的客人",
            )
        },
    ),
    Action(
        "next_round",
        DEALER,
        ART_5_1,
        "the next round begins",
        label_en="Next round",
        label_zh="下一局",
        params={},
    ),
    *override_actions(HOUSE_VOID),  # a void once tiles are known: two supervisors (H5)
    *common_actions(REGULATION),
)

TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "device_identified", "source": P.EQUIPMENT_CHECK, "dest": P.EQUIPMENT_CHECK},
    {"trigger": "open_table", "source": P.EQUIPMENT_CHECK, "dest": P.BANK_OFFER},
    {"trigger": "decline_bank", "source": P.BANK_OFFER, "dest": P.BANK_OFFER},
    {"trigger": "take_bank", "source": P.BANK_OFFER, "dest": P.BETTING, "conditions": "tiles_kept"},
    {"trigger": "take_bank", "source": P.BANK_OFFER, "dest": P.SHUFFLE},
    {"trigger": "confirm_tile_shuffle", "source": P.SHUFFLE, "dest": P.BETTING},
    {"trigger": "move_stacks", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "place_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "withdraw_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "move_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "place_stake", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "co_bank", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "head_tiles_out", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "shake_dice", "source": P.BETTING, "dest": P.SHAKING},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.DEALING, "conditions": "dice_good"},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.TILT, "conditions": "dice_failed"},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.SHAKING},
    {"trigger": "tile_face_up", "source": P.DEALING, "dest": P.DEALING},
    # A hand of the deal under way (all but the last of a round's): written first, its guard
    # excludes the other row (daemon.procedures.guards.exclusive), so it is found first.
    {"trigger": "deal_hand", "source": P.DEALING, "dest": P.DEALING, "unless": "all_dealt"},
    {"trigger": "deal_hand", "source": P.DEALING, "dest": P.SETTING, "conditions": "all_dealt"},
    {"trigger": "set_hand", "source": P.SETTING, "dest": P.BANKER_SETTING, "conditions": "all_set"},
    {"trigger": "set_hand", "source": P.SETTING, "dest": P.SETTING},
    {"trigger": "set_banker", "source": P.BANKER_SETTING, "dest": P.OPENING},
    {"trigger": "open_hand", "source": P.OPENING, "dest": P.OPENED, "conditions": "all_open"},
    {"trigger": "open_hand", "source": P.OPENING, "dest": P.OPENING},
    {"trigger": "reset_hand", "source": P.OPENED, "dest": P.OPENED},
    {"trigger": "settle_round", "source": P.OPENED, "dest": P.ROUND_OVER},
    {"trigger": "extend_bank", "source": P.ROUND_OVER, "dest": P.ROUND_OVER},
    {
        "trigger": "next_round",
        "source": P.ROUND_OVER,
        "dest": P.BANK_OFFER,
        "conditions": "bank_over",
    },
    {
        "trigger": "next_round",
        "source": P.ROUND_OVER,
        "dest": P.BETTING,
        "conditions": "tiles_kept",
    },
    {"trigger": "next_round", "source": P.ROUND_OVER, "dest": P.SHUFFLE},
    *fault_transitions(
        Phase,
        P.HOLD,
        P.TILT,
        restart=[
            (P.EQUIPMENT_CHECK, "before_opening"),
            (P.BANK_OFFER, "no_banker"),
            (P.SHUFFLE, "table_open"),
        ],
    ),
]

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
