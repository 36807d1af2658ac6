"""What the table runtime's modules share: its errors, what became of an input, its counters,
and the phases it looks at (the journal events it writes are declared with the games':
daemon/procedures/events.py)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from daemon.procedures.base import Input, Outcome, Procedure

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.journal import Journal
    from drivers.clock import Clock
    from drivers.events import DriverEvent


class TableError(Exception):
    """The table cannot take inputs (closed, or its journal failed)."""


class JournalMismatch(TableError):
    """The journal belongs to another game or table configuration."""


@dataclass(frozen=True, init=False)
class Fed:
    """What became of one input, once durable."""

    outcome: Outcome
    seq: int  # the seq of the input's last journal line (its commit point)
    input: Input

    def __init__(self, outcome: Outcome, seq: int, input: Input) -> None:
        # The dict at once (one made an input): as `daemon.procedures.outcome.Input`.
        object.__setattr__(self, "__dict__", {"outcome": outcome, "seq": seq, "input": input})

    @property
    def accepted(self) -> bool:
        return self.outcome.accepted


@dataclass
class TableStats:
    """Counters over this process's life (the journal holds the full history)."""

    inputs: int = 0
    rounds_settled: int = 0
    # One entry per bet settled (banker, player, push, ...): counted, not kept (flat memory).
    outcomes_per_bet: Counter[str] = field(default_factory=Counter)
    violations_by_article: Counter[str] = field(default_factory=Counter)
    faults_by_device: Counter[str] = field(default_factory=Counter)
    replayed: int = 0


@dataclass(frozen=True)
class RuntimePhases:
    """The phases the runtime itself looks at, as members of the procedure's own `Phase` enum
    (every game has them): a KeyError at start names a game that lacks one. The sets of them
    are made once (`cached_property`): the runtime reads one every input."""

    equipment_check: Enum
    round_over: Enum
    hold: Enum
    tilt: Enum

    def in_play(self, procedure: Procedure) -> bool:
        """A round is under way (suspended in HOLD or TILT counts as the phase it left)."""
        name = procedure.phase
        if procedure.state in self.suspended and procedure.suspended is not None:
            name = procedure.suspended
        return name not in {phase.name for phase in self.idle}

    @classmethod
    def of(cls, procedure: Procedure) -> RuntimePhases:
        phase = type(procedure).Phase
        return cls(phase["EQUIPMENT_CHECK"], phase["ROUND_OVER"], phase["HOLD"], phase["TILT"])

    @cached_property
    def checkpoint(self) -> frozenset[Enum]:
        """A checkpoint is journaled when a round ends (its settlement done): a restart restores
        the last one and replays only the inputs after it."""
        return frozenset({self.round_over})

    @cached_property
    def idle(self) -> frozenset[Enum]:
        """Outside a round: a device restart there loses nothing the round needs, so it is
        journaled and does not TILT."""
        return frozenset({self.equipment_check, self.round_over})

    @cached_property
    def suspended(self) -> frozenset[Enum]:
        return frozenset({self.hold, self.tilt})


def bet_outcomes(settlement: Mapping[str, Any]) -> list[str]:
    """The outcome of each bet a `round.settled` payload settles, one entry per bet.

    Thirteen settles bet by bet (a list of entries); Pai Gow settles door by door, and a door
    carries every bet placed on it (`bettors`), so a door with two bets counts twice.
    """
    settled = settlement.get("settlement")
    if isinstance(settled, list):
        return [str(entry.get("outcome")) for entry in settled]
    if isinstance(settled, Mapping):
        return [
            str(door.get("outcome"))
            for door in settled.get("doors", [])
            for _bet in door.get("bettors") or [None]
        ]
    return []


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 1.3 us to make, this 0.3
class Staged:
    """An input the procedure took and the journal staged, not yet durable (`Table.stage`)."""

    fed: Fed
    before: Enum  # the procedure's state before the input
    after: Enum  # and after it
    received: float | None  # when its device frame arrived (perf_counter), if it had one


def tally(stats: TableStats, violations: deque[dict[str, Any]], fed: Fed, log: Any) -> None:
    """Count a durable input's outcome: its violations (kept, the recent ones, for the
    console), faults and settled rounds."""
    stats.inputs += 1
    for event in fed.outcome.events:
        if event.name == "table.violation":
            article = str(event.payload.get("article", ""))
            stats.violations_by_article[article] += 1
            violations.append(
                {
                    "seq": fed.seq,
                    "article": article,
                    "action": event.payload.get("action"),
                    "actor": event.payload.get("actor"),
                    "phase": event.payload.get("phase"),
                    "reason": event.payload.get("reason"),
                    "reason_zh": event.payload.get("reason_zh"),
                }
            )
            # The system log is read by whoever reads journald: the reason ("Qh has
            # already been dealt") may name a face-down card, so it stays in the journal
            # (and the API, which serves it by the visibility rule); docs/operations.md.
            log.warning(
                "table.violation",
                seq=fed.seq,
                article=article,
                action=event.payload.get("action"),
                actor=event.payload.get("actor"),
                phase=event.payload.get("phase"),
            )
        elif event.name in ("table.tilted", "table.held"):
            stats.faults_by_device[str(event.payload.get("device"))] += 1
        elif event.name == "round.settled":
            # Counted, not kept: the journal holds every settlement (memory stays flat).
            stats.rounds_settled += 1
            stats.outcomes_per_bet.update(bet_outcomes(event.payload))


class TableHost(Protocol):
    """The running table as its devices and their intake reach it (`daemon.table.runtime.Table`
    is the one): typed here so that neither imports the runtime, which imports them."""

    config: TableConfig
    procedure: Procedure
    phases: RuntimePhases
    journal: Journal | None
    log: Any
    driver_clock: Clock
    receive_time: Callable[[DriverEvent], float] | None

    @property
    def running(self) -> bool: ...

    def spawn(self, coro: Awaitable[Any]) -> None: ...

    def fail(self, reason: str) -> None: ...

    def round_in_play(self) -> bool: ...

    async def notify(self) -> None: ...

    async def feed(
        self,
        action: str,
        actor: str,
        payload: Mapping[str, Any],
        *,
        now: float | None = None,
        received: float | None = None,
    ) -> Fed: ...

    def stage(
        self,
        action: str,
        actor: str,
        payload: Mapping[str, Any],
        *,
        now: float | None = None,
        received: float | None = None,
    ) -> Staged: ...

    async def settle(self, staged: Sequence[Staged], *, answered: bool = True) -> None: ...
