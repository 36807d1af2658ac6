"""The table runtime: one procedure, its devices and its journal, behind the operator API.

`Table` loads nothing itself beyond its `TableConfig`: it opens the journal, builds the
procedure of the configured game, replays the journal into it, connects the configured drivers
and then turns

- each driver event (a throw, a shuffle count, a card read, a fault, a door, a link lost) into
  a procedure input from `device:<name>`;
- each operator action (`act`, from the API or the scripted autoplay) into an input from
  `<role>:<person>`;
- the five-minute deadline of the procedure into `timer_expired` from `system`, fired by the
  table's own clock (the bell is told, never asked);

and the procedure's device commands into driver calls, issued once the input that caused them
is durable.

Every accepted input is journaled as `table.input` (the replay record: action, actor, payload
and the table time it carried), followed by the procedure's own events; the last line of the
group is the commit point, so `act` returns only when the whole group is on disk. A refused
input is journaled as the procedure's `table.violation` and changes nothing. The input that
ends a round also journals a `table.checkpoint` (the procedure's whole state). A restart
restores the last checkpoint, replays the `table.input` lines after it and feeds `recovered`,
so the table comes back in HOLD with the round as it was; that input is journaled like any
other. docs/table.md tells the whole runtime.

Table time (the `now` every input carries, and the deadlines the procedure keeps) is the wall
clock read once at start, then advanced by the monotonic driver clock, and never earlier than
the last journaled input: a deadline written before a restart keeps its meaning after it, and a
wall clock stepped during a run does not move a timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from daemon.api import journal_feed
from daemon.api.facade import ActionSpec, TableMetrics
from daemon.api.metrics import LatencyHistogram
from daemon.api.views import action_specs, console_snapshot
from daemon.config import JournalConfig, TableConfig
from daemon.journal import Journal, JournalError, Record, Subscription, last_event
from daemon.procedures import build as build_procedure  # the one builder (issue 8)
from daemon.procedures.base import (
    DeviceCommand,
    Input,
    Outcome,
    role_of,
)
from daemon.procedures.thirteen import DECK
from drivers.base import (
    CommandRefused,
    DeviceDriver,
    DeviceError,
    DeviceFault,
    DeviceRestarted,
    DoorChanged,
    DriverEvent,
    EventsMissed,
    FaultCleared,
    LinkDown,
    LinkLost,
    LinkUp,
    NotApproved,
)
from drivers.clock import Clock, MonotonicClock, TimerHandle
from drivers.dice_shaker import DiceInvalid, DiceThrown
from drivers.registry import driver_class
from drivers.shoe_reader import CardDrawn, Misread, ShoeReaderDriver
from drivers.shuffler import ShuffleCompleted, ShufflerDriver
from drivers.timer_bell import TimerBellDriver

log = structlog.get_logger("tabled.table")

INPUT_EVENT = "table.input"
CHECKPOINT_EVENT = "table.checkpoint"
# A checkpoint is journaled when a round ends (its settlement done): a restart restores the
# last one and replays only the inputs after it.
CHECKPOINT_PHASES = frozenset({"ROUND_OVER"})
OPERATOR_ROLES = ("dealer", "supervisor")
SUPERVISOR_CLEARS = ("clear_hold", "clear_tilt", "void_round")
# Faults a shuffle's own result reports: the procedure judges the result, so these are not fed a
# second time as separate faults.
SHUFFLE_RESULT_FAULTS = frozenset({"wrong_count", "foreign_card", "unreadable_card", "sort_mode"})
# Faults a card's own read reports (a misread, a duplicate): when the procedure tilted on the
# read, the fault that follows it is not fed a second time.
CARD_RESULT_FAULTS = frozenset({"misread", "duplicate_card"})
RECENT_VIOLATIONS = 50
# Phases outside a round (thirteen and pai gow alike): a device restart there loses nothing the
# round needs, so it is journaled and does not TILT.
IDLE_PHASES = frozenset({"EQUIPMENT_CHECK", "ROUND_OVER"})


class TableError(Exception):
    """The table cannot take inputs (closed, or its journal failed)."""


class JournalMismatch(TableError):
    """The journal belongs to another game or table configuration."""


@dataclass(frozen=True)
class Fed:
    """What became of one input, once durable."""

    outcome: Outcome
    seq: int  # the seq of the input's last journal line (its commit point)
    input: Input

    @property
    def accepted(self) -> bool:
        return self.outcome.accepted


@dataclass
class TableStats:
    """Counters over this process's life (the journal holds the full history)."""

    inputs: int = 0
    rounds_settled: int = 0
    violations_by_article: Counter[str] = field(default_factory=Counter)
    faults_by_device: Counter[str] = field(default_factory=Counter)
    settlements: list[dict[str, Any]] = field(default_factory=list)
    replayed: int = 0


