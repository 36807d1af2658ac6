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

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.procedures.base import Procedure
    from daemon.procedures.stakes import Stakes


def build(config: TableConfig) -> Procedure:
    """A fresh procedure for the table's game, rule set and (Pai Gow) number of hands.

    The equipment the game's regulation names (Thirteen Art. 1: shuffler, shoe, dice; Pai Gow:
    the dice) must be configured, else `ConfigError`; of the other devices the game's procedure
    knows (the timer bell), those configured join the check before opening.
    """
    from daemon.procedures.games import GAMES  # noqa: PLC0415 - the games' data, light

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
    if config.game == "paigow":
        procedure = paigow_procedure(config, devices)
        procedure.stakes = table_stakes(config)  # bets in table units (procedures/stakes.py)
        return procedure
    return thirteen_procedure(config, devices)


def table_stakes(config: TableConfig) -> Stakes:
    """The table's unit of money and limits (`[table]` unit, currency, min_bet, max_bet)."""
    from daemon.procedures.stakes import Stakes  # noqa: PLC0415

    return Stakes(config.unit, config.currency, config.min_bet, config.max_bet)


def thirteen_procedure(config: TableConfig, devices: tuple[str, ...]) -> Procedure:
    from daemon.procedures.thirteen import ThirteenProcedure  # noqa: PLC0415 - one game only

    return ThirteenProcedure(
        config.table_id,
        ruleset=config.ruleset,
        devices=devices,
        stakes=table_stakes(config),
        rules=config.rules,
        shaker=config.shaker,
        timer_in_hold=config.timer_in_hold,
    )


def paigow_procedure(config: TableConfig, devices: tuple[str, ...]) -> Procedure:
    from daemon.procedures.paigow import PaiGowProcedure  # noqa: PLC0415 - one game only

    return PaiGowProcedure(
        config.table_id, hands=config.paigow_hands, ruleset=config.ruleset, devices=devices
    )
