"""Thirteen cards' actions as data: who may take each, the article it cites, its labels and its
parameters (Portaria 51/89/M, the legal procedure told in `daemon/procedures/thirteen/game.py`).
"""

from __future__ import annotations

from daemon.procedures.common import common_actions, override_actions
from daemon.procedures.spec import Action, Param, actions, one_hand, player, seat
from daemon.procedures.thirteen.game import (
    ART_1,
    ART_2A,
    ART_2B,
    ART_2C,
    ART_2D,
    ART_3,
    ART_4,
    ART_5,
    ART_7,
    ART_7_11,
    ART_8,
    ART_11,
    DECK,
    MIN_CUT,
    REGULATION,
)


def _row(n: int, en: str, zh: str) -> Param:
    return Param("list[str]", min_length=n, max_length=n, label_en=en, label_zh=zh, article=ART_7)


_ROWS = {
    "head": _row(3, "Head (3)", "頭道"),
    "middle": _row(5, "Middle (5)", "中道"),
    "tail": _row(5, "Tail (5)", "尾道"),
}
# Seats 0-3: seat 0 is the banker's in a game with a banker (refused there, Art. 3), a
# player's in one without (003 way 3, 「4人分別比牌」).
_SEAT = seat(0, 3, "Seat", "門")
_AWAY = ("left_table", "other_seat")
DEALER, SUPERVISOR, DEVICE, SYSTEM = (
    frozenset({"dealer"}),
    frozenset({"supervisor"}),
    frozenset({"device"}),
    frozenset({"system"}),
)

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
        "confirm_hand_shuffle",
        DEALER,
        ART_2A,
        "the dealer hand-shuffled",
        label_en="Hand shuffle done",
        label_zh="人手洗牌完成",
        params={},
    ),
    Action(
        "shuffle_completed",
        DEVICE,
        ART_2A,
        "the shuffler reports a count",
        label_en="Shuffle done",
        label_zh="洗牌機完成",
    ),
    Action(
        "confirm_cut",
        DEALER,
        ART_2A,
        "the cut with the white card",
        label_en="Cut",
        label_zh="切牌",
        params={
            "by": Param("str", choices=("player", "dealer"), label_en="Cut by", label_zh="切牌者"),
            "player": Param(
                "str",
                required=False,
                min_length=1,
                max_length=64,
                label_en="Player",
                label_zh="玩家",
            ),
            "players_declined": Param(
                "bool", required=False, label_en="No player will cut", label_zh="玩家不切"
            ),
            # The text sets only the lower bound; a cut leaving fewer than ten is the same short
            # cut taken from the other end, so both packets must hold ten.
            "cards": Param(
                "int",
                minimum=MIN_CUT,
                maximum=DECK - MIN_CUT,
                label_en="Cards cut",
                label_zh="切牌張數",
            ),
            "one_hand": one_hand(),
        },
    ),
    Action(
        "load_shoe",
        DEALER,
        ART_2A,
        "the cut cards go into the shoe",
        label_en="Load shoe",
        label_zh="入牌靴",
        params={},
    ),
    Action(
        "place_bet",
        DEALER,
        ART_3,
        "a player's bet on a seat",
        label_en="Place bet",
        label_zh="下注",
        params={
            "player": player(),
            "seat": _SEAT,
            "units": Param(
                "int", minimum=1, maximum=100, label_en="Units", label_zh="注數", article=ART_11
            ),
            # The money follows from the units and the table's unit value; when given it must
            # be that (`daemon.procedures.stakes`).
            "amount": Param(
                "int",
                required=False,
                minimum=1,
                maximum=10**12,
                label_en="Amount",
                label_zh="金額",
                article=ART_11,
            ),
            "seated": Param("bool", label_en="Seated", label_zh="在座", article=ART_5),
        },
    ),
    Action(
        "withdraw_bet",
        DEALER,
        ART_2C,
        "a bet is taken back",
        label_en="Withdraw bet",
        label_zh="撤注",
        params={"player": player(), "seat": _SEAT},
    ),
    Action(
        "move_bet",
        DEALER,
        ART_2C,
        "a bet moves to another seat",
        label_en="Move bet",
        label_zh="移注",
        params={
            "player": player(),
            "from_seat": seat(0, 3, "From seat", "原門"),
            "to_seat": seat(0, 3, "To seat", "新門"),
        },
    ),
    Action(
        "shake_dice",
        DEALER,
        ART_2B,
        "the highest bettor shakes",
        label_en="Shake dice",
        label_zh="搖骰",
        params={"player": player("Highest bettor", "最高投注者")},
    ),
    Action(
        "dice_landed",
        DEVICE,
        ART_2B,
        "the shaker reports the dice",
        label_en="Dice landed",
        label_zh="骰子結果",
    ),
    Action(
        "card_read",
        DEVICE,
        ART_2B,
        "the shoe reader reads a card",
        label_en="Card read",
        label_zh="讀牌",
    ),
    Action(
        "correct_misdeal",
        DEALER,
        ART_4,
        "wrongly dealt cards put right",
        label_en="Correct misdeal",
        label_zh="更正錯發",
        params={
            "cards": Param(
                "list[str]",
                min_length=1,
                max_length=DECK,
                label_en="Cards to re-deal",
                label_zh="重發的牌",
            )
        },
    ),
    Action(
        "void_deal",
        SUPERVISOR,
        ART_4,
        "a misdeal that cannot be put right",
        label_en="Void the deal",
        label_zh="作廢此次發牌",
        params={},
    ),
    Action(
        "propose_card",
        DEALER,
        ART_4,
        "the dealer enters a misread card by hand, pending a supervisor",
        label_en="Enter misread card",
        label_zh="輸入誤讀的牌",
        params={
            "card": Param("str", min_length=2, max_length=3, label_en="Card", label_zh="牌"),
            "note": Param("str", required=False, max_length=200, label_en="Note", label_zh="備註"),
        },
    ),
    Action(
        "arrange_banker",
        DEALER,
        ART_2D,
        "the banker has arranged, face down (no cards named)",
        label_en="Banker arranged",
        label_zh="莊家已排牌",
        params={},
    ),
    Action(
        "open_banker",
        DEALER,
        ART_2D,
        "the banker opens",
        label_en="Banker opens",
        label_zh="莊家開牌",
        params={},
    ),
    Action(
        "player_arranged",
        DEALER,
        ART_2D,
        "a player's hand is arranged, face down, within the five minutes",
        label_en="Player arranged",
        label_zh="閒家已排牌",
        params={"seat": _SEAT},
    ),
    Action(
        "open_hand",
        DEALER,
        ART_8,
        "a player's hand is opened against the banker's: 13 cards face up",
        label_en="Open hand",
        label_zh="開牌",
        params={"seat": _SEAT},
        opens="door",  # Art. 8: its 13 cards face up, from this input on
    ),
    Action(
        "enter_arrangement",
        DEALER,
        ART_2D,
        "an open hand's cards placed into head, middle and tail",
        label_en="Place the open hand",
        label_zh="排入三道",
        params={"seat": _SEAT, **_ROWS},
    ),
    Action(
        "correct_arrangement",
        SUPERVISOR,
        ART_8,
        "correct a placed open hand's rows: a supervisor's proposal a second supervisor approves",
        label_en="Correct a placed hand",
        label_zh="更正已排的牌",
        params={"seat": _SEAT, **_ROWS},
    ),
    Action(
        "advise_holder",
        DEALER,
        ART_5,
        "another bettor on the seat advises its holder",
        label_en="Holder advised",
        label_zh="同門建議排牌",
        params={"player": player("Adviser", "建議者"), "seat": _SEAT},
    ),
    Action(
        "cards_away",
        DEALER,
        ART_3,
        "a player left the table with cards, or holds another seat's",
        label_en="Cards away",
        label_zh="持牌離枱/持他門牌",
        params={
            "player": player(),
            "seat": _SEAT,
            "what": Param(
                "str",
                choices=_AWAY,
                label_en="Left the table / other seat's cards",
                label_zh="離枱 / 他門牌",
            ),
        },
    ),
    Action(
        "timer_expired",
        SYSTEM,
        ART_2D,
        "the five minutes are over",
        label_en="Time up",
        label_zh="時間到",
    ),
    Action(
        "settle_round",
        DEALER,
        ART_7_11,
        "settle the round",
        label_en="Settle",
        label_zh="結算",
        params={},
    ),
    Action(
        "start_round",
        DEALER,
        ART_2A,
        "the next round begins",
        label_en="Next round",
        label_zh="下一局",
        params={},
    ),
    *override_actions(ART_4),
    *common_actions(REGULATION),
)
