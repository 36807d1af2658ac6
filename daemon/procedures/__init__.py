"""One `transitions` state machine per game: states, triggers and guards as data.

`build(config)` gives the runtime the procedure its table configuration names; the machines
themselves are `thirteen.ThirteenProcedure` and `paigow.PaiGowProcedure` (docs/procedures.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.procedures.base import Procedure


def build(config: TableConfig) -> Procedure:
    """A fresh procedure for the table's game, rule set and (Pai Gow) number of hands.

    The devices to identify before opening are the game's own (Art. 1) and every other device
    the configuration enables.
    """
    enabled = [name for name, device in config.devices.items() if device.enabled]
    if config.game == "paigow":
        from daemon.procedures import paigow  # noqa: PLC0415 - load one game only

        return paigow.PaiGowProcedure(
            config.table_id,
            hands=config.paigow_hands,
            ruleset=config.ruleset,
            devices=_union(paigow.DEVICES, enabled),
        )
    from daemon.procedures import thirteen  # noqa: PLC0415 - load one game only

    return thirteen.ThirteenProcedure(
        config.table_id, ruleset=config.ruleset, devices=_union(thirteen.DEVICES, enabled)
    )


def _union(required: tuple[str, ...], enabled: list[str]) -> tuple[str, ...]:
    return required + tuple(name for name in enabled if name not in required)
