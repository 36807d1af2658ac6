"""The procedure of the configured game, with the equipment its regulation names."""

from __future__ import annotations

from daemon.config import REQUIRED_DEVICES, ConfigError, TableConfig
from daemon.procedures.base import Procedure
from daemon.procedures.paigow import DEVICES as PAIGOW_DEVICES
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import DEVICES as THIRTEEN_DEVICES
from daemon.procedures.thirteen import ThirteenProcedure


def build_procedure(config: TableConfig) -> Procedure:
    """The procedure of the configured game, checking the equipment its regulation names."""
    configured = {n for n, d in config.devices.items() if d.enabled}
    missing = [d for d in REQUIRED_DEVICES.get(config.game, ()) if d not in configured]
    if missing:
        raise ConfigError(
            f"{config.source}: a {config.game} table needs [devices.{'], [devices.'.join(missing)}]"
        )
    if config.game == "thirteen":
        devices = tuple(d for d in THIRTEEN_DEVICES if d in configured)
        return ThirteenProcedure(config.table_id, ruleset=config.ruleset, devices=devices)
    if config.game == "paigow":
        devices = tuple(d for d in PAIGOW_DEVICES if d in configured)
        return PaiGowProcedure(
            config.table_id, hands=config.paigow_hands, ruleset=config.ruleset, devices=devices
        )
    raise ConfigError(f"unknown game {config.game!r}")
