"""What a device means to the table's procedure, in one place per device.

The table runtime names no device class: for each configured device it looks up the adapter
of its kind (`adapter_class`, from the kind's row in drivers.kinds) and asks it two things:

- `input_for(event)`: the procedure input (an action from `device:<name>` and its payload) that
  a driver event stands for, or None when the procedure has no use for it;
- `send(command, args)`: the driver call for one of the procedure's device commands.

This base knows the facts every device shares (a link lost, a fault, a door, missed events) and
sends a command by calling the driver's method of that name. A device's own adapter
(`drivers/<device>/adapter.py`) adds its result events, the faults those results already report,
and the commands whose driver call differs from their name. The facts that need the table's own
state to judge (a link up, a door closed, a fault cleared, a restart) stay the runtime's.

Action names are the procedures' triggers, by name: adapters import nothing from `daemon`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, ClassVar, NamedTuple

from drivers.base import DeviceDriver
from drivers.events import (
    DeviceError,
    DeviceFault,
    DoorChanged,
    DriverEvent,
    EventsMissed,
    LinkDown,
)
from drivers.kinds import find, load_class

# A standard deck, the one the shuffler and the shoe handle (Thirteen, DOMAIN R1).
STANDARD_DECK = 52


class ProcedureInput(NamedTuple):
    """A device fact as the procedure takes it: `action` from `device:<name>` with `payload`.
    (A named tuple: one is made for every card read, and it costs least.)"""

    action: str
    payload: Mapping[str, Any]


class DeviceAdapter:
    """The meaning of one device's events and commands; subclassed per device kind."""

    # Fault kinds the device's own result events report (the procedure judges the result), so
    # a DeviceFault of such a kind is not fed a second time as a separate fault.
    RESULT_FAULTS: ClassVar[frozenset[str]] = frozenset()
    # Judged with the device's identity at the equipment check, never as a fault of its own.
    IDENTITY_FAULTS: ClassVar[frozenset[str]] = frozenset({"unapproved_firmware"})

    def __init__(self, driver: DeviceDriver, actions: Collection[str]) -> None:
        """`actions`: the procedure's action names (what it can take at all)."""
        self.driver = driver
        self.actions = actions

    @property
    def name(self) -> str:
        return self.driver.name

    def input_for(self, event: DriverEvent) -> ProcedureInput | None:
        """The procedure input `event` stands for; None when the procedure has no use for it."""
        name = self.name
        if isinstance(event, LinkDown):
            return ProcedureInput("link_lost", {"device": name, "reason": event.reason})
        if isinstance(event, DeviceFault):
            return self.fault_input(event)
        if isinstance(event, DoorChanged) and event.open:
            return ProcedureInput("door_opened", {"device": name, "fault": f"{event.door} open"})
        if isinstance(event, EventsMissed):
            fault = f"{event.count} device event(s) missed"
            return ProcedureInput("fault_reported", {"device": name, "fault": fault})
        return None

    def fault_input(self, fault: DeviceFault) -> ProcedureInput | None:
        if fault.kind in self.RESULT_FAULTS or fault.kind in self.IDENTITY_FAULTS:
            return None
        return ProcedureInput("fault_reported", {"device": self.name, "fault": fault.kind})

    def taken(self, item: ProcedureInput, tilted: bool) -> None:
        """What became of an input this adapter made: `tilted` when the procedure accepted it
        and is now in TILT. A device whose result reports a fault twice remembers it here."""

    async def send(self, command: str, args: Mapping[str, Any]) -> None:
        """The driver call for the procedure's `command`: the driver's method of that name."""
        method = getattr(self.driver, command, None)
        if method is None:
            raise DeviceError(f"{self.name} has no command {command!r}")
        await method(**dict(args))


def adapter_class(kind: str) -> type[DeviceAdapter]:
    """The adapter of device kind `kind`: the generic `DeviceAdapter` (common facts only,
    commands by method name) when its row names none or no kind of that name is known;
    LookupError of one line if the one its row names cannot be imported."""
    try:
        find(kind)  # a plug-in's module is imported only when its own kind is asked for
    except LookupError:
        return DeviceAdapter
    return load_class(kind, "adapter", DeviceAdapter)
