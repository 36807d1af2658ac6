"""Approval stays the casino's, whatever driver a plug-in brings (docs/devices.md): a plug-in's
shoe reader whose driver calls every build approved is judged by the table from the identity
the device reported and the config's approved list. Its unlisted build is journaled as not
approved, `tabled devices` says NO, and the table sends it no command."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.cli.devices import probe
from daemon.procedures.base import DeviceCommand
from drivers.kinds import package_digest
from simulators.base import SIM_MAKE, firmware_digest
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import forget_world
from tests.device_plugins import ROW, plugin, plugin_site
from tests.table.scenario_support import journal_lines, make_table, new_world, table_config

LAX = (
    ROW
    + """
from drivers.shoe_reader.driver import ShoeReaderDriver

KIND = DeviceKind(
    name="lax_shoe",
    role="shoe_reader",
    driver="acme_lax:LaxShoeDriver",
    adapter="drivers.shoe_reader.adapter:ShoeReaderAdapter",
    simulator="simulators.shoe_reader:ShoeReaderModel",
)


class LaxShoeDriver(ShoeReaderDriver):
    '''A careless vendor's driver: any build is "approved", and commands are always sent.'''

    async def _connect(self) -> bool:
        up = await super()._connect()
        self.approved = True
        return up

    def _command(self, message, device_command=True):
        return self._exchange(message)
"""
)


@pytest.fixture
def lax_shoe(tmp_path: Path) -> Iterator[None]:
    with plugin_site(tmp_path) as site:
        plugin(site, "acme-lax-shoe", "lax_shoe", "acme_lax:KIND", LAX)
        yield


def test_a_plugins_driver_cannot_approve_a_build(tmp_path: Path, lax_shoe: None) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)
    nominal = ShoeReaderModel.FIRMWARE
    config["devices"]["shoe_reader"] = {
        "kind": "lax_shoe",
        "package_sha256": package_digest("lax_shoe"),  # its package approved as installed
        # the reader on the line reports another build than the one approved
        "port": f"sim://lax_shoe?world={key}&seed=3&fault=unapproved_firmware",
        "approved": [
            {
                "make": SIM_MAKE,
                "model": ShoeReaderModel.MODEL,
                "firmware": nominal,
                "firmware_hash": firmware_digest(ShoeReaderModel.MODEL, nominal).hex(),
            }
        ],
    }

    async def main() -> None:
        table, parsed = make_table(config)
        await table.start()
        try:
            driver = table.devices.drivers["shoe_reader"]
            assert type(driver).__name__ == "LaxShoeDriver"
            assert await table.wait_for(lambda: driver.identity is not None, 10.0)
            assert driver.approved is True  # what the driver claims
            (status,) = (d for d in table.facade.device_status() if d["name"] == "shoe_reader")
            assert status["approved"] is False and status["identity"]["approval"] == "not listed"
            # a command the procedure would send it is not sent
            sent: list[bytes] = []
            driver._tap = lambda direction, data: sent.append(data) if direction == "tx" else None
            await table.devices._command(driver, DeviceCommand("shoe_reader", "arm", {"cards": 52}))
            assert sent == []
            assert table.procedure.faults["shoe_reader"]["fault"] == "firmware not approved"
            probed = await probe(parsed.devices["shoe_reader"])
            assert probed["kind"] == "lax_shoe" and probed["approved"] is False
        finally:
            await table.stop()

    try:
        asyncio.run(main())
    finally:
        forget_world(key)
    identified = [
        r["payload"]
        for r in journal_lines(tmp_path / "j")
        if r["event"] == "device.identified" and r["payload"]["device"] == "shoe_reader"
    ]
    assert identified and all(p["approved"] is False for p in identified)
    assert identified[0]["kind"] == "lax_shoe" and identified[0]["driver"] == "acme-lax-shoe 1.0"
    assert identified[0]["package_sha256"] == package_digest("lax_shoe")
