"""What the operator API needs from the running table, and nothing more.

The table runtime (procedure machine, drivers, journal) implements `TableFacade`; the API, the
dealer console and the client commands only ever talk to it through these methods. Everything
crossing this boundary is plain JSON-ready data (dicts, lists, str, int, float, bool, None), so
what the table returns is exactly what an operator sees.

The shapes below (`Snapshot`, `SeatView`, ...) are what the dealer console reads. Every key is
optional for the console: it shows what is there and leaves the rest blank, so a table may grow
into them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

from daemon.contract.published import Published
from daemon.procedures.spec import OPERATOR_ROLES as DECLARED_OPERATOR_ROLES
from daemon.procedures.spec import Param

if TYPE_CHECKING:
    from daemon.journal import Journal

# trainer: handles the simulated devices of a table in training mode (daemon/training.py)
ROLES = ("dealer", "supervisor", "surveillance", "admin", "trainer")
Role = Literal["dealer", "supervisor", "surveillance", "admin", "trainer"]
# The roles a person acts in (devices and the system feed the table themselves): the game
# declarations' own, in a fixed order (the published state lists each one's legal actions).
OPERATOR_ROLES = tuple(sorted(DECLARED_OPERATOR_ROLES))

# One field of an action's payload, as the game declares it (daemon/procedures/spec.py): the
# API builds its request models from these (daemon/api/models.py), the console its forms.
ParamSpec = Param


@dataclass(frozen=True)
class ActionSpec:
    """An action a person can ask the table to take: the procedure's operator triggers.

    `roles` are the roles allowed to ask for it at all (403 for others); whether it is legal
    *now* is the table's answer in `legal_actions` and `act`. `requires_reason` is set for every
    supervisor action (clear a TILT or HOLD, void a round, approve an override): the reason is
    journaled beside the actor. With `payload_checked` False the API passes any JSON object
    through and leaves its checking to the procedure (refusals are then violations, not 422s).
    """

    name: str
    roles: frozenset[str]
    params: Mapping[str, ParamSpec] = field(default_factory=dict)
    requires_reason: bool = False
    payload_checked: bool = True
    label_en: str = ""
    label_zh: str = ""


class SeatView(TypedDict, total=False):
    seat: int | str  # seat number or door/hand number, as the procedure numbers them
    name: str  # "Banker", "Seat 2", ...
    name_zh: str  # "莊家", "第2門", ...
    holder: str | None  # the bettor who holds the cards (Thirteen Art. 5)
    bets: list[dict[str, Any]]  # [{"bettor": str, "amount": int}, ...]
    cards: list[str]  # cards ("AS", "10H", "TD") or tile names, in the order dealt
    arrangement: dict[str, list[str]] | None  # {"front": [...], "middle": [...], "back": [...]}
    settlement: dict[str, Any] | None  # {"result": "win"|"lose"|"push"|"foul", "amount": int}
    late: bool  # the player was not done when the bell rang


class TimerView(TypedDict, total=False):
    deadline: float  # unix seconds (the table's wall clock) when the bell rings
    remaining: float  # seconds left by the table's clock at `snapshot()` time
    running: bool
    rang: bool


class HoldView(TypedDict, total=False):
    kind: Literal["hold", "tilt"]
    reason: str
    device: str | None
    since: float  # unix seconds
    resumes: str  # the phase resumed when a supervisor clears it


class Snapshot(TypedDict, total=False):
    table: str
    game: Literal["thirteen", "paigow"]
    round: str | int | None
    phase: str
    phase_label: dict[str, str]  # {"en": ..., "zh": ...}
    next: str  # what the procedure expects next, in words (English)
    next_zh: str
    hold: HoldView | None
    seats: list[SeatView]  # four seats (Thirteen) or eight/four hands (Pai Gow)
    banker: SeatView | None
    dice: list[int] | None
    dice_total: int | None
    shoe: list[str]  # the cards read from the shoe this round, in order
    timer: TimerView | None
    settlements: list[dict[str, Any]]
    violations: list[dict[str, Any]]  # recent: {"seq", "article", "action", "actor", "phase"}
    # open faults: {"seq"?, "device", "fault", "kind", "healthy": bool, "cleared": bool}; a
    # device healthy again stays listed until a supervisor clears it
    faults: list[dict[str, Any]]
    # a dealer's proposal waiting for a supervisor (approve_override / reject_override): the
    # procedure's record of it (daemon.procedures.records.Proposal, one shape per kind) without
    # `since`, with a "label": {"en", "zh"}; or None
    override: dict[str, Any] | None
    server_time: float  # unix seconds by the table's clock; the console offsets its own by it
    devices: dict[str, str]  # each device's link: "up", "down", ... (the console shows them)


@dataclass(frozen=True)
class Histogram:
    """A cumulative histogram as Prometheus exposes it: `buckets` are (upper bound, count <= it)."""

    buckets: tuple[tuple[float, int], ...]
    sum: float
    count: int


@dataclass(frozen=True)
class TableMetrics:
    """Counters and latencies the table keeps for `/metrics`. Keys are device names or articles."""

    rounds_total: int = 0
    violations_by_article: Mapping[str, int] = field(default_factory=dict)
    faults_by_device: Mapping[str, int] = field(default_factory=dict)
    frame_errors_by_device: Mapping[str, int] = field(default_factory=dict)
    link_round_trip_seconds: Mapping[str, Histogram] = field(default_factory=dict)
    journal_fsync_seconds: Histogram | None = None
    link_up_by_device: Mapping[str, bool] = field(default_factory=dict)


@runtime_checkable
class Subscription(Protocol):
    """Durable journal events, in `seq` order, as dicts; `aclose()` when the reader goes away."""

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class TableFacade(Protocol):
    """The running table, as the operator API sees it."""

    def actions(self) -> list[ActionSpec]:
        """Every operator action this table's game knows, legal now or not."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The table's state now, shaped like `Snapshot`."""
        ...

    def legal_actions(self, role: str) -> list[str]:
        """Names of the actions `role` may take right now (a subset of `actions()`)."""
        ...

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the procedure to take `action` for `actor`.

        Returns once the outcome is durable in the journal:
        ``{"accepted": True, "seq": int, "phase": str}`` or
        ``{"accepted": False, "violation": {"article": str, "phase": str, "reason": str,
        "seq": int}}`` (the refusal is itself a journaled `table.violation`). `payload` has been
        checked against the action's `ParamSpec`s; a supervisor's reason is in
        ``payload["reason"]``.
        """
        ...

    def device_status(self) -> list[dict[str, Any]]:
        """One dict per device: name, port, link ("up"/"down"), identity, approved, fault."""
        ...

    def journal_query(
        self,
        *,
        round: str | None = None,
        event: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Journal events matching every given filter, oldest first, at most `limit` (the last
        `limit` of the matches). `round` is compared with the event's round id as text.
        `event` matches the event name exactly or, ending in ".", as a prefix (`"shoe."`).
        Times are timezone-aware. Called from a worker thread (it may read files), so it must
        read only the journal, never the procedure (`daemon.contract.journal_feed.query` does)."""
        ...

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        """Durable events as they are committed. With `after_seq`, first every journaled event
        with a greater seq, then the live ones, with no gap and no duplicate (so a console that
        reconnects misses nothing)."""
        ...

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        """Journal an API security fact (`api.auth_refused` and `api.input_refused` summaries,
        `api.forbidden`) with the table's actor "api"."""
        ...

    def metrics(self) -> TableMetrics:
        """Counters and latencies for `/metrics`."""
        ...

    async def training(self, name: str, args: list[Any], token: str) -> Any:
        """A training control on the table's simulated devices (`daemon.training`):
        `describe()` or `control(asked, actor, role)` (`training_args`), as the person whose
        `token` asked; None when a device is real (no training mode)."""
        ...


class Publisher(Protocol):
    """The table's state as published for an API that does not read the table itself
    (`daemon.table.publish.publisher.SnapshotPublisher`), on the table's loop."""

    @property
    def latest(self) -> Published: ...

    def listen(self, callback: Callable[[], None]) -> None:
        """Call `callback` (it must only hand over) after each publication."""
        ...

    def publish(self, *, unless_same: bool = False) -> Published: ...

    async def publish_durable(self) -> None:
        """Publish once all the state shows is durable (after an action, before its answer)."""
        ...

    def publish_first(self) -> Published: ...

    def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class Served:
    """What the API process's launcher (`daemon.api.process`, in the table's process) is handed
    of the running table (`daemon.table.publish.served`): its facade, its publications, its
    journal (the folder the API process reads, the lines forwarded to it) and its wall clock."""

    facade: TableFacade
    publisher: Publisher
    journal: Journal | None
    wall: Callable[[], float]


def training_args(name: Any, args: Any) -> bool:
    """Whether `name(*args)` is a training control: `describe()` or `control(asked, actor,
    role)`."""
    if name == "describe":
        return bool(args == [])
    return (
        name == "control"
        and isinstance(args, list)
        and len(args) == 3
        and isinstance(args[0], dict)
        and all(isinstance(a, str) for a in args[1:])
    )
