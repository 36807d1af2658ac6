"""The floor API and page: every table, every alert, live.

Every `/api` call but `/api/health` carries `Authorization: Bearer TOKEN` (a token made with
`tabled token NAME ROLE --append FILE`, ROLE one of pit, surveillance, audit, admin). Bad query
parameters are a 422 naming the parameter. Everything is read-only but acknowledging: a chain alert
is acknowledged (`POST /api/alerts/{id}/acknowledge`, pit, surveillance or admin, with a note),
and so are a violation and a device fault (`POST /api/violations/{table}/{seq}/acknowledge`,
`POST /api/faults/{table}/{seq}/acknowledge`), each attempt kept in `floor_actions`.
The WebSocket `/api/feed` takes `{"token": ...}` as its first message, then pushes
`{"type": "alert" | "resolved" | "acknowledged" | "violation" | "override" | "fault" |
"batch", ...}` as each batch commits.

The shapes are in `daemon.floor.shapes`, the SQL in `daemon.floor.queries`, the push hub in
`daemon.floor.hub`, who is asking in `daemon.floor.routing`; the acknowledgements' routes in
`daemon.floor.acknowledge`, the Integrity view's in `daemon.floor.integrity_routes`; this module
is the app, the other routes and who may call them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from typing import Annotated, Any

import psycopg
import structlog
from fastapi import FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi import Path as ApiPath
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from daemon import __version__
from daemon.api.doors import Doors, DoorsPolicy
from daemon.api.gate import Gate, RefusalLog
from daemon.api.ratelimit import AuthFailureLimiter
from daemon.api.tokens import FLOOR_ROLES, Principal, TokenStore, fingerprint
from daemon.floor import queries
from daemon.floor.acknowledge import add_acknowledgements
from daemon.floor.config import FloorConfig
from daemon.floor.export import report, report_chunks, report_csv, report_csv_chunks, report_json
from daemon.floor.hub import Hub, pump
from daemon.floor.integrity_routes import add_integrity
from daemon.floor.live import LiveView
from daemon.floor.redact import visible_alert
from daemon.floor.routing import TABLE_ID, Since, Until, Who
from daemon.floor.sentences import said_memo, sentence
from daemon.floor.shapes import (
    AlertKind,
    ApiError,
    ChainAlert,
    Charts,
    EventRow,
    FaultRow,
    Health,
    OverrideRow,
    ReportFormat,
    RoundRow,
    TableChart,
    TableDetail,
    TableSummary,
    ViolationRow,
)
from daemon.floor.store import Store

__all__ = ["Hub", "create_app", "report", "report_csv"]

log = structlog.get_logger("tabled.floor")

STATIC = files("daemon.floor") / "static"
WS_AUTH_TIMEOUT = 10.0


async def _log_refusal(event: str, fact: dict[str, Any]) -> None:
    """Where the doors' refusal summaries go on the floor: its log (it keeps no journal)."""
    log.warning(f"floor.{event}", **fact)


