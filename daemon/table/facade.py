"""The operator facade (`daemon.contract.facade.TableFacade`): what the API, the CLI and the console
ask of a running table. Reads only; the one way in is `act`, which feeds an input."""

from __future__ import annotations

import copy
from collections import deque
from datetime import datetime
from typing import TYPE_CHECKING, Any

from daemon.contract import journal_feed
from daemon.contract.facade import OPERATOR_ROLES, ActionSpec, TableMetrics
from daemon.contract.metrics import LatencyHistogram
from daemon.contract.published import Published
from daemon.procedures.base import role_of
from daemon.table.common import TableError, TableStats
from daemon.table.devices import DeviceHost

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from daemon.config import TableConfig
    from daemon.journal import Journal
    from daemon.procedures.base import Procedure
    from daemon.table.common import Fed
    from daemon.table.feed import JournalFeed

SUPERVISOR_CLEARS = ("clear_hold", "clear_tilt", "void_round")


class OperatorFacade:
    """The `TableFacade` half of `Table` (daemon.table.runtime), over its state."""

    config: TableConfig
    procedure: Procedure
    devices: DeviceHost
    stats: TableStats
    violations: deque[dict[str, Any]]
    fsync: LatencyHistogram
    failure: str | None
    _closing: bool
    _wall: Callable[[], float]

    def now(self) -> float:
        raise NotImplementedError

    def _journal(self) -> Journal:
        raise NotImplementedError

    async def feed(self, action: str, actor: str, payload: Mapping[str, Any]) -> Fed:
        raise NotImplementedError

    def actions(self) -> list[ActionSpec]:
        from daemon.api.views import action_specs  # noqa: PLC0415 - the API's, not the table's

        return action_specs(type(self.procedure).ACTIONS, self.config.game)

    def snapshot(self) -> dict[str, Any]:
        return self._snapshot(self.device_status())

    def published_snapshot(self) -> Published:
        """The state, each operator role's legal actions and the devices, as immutable text
        for an API on another thread (`daemon.api.bridge`), keyed by the durable seq."""
        devices = self.device_status()
        legal = {role: self.legal_actions(role) for role in OPERATOR_ROLES}
        seq = self._journal().durable_seq
        return Published.build(seq, self._snapshot(devices), legal, devices)

    def _snapshot(self, devices: list[dict[str, Any]]) -> dict[str, Any]:
        from daemon.api.views import console_snapshot  # noqa: PLC0415 - the API's, not the table's

        raw = self.procedure.snapshot()
        view = console_snapshot(
            raw, now=self.now(), wall_now=self._wall(), violations=list(self.violations)
        )
        if raw.get("dealt") is not None:
            view["shoe"] = [d["card"] for d in raw["dealt"]]
        view["devices"] = {d["name"]: d["link"] for d in devices}
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
            await self.devices.refresh_health()
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
                "reason_zh": violation.reason_zh,
                "action": violation.action,
                "seq": fed.seq,
            },
        }

    def device_status(self) -> list[dict[str, Any]]:
        out = []
        for name, device in sorted(self.config.devices.items()):
            driver = self.devices.drivers.get(name)
            entry: dict[str, Any] = {
                "name": name,
                "port": device.port,
                "link": driver.state.value if driver is not None else "missing",
                "identity": None,
                "approved": None,
                "fault": copy.deepcopy(self.procedure.faults.get(name)),
            }
            if driver is None:
                entry["error"] = self.devices.missing.get(name, "disabled")
            else:
                if driver.identity is not None:
                    entry["identity"] = self.devices.identity(driver)
                entry["approved"] = self.devices.approval(driver)
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

    def subscribe(self, after_seq: int | None = None) -> JournalFeed:
        from daemon.table.feed import JournalFeed  # noqa: PLC0415 - for the API only

        return JournalFeed(self._journal(), after_seq)

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        await self._journal().append_async(
            event, actor="api", round_id=self.procedure.round_id, payload=payload, commit=True
        )

    def metrics(self) -> TableMetrics:
        drivers = self.devices.drivers
        frame_errors = {
            name: int(driver.link.counters.as_dict().get("protocol_errors", 0))
            for name, driver in drivers.items()
        }
        return TableMetrics(
            rounds_total=self.stats.rounds_settled,
            violations_by_article=dict(self.stats.violations_by_article),
            faults_by_device=dict(self.stats.faults_by_device),
            frame_errors_by_device=frame_errors,
            link_round_trip_seconds={n: h.snapshot() for n, h in self.devices.round_trips.items()},
            journal_fsync_seconds=self.fsync.snapshot(),
            link_up_by_device={n: d.link_up for n, d in drivers.items()},
        )

    def healthy(self) -> bool:
        """For the systemd watchdog: the journal works and the table takes inputs."""
        return self.failure is None and not self._closing