def record_dict(record: Record) -> dict[str, Any]:
    """A journal record as the API shows it (the line's own keys, plus its hash)."""
    return {
        "seq": record.seq,
        "ts": record.ts,
        "mono": record.mono,
        "table": record.table,
        "round": record.round_id,
        "actor": record.actor,
        "event": record.event,
        "payload": copy.deepcopy(dict(record.payload)),
        "prev": record.prev,
        "hash": record.hash,
    }


class _Feed:
    """`TableFacade.subscribe`: the journal's durable events from `after_seq` on, gap-free."""

    def __init__(self, journal: Journal, after_seq: int | None) -> None:
        self._journal = journal
        self._sub: Subscription = journal.subscribe(maxsize=8192)
        self._next = None if after_seq is None else after_seq + 1
        self._closed = False

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        if self._next is not None:
            # Durable events already journaled; later ones come from the subscription.
            upto = self._journal.durable_seq
            for record in self._journal.replay(self._next):
                if record.seq > upto:
                    break
                self._next = record.seq + 1
                yield record_dict(record)
        while not self._closed:
            try:
                record = await self._sub.next()
            except JournalError:
                return
            if self._next is not None and record.seq < self._next:
                continue
            if self._next is not None and record.seq > self._next:
                # Staged before we subscribed, durable since: read them from the files.
                for missed in self._journal.replay(self._next):
                    if missed.seq >= record.seq:
                        break
                    yield record_dict(missed)
            self._next = record.seq + 1
            yield record_dict(record)

    async def aclose(self) -> None:
        self._closed = True
        self._sub.close()


