"""Taiwan Pai Gow's actions as data: who may take each, the article it cites, its labels and its
parameters (Portaria 15/90/M, the legal procedure told in `daemon/procedures/paigow/game.py`).
"""

from __future__ import annotations

from daemon.procedures.common import HOUSE_VOID, common_actions, override_actions
from daemon.procedures.paigow.game import (
    ART_1,
    ART_2_1,
    ART_2_2,
    ART_2_3,
    ART_2_6,
    ART_2_7,
    ART_3_2,
    ART_4,
    ART_5_1,
    ART_5_2,
    ART_5_3,
    ART_5_5,
    ART_6_1,
    ART_6_2,
    ART_6_8,
    MAX_HANDS,
    REGULATION,
)
from daemon.procedures.spec import Action, Param, actions, amount, one_hand, player, seat


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
