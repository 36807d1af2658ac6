"""The floor API and page: every table, every alert, live.

Every `/api` call but `/api/health` carries `Authorization: Bearer TOKEN` (a token made with
`tabled token NAME ROLE --append FILE`, ROLE one of pit, surveillance, audit, admin). Everything
is read-only. Bad query parameters are a 422 naming the parameter. The WebSocket `/api/feed`
takes `{"token": ...}` as its first message, then pushes `{"type": "alert" | "resolved" |
"violation" | "override" | "fault" | "batch", ...}` as each batch commits.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from importlib.resources import files
from typing import Annotated, Any

import psycopg
import structlog
from fastapi import Depends, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi import Path as ApiPath
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from daemon import __version__
from daemon.api.doors import Doors, DoorsPolicy
from daemon.api.gate import Gate, RefusalLog
from daemon.api.ratelimit import AuthFailureLimiter
from daemon.api.tokens import FLOOR_ROLES, Principal, TokenStore, fingerprint
from daemon.floor.config import FloorConfig
from daemon.floor.redact import sees_raw_lines, visible_payload
from daemon.floor.store import BatchResult, Store, dumps

log = structlog.get_logger("tabled.floor")

STATIC = files("daemon.floor") / "static"
TABLE_ID = r"^[A-Za-z0-9_-]{1,64}$"
WS_AUTH_TIMEOUT = 10.0
PUSH_QUEUE = 2048


class ApiError(Exception):
    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message


# --- shapes ------------------------------------------------------------------------------------


class ChainAlert(BaseModel):
    id: int
    table: str
    seq: int = Field(description="the seq the alert is about (a gap's first missing seq)")
    kind: str = Field(description="gap | fork | broken_link | malformed")
    expected_hash: str | None = Field(description="the hash the chain called for")
    actual_hash: str | None = Field(description="the hash (or prev) the floor received")
    gap_to: int | None = Field(description="a gap's last missing seq")
    details: dict[str, Any]
    detected_at: datetime
    resolved_at: datetime | None = Field(description="a gap filled later by a resend")


class TableSummary(BaseModel):
    table: str
    pit: str | None
    game: str | None
    phase: str | None
    state: str = Field(description="playing | held | tilted | stopped")
    reason: str | None = Field(description="why it is held or tilted")
    round: str | None
    last_seq: int
    contiguous_seq: int
    pending_overrides: int
    last_event: str | None
    last_ts: datetime | None
    received_at: datetime | None
    lag_seconds: float | None = Field(description="from the table's write to the floor's commit")
    chain: str | ChainAlert = Field(description='"ok", or the oldest unresolved chain alert')


class EventRow(BaseModel):
    seq: int
    ts: datetime
    event: str
    round: str | None
    actor: str
    payload: dict[str, Any]
    redacted: bool
    line: str | None = Field(description="the exact line (admin and audit only)")


class RoundRow(BaseModel):
    table: str
    round: str
    first_seq: int
    last_seq: int
    started_at: datetime
    ended_at: datetime | None
    status: str
    lines: int


class TableDetail(BaseModel):
    table: TableSummary
    rounds: list[RoundRow]
    events: list[EventRow]
    alerts: list[ChainAlert]


class ViolationRow(BaseModel):
    table: str
    seq: int
    ts: datetime
    round: str | None
    actor: str
    article: str | None
    action: str | None
    phase: str | None
    reason: str | None


class OverrideRow(BaseModel):
    table: str
    seq: int
    ts: datetime
    round: str | None
    status: str
    kind: str | None
    article: str | None
    proposed_by: str | None
    decided_by: str | None
    reason: str | None


class FaultRow(BaseModel):
    table: str
    seq: int
    ts: datetime
    round: str | None
    device: str | None
    fault: str | None
    kind: str
    make: str | None
    model: str | None
    serial: str | None


class Charts(BaseModel):
    since: datetime
    until: datetime
    violations_per_article_hour: list[dict[str, Any]]
    faults_per_model: list[dict[str, Any]]
    rounds_per_table_hour: list[dict[str, Any]]


class Health(BaseModel):
    status: str
    version: str
    broker_connected: bool
    lines: int
    batches: int


class AlertKind(StrEnum):
    gap = "gap"
    fork = "fork"
    broken_link = "broken_link"
    malformed = "malformed"


class ReportFormat(StrEnum):
    json = "json"
    csv = "csv"


# --- queries -----------------------------------------------------------------------------------


async def table_summaries(store: Store, pits: dict[str, str]) -> list[dict[str, Any]]:
    rows = await store.query(
        "SELECT t.table_id AS table, t.game, t.phase, t.state, t.reason, t.round, t.last_seq, "
        "t.contiguous_seq, t.pending_overrides, t.last_event, t.last_ts, t.received_at, "
        "extract(epoch FROM t.received_at - t.last_ts)::float8 AS lag_seconds, "
        "(SELECT row_to_json(a) FROM (SELECT id, table_id AS table, seq, kind, "
        "expected_hash, actual_hash, gap_to, details, "
        "detected_at, resolved_at FROM chain_alerts "
        "WHERE table_id = t.table_id AND resolved_at IS NULL ORDER BY id LIMIT 1) a) AS alert "
        "FROM floor_tables t ORDER BY t.table_id"
    )
    for row in rows:
        alert = row.pop("alert")
        row["chain"] = "ok" if alert is None else alert
        row["pit"] = pits.get(row["table"])
    return rows


async def report(store: Store, since: datetime, until: datetime) -> dict[str, list[dict[str, Any]]]:
    """The audit report of a period: every violation, override, fault, settlement, alert."""
    span = (since, until)
    return {
        "violations": await store.query(
            "SELECT table_id AS table, seq, ts, round, actor, article, action, phase, reason "
            "FROM violations WHERE ts >= %s AND ts < %s ORDER BY ts, table_id, seq",
            span,
        ),
        "overrides": await store.query(
            "SELECT table_id AS table, seq, ts, round, status, kind, article, proposed_by, "
            "decided_by, reason FROM overrides WHERE ts >= %s AND ts < %s "
            "ORDER BY ts, table_id, seq",
            span,
        ),
        "device_faults": await store.query(
            "SELECT table_id AS table, seq, ts, round, device, fault, kind, make, model, serial "
            "FROM device_faults WHERE ts >= %s AND ts < %s ORDER BY ts, table_id, seq",
            span,
        ),
        "settlements": await store.query(
            "SELECT table_id AS table, seq, item, ts, round, seat, player, amount, outcome, net "
            "FROM settlements WHERE ts >= %s AND ts < %s ORDER BY ts, table_id, seq, item",
            span,
        ),
        "rounds": await store.query(
            "SELECT table_id AS table, round, first_seq, last_seq, started_at, ended_at, "
            "status, lines FROM rounds WHERE started_at >= %s AND started_at < %s "
            "ORDER BY started_at, table_id",
            span,
        ),
        "chain_alerts": await store.query(
            "SELECT id, table_id AS table, seq, kind, expected_hash, actual_hash, gap_to, details, "
            "detected_at, resolved_at FROM chain_alerts WHERE detected_at >= %s "
            "AND detected_at < %s ORDER BY id",
            span,
        ),
    }


def report_csv(sections: dict[str, list[dict[str, Any]]]) -> str:
    """One CSV: a `section` column first, then each section's own columns under a header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for name, rows in sections.items():
        if not rows:
            writer.writerow([name])
            continue
        writer.writerow(["section", *rows[0].keys()])
        for row in rows:
            writer.writerow([name, *(_cell(v) for v in row.values())])
    return out.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return dumps(value)
    return value


