"""Taiwan Pai Gow's transition table: from which phase each action leads to which, and the
conditions (`PaiGowRound`'s, read after the action's effects) that choose between rows
(Portaria 15/90/M, the legal procedure told in `daemon/procedures/paigow/game.py`).
"""

from __future__ import annotations

from typing import Any

from daemon.procedures.common import fault_transitions
from daemon.procedures.paigow.game import P, Phase

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
