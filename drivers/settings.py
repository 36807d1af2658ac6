"""What a driver needs to know about its device, as a protocol of the drivers' own: the daemon's
config (`daemon.config.DeviceConfig`) satisfies it, and so does any object with these
attributes, so `drivers/` never imports `daemon`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

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
    """One configured device: its name (the device kind), port URL, line speed, bus address and
    the firmware builds approved for it."""

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
