"""Taiwan Pai Gow (台湾牌九), Portaria 15/90/M: the game as data (`game`), the procedure that
plays it (`procedure`) and the settlement of a round (`settle`)."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from daemon.procedures.paigow.procedure import PaiGowProcedure
    from daemon.procedures.paigow.settle import settle_paigow, wrongly_set

# The procedure and the settlement load the game's rules engine: imported when first asked for
# (the game's data above is light; a table of the other game never loads this one's rules).
_LAZY = {"PaiGowProcedure": "procedure", "settle_paigow": "settle", "wrongly_set": "settle"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib  # noqa: PLC0415

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
