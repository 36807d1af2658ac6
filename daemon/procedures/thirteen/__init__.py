"""Thirteen cards (十三张), Portaria 51/89/M: the game as data (`game`), the procedure that plays
it (`procedure`) and the settlement of a round (`settle`), declared together as one `Game`
(`GAME`): its phases, actions, events, what a person may see, and the procedure class."""

from daemon.procedures.spec import Game
from daemon.procedures.thirteen import visibility
from daemon.procedures.thirteen.actions import ACTIONS
from daemon.procedures.thirteen.game import (
    ARRANGEMENT_SECONDS,
    BANKER_SEAT,
    BET_ACTIONS,
    CARDS_PER_SEAT,
    DECK,
    DEVICES,
    EVENTS,
    MIN_CUT,
    PHASES,
    PLAYER_SEATS,
    REGULATION,
    REQUIRED_DEVICES,
    ROW_SIZES,
    ROWS,
    SEATS,
    Phase,
)
from daemon.procedures.thirteen.procedure import ThirteenProcedure
from daemon.procedures.thirteen.settle import seat_net, settle_thirteen
from daemon.procedures.thirteen.transitions import TRANSITIONS

GAME = Game(
    "thirteen",
    REGULATION,
    PHASES,
    ACTIONS,
    DEVICES,
    REQUIRED_DEVICES,
    visibility=visibility.declare(banker_seat=BANKER_SEAT, rows=ROWS),
    events=EVENTS,
    procedure=ThirteenProcedure,
)

__all__ = [
    "ACTIONS",
    "ARRANGEMENT_SECONDS",
    "BANKER_SEAT",
    "BET_ACTIONS",
    "CARDS_PER_SEAT",
    "DECK",
    "DEVICES",
    "EVENTS",
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
