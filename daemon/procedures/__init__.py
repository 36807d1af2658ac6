"""One `transitions` state machine per game: states, triggers and guards as data.

Each game is a package: its declaration (`game.py`: phases and their text, actions with their
roles, parameters, labels and articles, the transition table), its procedure (`procedure.py`)
and its settlement (`settle.py`); docs/procedures.md describes the layout. `build(config)` is
the one builder of the procedure a table configuration names, for the daemon (`daemon.table`)
and the tests alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.config import ConfigError
from daemon.procedures.stakes import Stakes

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.procedures.base import Procedure


def build(config: TableConfig) -> Procedure:
    """A fresh procedure for the table's game, rule set and (Pai Gow) number of hands.

    The equipment the game's regulation names (Thirteen Art. 1: shuffler, shoe, dice; Pai Gow:
    the dice) must be configured, else `ConfigError`; of the other devices the game's procedure
    knows (the timer bell), those configured join the check before opening.
    """
    from daemon.procedures.games import GAMES  # noqa: PLC0415 - the games import this package

    game = GAMES.get(config.game)
    if game is None:
        raise ConfigError(f"unknown game {config.game!r}")
    configured = {name for name, device in config.devices.items() if device.enabled}
    missing = [d for d in game.required_devices if d not in configured]
    if missing:
        raise ConfigError(
            f"{config.source}: a {config.game} table needs [devices.{'], [devices.'.join(missing)}]"
        )
    devices = tuple(d for d in game.devices if d in configured)
    if game.procedure is None:
        raise ConfigError(f"{config.game!r} declares no procedure")
    return game.procedure.from_config(config, devices)


def table_stakes(config: TableConfig) -> Stakes:
    """The table's unit of money and limits (`[table]` unit, currency, min_bet, max_bet)."""
    return Stakes(config.unit, config.currency, config.min_bet, config.max_bet)
