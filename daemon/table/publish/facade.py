"""The table's `TableFacade` in its own process (`daemon.contract.facade`): what the API, the
CLI and the console ask of a running table. `Table` holds one (`table.facade`), for an app served
in the table's process (the tests) and for the publications sent to the API process
(`published_snapshot`). Reads only; the one way in is `act`, which feeds an input."""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from daemon.contract import journal_feed
from daemon.contract.facade import OPERATOR_ROLES, ActionSpec, TableMetrics
from daemon.contract.metrics import LatencyHistogram
from daemon.contract.published import Published
from daemon.procedures.base import role_of
from daemon.table.common import Fed, TableError, TableStats
from daemon.table.devices import DeviceHost
from daemon.table.publish.training import training_call
from daemon.table.publish.views import action_specs, console_snapshot

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.journal import Journal
    from daemon.procedures.base import Procedure

SUPERVISOR_CLEARS = ("clear_hold", "clear_tilt", "void_round")


class Operated(Protocol):
    """The running table as its facade reads it (`daemon.table.runtime.Table` is the one)."""

    config: TableConfig
    procedure: Procedure
    devices: DeviceHost
    violations: deque[dict[str, Any]]
    stats: TableStats
    fsync: LatencyHistogram
    journal: Journal | None
    wall: Callable[[], float]

    def now(self) -> float: ...

    async def feed(self, action: str, actor: str, payload: Mapping[str, Any]) -> Fed: ...

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None: ...


class LocalFacade:
    """`TableFacade` over the table in the same process (and on the same loop)."""

    def __init__(self, table: Operated) -> None:
        self.table = table

    @property
    def config(self) -> TableConfig:
        return self.table.config

    def _journal(self) -> Journal:
        journal = self.table.journal
        if journal is None:
            raise TableError("the table has not started")
        return journal

    def actions(self) -> list[ActionSpec]:
        return action_specs(type(self.table.procedure).ACTIONS, self.config.game)

    def snapshot(self) -> dict[str, Any]:
        return self._snapshot(self.device_status())

    def published_snapshot(self) -> Published:
        """The state, each operator role's legal actions and the devices, as immutable text
        for the API process (`daemon.table.publish.publisher`), keyed by the durable seq."""
        devices = self.device_status()
        legal = {role: self.legal_actions(role) for role in OPERATOR_ROLES}
        seq = self._journal().durable_seq
        return Published.build(seq, self._snapshot(devices), legal, devices)

    def _snapshot(self, devices: list[dict[str, Any]]) -> dict[str, Any]:
        table = self.table
        raw = table.procedure.snapshot()
        view = console_snapshot(
            raw, now=table.now(), wall_now=table.wall(), violations=list(table.violations)
        )
        if raw.get("dealt") is not None:
            view["shoe"] = [d["card"] for d in raw["dealt"]]
        view["devices"] = {d["name"]: d["link"] for d in devices}
        return view

    def legal_actions(self, role: str) -> list[str]:
        if role not in OPERATOR_ROLES:
            return []
        return self.table.procedure.legal_actions(role)

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        proc_actor = f"{role}:{actor}" if actor else role
        if role_of(proc_actor) == "supervisor" and action in SUPERVISOR_CLEARS:
            await self.table.devices.refresh_health()
        fed = await self.table.feed(action, proc_actor, payload)
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
                "reason_zh": violation.reason_zh,
                "action": violation.action,
                "seq": fed.seq,
            },
        }

    def device_status(self) -> list[dict[str, Any]]:
        out = []
        devices, faults = self.table.devices, self.table.procedure.faults
        for name, device in sorted(self.config.devices.items()):
            driver = devices.drivers.get(name)
            entry: dict[str, Any] = {
                "name": name,
                "port": device.port,
                "link": driver.state.value if driver is not None else "missing",
                "identity": None,
                "approved": None,
                "fault": copy.deepcopy(faults.get(name)),
            }
            if driver is None:
                entry["error"] = devices.missing.get(name, "disabled")
            else:
                if driver.identity is not None:
                    entry["identity"] = devices.identity(driver)
                entry["approved"] = devices.approval(driver)
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

    def subscribe(self, after_seq: int | None = None) -> journal_feed.JournalSubscription:
        return journal_feed.subscribe(self._journal(), after_seq)

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        await self.table.journal_security(event, payload)

    def metrics(self) -> TableMetrics:
        table = self.table
        drivers, stats = table.devices.drivers, table.stats
        frame_errors = {
            name: int(driver.link.counters.as_dict().get("protocol_errors", 0))
            for name, driver in drivers.items()
        }
        return TableMetrics(
            rounds_total=stats.rounds_settled,
            violations_by_article=dict(stats.violations_by_article),
            faults_by_device=dict(stats.faults_by_device),
            frame_errors_by_device=frame_errors,
            link_round_trip_seconds={n: h.snapshot() for n, h in table.devices.round_trips.items()},
            journal_fsync_seconds=table.fsync.snapshot(),
            link_up_by_device={n: d.link_up for n, d in drivers.items()},
        )

    async def training(self, name: str, args: list[Any], token: str = "") -> Any:
        """A training control on the table's simulated devices (`daemon.training`); the caller
        was checked by the API's route, in this same process."""
        return await training_call(self.table, name, args)
