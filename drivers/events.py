"""What a driver tells the table (`DriverEvent`s, one frozen dataclass per kind of fact), the
state of its link, and the errors its commands raise. The facts every device shares are here;
a device's own (`ShuffleCompleted`, `CardDrawn`, ...) are in its `drivers/<device>/driver.py`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from drivers.messages import Identity, NakReason

# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DriverEvent:
    device: str


@dataclass(frozen=True, slots=True)
class LinkUp(DriverEvent):
    identity: Identity
    approved: bool | None  # None: the config lists no approved firmware for this device


@dataclass(frozen=True, slots=True)
class LinkDown(DriverEvent):
    reason: str  # "no_response", "port_lost: ...", "closed"


@dataclass(frozen=True, slots=True)
class LinkDegraded(DriverEvent):
    """The line is noisy (`errors` protocol errors in `seconds`); it stays up for now, and
    goes down (LinkDown "noisy") if the noise lasts (drivers.link, "Noise")."""

    errors: int
    seconds: float


@dataclass(frozen=True, slots=True)
class DeviceFault(DriverEvent):
    kind: str  # "jam", "reader_lost", "wrong_count", "unapproved_firmware", ...
    code: int  # the wire fault code; 0 for faults the host itself detects


@dataclass(frozen=True, slots=True)
class FaultCleared(DriverEvent):
    kind: str
    code: int


@dataclass(frozen=True, slots=True)
class DoorChanged(DriverEvent):
    door: str  # "lid", "base", "shoe", ...
    open: bool


@dataclass(frozen=True, slots=True)
class EventsMissed(DriverEvent):
    count: int


@dataclass(frozen=True, slots=True)
class DeviceRestarted(DriverEvent):
    """STATUS shows the device powered up since the host last read it: whatever it was doing
    (a shuffle, an armed reader, a countdown) is gone. Reported by a status poll while the link
    is up, or right after LinkUp when a reconnect finds the device restarted; not on the first
    connect of a driver, where a fresh power-up is the usual case and LinkUp says enough."""


@dataclass(frozen=True, slots=True)
class DeviceStatus:
    busy: bool
    powered_up: bool
    faults: tuple[str, ...]
    doors_open: tuple[str, ...]
    events: int
    pending: int


# --- errors ---------------------------------------------------------------------------------


class DeviceError(Exception):
    """A command did not complete."""


class LinkLost(DeviceError):
    """The link is down (or went down before the device answered)."""


class CommandRefused(DeviceError):
    def __init__(self, reason: int) -> None:
        self.reason = reason
        try:
            name = NakReason(reason).name.lower()
        except ValueError:
            name = f"reason_{reason}"
        self.reason_name = name
        super().__init__(f"device refused the command: {name}")


class NotApproved(DeviceError):
    """The device's identity is not on the approved list; only identity and status are read."""


class LinkState(Enum):
    DOWN = "down"
    CONNECTING = "connecting"
    UP = "up"
    CLOSED = "closed"
