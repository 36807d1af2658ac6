"""The table runtime's core: inputs -> procedure -> journal -> commands.

`Table.feed` hands one input to the procedure, journals its outcome and, once that is durable,
queues the procedure's device commands (`daemon.table.devices`). Every accepted input is
journaled as `table.input` (the replay record: action, actor, payload and the table time it
carried), followed by the procedure's own events; the group ends in a commit point, so `feed`
returns only when the whole group is on disk (a device's input that commands nothing joins the
next commit point instead: `settle`, docs/journal.md "What is durable when"). A refused input is
journaled as the procedure's `table.violation` and changes nothing. The input that ends a round
also journals a `table.checkpoint` (`daemon.table.recovery`). `feed` is `stage` (decide and
stage the lines, no await) then `settle` (the commit point, then the commands); the device pump
stages a device's backlog and settles it together (`daemon.table.intake`).

Table time (the `now` every input carries, and the deadlines the procedure keeps) is the wall
clock read once at start, then advanced by the table's clock, and never earlier than the last
journaled input: a deadline written before a restart keeps its meaning after it, and a wall
clock stepped during a run does not move a timer. The journal reads the same clock pair (the
table's wall clock and its monotonic clock), so its timestamps are the table's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import structlog

from daemon.config import JournalConfig, TableConfig
from daemon.contract.metrics import LatencyHistogram
from daemon.journal import Journal, JournalError, Record
from daemon.procedures.base import Input
from daemon.procedures.events import CHECKPOINT_EVENT, INPUT_EVENT
from daemon.table.builder import build_procedure
from daemon.table.commit import GroupCommit
from daemon.table.common import (
    Fed,
    RuntimePhases,
    Staged,
    TableError,
    TableStats,
    tally,
)
from daemon.table.deadline import Deadline
from daemon.table.devices import DeviceHost
from daemon.table.publish.facade import LocalFacade
from daemon.table.recovery import checkpoint_payload, how_it_ended, recover, started_payload
from daemon.table.waiters import Waiters
from drivers.base import DeviceDriver
from drivers.clock import Clock, MonotonicClock
from drivers.events import DriverEvent

log = structlog.get_logger("tabled.table")

RECENT_VIOLATIONS = 50


class Table:
    """One running table. What the API asks of it is its facade's (`facade`, a `TableFacade`
    of `daemon.contract.facade`): the table holds it, and answers it."""

    # Where a commit point's fdatasync runs. Off the loop (the default): the journal's commit
    # thread makes the group durable while the loop goes on with the other devices' frames
    # and ACKs; the input's device commands wait for it (issue 10: with a 10 ms fdatasync the
    # loop lags <= 2 ms, bench/bench_slow_disk.py). True: on the loop, the peer that
    # benchmark compares with (every frame of every device waits for the disk).
    commit_on_loop: bool = False
    # A device's input that commands nothing (a card read: the driver has acknowledged its frame
    # on the link already, and nothing outside acts on it) is not synced on its own: its lines
    # join the next commit point, which this timer brings at the latest (docs/journal.md,
    # "What is durable when"). Effects never wait for it: theirs is at once.
    GROUP_COMMIT_SECONDS: float = 0.005
    # ... and a stream of them (an unpaced deal) is made durable this long after its first at
    # the latest, however closely they follow each other.
    GROUP_COMMIT_MAX_SECONDS: float = 0.05
    # True: every input is a commit point waited for, as before issue 25 (the peer of
    # bench/bench_cpu.py).
    commit_every_input: bool = False

    def __init__(
        self,
        config: TableConfig,
        *,
        journal_dir: Path | None = None,
        clock: Clock | None = None,
        driver_clock: Clock | None = None,
        wall: Callable[[], float] | None = None,
        drivers: Mapping[str, DeviceDriver] | None = None,
    ) -> None:
        """`clock` is the table's (inputs' time, the five-minute deadline, the journal's
        monotonic time); `driver_clock` times the links (replies, polling, reconnection) and
        defaults to the same clock. A simulation may jump the table's clock over five minutes;
        the links keep real time. `wall` is the wall clock that goes with `clock` (by default
        the clock's own `wall`)."""
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
        self.wall = wall or self.clock.wall
        self.procedure = build_procedure(config)
        self.phases = RuntimePhases.of(self.procedure)
        self.journal: Journal | None = None
        self.devices = DeviceHost(self, drivers)
        # The same objects as the device host's, for callers that read them off the table.
        self.drivers = self.devices.drivers
        self.missing_drivers = self.devices.missing
        self.round_trips = self.devices.round_trips
        self.stats = TableStats()
        self.violations: deque[dict[str, Any]] = deque(maxlen=RECENT_VIOLATIONS)
        self.fsync = LatencyHistogram()
        self.frame_to_durable = LatencyHistogram()
        # Called with each input once durable, and when its device frame arrived (or None).
        self.on_durable: Callable[[Fed, float | None], None] | None = None
        # When a device event's frame arrived (perf_counter); by default, when the table took
        # the event from its driver. A benchmark that timestamps frames sets it.
        self.receive_time: Callable[[DriverEvent], float] | None = None
        self._offset = 0.0
        self._last_now = 0.0
        self.deadline = Deadline(self.clock, self._deadline_reached)
        self._tasks: set[asyncio.Task[Any]] = set()
        # Inputs taken, not yet durable, that nothing outside waits for (`settle`), and the
        # timer of the commit point that will cover them.
        self.group = GroupCommit(self)
        self._loop: asyncio.AbstractEventLoop  # the running loop, set by `start`
        # Who waits for the table to change (`wait_for`): each waiter's predicate and future.
        self.waiters = Waiters()
        self._closing = False
        # Accepted inputs in the journal (checkpoints record it), and the last checkpoint's seq.
        # `use_checkpoint` False replays every input (a cross-check, or a benchmark's baseline).
        self.use_checkpoint = True
        self._inputs = 0
        self.checkpoint_seq: int | None = None
        self.failure: str | None = None
        # Set when the table can take no more inputs (its journal failed): the daemon exits
        # so that its supervisor (systemd) restarts it into recovery.
        self.failed: asyncio.Event | None = None
        self.log = log.bind(table=config.table_id, game=config.game)
        # What the operator API reads of the table, and its one way in (`act`).
        self.facade = LocalFacade(self)

    @property
    def running(self) -> bool:
        """The table takes inputs: started, not closing, its journal working."""
        return self.journal is not None and not self._closing and self.failure is None

    # ---- life cycle -------------------------------------------------------------------------

    async def start(self, *, connect: bool = True) -> None:
        """Open the journal, replay it, then connect the devices."""
        self.waiters.start()
        self._loop = asyncio.get_running_loop()
        self.failed = asyncio.Event()
        self.journal = Journal.open(
            self.journal_config,
            self.config.table_id,
            wall=self.wall,
            monotonic=self.clock.now,
            on_sync=self.fsync.observe,
        )
        try:
            recovered = recover(
                self.journal,
                self.journal_config.dir,
                self.config.game,
                self.procedure,
                lambda: build_procedure(self.config),
                use_checkpoint=self.use_checkpoint,
                log=self.log,
            )
        except BaseException:
            self.journal.close()
            self.journal = None
            raise
        self.procedure = recovered.procedure
        self._inputs = inputs = recovered.inputs
        ended = how_it_ended(self.journal_config.dir)
        self._last_now = max(self._last_now, recovered.last_now)
        self.checkpoint_seq = recovered.checkpoint_seq
        self.stats.replayed += recovered.replayed
        self._offset = self.wall() - self.clock.now()
        if self.now() < self._last_now:
            self._offset += self._last_now - self.now()
        started = started_payload(self.config, recovered, self.stats.replayed, self.procedure)
        self._append_sync("table.started", "system", started)
        self.devices.build()
        if inputs:
            fed = await self.feed("recovered", "system", {"stopped": ended})
            # What the restart rebuilt, for auditors (and for the tests that kill the daemon).
            self._append_sync(
                "table.recovery",
                "system",
                {"replayed_inputs": inputs, "seq": fed.seq, "snapshot": self.procedure.snapshot()},
            )
        self._sync_timer()
        if connect:
            await self.devices.connect()

    async def stop(self) -> None:
        """Close the drivers, then the journal (flushed and durable)."""
        self._closing = True
        self.deadline.cancel()
        self.group.cancel()  # `table.stopped` below is the commit point
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.devices.close()
        if self.journal is not None:
            with contextlib.suppress(JournalError):
                self._append_sync("table.stopped", "system", {"phase": self.procedure.phase})
            self.journal.close()

    def _journal(self) -> Journal:
        if self.journal is None:
            raise TableError("the table has not started")
        return self.journal

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        """A person's action, answered as the API answers it (`TableFacade.act`)."""
        return await self.facade.act(action, actor, role, payload)

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        """An API security fact, journaled with the table's actor "api"."""
        await self._journal().append_async(
            event, actor="api", round_id=self.procedure.round_id, payload=payload, commit=True
        )

    def procedure_snapshot(self) -> dict[str, Any]:
        return self.procedure.snapshot()

    def healthy(self) -> bool:
        """For the systemd watchdog: the journal works and the table takes inputs."""
        return self.failure is None and not self._closing

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.log.error("table.task_failed", error=repr(task.exception()))

    def fail(self, reason: str) -> None:
        """The table can take no more inputs (its journal failed)."""
        if self.failure is None:
            self.failure = reason
            self.log.critical("table.failed", reason=reason)
            if self.failed is not None:
                self.failed.set()

    # ---- time -------------------------------------------------------------------------------

    def now(self) -> float:
        """Table time: wall-anchored, monotonic within a run, never before the journal's."""
        return self._offset + self.clock.now()

    def _sync_timer(self) -> None:
        self.deadline.sync(getattr(self.procedure, "deadline", None), self._offset)

    def _deadline_reached(self, deadline: float) -> None:
        if self._closing:
            return
        # The table's clock is the authority: the input carries the deadline it reached.
        now = max(self.now(), deadline)
        self.spawn(self.feed("timer_expired", "system", {}, now=now))

    def round_in_play(self) -> bool:
        """A round is under way (suspended in HOLD or TILT counts as the phase it left)."""
        return self.phases.in_play(self.procedure)

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
        staged = self.stage(action, actor, payload, now=now, received=received)
        await self.settle([staged])
        return staged.fed

    def stage(
        self,
        action: str,
        actor: str,
        payload: Mapping[str, Any],
        *,
        now: float | None = None,
        received: float | None = None,
    ) -> Staged:
        """The first half of `feed`, without an await: the procedure decides and the journal
        stages the group's lines (in memory, in the procedure's order). Nothing is acted on
        until `settle`: the input's device commands go out only once it is durable.

        Several inputs staged one after another and settled together share one commit point
        (group commit): the device pump stages every event its driver already holds, then
        waits once (`daemon.table.intake`).
        """
        journal = self.journal
        if journal is None or self._closing or self.failure is not None:
            raise TableError(self.failure or "the table is not running")
        when = self.now() if now is None else now
        when = max(when, self._last_now)
        procedure = self.procedure
        before = procedure.state
        outcome = procedure.handle(action, actor, payload, when)
        item = Input(action, actor, dict(payload), when)
        round_id = procedure.round_id
        stage_line = journal.stage  # positional: `append(..., commit=False)` less a call
        record: Record | None = None
        try:
            if outcome.accepted:
                self._last_now = when
                # The replay record: the line is encoded as it is staged, so the payload needs
                # no copy of its own (Input.as_payload would deep-copy it).
                replay = {"action": action, "actor": actor, "payload": item.payload, "now": when}
                record = stage_line(INPUT_EVENT, actor, round_id, replay, False)
            for event in outcome.events:
                event_payload = event.payload
                record = stage_line(
                    event.name,
                    str(event_payload.get("actor", actor)),
                    event_payload.get("round", round_id),
                    event_payload,
                    False,
                )
            if outcome.accepted:
                self._inputs += 1
                checkpoints = self.phases.checkpoint
                if procedure.state in checkpoints and before not in checkpoints:
                    checkpoint = checkpoint_payload(procedure, self._inputs, when)
                    record = stage_line(CHECKPOINT_EVENT, "system", round_id, checkpoint, False)
        except JournalError as exc:
            self.fail(f"journal: {exc}")
            raise TableError(self.failure or str(exc)) from exc
        except Exception as exc:
            # The procedure has decided, and its lines could not be written (a payload the
            # journal cannot encode): memory and journal would disagree, and a restart would
            # replay to another state. The table takes no more inputs, as for a disk error.
            self.fail(f"journal: the procedure's decision could not be written: {exc!r}")
            raise TableError(self.failure or repr(exc)) from exc
        if record is None:  # a refusal is journaled too: every input has a line
            raise TableError(f"{action}: the procedure gave nothing to journal")
        return Staged(Fed(outcome, record.seq, item), before, procedure.state, received)

    async def settle(self, staged: Sequence[Staged], *, answered: bool = True) -> None:
        """The second half of `feed`: a commit point for the inputs `stage` gave (in their
        order), then, once they are durable, their bookkeeping and device commands.

        `answered`: the caller tells someone outside what became of them (an operator's
        reply), so they are durable first. Without it (a device's events, which the driver has
        acknowledged on the link already), inputs that command no device are not waited for:
        their bookkeeping is done now and their lines join the next commit point, at most
        `GROUP_COMMIT_SECONDS` later (`_defer`); nothing outside acts on them before that."""
        if not staged:
            return
        if not (answered or self.commit_every_input or any(map(self._acts_outside, staged))):
            self._defer(staged)
            return
        await self._commit(staged[-1].fed.seq)
        for one in staged:
            self._after(one.fed, one.before, one.after)
        self._durable(staged)

    def _acts_outside(self, one: Staged) -> bool:
        # Device commands, or identification asked again on coming back to the equipment check.
        if one.fed.outcome.commands:
            return True
        check = self.phases.equipment_check
        return one.after is check and one.before is not check

    async def _commit(self, seq: int) -> None:
        journal = self._journal()
        try:
            if self.journal_config.durability == "none" or self.commit_on_loop:
                # No disk wait to take off the loop: a thread hop would only add latency.
                journal.commit(seq)
            else:
                await journal.commit_async(seq)
        except JournalError as exc:
            self.fail(f"journal: {exc}")
            raise TableError(self.failure or str(exc)) from exc

    def _durable(self, staged: Sequence[Staged] = ()) -> None:
        """Inputs now durable: the deferred ones the commit covered first (they came before),
        then `staged`; their frame-to-durable times, `on_durable`, and the waiters."""
        journal = self.journal
        if self.group.deferred and journal is not None:
            staged = [*self.group.covered(journal.durable_seq), *staged]
        now = time.perf_counter()
        on_durable = self.on_durable
        for one in staged:
            if one.received is not None:
                self.frame_to_durable.observe(now - one.received)
            if on_durable is not None:
                on_durable(one.fed, one.received)
        self.changed()

    def _defer(self, staged: Sequence[Staged]) -> None:
        """Inputs nothing outside waits for: bookkeeping now (no device command among them);
        durable with the next commit point (`daemon.table.commit`)."""
        for one in staged:
            self._after(one.fed, one.before, one.after)
        self.group.defer(staged, self._loop)
        self.changed()

    def commit_now(self, seq: int) -> bool:
        """Make the journal durable up to `seq` here, on the loop, when there is no disk wait
        to take off it (durability "none", or `commit_on_loop`); False: it must be awaited
        (`commit`). A journal that fails fails the table."""
        if not (self.journal_config.durability == "none" or self.commit_on_loop):
            return False
        try:
            self._journal().commit(seq)
        except JournalError as exc:
            self.fail(f"journal: {exc}")
        else:
            self._durable()
        return True

    async def commit(self, seq: int) -> None:
        """Make the journal durable up to `seq`, then what became durable."""
        with contextlib.suppress(TableError):  # the table has failed, and says so
            await self._commit(seq)
            self._durable()

    def _append_sync(self, event: str, actor: str, payload: Mapping[str, Any]) -> Record:
        record = self._journal().append(
            event, actor=actor, round_id=self.procedure.round_id, payload=payload, commit=True
        )
        if self.group.deferred:
            self._durable()  # the commit covered the deferred inputs before it
        return record

    def _after(self, fed: Fed, before: Enum, after: Enum) -> None:
        """Bookkeeping and device commands of a durable input (`after`: the state it left the
        procedure in, which later inputs staged with it may have moved on from)."""
        outcome = fed.outcome
        tally(self.stats, self.violations, fed, self.log)
        if not outcome.accepted:
            return
        self._sync_timer()
        for command in outcome.commands:
            self.devices.queue(command)
        equipment_check = self.phases.equipment_check
        if before is not equipment_check and after is equipment_check:
            # Back at the equipment check (a restart held before opening, then cleared):
            # devices already connected are identified again, as at a first connection.
            self.devices.identify_pending()

    # ---- waiting (autoplay, tests) ----------------------------------------------------------

    async def notify(self) -> None:
        """Wake whoever waits for the table to change (`wait_for`)."""
        self.changed()

    def changed(self) -> None:
        """The table changed: wake the waiters whose predicate now holds (`wait_for`)."""
        self.waiters.changed()

    def quiet(self) -> bool:
        """No device command is waiting to be sent or answered."""
        return self.devices.quiet()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until `predicate()` holds after some input; False after `timeout` seconds.

        True means the predicate held when this returned (no other task ran in between)."""
        if not self.waiters.open:
            raise TableError("the table has not started")
        return await self.waiters.wait_for(predicate, timeout)
