"""Reads, open to every role: the table now, the actions, the devices, the journal. The state and
the journal are served as the caller's role may see them (`daemon.procedures.visibility`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import anyio
import structlog
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.routing import Route

from daemon.api.bodies import ActionsBody, DevicesBody, JournalBody, StateBody
from daemon.api.context import context
from daemon.api.errors import AUTH_ERRORS, ApiError, ErrorBody
from daemon.api.gate import Who, principal
from daemon.api.models import catalog_entry
from daemon.api.tokens import Principal
from daemon.procedures.games import GAMES
from daemon.procedures.spec import PhaseText
from daemon.procedures.visibility import redact_records

log = structlog.get_logger("tabled.api")

router = APIRouter()


@router.get("/api/state", response_model=StateBody, responses=AUTH_ERRORS, tags=["read"])
async def state(request: Request, who: Who) -> Response:
    """The table now and the actions legal for the caller's role."""
    return _state_body(request, who)


async def lean_state(request: Request) -> Response:
    """`GET /api/state` as `state` answers it, served ahead of FastAPI's router (`LEAN`): the
    most read route (every console's panel, surveillance's polls) skips the dependency
    solving, which cost about half of its time. The route above documents it."""
    return _state_body(request, await principal(request))


def _state_body(request: Request, who: Principal) -> Response:
    # A `StateBody`, its state made once per durable change and audience, as the role may see
    # it (daemon.api.snapshots, redacted by daemon.procedures.visibility).
    body = context(request).states.state_body(who.actor, who.role)
    return Response(body, media_type="application/json")


# Routes matched before every other (`create_app` puts them first), each the same answer as
# the documented route of its path.
LEAN = (Route("/api/state", lean_state, methods=["GET"], include_in_schema=False),)


@router.get("/api/actions", response_model=ActionsBody, responses=AUTH_ERRORS, tags=["read"])
async def actions(request: Request, who: Who) -> ActionsBody:
    """Every action the table knows (with parameters and labels) and those legal now, and the
    game's data the console reads beside them: its phases and its journal events, with their
    labels (`daemon.procedures.spec.Game`)."""
    ctx = context(request)
    table = ctx.table
    name = table.snapshot().get("game")
    game = GAMES.get(name) if isinstance(name, str) else None
    return ActionsBody(
        legal=table.legal_actions(who.role),
        catalog=[catalog_entry(s) for s in table.actions()],
        console_idle_seconds=ctx.console_idle_seconds,
        game=None if game is None else game.name,
        phases=[] if game is None else [phase_entry(n, t) for n, t in game.phases.items()],
        events=[] if game is None else [e.as_json() for e in game.events.values()],
    )


def phase_entry(name: str, text: PhaseText) -> dict[str, str]:
    """A phase as `GET /api/actions` serves it."""
    return {
        "name": name,
        "label_en": text.label_en,
        "label_zh": text.label_zh,
        "next_en": text.next_en,
        "next_zh": text.next_zh,
    }


@router.get("/api/devices", response_model=DevicesBody, responses=AUTH_ERRORS, tags=["read"])
async def devices(request: Request, who: Who) -> DevicesBody:
    """Each device: link, identity, approval, open fault."""
    table = context(request).table
    return DevicesBody(devices=table.device_status())


@router.get(
    "/api/journal",
    response_model=JournalBody,
    responses={
        **AUTH_ERRORS,
        422: {"model": ErrorBody},
        503: {"model": ErrorBody, "description": "the journal's files could not be read"},
    },
    tags=["read"],
)
async def journal(
    *,
    request: Request,
    who: Who,
    round: Annotated[str | None, Query(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")] = None,
    event: Annotated[
        str | None, Query(max_length=64, pattern=r"^[a-z0-9_]+(\.[a-z0-9_]*)*$")
    ] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JournalBody:
    """Journal events by round, event name (or a prefix ending in "."), time window."""
    table = context(request).table
    for name, when in (("since", since), ("until", until)):
        if when is not None and when.utcoffset() is None:
            raise ApiError(422, "invalid_input", f"{name}: give a timezone (e.g. +08:00 or Z)")
    # The journal is read from its files: off the table's event loop.
    try:
        events = await anyio.to_thread.run_sync(
            lambda: table.journal_query(
                round=round, event=event, since=since, until=until, limit=limit
            )
        )
    except Exception as exc:
        # A file changed, removed or unreadable: surveillance must hear it, in words.
        log.error("api.journal_unreadable", error=repr(exc))
        raise ApiError(
            503,
            "journal_unreadable",
            f"the journal could not be read: {exc} (IT: run `tabled verify-log` on it)",
        ) from exc
    return JournalBody(events=redact_records(None, events, who.role, table.snapshot()))
