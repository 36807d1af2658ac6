"""The table's devices: each configured device's driver and adapter, the pump that turns its
events into procedure inputs from `device:<name>`, and the queue that turns the procedure's
commands into driver calls (issued once the input that caused them is durable).

What an event means and how a command is sent is the device's adapter's
(`drivers/<device>/adapter.py`, looked up by device kind); this module names no device class.
It keeps what needs the table's own state: a link up (identify at the equipment check, or check
the identity did not change), a door closed or a fault cleared (the device is healthy again
only when it says so), a device restarted (a TILT in a round), a command refused or lost.

A device whose identity is not the one the table opened with, or whose build the approved list
does not name, is never reported healthy, whatever came before (a power cycle, a reconnection,
a restart of the daemon): its fault cannot be cleared until the approved device is back
(DOMAIN R4).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from daemon.contract.metrics import LatencyHistogram
from daemon.journal import JournalError
from daemon.procedures.base import DeviceCommand
from daemon.table.common import Fed, TableError
from daemon.table.intake import take_events
from drivers.adapter import DeviceAdapter, ProcedureInput, adapter_class
from drivers.base import DeviceDriver, driver_class
from drivers.events import (
    CommandRefused,
    DeviceError,
    DeviceRestarted,
    DoorChanged,
    DriverEvent,
    FaultCleared,
    LinkDegraded,
    LinkDown,
    LinkLost,
    LinkUp,
    NotApproved,
)
from drivers.kinds import DeviceKind, find
from drivers.mailbox import Mailbox
from drivers.settings import ApprovedBuild, is_approved

if TYPE_CHECKING:
    from daemon.table.common import TableHost as Table

IDENTITY_FIELDS = ("make", "model", "serial", "firmware", "firmware_hash")


def identity_of(driver: DeviceDriver, approved: bool | None) -> dict[str, Any]:
    """The device's identity as `device_identified` carries it (and the API shows it), with the
    table's verdict on its build (`DeviceHost.approval`)."""
    identity = driver.identity
    if identity is None:
        return {"device": driver.name, "approved": False}
    return {
        "device": driver.name,
        # No approved list configured (None) is journaled as such and admitted; a list that
        # does not name the build (False) keeps the device out of play.
        "approved": approved is not False,
        "approval": {True: "listed", False: "not listed", None: "no list configured"}[approved],
        "make": identity.make,
        "model": identity.model,
        "serial": identity.serial,
        "firmware": identity.firmware,
        "firmware_hash": identity.firmware_hash.hex(),
    }


