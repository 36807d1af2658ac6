"""Thirteen cards (十三张), Portaria 51/89/M: the game as data (`game`), the procedure that plays
it (`procedure`) and the settlement of a round (`settle`)."""

from daemon.procedures.thirteen.game import (
    ACTIONS,
    ARRANGEMENT_SECONDS,
    BANKER_SEAT,
    BET_ACTIONS,
    CARDS_PER_SEAT,
    DECK,
    DEVICES,
    GAME,
    MIN_CUT,
    PHASES,
    PLAYER_SEATS,
    REGULATION,
    ROW_SIZES,
    ROWS,
    SEATS,
    TRANSITIONS,
    Phase,
)
from daemon.procedures.thirteen.procedure import ThirteenProcedure
from daemon.procedures.thirteen.settle import seat_net, settle_thirteen

__all__ = [
    "ACTIONS",
    "ARRANGEMENT_SECONDS",
    "BANKER_SEAT",
    "BET_ACTIONS",
    "CARDS_PER_SEAT",
    "DECK",
    "DEVICES",
    "GAME",
    "MIN_CUT",
    "PHASES",
    "PLAYER_SEATS",
    "REGULATION",
    "ROWS",
    "ROW_SIZES",
    "SEATS",
    "TRANSITIONS",
    "Phase",
    "ThirteenProcedure",
    "seat_net",
    "settle_thirteen",
]