class Table:
    """One running table; implements `daemon.api.facade.TableFacade`."""

    # Where a commit point's fdatasync runs. On the loop (the default): no thread hand-off
    # between a device frame and its event durable, which under load cost more than the
    # fdatasync itself (bench_table, sim:// fsync: p99 480-556 us on the loop against
    # 984-1,110 us through a worker thread); the loop waits one fdatasync per input, which
    # inputs, serialised through the procedure, wait for anyway. False: in a worker thread,
    # the loop free while the disk works (a disk that stalls for seconds).
    commit_on_loop: bool = True

    def __init__(
        self,
        config: TableConfig,
        *,
        journal_dir: Path | None = None,
        clock: Clock | None = None,
        driver_clock: Clock | None = None,
        wall: Callable[[], float] = time.time,
        drivers: Mapping[str, DeviceDriver] | None = None,
    ) -> None:
        """`clock` is the table's (inputs' time, the five-minute deadline); `driver_clock`
        times the links (replies, polling, reconnection) and defaults to the same clock. A
        simulation may jump the table's clock over five minutes; the links keep real time."""
        self.config = config
        if journal_dir is not None:
            config_journal = config.journal
            self.journal_config = JournalConfig(
                dir=journal_dir,
                durability=config_journal.durability,
                rotate_bytes=config_journal.rotate_bytes,
                rotate_daily=config_journal.rotate_daily,
            )
        else:
            self.journal_config = config.journal
        self.clock: Clock = clock or MonotonicClock()
        self.driver_clock: Clock = driver_clock or self.clock
        self._wall = wall
        self.procedure = build_procedure(config)
        self.journal: Journal | None = None
        self.drivers: dict[str, DeviceDriver] = dict(drivers or {})
        self.missing_drivers: dict[str, str] = {}
        self.stats = TableStats()
        self.violations: deque[dict[str, Any]] = deque(maxlen=RECENT_VIOLATIONS)
        self.fsync = LatencyHistogram()
        self.frame_to_durable = LatencyHistogram()
        self.round_trips: dict[str, LatencyHistogram] = {}
        # Called with each input once durable, and when its device frame arrived (or None).
        self.on_durable: Callable[[Fed, float | None], None] | None = None
        # When a device event's frame arrived (perf_counter); by default, when the table took
        # the event from its driver. A benchmark that timestamps frames sets it.
        self.receive_time: Callable[[DriverEvent], float] | None = None
        self._offset = 0.0
        self._last_now = 0.0
        self._timer: TimerHandle | None = None
        self._timer_deadline: float | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._commands: dict[str, asyncio.Queue[DeviceCommand]] = {}
        self._busy_commands: dict[str, int] = {}
        self._changed: asyncio.Condition | None = None
        self._closing = False
        # Accepted inputs in the journal (checkpoints record it), and the last checkpoint's seq.
        # `use_checkpoint` False replays every input (a cross-check, or a benchmark's baseline).
        self.use_checkpoint = True
        self._card_fault_taken = False
        self._inputs = 0
        self.checkpoint_seq: int | None = None
        self.failure: str | None = None
        # Set when the table can take no more inputs (its journal failed): the daemon exits
        # so that its supervisor (systemd) restarts it into recovery.
        self.failed: asyncio.Event | None = None
        self._log = log.bind(table=config.table_id, game=config.game)

    # ---- life cycle -------------------------------------------------------------------------

    async def start(self, *, connect: bool = True) -> None:
        """Open the journal, replay it, then connect the devices."""
        self._changed = asyncio.Condition()
        self.failed = asyncio.Event()
        self.journal = Journal.open(
            self.journal_config, self.config.table_id, on_sync=self.fsync.observe
        )
        try:
            inputs = self._replay()
        except BaseException:
            self.journal.close()
            raise
        self._offset = self._wall() - self.clock.now()
        if self.now() < self._last_now:
            self._offset += self._last_now - self.now()
        self._append_sync(
            "table.started",
            "system",
            {
                "game": self.config.game,
                "ruleset": self.config.ruleset,
                "hands": self.config.paigow_hands if self.config.game == "paigow" else None,
                "devices": {n: d.port for n, d in sorted(self.config.devices.items())},
                "config": self.config.source,
                "replayed_inputs": inputs,
                "checkpoint_seq": self.checkpoint_seq,
                "replayed_after_checkpoint": self.stats.replayed,
                "phase": self.procedure.phase,
            },
        )
        # The command queues exist before the devices connect, so what the recovery asks of
        # a device (pause the bell) waits for its link instead of being dropped.
        self._build_drivers()
        if inputs:
            fed = await self.feed("recovered", "system", {})
            # What the restart rebuilt, for auditors (and for the tests that kill the daemon).
            self._append_sync(
                "table.recovery",
                "system",
                {"replayed_inputs": inputs, "seq": fed.seq, "snapshot": self.procedure.snapshot()},
            )
        self._sync_timer()
        if connect:
            await self._connect_devices()

    def _journal(self) -> Journal:
        if self.journal is None:
            raise TableError("the table has not started")
        return self.journal

    def _restore_checkpoint(self) -> tuple[int, int]:
        """(the seq to replay from, the inputs the checkpoint stands for); (1, 0) without one.

        A checkpoint that does not fit this configuration is passed over: the full replay
        then decides (and names a journal of another game or table)."""
        if not self.use_checkpoint:
            return 1, 0
        record = last_event(self.journal_config.dir, CHECKPOINT_EVENT)
        if record is None:
            return 1, 0
        try:
            payload = record.payload
            self.procedure.restore(payload["procedure"])
            inputs, now = int(payload["inputs"]), float(payload["now"])
        except (KeyError, TypeError, ValueError) as exc:
            self._log.warning("table.checkpoint_unused", seq=record.seq, error=str(exc))
            self.procedure = build_procedure(self.config)
            return 1, 0
        self._last_now = max(self._last_now, now)
        self.checkpoint_seq = record.seq
        return record.seq + 1, inputs

    def _replay(self) -> int:
        start, inputs = self._restore_checkpoint()
        for record in self._journal().replay(start):
            if record.event == "table.started":
                game = record.payload.get("game")
                if game != self.config.game:
                    raise JournalMismatch(
                        f"{self.journal_config.dir}: the journal of a {game} table; "
                        f"this config runs {self.config.game}"
                    )
                continue
            if record.event != INPUT_EVENT:
                continue
            item = Input.from_payload(record.payload)
            outcome = self.procedure.handle(item.action, item.actor, item.payload, item.now)
            if not outcome.accepted:
                # The journal says it was accepted: a different procedure would replay it
                # differently, and that must stop the table rather than run a changed round.
                raise JournalMismatch(
                    f"seq {record.seq}: {item.action} replays as refused "
                    f"({outcome.violation}); the procedure or config changed"
                )
            self._last_now = max(self._last_now, item.now)
            inputs += 1
            self.stats.replayed += 1
        self._inputs = inputs
        return inputs

    def _build_drivers(self) -> None:
        for name, device in sorted(self.config.devices.items()):
            if not device.enabled:
                continue
            if name not in self.drivers:
                try:
                    cls = driver_class(name)
                except LookupError as exc:
                    self.missing_drivers[name] = str(exc)
                    self._log.error("table.driver_missing", device=name, error=str(exc))
                    continue
                self.drivers[name] = cls.from_config(device, clock=self.driver_clock)
        for name, driver in self.drivers.items():
            self._commands[name] = asyncio.Queue()
            self._busy_commands[name] = 0
            # Every exchange is sampled (status polls too, about one a second per device), not
            # only the few commands of a round.
            histogram = self.round_trips.setdefault(name, LatencyHistogram())
            driver.link.on_round_trip = histogram.observe

    async def _connect_devices(self) -> None:
        for name, driver in self.drivers.items():
            self._spawn(self._pump_events(name, driver))
            self._spawn(self._run_commands(name, driver))
        # Connecting is concurrent: a device that does not answer does not delay the others.
        await asyncio.gather(*(driver.start() for driver in self.drivers.values()))

    async def stop(self) -> None:
        """Close the drivers, then the journal (flushed and durable)."""
        self._closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for driver in self.drivers.values():
            with contextlib.suppress(Exception):
                await driver.close()
        if self.journal is not None:
            with contextlib.suppress(JournalError):
                self._append_sync("table.stopped", "system", {"phase": self.procedure.phase})
            self.journal.close()

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log.error("table.task_failed", error=repr(task.exception()))

    # ---- time -------------------------------------------------------------------------------

    def now(self) -> float:
        """Table time: wall-anchored, monotonic within a run, never before the journal's."""
        return self._offset + self.clock.now()

    def _sync_timer(self) -> None:
        deadline = getattr(self.procedure, "deadline", None)
        if deadline == self._timer_deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_deadline = deadline
        if deadline is not None and not self._closing:
            self._timer = self.clock.call_at(deadline - self._offset, self._timer_fired)

    def _timer_fired(self) -> None:
        self._timer = None
        deadline = self._timer_deadline
        self._timer_deadline = None
        if deadline is None or self._closing:
            return
        # The table's clock is the authority: the input carries the deadline it reached.
        now = max(self.now(), deadline)
        self._spawn(self.feed("timer_expired", "system", {}, now=now))

    # ---- inputs -----------------------------------------------------------------------------

    async def feed(
        self,
        action: str,
        actor: str,
        payload: Mapping[str, Any],
        *,
        now: float | None = None,
        received: float | None = None,
    ) -> Fed:
        """Hand one input to the procedure and journal its outcome; returns once durable.

        Between the procedure's decision and the journal staging its lines there is no await,
        so the journal's order is the order the procedure saw, whatever runs concurrently.
        """
        journal = self.journal
        if journal is None or self._closing or self.failure is not None:
            raise TableError(self.failure or "the table is not running")
        when = self.now() if now is None else now
        when = max(when, self._last_now)
        before = self.procedure.phase
        outcome = self.procedure.handle(action, actor, payload, when)
        item = Input(action, actor, dict(payload), when)
        lines: list[tuple[str, str, Any, Mapping[str, Any]]] = []
        if outcome.accepted:
            self._last_now = when
            # The replay record: the line is encoded as it is staged, so the payload needs no
            # copy of its own (Input.as_payload would deep-copy it).
            replay = {"action": action, "actor": actor, "payload": item.payload, "now": when}
            lines.append((INPUT_EVENT, actor, self.procedure.round_id, replay))
        for event in outcome.events:
            lines.append(
                (
                    event.name,
                    str(event.payload.get("actor", actor)),
                    event.payload.get("round", self.procedure.round_id),
                    event.payload,
                )
            )
        if outcome.accepted:
            self._inputs += 1
            if outcome.phase in CHECKPOINT_PHASES and before not in CHECKPOINT_PHASES:
                checkpoint = {
                    "inputs": self._inputs,
                    "now": when,
                    "procedure": self.procedure.checkpoint(),
                }
                lines.append((CHECKPOINT_EVENT, "system", self.procedure.round_id, checkpoint))
        try:
            record = await self._append_group(journal, lines)
        except JournalError as exc:
            self._fail(f"journal: {exc}")
            raise TableError(self.failure or str(exc)) from exc
        fed = Fed(outcome, record.seq, item)
        self._after(fed, before)
        if received is not None:
            self.frame_to_durable.observe(time.perf_counter() - received)
        if self.on_durable is not None:
            self.on_durable(fed, received)
        if self._changed is not None:
            async with self._changed:
                self._changed.notify_all()
        return fed

    async def _append_group(
        self, journal: Journal, lines: list[tuple[str, str, Any, Mapping[str, Any]]]
    ) -> Record:
        *head, last = lines
        for event, actor, round_id, payload in head:
            journal.append(event, actor=actor, round_id=round_id, payload=payload, commit=False)
        event, actor, round_id, payload = last
        if self.journal_config.durability == "none" or self.commit_on_loop:
            # No disk wait to take off the loop: a thread hop would only add latency.
            return journal.append(
                event, actor=actor, round_id=round_id, payload=payload, commit=True
            )
        return await journal.append_async(
            event, actor=actor, round_id=round_id, payload=payload, commit=True
        )

    def _append_sync(self, event: str, actor: str, payload: Mapping[str, Any]) -> Record:
        return self._journal().append(
            event, actor=actor, round_id=self.procedure.round_id, payload=payload, commit=True
        )

    def _fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
            self._log.critical("table.failed", reason=reason)
            if self.failed is not None:
                self.failed.set()

    def _after(self, fed: Fed, before: str) -> None:
        """Bookkeeping and device commands of a durable input."""
        outcome = fed.outcome
        self.stats.inputs += 1
        for event in outcome.events:
            if event.name == "table.violation":
                article = str(event.payload.get("article", ""))
                self.stats.violations_by_article[article] += 1
                self.violations.append(
                    {
                        "seq": fed.seq,
                        "article": article,
                        "action": event.payload.get("action"),
                        "actor": event.payload.get("actor"),
                        "phase": event.payload.get("phase"),
                        "reason": event.payload.get("reason"),
                    }
                )
                self._log.warning(
                    "table.violation",
                    **{k: v for k, v in event.payload.items() if k not in ("event", "level")},
                )
            elif event.name in ("table.tilted", "table.held"):
                self.stats.faults_by_device[str(event.payload.get("device"))] += 1
            elif event.name == "round.settled":
                self.stats.rounds_settled += 1
                self.stats.settlements.append(
                    {"round": event.payload.get("round"), **dict(event.payload)}
                )
        if not outcome.accepted:
            return
        self._sync_timer()
        for command in outcome.commands:
            self._queue(command)
        if before != "EQUIPMENT_CHECK" and outcome.phase == "EQUIPMENT_CHECK":
            # Back at the equipment check (a restart held before opening, then cleared):
            # devices already connected are identified again, as at a first connection.
            self._identify_pending()

    def _queue(self, command: DeviceCommand) -> None:
        queue = self._commands.get(command.device)
        if queue is None:
            self._log.warning(
                "table.command_without_device", device=command.device, command=command.command
            )
            return
        self._busy_commands[command.device] += 1
        queue.put_nowait(command)

    def _identify_pending(self) -> None:
        identified = getattr(self.procedure, "identified", {})
        devices = getattr(self.procedure, "devices", ())
        for name, driver in self.drivers.items():
            if name in devices and name not in identified and driver.link_up:
                self._spawn(self._device_input(driver, "device_identified", _identity(driver)))

    async def _device_input(
        self,
        driver: DeviceDriver,
        action: str,
        payload: Mapping[str, Any],
        received: float | None = None,
    ) -> Fed | None:
        if self._closing or self.failure is not None:
            return None
        try:
            return await self.feed(action, f"device:{driver.name}", payload, received=received)
        except TableError:
            return None

    # ---- devices ----------------------------------------------------------------------------

    async def _pump_events(self, name: str, driver: DeviceDriver) -> None:
        while True:
            event = await driver.next_event()
            received = (
                time.perf_counter() if self.receive_time is None else self.receive_time(event)
            )
            try:
                await self._on_driver_event(driver, event, received)
            except TableError:
                return
            except Exception as exc:
                # A device fact the table cannot take must not silence the device's later ones.
                self._log.exception("table.device_event_failed", device=name, error=repr(exc))

    async def _on_driver_event(
        self, driver: DeviceDriver, event: DriverEvent, received: float
    ) -> None:
        name = driver.name
        if isinstance(event, LinkUp):
            await self._on_link_up(driver)
        elif isinstance(event, LinkDown):
            if not self._closing:
                await self._device_input(
                    driver, "link_lost", {"device": name, "reason": event.reason}
                )
        elif isinstance(event, DeviceFault):
            if event.kind in SHUFFLE_RESULT_FAULTS or event.kind == "unapproved_firmware":
                return  # judged with the shuffle's result / the identity at equipment check
            if event.kind in CARD_RESULT_FAULTS and self._card_fault_taken:
                self._card_fault_taken = False
                return  # the procedure found it in the card's own read (and tilted)
            await self._device_input(
                driver, "fault_reported", {"device": name, "fault": event.kind}, received
            )
        elif isinstance(event, DoorChanged):
            if event.open:
                fault = {"device": name, "fault": f"{event.door} open"}
                await self._device_input(driver, "door_opened", fault, received)
            else:
                await self._maybe_healthy(driver)
        elif isinstance(event, FaultCleared):
            await self._maybe_healthy(driver)
        elif isinstance(event, EventsMissed):
            fault = {"device": name, "fault": f"{event.count} device event(s) missed"}
            await self._device_input(driver, "fault_reported", fault, received)
        elif isinstance(event, ShuffleCompleted):
            # The result names its mode ("random", "sort", "mode_7"); the sort_mode fault that
            # may come with it restates it (and does not come when it is latched already).
            payload = {
                "count": event.count,
                "mode": event.mode,
                "unreadable": event.unreadable,
                "foreign": event.foreign,
            }
            await self._device_input(driver, "shuffle_completed", payload, received)
        elif isinstance(event, DeviceRestarted):
            await self._on_restarted(driver, received)
        elif isinstance(event, DiceThrown):
            throw = {"dice": list(event.dice), "valid": True}
            await self._device_input(driver, "dice_landed", throw, received)
        elif isinstance(event, DiceInvalid):
            # The procedure shakes again and tilts at the third in a row (H3, R10); the wire
            # reads no dice for an invalid throw, so none are sent.
            invalid = {"valid": False, "reason": event.reason, "die": event.die}
            await self._device_input(driver, "dice_landed", invalid, received)
        elif isinstance(event, Misread) and "card_read" in type(self.procedure).ACTIONS:
            # A card went past the reader unread: its place in the deal is known, its face is
            # not. The procedure tilts and keeps the place for a card entered by hand (an
            # override a supervisor approves); the fault that follows says the same thing.
            fed = await self._device_input(
                driver, "card_read", {"misread": True, "index": event.sequence}, received
            )
            self._card_fault_taken = (
                fed is not None and fed.accepted and fed.outcome.phase == "TILT"
            )
        elif isinstance(event, CardDrawn):
            if event.out_of_phase:
                return  # not a card of the deal: its card_out_of_phase fault follows
            card = {"card": event.card, "face_up": event.face_up, "index": event.sequence}
            fed = await self._device_input(driver, "card_read", card, received)
            # A duplicate the procedure found tilts it; the reader's own fault says the same.
            self._card_fault_taken = (
                fed is not None and fed.accepted and fed.outcome.phase == "TILT"
            )
        else:
            translated = translate_device_event(event)
            if translated is None:
                self._log.info("table.device_event_ignored", device=name, fact=repr(event))
                return
            action, payload = translated
            await self._device_input(driver, action, payload, received)

    def _round_in_play(self) -> bool:
        phase = self.procedure.phase
        if phase in ("HOLD", "TILT"):
            phase = self.procedure.suspended or phase
        return phase not in IDLE_PHASES

    async def _on_restarted(self, driver: DeviceDriver, received: float) -> None:
        """The device powered up since it was last read: what it held for the round (an armed
        shoe, the bell's countdown, a shuffle under way) is gone. Journaled always; in a round,
        a TILT, so a supervisor looks before play goes on (clearing resumes the phase, which
        gives the device its command again)."""
        journal = self.journal
        if journal is None or self._closing or self.failure is not None:
            return
        name = driver.name
        in_round = self._round_in_play()
        try:
            await journal.append_async(
                "device.restarted",
                actor=f"device:{name}",
                round_id=self.procedure.round_id,
                payload={"device": name, "phase": self.procedure.phase, "in_round": in_round},
                commit=True,
            )
        except JournalError as exc:
            self._fail(f"journal: {exc}")
            return
        if in_round:
            fault = {"device": name, "fault": "restarted"}
            await self._device_input(driver, "fault_reported", fault, received)

    async def _on_link_up(self, driver: DeviceDriver) -> None:
        name = driver.name
        known = getattr(self.procedure, "identified", {}).get(name)
        if known is None:
            if self.procedure.phase == "EQUIPMENT_CHECK" and name in getattr(
                self.procedure, "devices", ()
            ):
                await self._device_input(driver, "device_identified", _identity(driver))
            return
        now = _identity(driver)
        changed = [
            k
            for k in ("make", "model", "serial", "firmware", "firmware_hash")
            if known.get(k) != now[k]
        ]
        if changed:
            await self._device_input(
                driver,
                "fault_reported",
                {"device": name, "fault": f"identity changed ({', '.join(changed)})"},
            )
            return
        await self._maybe_healthy(driver)

    async def _maybe_healthy(self, driver: DeviceDriver) -> bool:
        """Feed `device_healthy` when the procedure holds a fault for the device and the device
        itself reports none (no latched fault, no door open, link up)."""
        fault = self.procedure.faults.get(driver.name)
        if fault is None or fault.get("healthy") or not driver.link_up:
            return False
        try:
            status = await driver.status()
        except DeviceError:
            return False
        if status.faults or status.doors_open or status.powered_up:
            # Powered up: a restart no poll had seen yet, which the driver reports now as an
            # event of its own (a TILT in a round): not healthy before that is taken.
            return False
        fault = self.procedure.faults.get(driver.name)
        if fault is None or fault.get("healthy"):
            return False
        fed = await self._device_input(driver, "device_healthy", {"device": driver.name})
        return fed is not None and fed.accepted

    async def refresh_health(self) -> None:
        """Ask every device the procedure holds a fault for to clear what no longer has a
        cause, and take its word when it reports healthy (what a supervisor does before
        clearing a HOLD or TILT)."""
        for name, fault in list(self.procedure.faults.items()):
            driver = self.drivers.get(name)
            if driver is None or fault.get("healthy") or not driver.link_up:
                continue
            with contextlib.suppress(DeviceError):
                await driver.clear_faults()
            await self._maybe_healthy(driver)

    async def _run_commands(self, name: str, driver: DeviceDriver) -> None:
        queue = self._commands[name]
        while True:
            command = await queue.get()
            try:
                await self._command(driver, command)
            finally:
                self._busy_commands[name] -= 1
                if self._changed is not None:
                    async with self._changed:
                        self._changed.notify_all()

    async def _command(self, driver: DeviceDriver, command: DeviceCommand) -> None:
        name = driver.name
        self._log.info("table.device_command", device=name, command=command.command, **command.args)
        try:
            await self._send(driver, command)
        except CommandRefused as exc:
            if exc.reason_name == "door_open":
                await self._device_input(
                    driver, "door_opened", {"device": name, "fault": "door open"}
                )
            else:
                await self._device_input(
                    driver,
                    "fault_reported",
                    {"device": name, "fault": f"{command.command} refused: {exc.reason_name}"},
                )
        except LinkLost:
            fault = self.procedure.faults.get(name)
            if fault is None or fault.get("fault") != "link lost":
                await self._device_input(driver, "link_lost", {"device": name})
        except NotApproved:
            await self._device_input(
                driver, "fault_reported", {"device": name, "fault": "firmware not approved"}
            )
        except (DeviceError, TypeError) as exc:
            await self._device_input(
                driver,
                "fault_reported",
                {"device": name, "fault": f"{command.command} failed: {exc}"},
            )

    async def _send(self, driver: DeviceDriver, command: DeviceCommand) -> None:
        """The driver call for one of the procedure's device commands."""
        name, what, args = driver.name, command.command, command.args
        if isinstance(driver, ShufflerDriver) and what == "shuffle":
            # Only a random shuffle exists on the wire; the count expected is the deck's.
            await driver.shuffle(expected=DECK)
        elif isinstance(driver, ShoeReaderDriver) and what == "arm":
            # A whole deck to deal is a freshly loaded shoe: its draw count starts again.
            await driver.arm(new_shoe=int(args.get("cards", DECK)) == DECK)
        elif isinstance(driver, TimerBellDriver) and what == "start":
            seconds = max(1, round(float(args.get("seconds", 0))))
            # A countdown still running would make this a double start: cancel it first.
            await driver.cancel_timer()
            await driver.start_timer(seconds, warn_before=min(60, seconds - 1))
        elif isinstance(driver, TimerBellDriver) and what == "stop":
            await driver.cancel_timer()
        else:
            method = getattr(driver, what, None)
            if method is None:
                raise DeviceError(f"{name} has no command {what!r}")
            await method(**dict(args))

    # ---- waiting (autoplay, tests) ----------------------------------------------------------

    def quiet(self) -> bool:
        """No device command is waiting to be sent or answered."""
        return not any(self._busy_commands.values())

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until `predicate()` holds after some input; False after `timeout` seconds."""
        if self._changed is None:
            raise TableError("the table has not started")
        try:
            async with self._changed:
                await asyncio.wait_for(self._changed.wait_for(predicate), timeout)
        except TimeoutError:
            return predicate()
        return True

    # ---- TableFacade ------------------------------------------------------------------------

    def actions(self) -> list[ActionSpec]:
        return action_specs(type(self.procedure).ACTIONS, self.config.game)

    def snapshot(self) -> dict[str, Any]:
        raw = self.procedure.snapshot()
        view = console_snapshot(
            raw, now=self.now(), wall_now=self._wall(), violations=list(self.violations)
        )
        if raw.get("dealt") is not None:
            view["shoe"] = [d["card"] for d in raw["dealt"]]
        view["devices"] = {d["name"]: d["link"] for d in self.device_status()}
        return view

    def procedure_snapshot(self) -> dict[str, Any]:
        return self.procedure.snapshot()

    def legal_actions(self, role: str) -> list[str]:
        if role not in OPERATOR_ROLES:
            return []
        return self.procedure.legal_actions(role)

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        proc_actor = f"{role}:{actor}" if actor else role
        if role_of(proc_actor) == "supervisor" and action in SUPERVISOR_CLEARS:
            await self.refresh_health()
        fed = await self.feed(action, proc_actor, payload)
        if fed.accepted:
            return {"accepted": True, "seq": fed.seq, "phase": fed.outcome.phase}
        violation = fed.outcome.violation
        if violation is None:
            raise TableError(f"{action} refused without a violation")
        return {
            "accepted": False,
            "violation": {
                "article": violation.article,
                "phase": violation.phase,
                "reason": violation.reason,
                "action": violation.action,
                "seq": fed.seq,
            },
        }

    def device_status(self) -> list[dict[str, Any]]:
        out = []
        for name, device in sorted(self.config.devices.items()):
            driver = self.drivers.get(name)
            entry: dict[str, Any] = {
                "name": name,
                "port": device.port,
                "link": driver.state.value if driver is not None else "missing",
                "identity": None,
                "approved": None,
                "fault": copy.deepcopy(self.procedure.faults.get(name)),
            }
            if driver is None:
                entry["error"] = self.missing_drivers.get(name, "disabled")
            else:
                if driver.identity is not None:
                    entry["identity"] = _identity(driver)
                entry["approved"] = driver.approved
                entry["counters"] = driver.link.counters.as_dict()
            out.append(entry)
        return out

    def journal_query(
        self,
        *,
        round: str | None = None,
        event: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        return journal_feed.query(
            self._journal(), round=round, event=event, since=since, until=until, limit=limit
        )

    def subscribe(self, after_seq: int | None = None) -> _Feed:
        return _Feed(self._journal(), after_seq)

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        await self._journal().append_async(
            event, actor="api", round_id=self.procedure.round_id, payload=payload, commit=True
        )

    def metrics(self) -> TableMetrics:
        frame_errors = {
            name: int(driver.link.counters.as_dict().get("protocol_errors", 0))
            for name, driver in self.drivers.items()
        }
        return TableMetrics(
            rounds_total=self.stats.rounds_settled,
            violations_by_article=dict(self.stats.violations_by_article),
            faults_by_device=dict(self.stats.faults_by_device),
            frame_errors_by_device=frame_errors,
            link_round_trip_seconds={n: h.snapshot() for n, h in self.round_trips.items()},
            journal_fsync_seconds=self.fsync.snapshot(),
            link_up_by_device={n: d.link_up for n, d in self.drivers.items()},
        )

    def healthy(self) -> bool:
        """For the systemd watchdog: the journal works and the table takes inputs."""
        return self.failure is None and not self._closing


def _identity(driver: DeviceDriver) -> dict[str, Any]:
    identity = driver.identity
    if identity is None:
        return {"device": driver.name, "approved": False}
    return {
        "device": driver.name,
        # No approved list configured (None) is journaled as such and admitted; a list that
        # does not name the build (False) keeps the device out of play.
        "approved": driver.approved is not False,
        "approval": {True: "listed", False: "not listed", None: "no list configured"}[
            driver.approved
        ],
        "make": identity.make,
        "model": identity.model,
        "serial": identity.serial,
        "firmware": identity.firmware,
        "firmware_hash": identity.firmware_hash.hex(),
    }


def translate_device_event(event: DriverEvent) -> tuple[str, dict[str, Any]] | None:
    """Procedure inputs for the shoe reader's and the timer bell's events (read by name and
    attribute, so the table does not import driver modules a config may not use)."""
    kind = type(event).__name__
    if kind in ("ShoeRemoved",):
        return "door_opened", {"device": event.device, "fault": "shoe removed"}
    if kind in ("BellFailed",):
        return "fault_reported", {"device": event.device, "fault": "bell failed to sound"}
    return None
