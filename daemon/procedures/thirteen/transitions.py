"""Thirteen cards' transition table: from which phase each action leads to which, and the
conditions (`ThirteenRound`'s, read after the action's effects) that choose between rows
(Portaria 51/89/M, the legal procedure told in `daemon/procedures/thirteen/game.py`).
"""

from __future__ import annotations

from typing import Any

from daemon.procedures.common import VOIDED, fault_transitions
from daemon.procedures.thirteen.game import P, Phase

TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "device_identified", "source": P.EQUIPMENT_CHECK, "dest": P.EQUIPMENT_CHECK},
    {"trigger": "open_table", "source": P.EQUIPMENT_CHECK, "dest": P.HAND_SHUFFLE},
    {"trigger": "confirm_hand_shuffle", "source": P.HAND_SHUFFLE, "dest": P.MACHINE_SHUFFLE},
    {
        "trigger": "shuffle_completed",
        "source": P.MACHINE_SHUFFLE,
        "dest": P.CUT,
        "conditions": "shuffle_good",
    },
    {"trigger": "shuffle_completed", "source": P.MACHINE_SHUFFLE, "dest": P.TILT},
    {"trigger": "confirm_cut", "source": P.CUT, "dest": P.SHOE_LOADING},
    {"trigger": "load_shoe", "source": P.SHOE_LOADING, "dest": P.DEALING, "conditions": "redeal"},
    {"trigger": "load_shoe", "source": P.SHOE_LOADING, "dest": P.BETTING},
    {"trigger": "place_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "withdraw_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "move_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "shake_dice", "source": P.BETTING, "dest": P.SHAKING},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.DEALING, "conditions": "dice_good"},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.TILT, "conditions": "dice_failed"},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.SHAKING},
    # A card of the deal under way, the shoe sound: 51 of a round's 52 reads. Written first, its
    # guards exclude every other row of card_read (daemon.procedures.guards.exclusive), so
    # `transitions` finds it first and no other row could have fired instead.
    {
        "trigger": "card_read",
        "source": P.DEALING,
        "dest": P.DEALING,
        "unless": ["shoe_faulted", "deal_complete"],
    },
    {"trigger": "card_read", "source": P.DEALING, "dest": P.TILT, "conditions": "shoe_faulted"},
    # Without a banker (003 way 3, 「四人对比」) every seat arranges at once after the deal.
    {
        "trigger": "card_read",
        "source": P.DEALING,
        "dest": P.PLAYERS_ARRANGING,
        "conditions": ["deal_complete", "no_banker"],
    },
    {
        "trigger": "card_read",
        "source": P.DEALING,
        "dest": P.BANKER_ARRANGING,
        "conditions": "deal_complete",
    },
    {"trigger": "propose_card", "source": P.DEALING, "dest": P.DEALING},
    {"trigger": "reject_override", "source": P.DEALING, "dest": P.DEALING},
    {
        "trigger": "approve_override",
        "source": [P.DEALING, P.BANKER_ARRANGING, P.BANKER_ARRANGED],
        "dest": P.HAND_SHUFFLE,
        "conditions": VOIDED,
    },
    {
        "trigger": "approve_override",
        "source": P.DEALING,
        "dest": P.PLAYERS_ARRANGING,
        "conditions": ["deal_complete", "no_banker"],
    },
    {
        "trigger": "approve_override",
        "source": P.DEALING,
        "dest": P.BANKER_ARRANGING,
        "conditions": "deal_complete",
    },
    {"trigger": "approve_override", "source": P.DEALING, "dest": P.DEALING},
    {"trigger": "correct_misdeal", "source": P.DEALING, "dest": P.DEALING},
    {"trigger": "correct_misdeal", "source": P.BANKER_ARRANGING, "dest": P.BANKER_ARRANGING},
    # Art. 4's void of the deal: a supervisor's proposal (the phase stays), then a second
    # supervisor's approval (tabled H5), back to the hand shuffle.
    *(
        {"trigger": "void_deal", "source": phase, "dest": phase}
        for phase in (P.DEALING, P.BANKER_ARRANGING, P.BANKER_ARRANGED)
    ),
    *(
        {"trigger": "reject_override", "source": phase, "dest": phase}
        for phase in (P.BANKER_ARRANGING, P.BANKER_ARRANGED)
    ),
    {"trigger": "arrange_banker", "source": P.BANKER_ARRANGING, "dest": P.BANKER_ARRANGED},
    {"trigger": "arrange_banker", "source": P.BANKER_ARRANGED, "dest": P.BANKER_ARRANGED},
    {"trigger": "open_banker", "source": P.BANKER_ARRANGED, "dest": P.PLAYERS_ARRANGING},
    {
        "trigger": "player_arranged",
        "source": P.PLAYERS_ARRANGING,
        "dest": P.SETTLING,
        "conditions": "all_arranged",
    },
    {"trigger": "player_arranged", "source": P.PLAYERS_ARRANGING, "dest": P.PLAYERS_ARRANGING},
    {"trigger": "timer_expired", "source": P.PLAYERS_ARRANGING, "dest": P.SETTLING},
    # The banker's open hand is placed while the players arrange, or at the settlement; each
    # player's once opened there (Art. 8: hand against hand).
    {"trigger": "enter_arrangement", "source": P.PLAYERS_ARRANGING, "dest": P.PLAYERS_ARRANGING},
    {"trigger": "open_hand", "source": P.SETTLING, "dest": P.SETTLING},
    {"trigger": "enter_arrangement", "source": P.SETTLING, "dest": P.SETTLING},
    # A placed hand is final (Art. 2(d), 8): corrected only by two supervisors, where it lies.
    *(
        {"trigger": trigger, "source": phase, "dest": phase}
        for trigger in ("correct_arrangement", "approve_override", "reject_override")
        for phase in (P.PLAYERS_ARRANGING, P.SETTLING)
    ),
    # Art. 5: advice is given once the players may look at their cards (Art. 2(d)).
    {"trigger": "advise_holder", "source": P.PLAYERS_ARRANGING, "dest": P.PLAYERS_ARRANGING},
    # Art. 3: from the deal to the settlement, the dealer records cards taken away.
    *(
        {"trigger": "cards_away", "source": phase, "dest": phase}
        for phase in (
            P.DEALING,
            P.BANKER_ARRANGING,
            P.BANKER_ARRANGED,
            P.PLAYERS_ARRANGING,
            P.SETTLING,
        )
    ),
    {"trigger": "settle_round", "source": P.SETTLING, "dest": P.ROUND_OVER},
    {"trigger": "start_round", "source": P.ROUND_OVER, "dest": P.HAND_SHUFFLE},
    *fault_transitions(
        Phase,
        P.HOLD,
        P.TILT,
        restart=[(P.EQUIPMENT_CHECK, "before_opening"), (P.HAND_SHUFFLE, "table_open")],
    ),
]