def create_app(  # noqa: PLR0915 - the routes are closures over one store; one factory reads best
    store: Store,
    config: FloorConfig,
    hub: Hub,
    *,
    health: Callable[[], dict[str, Any]] | None = None,
    clock: Callable[[], float] = time.monotonic,
    live: LiveView | None = None,
) -> FastAPI:
    tokens = TokenStore(config.api.tokens_file, FLOOR_ROLES)
    limiter = AuthFailureLimiter(clock)
    pits = config.pits
    app = FastAPI(
        title="tabled floor API",
        version=__version__,
        description=(
            "Every table of the floor: state, rounds, violations, overrides, device faults and "
            "the chain custody of each table's journal. Authenticate with "
            "`Authorization: Bearer TOKEN` (roles pit, surveillance, audit, admin). "
            "Read-only but for acknowledging a chain alert. "
            'WebSocket `/api/feed`: send `{"token": ...}` first, then receive alerts and '
            "batches as they commit."
        ),
        docs_url=None,
        redoc_url=None,
    )
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    # The table's doors (daemon.api.doors): the Host allow-list on HTTP and WebSocket (421), the
    # push feed's Origin rule (403), and TLS or the proxy opt-out beyond loopback (ApiServer
    # reads `app.state.doors`). The floor has no journal of its own: refusals go to the log.
    doors = DoorsPolicy.from_config(config.api)
    doors.journal = _log_refusal
    gate = Gate(tokens, limiter, RefusalLog(_log_refusal, clock))
    app.add_middleware(Doors, policy=doors, gate=gate)
    app.state.doors, app.state.gate = doors, gate

    def authenticate(token: str | None, client: str) -> Principal:
        wait = limiter.retry_after(client)
        if wait > 0:
            raise ApiError(429, "rate_limited", f"too many bad tokens; retry in {int(wait) + 1} s")
        if not token:
            raise ApiError(401, "unauthorized", "no token: send `Authorization: Bearer TOKEN`")
        who = tokens.lookup(token)
        if who is None:
            log.warning("floor.auth_failed", client=client, token_fingerprint=fingerprint(token))
            limiter.failed(client)
            raise ApiError(401, "unauthorized", "token not recognised")
        return who

    app.state.authenticate = authenticate

    def require(who: Principal, *roles: str) -> None:
        if who.role not in roles:
            raise ApiError(403, "forbidden", f"{who.role} may not read this ({', '.join(roles)})")

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(
            {"error": exc.error, "message": exc.message}, exc.status, headers=headers
        )

    @app.exception_handler(psycopg.OperationalError)
    async def _database(request: Request, exc: psycopg.OperationalError) -> JSONResponse:
        log.warning("floor.database_unavailable", problem=str(exc).strip()[:300])
        return JSONResponse(
            {"error": "database_unavailable", "message": "the floor's database is not answering"},
            503,
        )

    @app.exception_handler(psycopg.DataError)
    async def _data(request: Request, exc: psycopg.DataError) -> JSONResponse:
        # What PostgreSQL refuses as a value (a NUL in a text parameter): the caller's input.
        problem = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else "invalid value"
        return JSONResponse({"error": "invalid_input", "message": problem}, 422)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
            for e in exc.errors()
        ]
        return JSONResponse(
            {"error": "invalid_input", "message": "; ".join(problems) or "invalid input"}, 422
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        names = {404: "not_found", 405: "method_not_allowed"}
        return JSONResponse(
            {"error": names.get(exc.status_code, "http_error"), "message": str(exc.detail)},
            exc.status_code,
        )

    # The page's settings, on its <body>: how long a provisional item may stay unproven.
    hide = f'data-provisional-hide-seconds="{config.floor.provisional_hide_seconds:g}"'

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(
            (STATIC / "index.html")
            .read_text(encoding="utf-8")
            .replace('data-provisional-hide-seconds="10"', hide, 1),
            headers={
                "Content-Security-Policy": "default-src 'self'; connect-src 'self' ws: wss:; "
                "img-src 'self' data:; frame-ancestors 'none'",
                "Cache-Control": "no-store",
            },
        )

    @app.get("/api/health", response_model=Health, tags=["public"])
    async def get_health() -> dict[str, Any]:
        """Liveness; needs no token."""
        extra = health() if health else {}
        return {
            "status": "ok",
            "version": __version__,
            "broker_connected": bool(extra.get("connected", False)),
            "lines": int(extra.get("lines", 0)),
            "batches": int(extra.get("batches", 0)),
        }

    async def summaries(role: str) -> list[dict[str, Any]]:
        rows = await queries.table_summaries(store, pits, role)
        return rows if live is None else live.overlay(rows, role)

    @app.get("/api/tables", response_model=list[TableSummary], tags=["floor"])
    async def get_tables(
        who: Who,
        pit: Annotated[str | None, Query(max_length=64)] = None,
        game: Annotated[str | None, Query(max_length=32)] = None,
        state: Annotated[str | None, Query(pattern="^(playing|held|tilted|stopped)$")] = None,
    ) -> list[dict[str, Any]]:
        """Every table: game, phase, state, last seq and chain (`"ok"` or the open alert); a
        table's live state where its newest line is newer than its history (`live_seq`,
        `provisional`: docs/floor-service.md, "The live view")."""
        rows = await summaries(who.role)
        return [
            r
            for r in rows
            if (pit is None or r["pit"] == pit)
            and (game is None or r["game"] == game)
            and (state is None or r["state"] == state)
        ]

    @app.get("/api/tables/{table}", response_model=TableDetail, tags=["floor"])
    async def get_table(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        events: Annotated[int, Query(ge=0, le=500)] = 50,
    ) -> dict[str, Any]:
        """One table: its summary, recent rounds, recent events (redacted) and its alerts."""
        summary = [r for r in await summaries(who.role) if r["table"] == table]
        if not summary:
            raise ApiError(404, "not_found", f"no table {table!r} on this floor")
        lines = await queries.events(
            store, role=who.role, table=table, round_=None, before=None, limit=events
        )
        return {
            "table": summary[0],
            "rounds": await queries.rounds(store, table, 20),
            "events": said_lines(summary[0]["game"], lines),
            "alerts": [
                visible_alert(a, who.role) for a in await queries.table_alerts(store, table)
            ],
        }

    @app.get("/api/tables/{table}/rounds", response_model=list[RoundRow], tags=["floor"])
    async def get_rounds(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[dict[str, Any]]:
        """A table's rounds, newest first."""
        return await queries.rounds(store, table, limit)

    @app.get("/api/tables/{table}/events", response_model=list[EventRow], tags=["floor"])
    async def get_events(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        round: Annotated[str | None, Query(max_length=64)] = None,
        before: Annotated[int | None, Query(ge=1)] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[dict[str, Any]]:
        """A table's journal lines, newest first, each with its sentence (`said`); hands of
        rounds in play are hidden unless the caller is admin or audit."""
        lines = await queries.events(
            store, role=who.role, table=table, round_=round, before=before, limit=limit
        )
        return said_lines((await queries.table_games(store)).get(table), lines)

    @app.get("/api/alerts", response_model=list[ChainAlert], tags=["custody"])
    async def get_alerts(
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        kind: AlertKind | None = None,
        open_only: bool = False,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> list[dict[str, Any]]:
        """Chain custody alerts (gap, fork, broken_link, malformed), newest first."""
        rows = await queries.alerts(store, table, kind and kind.value, open_only, limit)
        return [visible_alert(a, who.role) for a in rows]

    async def said_rows(event: str | None, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Violations or faults, each with its sentence (`said`) in its table's game's words."""
        games = await queries.table_games(store) if rows else {}
        memo: dict[Any, dict[str, str]] = {}
        for row in rows:
            name = event or ("table.tilted" if row.get("kind") == "tilt" else "table.held")
            row["said"] = said_memo(memo, games.get(row["table"]), name, row)
        return rows

    def span(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
        end = _aware(until) or datetime.now(UTC) + timedelta(days=1)
        try:
            start = _aware(since) or end - timedelta(days=31)
        except OverflowError:  # `until` in the first month of year 1: no default span before it
            raise ApiError(422, "invalid_input", "until is before any time range") from None
        if start >= end:
            raise ApiError(422, "invalid_input", "since must be before until")
        return start, end

    @app.get("/api/violations", response_model=list[ViolationRow], tags=["floor"])
    async def get_violations(  # noqa: PLR0917 - FastAPI passes query parameters by name
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        article: Annotated[str | None, Query(max_length=200)] = None,
        dealer: Annotated[str | None, Query(max_length=100, description="the actor")] = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 500,
        acknowledged: Annotated[
            bool | None, Query(description="true: taken in hand only; false: not yet")
        ] = None,
    ) -> list[dict[str, Any]]:
        """Violations by table, article (prefix match), dealer, time range and whether a person
        acknowledged them, newest first."""
        rows = await queries.violations(
            store,
            span(since, until),
            table=table,
            article=article,
            dealer=dealer,
            limit=limit,
            acknowledged=acknowledged,
            role=who.role,
        )
        return await said_rows("table.violation", rows)

    @app.get("/api/overrides", response_model=list[OverrideRow], tags=["floor"])
    async def get_overrides(
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    ) -> list[dict[str, Any]]:
        """Supervisor overrides (proposed, approved, rejected), newest first."""
        return await queries.overrides(store, span(since, until), table, limit, who.role)

    @app.get("/api/faults", response_model=list[FaultRow], tags=["floor"])
    async def get_faults(  # noqa: PLR0917 - FastAPI passes query parameters by name
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        serial: Annotated[str | None, Query(max_length=100)] = None,
        model: Annotated[str | None, Query(max_length=100)] = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 500,
        kind: Annotated[str | None, Query(pattern="^(tilt|hold)$")] = None,
        acknowledged: Annotated[
            bool | None, Query(description="true: taken in hand only; false: not yet")
        ] = None,
    ) -> list[dict[str, Any]]:
        """Device faults (tilts and holds) with the device's identity at the time, by table,
        serial, model, kind, time range and whether a person acknowledged them."""
        rows = await queries.faults(
            store,
            span(since, until),
            table=table,
            serial=serial,
            model=model,
            limit=limit,
            kind=kind,
            acknowledged=acknowledged,
            role=who.role,
        )
        return await said_rows(None, rows)

    add_acknowledgements(app, store, hub)
    add_integrity(app, store)

    @app.get("/api/charts", response_model=Charts, tags=["floor"])
    async def get_charts(
        who: Who, hours: Annotated[int, Query(ge=1, le=24 * 31)] = 24
    ) -> dict[str, Any]:
        """The page's charts: violations per article per hour, faults per device model, and
        rounds started per hour, the floor's total and each pit's, over the `hours` hours up to
        the newest line's (beyond 48 hours, per day)."""
        return await queries.charts(store, hours, pits)

    @app.get("/api/tables/{table}/charts", response_model=TableChart, tags=["floor"])
    async def get_table_chart(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        hours: Annotated[int, Query(ge=1, le=24 * 31)] = 24,
    ) -> dict[str, Any]:
        """One table's rounds started per hour (per day beyond 48 hours), its drill-down's
        chart, over the same range as the page's charts."""
        return await queries.table_chart(store, table, hours)

    @app.get("/api/report", tags=["audit"], response_model=None)
    async def get_report(
        who: Who,
        since: Annotated[datetime, Query(description="ISO time, inclusive")],
        until: Annotated[datetime, Query(description="ISO time, exclusive")],
        format: ReportFormat = ReportFormat.json,
    ) -> Response:
        """The audit report of a period (audit and admin): violations, overrides, faults,
        settlements, rounds, chain alerts and the floor's own actions."""
        require(who, "audit", "admin")
        start, end = span(since, until)
        # Streamed as it is read (a chunk of rows at a time, export.report_chunks): an export
        # of a busy hour is 128,000 rows, of a day millions, and the floor holds one chunk.
        chunks = report_chunks(store.dsn, start, end)
        csv_ = format is ReportFormat.csv
        body = report_csv_chunks(chunks) if csv_ else report_json(chunks)
        # Its first chunk read before the answer starts: a database that does not answer is
        # still a 503, not a 200 cut short.
        first = await anext(body)
        return StreamingResponse(
            _after(first, body), media_type="text/csv" if csv_ else "application/json"
        )

    # Host and Origin were checked by the doors before this runs.
    @app.websocket("/api/feed")
    async def feed(ws: WebSocket) -> None:
        await ws.accept()
        client = ws.client.host if ws.client else "?"
        try:
            hello = json.loads(await asyncio.wait_for(ws.receive_text(), WS_AUTH_TIMEOUT))
            token = hello.get("token") if isinstance(hello, dict) else None
            if not isinstance(token, str):
                raise ValueError('send {"token": "..."} first')
            who = authenticate(token, client)
        except (TimeoutError, WebSocketDisconnect):
            with contextlib.suppress(Exception):
                await ws.close(4401)
            return
        except (ValueError, RecursionError) as exc:
            await ws.send_json({"type": "error", "error": "invalid_input", "message": str(exc)})
            await ws.close(4400)
            return
        except ApiError as exc:
            await ws.send_json({"type": "error", "error": exc.error, "message": exc.message})
            await ws.close(4429 if exc.status == 429 else 4401)
            return
        await pump(ws, hub, who)

    return app


async def _after(first: str, rest: AsyncIterator[str]) -> AsyncIterator[str]:
    yield first
    async for chunk in rest:
        yield chunk


def said_lines(game: str | None, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Journal lines, each with its sentence (`said`), as the page shows them."""
    for line in lines:
        line["said"] = sentence(game, line["event"], line["payload"])
    return lines


def _aware(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
