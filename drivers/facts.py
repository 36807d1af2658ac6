"""What a device's wire events and status reports mean as driver facts, for every device alike:
a fault raised or gone, a door opened or closed, a restart, events missed. The driver keeps the
faults and doors it knows latched, so a fact is reported once, whether it arrives as its own
event or is first seen in a status report. A device's own events go to its `_translate`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from drivers.events import (
    DeviceFault,
    DeviceRestarted,
    DeviceStatus,
    DoorChanged,
    DriverEvent,
    EventsMissed,
    FaultCleared,
    LinkState,
)
from drivers.link import Link
from drivers.mailbox import Mailbox
from drivers.messages import (
    COMMON_FAULT_NAMES,
    DeviceEvent,
    DoorReport,
    FaultGone,
    FaultRaised,
    Status,
    StatusFlag,
)

# Enum members read on every status, bound once (a class attribute lookup on an Enum is slow).
_CONNECTING = LinkState.CONNECTING
_BUSY = int(StatusFlag.BUSY)
_POWERED_UP = int(StatusFlag.POWERED_UP)


class DeviceFacts:
    """The fact-reporting part of `DeviceDriver` (drivers.base; its exchange: drivers.exchange)."""

    FAULTS: ClassVar[Mapping[int, str]] = COMMON_FAULT_NAMES
    DOORS: ClassVar[Mapping[int, str]] = {}

    name: str
    state: LinkState
    link: Link
    _log: Any
    _events: Mailbox[DriverEvent]
    _held: list[DriverEvent]
    _faults: int
    _doors: int
    _described: tuple[Status, DeviceStatus] | None = None  # the last status described

    def _translate(self, event: DeviceEvent) -> Iterable[DriverEvent]:
        """Driver events for a device-specific wire event (subclasses override)."""
        self._log.warning("device.unexpected_event", event=type(event).__name__)
        return ()

    def _emit(self, event: DriverEvent) -> None:
        if self.state is _CONNECTING:
            # an event the device sent between IDENTITY and STATUS (one it had queued): it is
            # reported after LinkUp, never before it
            self._held.append(event)
        else:
            self._events.put(event)

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for event in held:
            self._events.put(event)

    def _fault(self, code: int) -> DriverEvent | None:
        """A DeviceFault for `code`, unless that fault is already known to be latched."""
        code = int(code)
        bit = 1 << code
        if self._faults & bit:
            return None
        self._faults |= bit
        kind = self.FAULTS.get(code, f"fault_{code}")
        self._log.warning("device.fault", kind=kind, code=code)
        return DeviceFault(self.name, kind, code)

    def _on_device_event(self, event: DeviceEvent) -> None:
        if isinstance(event, FaultRaised):
            fault = self._fault(event.code)
            if fault is not None:
                self._emit(fault)
        elif isinstance(event, FaultGone):
            self._fault_gone(event.code)
        elif isinstance(event, DoorReport):
            self._door(event.door, bool(event.open))
        else:
            for item in self._translate(event):
                self._emit(item)

    def _fault_gone(self, code: int) -> None:
        bit = 1 << code
        if self._faults & bit:
            self._faults &= ~bit
            kind = self.FAULTS.get(code, f"fault_{code}")
            self._log.info("device.fault_cleared", kind=kind, code=code)
            self._emit(FaultCleared(self.name, kind, code))

    def _door(self, door: int, is_open: bool) -> None:
        bit = 1 << door
        if bool(self._doors & bit) == is_open:
            return
        self._doors ^= bit
        name = self.DOORS.get(door, f"door_{door}")
        self._log.info("device.door", door=name, open=is_open)
        self._emit(DoorChanged(self.name, name, is_open))

    def _restarted(self) -> None:
        """The device powered up since we last read its status (subclasses forget what the
        device forgot, then call this)."""
        self._log.warning("device.restarted")
        self._emit(DeviceRestarted(self.name))

    def _reconcile(self, status: Status) -> None:
        """Reconcile the status report with the faults and doors already known: a change that
        arrived by no event (a lost one, or faults latched before we connected) is reported.
        The usual poll changes nothing and costs two comparisons, not a walk of every bit."""
        if status.faults != self._faults:
            for code in range(16):
                bit = 1 << code
                if status.faults & bit and not self._faults & bit:
                    fault = self._fault(code)
                    if fault is not None:
                        self._emit(fault)
                elif self._faults & bit and not status.faults & bit:
                    self._fault_gone(code)
        if status.doors != self._doors:
            for door in range(8):
                self._door(door, bool(status.doors & (1 << door)))
        missed = self.link.note_status(status)
        if missed is not None:
            self._log.error("device.events_missed", count=missed.count)
            self._emit(EventsMissed(self.name, missed.count))

    def _describe(self, status: Status) -> DeviceStatus:
        # The codec hands back the same Status object for a payload it saw last time, and a
        # DeviceStatus is immutable: the usual poll, unchanged, is described once.
        described = self._described
        if described is not None and described[0] is status:
            return described[1]
        out = DeviceStatus(
            bool(status.flags & _BUSY),
            bool(status.flags & _POWERED_UP),
            tuple(self.FAULTS.get(c, f"fault_{c}") for c in range(16) if status.faults & (1 << c))
            if status.faults
            else (),
            tuple(self.DOORS.get(d, f"door_{d}") for d in range(8) if status.doors & (1 << d))
            if status.doors
            else (),
            status.events,
            status.pending,
        )
        self._described = (status, out)
        return out
