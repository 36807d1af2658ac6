"""Thirteen cards (十三张), Portaria 51/89/M: the game as data (`game`), the procedure that plays
it (`procedure`) and the settlement of a round (`settle`)."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from daemon.procedures.thirteen.procedure import ThirteenProcedure
    from daemon.procedures.thirteen.settle import seat_net, settle_thirteen

# The procedure and the settlement load the game's rules engine: imported when first asked for
# (the game's data above is light; a table of the other game never loads this one's rules).
_LAZY = {"ThirteenProcedure": "procedure", "seat_net": "settle", "settle_thirteen": "settle"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib  # noqa: PLC0415

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
