"""The floor API's acknowledgements: a person takes a chain alert, a violation or a device fault
in hand, once, with a note (pit, surveillance or admin; audit reads). Every attempt, refused or
not, is a row of `floor_actions`; an acknowledgement is pushed on the feed."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from fastapi import FastAPI
from fastapi import Path as ApiPath

from daemon.api.tokens import Principal
from daemon.floor import queries
from daemon.floor.hub import Hub
from daemon.floor.redact import visible_alert, visible_row
from daemon.floor.routing import TABLE_ID, Who
from daemon.floor.shapes import Acknowledgement, ApiError, ChainAlert, FaultRow, ViolationRow
from daemon.floor.store import Store

log = structlog.get_logger("tabled.floor")

ACKNOWLEDGERS = ("pit", "surveillance", "admin")  # audit reads; it does not take alerts in hand


def add_acknowledgements(app: FastAPI, store: Store, hub: Hub) -> None:
    """The three acknowledge routes, on `app`."""

    async def take_in_hand(
        who: Principal, what: str, key: tuple[Any, ...], body: Acknowledgement
    ) -> dict[str, Any]:
        """Acknowledge a chain alert, a violation or a device fault (`what`, found by `key`):
        once, by pit, surveillance or admin, with a note. Every attempt, refused or not, is a
        row of the floor's audit table `floor_actions`; an acknowledgement is pushed."""
        note = body.note.strip()
        name = {"alert": "chain alert", "violation": "violation", "fault": "device fault"}[what]
        target = str(key[0]) if what == "alert" else f"{what}:{key[0]}:{key[1]}"
        shown = f"{name} {key[0]}" if what == "alert" else f"{name} {key[0]} #{key[1]}"

        async def record(outcome: str) -> None:
            await queries.record_action(
                store, who, action="acknowledge", target=target, outcome=outcome, note=note
            )

        if who.role not in ACKNOWLEDGERS:
            await record("refused: role")
            raise ApiError(
                403, "forbidden", f"{who.role} may not acknowledge ({', '.join(ACKNOWLEDGERS)})"
            )
        outcome, row = await queries.acknowledge_row(
            store, what, key, actor=who.actor, role=who.role, note=note
        )
        if row is None:
            await record(f"refused: no such {name}")
            raise ApiError(404, "not_found", f"no {shown}")
        if outcome == "already":
            await record("refused: already acknowledged")
            raise ApiError(
                409, "already_acknowledged", f"{shown} was acknowledged by {row['acknowledged_by']}"
            )
        await record("done")
        log.info(f"floor.{what}_acknowledged", target=target, actor=who.actor, role=who.role)
        if what == "alert":  # its digests as each may see them (redact.visible_alert)
            hub.publish({"type": "acknowledged", "kind": what, what: visible_alert(row, None)})
            return visible_alert(row, who.role)
        # Pushed to every role alike: its text as for a round in play (redact.visible_row).
        hub.publish({"type": "acknowledged", "kind": what, what: visible_row(dict(row), None)})
        return visible_row(row, who.role)

    @app.post(
        "/api/alerts/{alert_id}/acknowledge",
        response_model=ChainAlert,
        tags=["custody"],
        responses={403: {}, 404: {}, 409: {}},
    )
    async def acknowledge_alert(
        who: Who, alert_id: Annotated[int, ApiPath(ge=1, le=2**62)], body: Acknowledgement
    ) -> dict[str, Any]:
        """Acknowledge a chain alert (pit, surveillance, admin): a person has seen it and taken
        it in hand, with a note saying what they are doing. It does not resolve the alert. Once
        only: a second acknowledgement is a 409. Every attempt, refused or not, is recorded in
        the floor's `floor_actions`, and an acknowledgement is pushed on the feed."""
        return await take_in_hand(who, "alert", (alert_id,), body)

    @app.post(
        "/api/violations/{table}/{seq}/acknowledge",
        response_model=ViolationRow,
        tags=["floor"],
        responses={403: {}, 404: {}, 409: {}},
    )
    async def acknowledge_violation(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        seq: Annotated[int, ApiPath(ge=1, le=2**62)],
        body: Acknowledgement,
    ) -> dict[str, Any]:
        """Acknowledge a procedure violation (the table's journal line `seq`), as a chain alert
        is: pit, surveillance or admin, once, with a note; recorded in `floor_actions`."""
        return await take_in_hand(who, "violation", (table, seq), body)

    @app.post(
        "/api/faults/{table}/{seq}/acknowledge",
        response_model=FaultRow,
        tags=["floor"],
        responses={403: {}, 404: {}, 409: {}},
    )
    async def acknowledge_fault(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        seq: Annotated[int, ApiPath(ge=1, le=2**62)],
        body: Acknowledgement,
    ) -> dict[str, Any]:
        """Acknowledge a device fault (a tilt or a hold, the table's journal line `seq`), as a
        chain alert is: pit, surveillance or admin, once, with a note; in `floor_actions`."""
        return await take_in_hand(who, "fault", (table, seq), body)