class DeviceHost:
    """The drivers and adapters of one table, and the tasks that run them."""

    def __init__(self, table: Table, drivers: Mapping[str, DeviceDriver] | None = None) -> None:
        self.table = table
        self.drivers: dict[str, DeviceDriver] = dict(drivers or {})
        self.adapters: dict[str, DeviceAdapter] = {}
        self.missing: dict[str, str] = {}
        # The builds the config approves for each device the table built: the table's own
        # verdict on a build is taken from these, never from a driver's (`approval`).
        self._approved: dict[str, Sequence[ApprovedBuild]] = {}
        self._packages: dict[str, str] = {}  # a plug-in kind's approved package digest
        self._kinds: dict[str, DeviceKind] = {}  # the kind of each device the table built
        self.round_trips: dict[str, LatencyHistogram] = {}
        self._commands: dict[str, Mailbox[DeviceCommand]] = {}
        self._busy: dict[str, int] = {}
        self._tilt = table.phases.tilt.name

    # ---- life cycle -------------------------------------------------------------------------

    def build(self) -> None:
        """A driver for each enabled device (unless one was given), its adapter and its
        command queue. The queues exist before the devices connect, so what the recovery asks
        of a device (pause the bell) waits for its link instead of being dropped."""
        table = self.table
        for name, device in sorted(table.config.devices.items()):
            if not device.enabled or name in self.drivers:
                continue
            try:
                cls = driver_class(device.kind)
            except LookupError as exc:
                self.missing[name] = str(exc)
                table.log.error("table.driver_missing", device=name, error=str(exc))
                continue
            self.drivers[name] = cls.from_config(device, clock=table.driver_clock)
            self._approved[name] = device.approved
            self._kinds[name] = find(device.kind)
            if device.package_sha256:  # a plug-in's, checked against its install at load
                self._packages[name] = device.package_sha256
        actions = frozenset(type(table.procedure).ACTIONS)
        for name, driver in self.drivers.items():
            self.adapters[name] = self._adapter_class(name)(driver, actions)
            self._commands[name] = Mailbox()
            self._busy[name] = 0
            # Every exchange is sampled (status polls too, about one a second per device), not
            # only the few commands of a round.
            histogram = self.round_trips.setdefault(name, LatencyHistogram())
            driver.link.on_round_trip = histogram.observe

    def _adapter_class(self, name: str) -> type[DeviceAdapter]:
        """The adapter of the kind configured for device `name` (the kind named after it, for
        a driver given to the table and not configured)."""
        device = self.table.config.devices.get(name)
        return adapter_class(device.kind if device else name)

    async def connect(self) -> None:
        for name, driver in self.drivers.items():
            self.table.spawn(self._pump_events(name, driver))
            self.table.spawn(self._run_commands(name, driver))
        # Connecting is concurrent: a device that does not answer does not delay the others.
        await asyncio.gather(*(driver.start() for driver in self.drivers.values()))

    async def close(self) -> None:
        for driver in self.drivers.values():
            with contextlib.suppress(Exception):
                await driver.close()

    # ---- inputs -----------------------------------------------------------------------------

    async def _input(
        self, driver: DeviceDriver, action: str, payload: Mapping[str, Any], received: float | None
    ) -> Fed | None:
        table = self.table
        if not table.running:
            return None
        try:
            return await table.feed(action, f"device:{driver.name}", payload, received=received)
        except TableError:
            return None

    async def _take(
        self, driver: DeviceDriver, item: ProcedureInput, received: float | None = None
    ) -> Fed | None:
        """Feed an adapter's input and tell the adapter what became of it."""
        fed = await self._input(driver, item.action, item.payload, received)
        tilted = (
            fed is not None and fed.accepted and fed.outcome.phase == self.table.phases.tilt.name
        )
        self.adapters[driver.name].taken(item, tilted)
        return fed

    async def _pump_events(self, name: str, driver: DeviceDriver) -> None:
        receive_time = self.table.receive_time
        while True:
            event = await driver.next_event()
            # Every event already received shares one commit point (daemon.table.intake).
            try:
                await take_events(
                    self, name, driver, [event, *driver.pending_events()], receive_time
                )
            except TableError:
                return

    async def on_event(self, name: str, event: DriverEvent, received: float) -> None:
        """One driver event of device `name`, as the table takes it."""
        driver = self.drivers[name]
        if isinstance(event, LinkUp):
            await self._on_link_up(driver)
        elif (isinstance(event, DoorChanged) and not event.open) or isinstance(event, FaultCleared):
            await self.maybe_healthy(driver)
        elif isinstance(event, DeviceRestarted):
            await self._on_restarted(driver, received)
        elif isinstance(event, LinkDegraded):
            await self._on_degraded(driver, event)
        else:
            item = self.adapters[name].input_for(event)
            if item is None:
                # debug, as in daemon.table.intake: the driver logged the fact itself
                self.table.log.debug("table.device_event_ignored", device=name, fact=event)
                return
            # A link lost has no frame of its own to time.
            await self._take(driver, item, None if isinstance(event, LinkDown) else received)

    async def _on_degraded(self, driver: DeviceDriver, event: LinkDegraded) -> None:
        """A noisy line, still up: journaled (the driver says it at most once every 10 s), so
        surveillance sees a cable going bad before it goes down and HOLDs the table."""
        table = self.table
        journal = table.journal
        if journal is None or not table.running:
            return
        try:
            await journal.append_async(
                "device.link_degraded",
                actor=f"device:{driver.name}",
                round_id=table.procedure.round_id,
                payload={
                    "device": driver.name,
                    "errors": event.errors,
                    "seconds": round(event.seconds, 3),
                },
                commit=True,
            )
        except JournalError as exc:
            table.fail(f"journal: {exc}")

    async def _on_restarted(self, driver: DeviceDriver, received: float) -> None:
        """The device powered up since it was last read: what it held for the round (an armed
        shoe, the bell's countdown, a shuffle under way) is gone. Journaled always; in a round,
        a TILT, so a supervisor looks before play goes on (clearing resumes the phase, which
        gives the device its command again)."""
        table = self.table
        journal = table.journal
        if journal is None or not table.running:
            return
        name = driver.name
        procedure = table.procedure
        in_round = table.round_in_play()
        try:
            await journal.append_async(
                "device.restarted",
                actor=f"device:{name}",
                round_id=procedure.round_id,
                payload={"device": name, "phase": procedure.phase, "in_round": in_round},
                commit=True,
            )
        except JournalError as exc:
            table.fail(f"journal: {exc}")
            return
        if in_round:
            fault = {"device": name, "fault": "restarted"}
            await self._input(driver, "fault_reported", fault, received)

    async def _on_link_up(self, driver: DeviceDriver) -> None:
        name = driver.name
        procedure = self.table.procedure
        known = getattr(procedure, "identified", {}).get(name)
        if known is None:
            if procedure.state is self.table.phases.equipment_check and name in getattr(
                procedure, "devices", ()
            ):
                await self._input(driver, "device_identified", self.identity(driver), None)
            return
        problem = self.identity_problem(driver)
        if problem is not None:
            held = procedure.faults.get(name)
            if held is None or held.get("fault") != problem or held.get("healthy"):
                fault: dict[str, Any] = {"device": name, "fault": problem}
                if driver.identity is not None:
                    # Which device is on the line: what two supervisors may approve in its
                    # place when only its serial differs and its build is approved
                    # (`replace_device`); an unapproved build is refused by name.
                    fault["identity"] = self.identity(driver)
                await self._input(driver, "fault_reported", fault, None)
            return
        await self.maybe_healthy(driver)

    def approval(self, driver: DeviceDriver) -> bool | None:
        """Whether the build on the line is one the config approves (None: no list, or not
        identified yet), judged here from the identity the device reported: a driver's own
        verdict (`driver.approved`) is not taken, so no driver, a plug-in's included
        (docs/devices.md), can approve a build. A driver given to the table rather than built
        from its config is judged against the builds it was given."""
        identity = driver.identity
        if identity is None:
            return None
        return is_approved(identity, self._approved.get(driver.name, driver.approved_builds))

    def identity(self, driver: DeviceDriver) -> dict[str, Any]:
        """The device's identity with the table's verdict on its build, and the kind that
        drives it with the package (and version) that provides it (docs/devices.md): what
        read the cards is on the record beside the firmware that did."""
        identity = identity_of(driver, self.approval(driver))
        kind = self._kinds.get(driver.name)
        if kind is not None:
            identity.update(kind=kind.name, driver=kind.origin)
        if driver.name in self._packages:
            identity["package_sha256"] = self._packages[driver.name]
        return identity

    def identity_problem(self, driver: DeviceDriver) -> str | None:
        """Why the device now on the line is not the approved one the table opened with, or
        None. Before the table identified it, only the approved list can say."""
        if driver.identity is None:
            return "identity not read"
        if self.approval(driver) is False:
            return "firmware not approved"
        known = getattr(self.table.procedure, "identified", {}).get(driver.name)
        if known is None:
            return None
        now = self.identity(driver)
        changed = [k for k in IDENTITY_FIELDS if known.get(k) != now[k]]
        return f"identity changed ({', '.join(changed)})" if changed else None

    def identify_pending(self) -> None:
        """Back at the equipment check: identify the connected devices not yet identified."""
        procedure = self.table.procedure
        identified = getattr(procedure, "identified", {})
        devices = getattr(procedure, "devices", ())
        for name, driver in self.drivers.items():
            if name in devices and name not in identified and driver.link_up:
                identity = self.identity(driver)
                self.table.spawn(self._input(driver, "device_identified", identity, None))

    # ---- health -----------------------------------------------------------------------------

    async def maybe_healthy(self, driver: DeviceDriver) -> bool:
        """Feed `device_healthy` when the procedure holds a fault for the device and the device
        itself reports none (no latched fault, no door open, link up)."""
        faults = self.table.procedure.faults
        fault = faults.get(driver.name)
        if fault is None or fault.get("healthy") or not driver.link_up:
            return False
        if self.identity_problem(driver) is not None:
            return False  # never healthy: not the approved device the table opened with
        try:
            status = await driver.status()
        except DeviceError:
            return False
        if status.faults or status.doors_open or status.powered_up:
            # Powered up: a restart no poll had seen yet, which the driver reports now as an
            # event of its own (a TILT in a round): not healthy before that is taken.
            return False
        fault = self.table.procedure.faults.get(driver.name)
        if fault is None or fault.get("healthy"):
            return False
        fed = await self._input(driver, "device_healthy", {"device": driver.name}, None)
        return fed is not None and fed.accepted

    async def refresh_health(self) -> None:
        """Ask every device the procedure holds a fault for to clear what no longer has a
        cause, and take its word when it reports healthy (what a supervisor does before
        clearing a HOLD or TILT)."""
        for name, fault in list(self.table.procedure.faults.items()):
            driver = self.drivers.get(name)
            if driver is None or fault.get("healthy") or not driver.link_up:
                continue
            with contextlib.suppress(DeviceError):
                await driver.clear_faults()
            await self.maybe_healthy(driver)

    # ---- commands ---------------------------------------------------------------------------

    def queue(self, command: DeviceCommand) -> None:
        queue = self._commands.get(command.device)
        if queue is None:
            self.table.log.warning(
                "table.command_without_device", device=command.device, command=command.command
            )
            return
        self._busy[command.device] += 1
        queue.put(command)

    def quiet(self) -> bool:
        """No device command is waiting to be sent or answered."""
        return not any(self._busy.values())

    async def _run_commands(self, name: str, driver: DeviceDriver) -> None:
        queue = self._commands[name]
        while True:
            command = await queue.get()
            try:
                await self._command(driver, command)
            finally:
                self._busy[name] -= 1
                await self.table.notify()

    async def _command(self, driver: DeviceDriver, command: DeviceCommand) -> None:
        name = driver.name
        # debug: a command is what the procedure decided on an input the journal holds (replay
        # makes the same command again), and what goes wrong with it is journaled as a fault
        # (below) and logged by the driver at warning or error. At info it was six lines a
        # Thirteen round saying what the journal says.
        self.table.log.debug(
            "table.device_command", device=name, command=command.command, **command.args
        )
        if self.approval(driver) is False:  # never sent, whatever the driver would do
            fault = {"device": name, "fault": "firmware not approved"}
            await self._input(driver, "fault_reported", fault, None)
            return
        try:
            await self.adapters[name].send(command.command, command.args)
        except CommandRefused as exc:
            if exc.reason_name == "door_open":
                fault = {"device": name, "fault": "door open"}
                await self._input(driver, "door_opened", fault, None)
            else:
                fault = {"device": name, "fault": f"{command.command} refused: {exc.reason_name}"}
                await self._input(driver, "fault_reported", fault, None)
        except LinkLost:
            fault_held = self.table.procedure.faults.get(name)
            if fault_held is None or fault_held.get("fault") != "link lost":
                await self._input(driver, "link_lost", {"device": name}, None)
        except NotApproved:
            fault = {"device": name, "fault": "firmware not approved"}
            await self._input(driver, "fault_reported", fault, None)
        except (DeviceError, TypeError) as exc:
            fault = {"device": name, "fault": f"{command.command} failed: {exc}"}
            await self._input(driver, "fault_reported", fault, None)
