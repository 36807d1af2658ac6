"""Which devices are not up, named by their port: what an autoplay that gave up waiting says."""

from __future__ import annotations

from daemon.table import Table


def devices_down(table: Table) -> list[str]:
    """Each configured device whose link is not up (or whose driver is missing), as
    `name at PORT: why`, so the person reading knows which cable or config line to check."""
    down = [f"{name}: {why}" for name, why in sorted(table.missing_drivers.items())]
    for name, driver in sorted(table.drivers.items()):
        if not driver.link_up:
            why = driver.last_error or f"the link is {driver.state.value}"
            down.append(f"{name} at {driver.port} never came up ({why})")
    return down
