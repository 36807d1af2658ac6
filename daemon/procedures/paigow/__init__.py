"""Taiwan Pai Gow (台湾牌九), Portaria 15/90/M: the game as data (`game`), the procedure that
plays it (`procedure`) and the settlement of a round (`settle`)."""

from daemon.procedures.paigow.game import (
    ACTIONS,
    BET_ACTIONS,
    DEVICES,
    GAME,
    MAX_HANDS,
    MAX_STACK_MOVERS,
    PHASES,
    REGULATION,
    ROUNDS_PER_BANK,
    TRANSITIONS,
    Phase,
)
from daemon.procedures.paigow.procedure import PaiGowProcedure
from daemon.procedures.paigow.settle import settle_paigow, wrongly_set

__all__ = [
    "ACTIONS",
    "BET_ACTIONS",
    "DEVICES",
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
