"""What a driver needs to know about its device, as a protocol of the drivers' own: the daemon's
config (`daemon.config.DeviceConfig`) satisfies it, and so does any object with these
attributes, so `drivers/` never imports `daemon`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from drivers.messages import Identity


class ApprovedBuild(Protocol):
    @property
    def make(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def firmware(self) -> str: ...
    @property
    def firmware_hash(self) -> str: ...


def is_approved(identity: Identity, approved: Sequence[ApprovedBuild]) -> bool | None:
    if not approved:
        return None
    digest = identity.firmware_hash.hex()
    return any(
        a.make == identity.make
        and a.model == identity.model
        and a.firmware == identity.firmware
        and a.firmware_hash.lower() == digest
        for a in approved
    )


class DeviceSettings(Protocol):
    """One configured device: its name (its role at the table), port URL, line speed, bus
    address, the firmware builds approved for it and its kind's own options."""

    @property
    def name(self) -> str: ...
    @property
    def port(self) -> str: ...
    @property
    def baudrate(self) -> int: ...
    @property
    def address(self) -> int: ...
    @property
    def approved(self) -> Sequence[ApprovedBuild]: ...
    @property
    def options(self) -> Mapping[str, Any]:
        """The kind's own settings (`[devices.NAME.options]`, checked against its row)."""
        ...
