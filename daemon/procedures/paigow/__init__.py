"""Taiwan Pai Gow (台湾牌九), Portaria 15/90/M: the game as data (`game`), the procedure that
plays it (`procedure`) and the settlement of a round (`settle`), declared together as one
`Game` (`GAME`): its phases, actions, events, what a person may see, and the procedure class."""

from daemon.procedures.paigow import visibility
from daemon.procedures.paigow.actions import ACTIONS
from daemon.procedures.paigow.game import (
    BET_ACTIONS,
    DEVICES,
    EVENTS,
    MAX_HANDS,
    MAX_STACK_MOVERS,
    PHASES,
    REGULATION,
    REQUIRED_DEVICES,
    ROUNDS_PER_BANK,
    Phase,
)
from daemon.procedures.paigow.procedure import PaiGowProcedure
from daemon.procedures.paigow.settle import settle_paigow, wrongly_set
from daemon.procedures.paigow.transitions import TRANSITIONS
from daemon.procedures.spec import Game

GAME = Game(
    "paigow",
    REGULATION,
    PHASES,
    ACTIONS,
    DEVICES,
    REQUIRED_DEVICES,
    visibility=visibility.declare(),
    events=EVENTS,
    procedure=PaiGowProcedure,
)

__all__ = [
    "ACTIONS",
    "BET_ACTIONS",
    "DEVICES",
    "EVENTS",
    "GAME",
    "MAX_HANDS",
    "MAX_STACK_MOVERS",
    "PHASES",
    "REGULATION",
    "ROUNDS_PER_BANK",
    "TRANSITIONS",
    "PaiGowProcedure",
    "Phase",
    "settle_paigow",
    "wrongly_set",
]
