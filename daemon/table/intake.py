"""A device's events into the procedure, the ones already received sharing one commit point.

A device can send faster than the disk commits: unpaced, the shoe reader queues its card reports
and sends each once the last is acknowledged, and the driver acknowledges a frame as it arrives
(never waiting for the disk). When the pump comes back from a commit, the driver may hold dozens
of events. `take_events` hands every event already received to the procedure in arrival order
(`Table.stage`: no await, so nothing else comes in between), then settles them together
(`Table.settle`): when one of them commands a device, one commit point makes them durable and
only then are they acted on, each input's device commands in order, as with `Table.feed`; when
none does (card reads), nothing outside waits for them and their lines join the next commit
point (docs/journal.md, "What is durable when"). Nothing is skipped or reordered: an event the
pump must handle itself (a link up, a door closed, a restart, a noisy line) first settles what
was staged before it.

What became of an input is told to its adapter (`taken`) as soon as the procedure decided, before
the next event is translated, as `feed` did: the adapter reads the procedure's answer, not the
disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from daemon.table.common import Staged, TableError, TableHost
from drivers.adapter import ProcedureInput
from drivers.base import DeviceDriver
from drivers.events import (
    DeviceRestarted,
    DoorChanged,
    DriverEvent,
    FaultCleared,
    LinkDegraded,
    LinkDown,
    LinkUp,
)

if TYPE_CHECKING:
    from drivers.adapter import DeviceAdapter


class DeviceHost(Protocol):
    """The devices' host as intake reaches it (`daemon.table.devices.DeviceHost`, which calls
    `take_events`): typed here so that intake does not import it back."""

    @property
    def table(self) -> TableHost: ...

    @property
    def adapters(self) -> Mapping[str, DeviceAdapter]: ...

    async def on_event(self, name: str, event: DriverEvent, received: float) -> None: ...


# Events whose meaning needs the table's own handling (`DeviceHost.on_event`), never staged.
OWN_HANDLING = (LinkUp, DoorChanged, FaultCleared, DeviceRestarted, LinkDegraded)
# The loop is never held longer than this by one device's backlog: the other devices' frames
# and ACKs run between two inputs (issue 10: loop lag p99 <= 2 ms).
YIELD_AFTER = 0.0005
# At most this many inputs share a commit point: the first of them is not kept waiting long, and
# acting on them once durable (their commands, the waiters) holds the loop for a bounded time.
MAX_GROUP = 16


async def take_events(
    host: DeviceHost,
    name: str,
    driver: DeviceDriver,
    events: Sequence[DriverEvent],
    receive_time: Callable[[DriverEvent], float] | None,
) -> None:
    """Take `events` of device `name`, in order. Raises TableError when the table's own
    handling of an event says the pump must end; an input the table can no longer take (its
    journal failed) is dropped as `feed`'s callers drop it, and any other failure of one event
    is logged and the others go on."""
    table = host.table
    adapter = host.adapters[name]
    actor = f"device:{name}"
    staged: list[Staged] = []
    since = time.perf_counter()
    for event in events:
        received = time.perf_counter() if receive_time is None else receive_time(event)
        if isinstance(event, OWN_HANDLING):
            await _settle(host, staged)
            staged = []
            await _own(host, name, event, received)
            continue
        item = _input_for(host, name, event)
        if item is None:
            continue
        if staged and (len(staged) >= MAX_GROUP or time.perf_counter() - since > YIELD_AFTER):
            if len(staged) >= MAX_GROUP:
                await _settle(host, staged)  # no wait when they command nothing: yield below
                staged = []
            await asyncio.sleep(0)
            since = time.perf_counter()
        if not table.running:
            adapter.taken(item, False)
            continue
        try:
            # A link lost has no frame of its own to time.
            one = table.stage(
                item.action,
                actor,
                item.payload,
                received=None if isinstance(event, LinkDown) else received,
            )
        except TableError:
            adapter.taken(item, False)
            continue
        except Exception as exc:
            # A device fact the table cannot take must not silence the device's later ones.
            table.log.exception("table.device_event_failed", device=name, error=repr(exc))
            continue
        outcome = one.fed.outcome
        adapter.taken(item, outcome.accepted and outcome.phase == table.phases.tilt.name)
        staged.append(one)
    if staged:  # `_settle(host, staged)`, inline: one coroutine less an event
        with contextlib.suppress(TableError):
            await table.settle(staged, answered=False)


def _input_for(host: DeviceHost, name: str, event: DriverEvent) -> ProcedureInput | None:
    log = host.table.log
    try:
        item = host.adapters[name].input_for(event)
    except Exception as exc:
        log.exception("table.device_event_failed", device=name, error=repr(exc))
        return None
    if item is None:
        # debug: a fact the procedure has no use for (the bell's warning, expiry and ring in
        # Thirteen: three a round) is logged by its driver already, at the level it deserves;
        # a second info line said it again (the renderer reprs `fact`, only if it writes).
        log.debug("table.device_event_ignored", device=name, fact=event)
    return item


async def _own(host: DeviceHost, name: str, event: DriverEvent, received: float) -> None:
    try:
        await host.on_event(name, event, received)
    except TableError:
        raise
    except Exception as exc:
        host.table.log.exception("table.device_event_failed", device=name, error=repr(exc))


async def _settle(host: DeviceHost, staged: list[Staged]) -> None:
    # The journal failed: the table has failed (and says so); these inputs were never durable.
    with contextlib.suppress(TableError):
        await host.table.settle(staged, answered=False)