# --- the push hub ------------------------------------------------------------------------------


class Hub:
    """Fans each committed batch out to the feed's sockets; a socket that lags is dropped."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[str | None]] = set()

    def publish(self, message: dict[str, Any]) -> None:
        text = dumps(message)
        for queue in list(self.queues):
            try:
                queue.put_nowait(text)
            except asyncio.QueueFull:
                self.queues.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.get_nowait()
                    queue.put_nowait(None)

    async def on_commit(self, result: BatchResult) -> None:
        for alert in result.alerts:
            self.publish({"type": "alert", "alert": alert})
        for resolved in result.resolved:
            self.publish({"type": "resolved", "alert": resolved})
        for kind, rows in (
            ("violation", result.violations),
            ("override", result.overrides),
            ("fault", result.faults),
        ):
            for row in rows:
                self.publish({"type": kind, kind: row})
        if result.tables:
            self.publish(
                {
                    "type": "batch",
                    "tables": result.tables,
                    "inserted": result.inserted,
                    "at": time.time(),
                }
            )


# --- the app -----------------------------------------------------------------------------------

_bearer = HTTPBearer(auto_error=False, description="a person's floor API token")


async def _principal(request: Request, _: Annotated[Any, Depends(_bearer)]) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _sep, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise ApiError(401, "unauthorized", "use `Authorization: Bearer TOKEN`")
    authenticate: Callable[[str | None, str], Principal] = request.app.state.authenticate
    return authenticate(token.strip() or None, request.client.host if request.client else "?")


Who = Annotated[Principal, Depends(_principal)]
Since = Annotated[datetime | None, Query(description="ISO time, inclusive")]
Until = Annotated[datetime | None, Query(description="ISO time, exclusive")]


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

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(
            (STATIC / "index.html").read_text(encoding="utf-8"),
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

    @app.get("/api/tables", response_model=list[TableSummary], tags=["floor"])
    async def get_tables(
        who: Who,
        pit: Annotated[str | None, Query(max_length=64)] = None,
        game: Annotated[str | None, Query(max_length=32)] = None,
        state: Annotated[str | None, Query(pattern="^(playing|held|tilted|stopped)$")] = None,
    ) -> list[dict[str, Any]]:
        """Every table: game, phase, state, last seq and chain (`"ok"` or the open alert)."""
        rows = await table_summaries(store, pits)
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
        summary = [r for r in await table_summaries(store, pits) if r["table"] == table]
        if not summary:
            raise ApiError(404, "not_found", f"no table {table!r} on this floor")
        return {
            "table": summary[0],
            "rounds": await _rounds(table, 20),
            "events": await _events(who, table, None, None, events),
            "alerts": await store.query(
                "SELECT id, table_id AS table, seq, kind, expected_hash, actual_hash, gap_to, "
                "details, "
                "detected_at, resolved_at FROM chain_alerts WHERE table_id = %s "
                "ORDER BY id DESC LIMIT 100",
                (table,),
            ),
        }

    async def _rounds(table: str, limit: int) -> list[dict[str, Any]]:
        return await store.query(
            "SELECT table_id AS table, round, first_seq, last_seq, started_at, ended_at, status, "
            "lines FROM rounds WHERE table_id = %s ORDER BY first_seq DESC LIMIT %s",
            (table, limit),
        )

    async def _events(
        who: Principal, table: str, round_: str | None, before: int | None, limit: int
    ) -> list[dict[str, Any]]:
        rows = await store.query(
            "SELECT l.seq, l.ts, l.event, l.round, l.actor, l.line, "
            "coalesce(r.status IN ('settled', 'voided'), l.round IS NULL OR l.round = '0') "
            "AS closed FROM journal_lines l LEFT JOIN rounds r "
            "ON r.table_id = l.table_id AND r.round = l.round WHERE l.table_id = %s "
            "AND (%s::text IS NULL OR l.round = %s) AND (%s::bigint IS NULL OR l.seq < %s) "
            "ORDER BY l.seq DESC LIMIT %s",
            (table, round_, round_, before, before, limit),
        )
        out = []
        for row in rows:
            line = bytes(row.pop("line"))
            payload = json.loads(line)["payload"]
            shown, hidden = visible_payload(who.role, row["event"], payload, bool(row["closed"]))
            out.append(
                {
                    **{k: v for k, v in row.items() if k != "closed"},
                    "payload": shown,
                    "redacted": hidden,
                    "line": line.decode("utf-8", "replace")
                    if sees_raw_lines(who.role, bool(row["closed"]))
                    else None,
                }
            )
        return out

    @app.get("/api/tables/{table}/rounds", response_model=list[RoundRow], tags=["floor"])
    async def get_rounds(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[dict[str, Any]]:
        """A table's rounds, newest first."""
        return await _rounds(table, limit)

    @app.get("/api/tables/{table}/events", response_model=list[EventRow], tags=["floor"])
    async def get_events(
        who: Who,
        table: Annotated[str, ApiPath(pattern=TABLE_ID)],
        round: Annotated[str | None, Query(max_length=64)] = None,
        before: Annotated[int | None, Query(ge=1)] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[dict[str, Any]]:
        """A table's journal lines, newest first; hands of rounds in play are hidden unless
        the caller is admin or audit."""
        return await _events(who, table, round, before, limit)

    @app.get("/api/alerts", response_model=list[ChainAlert], tags=["custody"])
    async def get_alerts(
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        kind: AlertKind | None = None,
        open_only: bool = False,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> list[dict[str, Any]]:
        """Chain custody alerts (gap, fork, broken_link, malformed), newest first."""
        return await store.query(
            "SELECT id, table_id AS table, seq, kind, expected_hash, actual_hash, gap_to, details, "
            "detected_at, resolved_at FROM chain_alerts WHERE "
            "(%s::text IS NULL OR table_id = %s) AND (%s::text IS NULL OR kind = %s) "
            "AND (NOT %s OR resolved_at IS NULL) ORDER BY id DESC LIMIT %s",
            (table, table, kind and kind.value, kind and kind.value, open_only, limit),
        )

    def span(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
        end = _aware(until) or datetime.now(UTC) + timedelta(days=1)
        start = _aware(since) or end - timedelta(days=31)
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
    ) -> list[dict[str, Any]]:
        """Violations by table, article (prefix match), dealer and time range, newest first."""
        start, end = span(since, until)
        return await store.query(
            "SELECT table_id AS table, seq, ts, round, actor, article, action, phase, reason "
            "FROM violations WHERE ts >= %s AND ts < %s AND (%s::text IS NULL OR table_id = %s) "
            "AND (%s::text IS NULL OR article LIKE %s) AND (%s::text IS NULL OR actor = %s) "
            "ORDER BY ts DESC LIMIT %s",
            (start, end, table, table, article, _prefix(article), dealer, dealer, limit),
        )

    @app.get("/api/overrides", response_model=list[OverrideRow], tags=["floor"])
    async def get_overrides(
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    ) -> list[dict[str, Any]]:
        """Supervisor overrides (proposed, approved, rejected), newest first."""
        start, end = span(since, until)
        return await store.query(
            "SELECT table_id AS table, seq, ts, round, status, kind, article, proposed_by, "
            "decided_by, reason FROM overrides WHERE ts >= %s AND ts < %s "
            "AND (%s::text IS NULL OR table_id = %s) ORDER BY ts DESC LIMIT %s",
            (start, end, table, table, limit),
        )

    @app.get("/api/faults", response_model=list[FaultRow], tags=["floor"])
    async def get_faults(  # noqa: PLR0917 - FastAPI passes query parameters by name
        who: Who,
        table: Annotated[str | None, Query(pattern=TABLE_ID)] = None,
        serial: Annotated[str | None, Query(max_length=100)] = None,
        model: Annotated[str | None, Query(max_length=100)] = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    ) -> list[dict[str, Any]]:
        """Device faults (tilts and holds) with the device's identity at the time."""
        start, end = span(since, until)
        return await store.query(
            "SELECT table_id AS table, seq, ts, round, device, fault, kind, make, model, serial "
            "FROM device_faults WHERE ts >= %s AND ts < %s "
            "AND (%s::text IS NULL OR table_id = %s) AND (%s::text IS NULL OR serial = %s) "
            "AND (%s::text IS NULL OR model = %s) ORDER BY ts DESC LIMIT %s",
            (start, end, table, table, serial, serial, model, model, limit),
        )

    @app.get("/api/charts", response_model=Charts, tags=["floor"])
    async def get_charts(
        who: Who, hours: Annotated[int, Query(ge=1, le=24 * 31)] = 24
    ) -> dict[str, Any]:
        """The page's charts: violations per article per hour, faults per device model,
        rounds per table per hour, over the last `hours` before the newest line."""
        latest = await store.query("SELECT max(last_ts) AS t FROM floor_tables")
        until = (latest[0]["t"] or datetime.now(UTC)) + timedelta(seconds=1)
        since = until - timedelta(hours=hours)
        span_ = (since, until)
        return {
            "since": since,
            "until": until,
            "violations_per_article_hour": await store.query(
                "SELECT coalesce(article, '?') AS article, date_trunc('hour', ts) AS hour, "
                "count(*)::int AS n FROM violations WHERE ts >= %s AND ts < %s "
                "GROUP BY 1, 2 ORDER BY 2, 1",
                span_,
            ),
            "faults_per_model": await store.query(
                "SELECT coalesce(model, device, '?') AS model, kind, count(*)::int AS n "
                "FROM device_faults WHERE ts >= %s AND ts < %s GROUP BY 1, 2 ORDER BY 1, 2",
                span_,
            ),
            "rounds_per_table_hour": await store.query(
                "SELECT table_id AS table, date_trunc('hour', started_at) AS hour, "
                "count(*)::int AS n FROM rounds WHERE started_at >= %s AND started_at < %s "
                "GROUP BY 1, 2 ORDER BY 2, 1",
                span_,
            ),
        }

    @app.get("/api/report", tags=["audit"], response_model=None)
    async def get_report(
        who: Who,
        since: Annotated[datetime, Query(description="ISO time, inclusive")],
        until: Annotated[datetime, Query(description="ISO time, exclusive")],
        format: ReportFormat = ReportFormat.json,
    ) -> Response:
        """The audit report of a period (audit and admin): violations, overrides, faults,
        settlements, rounds and chain alerts."""
        require(who, "audit", "admin")
        start, end = span(since, until)
        sections = await report(store, start, end)
        if format is ReportFormat.csv:
            return Response(report_csv(sections), media_type="text/csv")
        return Response(dumps(sections), media_type="application/json")

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
        await _pump(ws, hub, who)

    return app


async def _pump(ws: WebSocket, hub: Hub, who: Principal) -> None:
    """Send the hub's messages to one socket until it closes or falls behind."""
    queue: asyncio.Queue[str | None] = asyncio.Queue(PUSH_QUEUE)
    hub.queues.add(queue)
    try:
        await ws.send_json({"type": "hello", "actor": who.actor, "role": who.role})

        async def drain_client() -> None:
            with contextlib.suppress(WebSocketDisconnect):
                while True:
                    await ws.receive_text()

        reader = asyncio.create_task(drain_client())
        try:
            while not reader.done():
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    break
                text = getter.result()
                if text is None:
                    await ws.close(4408)
                    break
                await ws.send_text(text)
        finally:
            reader.cancel()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        hub.queues.discard(queue)


def _aware(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _prefix(value: str | None) -> str | None:
    if value is None:
        return None
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
