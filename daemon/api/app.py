"""The operator API: FastAPI over a `TableFacade`.

Every `/api` call carries `Authorization: Bearer TOKEN`; the token names the person (the actor
journaled with whatever they do) and their role. Reads are open to every role, actions to the
roles their `ActionSpec` names, never to surveillance. The order of checks is fixed so that a
caller learns nothing it is not entitled to: the Host name (421, `daemon.api.doors`), then
size, then token (401/429), then role (403), then the action's name (404), then the body
(400/422), and only then does the table see the request.
A refused action is the table's answer (409 with the violation it journaled), not an API error.

The WebSocket `/api/events` pushes each journal event as it becomes durable, followed by the
table's state; its first client message is `{"token": ..., "after": SEQ or null}`, so the token
never appears in a URL (and so in no access log). A browser says which page opened the socket
(`Origin`): only the console's own origin, or one in `allowed_origins`, may push, so a page on
another site cannot use a dealer's browser to read the table (the token is still required).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from importlib.resources import files
from typing import Annotated, Any

import anyio
import structlog
from fastapi import Depends, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from daemon import __version__
from daemon.api import metrics as metrics_text
from daemon.api.doors import install as install_doors
from daemon.api.errors import ApiError
from daemon.api.facade import ActionSpec, ParamSpec, TableFacade
from daemon.api.gate import Gate
from daemon.api.tokens import Principal
from daemon.config import ApiConfig, TableConfig

log = structlog.get_logger("tabled.api")

MAX_BODY_BYTES = 64 * 1024
WS_AUTH_TIMEOUT = 10.0
IDEMPOTENCY_CACHE = 512
MIN_REASON = 3

STATIC = files("daemon.api") / "static"


def _error(status: int, error: str, message: str, **extra: Any) -> JSONResponse:
    headers = extra.pop("headers", None)
    return JSONResponse({"error": error, "message": message, **extra}, status, headers=headers)


# --- documented shapes (also what schemathesis checks responses against) ----------------------


class ErrorBody(BaseModel):
    error: str = Field(description="machine-readable reason, e.g. unauthorized, unknown_action")
    message: str = Field(description="what was wrong, in words")


class ActRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    payload: dict[str, Any] = Field(
        default_factory=dict, description="the action's parameters (see GET /api/actions)"
    )
    reason: str | None = Field(
        default=None, max_length=500, description="required for supervisor actions; journaled"
    )
    request_id: str | None = Field(
        default=None,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="repeat a request safely: the same id from the same person returns the "
        "first answer instead of acting twice",
    )


class ActResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    accepted: bool
    action: str
    actor: str


class Refusal(BaseModel):
    model_config = ConfigDict(extra="allow")
    error: str
    message: str
    violation: dict[str, Any]


class StateBody(BaseModel):
    actor: str
    role: str
    state: dict[str, Any]
    legal: list[str]


class ActionsBody(BaseModel):
    legal: list[str]
    catalog: list[dict[str, Any]]
    console_idle_seconds: int = Field(description="the console signs out after this idle time")


class DevicesBody(BaseModel):
    devices: list[dict[str, Any]]


class JournalBody(BaseModel):
    events: list[dict[str, Any]]


class HealthBody(BaseModel):
    status: str
    version: str


_AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "no token, or not a valid one"},
    429: {"model": ErrorBody, "description": "too many bad tokens from this client"},
}
_INPUT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "the body is not JSON"},
    422: {"model": ErrorBody, "description": "a field is missing, unknown or of the wrong type"},
}


# --- bodies larger than the limit never reach the app -----------------------------------------


class BodyLimit:
    """Reads the whole request body (bounded) before the app sees it; 413 past `limit` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                await self._too_large(scope, receive, send)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = _error(
            413, "body_too_large", f"request body over {self.limit} bytes; nothing was done"
        )
        await response(scope, receive, send)


class _Revalidated(StaticFiles):
    """The console's script and style, checked with the daemon (ETag) on every load: after an
    upgrade, reloading the page never runs the old script against the new page."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


# --- payload checks against the action's ParamSpecs -------------------------------------------


def _check_value(name: str, spec: ParamSpec, value: Any) -> str | None:
    def int_ok(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def bounded(v: int, what: str) -> str | None:
        if spec.minimum is not None and v < spec.minimum:
            return f"{what} must be at least {spec.minimum}, got {v}"
        if spec.maximum is not None and v > spec.maximum:
            return f"{what} must be at most {spec.maximum}, got {v}"
        return None

    where = f"payload.{name}"
    kind = spec.kind
    if kind == "int":
        if not int_ok(value):
            return f"{where}: expected an integer, got {json.dumps(value)[:40]}"
        return bounded(value, where)
    if kind == "bool":
        return None if isinstance(value, bool) else f"{where}: expected true or false"
    if kind == "str":
        if not isinstance(value, str):
            return f"{where}: expected a string, got {json.dumps(value)[:40]}"
        if spec.max_length is not None and len(value) > spec.max_length:
            return f"{where}: longer than {spec.max_length} characters"
        if spec.min_length is not None and len(value) < spec.min_length:
            return f"{where}: at least {spec.min_length} characters"
        if spec.choices and value not in spec.choices:
            return f"{where}: one of {', '.join(spec.choices)}, not {value[:40]!r}"
        return None
    if not isinstance(value, list):
        return f"{where}: expected a list ({kind}), got {json.dumps(value)[:40]}"
    if spec.max_length is not None and len(value) > spec.max_length:
        return f"{where}: more than {spec.max_length} items"
    if spec.min_length is not None and len(value) < spec.min_length:
        return f"{where}: {len(value)} items, at least {spec.min_length} needed"
    for i, item in enumerate(value):
        if kind == "list[int]":
            if not int_ok(item):
                return f"{where}[{i}]: expected an integer, got {json.dumps(item)[:40]}"
            problem = bounded(item, f"{where}[{i}]")
            if problem:
                return problem
        elif not isinstance(item, str):
            return f"{where}[{i}]: expected a string, got {json.dumps(item)[:40]}"
    return None


def check_payload(spec: ActionSpec, payload: Mapping[str, Any]) -> str | None:
    """The first problem with `payload` for `spec`, in words; None when it is well-formed."""
    if not spec.payload_checked:
        return None
    unknown = sorted(set(payload) - set(spec.params))
    if unknown:
        known = ", ".join(spec.params) or "none"
        return f"payload: unknown field(s) {', '.join(unknown)} for {spec.name} (known: {known})"
    for name, param in spec.params.items():
        if name not in payload:
            if param.required:
                return f"payload.{name}: required for {spec.name} ({param.kind})"
            continue
        problem = _check_value(name, param, payload[name])
        if problem:
            return problem
    return None


def spec_json(spec: ActionSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "roles": sorted(spec.roles),
        "requires_reason": spec.requires_reason,
        "payload_checked": spec.payload_checked,
        "label": {"en": spec.label_en or spec.name, "zh": spec.label_zh or spec.name},
        "params": {
            name: {
                "kind": p.kind,
                "required": p.required,
                "minimum": p.minimum,
                "maximum": p.maximum,
                "min_length": p.min_length,
                "max_length": p.max_length,
                "choices": list(p.choices),
                "label": {"en": p.label_en or name, "zh": p.label_zh or name},
            }
            for name, p in spec.params.items()
        },
    }


_bearer = HTTPBearer(auto_error=False, description="a person's API token")


async def _principal(request: Request, _: Annotated[Any, Depends(_bearer)]) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _sep, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise ApiError(401, "unauthorized", "use `Authorization: Bearer TOKEN`")
    client = request.client.host if request.client else "unknown"
    gate: Gate = request.app.state.gate
    return await gate.authenticate(token.strip() or None, client)


Who = Annotated[Principal, Depends(_principal)]


# --- the app -----------------------------------------------------------------------------------


def create_app(  # noqa: PLR0915 - the routes are closures over one table; one factory reads best
    table: TableFacade,
    config: ApiConfig | TableConfig,
    *,
    clock: Callable[[], float] = time.monotonic,
    max_body: int = MAX_BODY_BYTES,
    auth_max_failures: int = 10,
    auth_window: float = 60.0,
    auth_lockout: float = 60.0,
    allowed_origins: Iterable[str] | None = None,
) -> FastAPI:
    """The operator API, console and metrics for `table`.

    `config` is the table's config or its `[api]` section; `tokens_file` names the tokens.
    `clock` (monotonic seconds) times the bad-token lockout; tests pass a fake one.
    `allowed_origins` (else the config's `allowed_origins`, if it has one) are the browser
    origins, besides the console's own, that may open the push WebSocket.
    """
    api_config = config.api if isinstance(config, TableConfig) else config
    table_id = config.table_id if isinstance(config, TableConfig) else None
    # (actor, request_id) -> (the request: action, payload, reason; status; answer)
    answered: OrderedDict[tuple[str, str], tuple[str, int, dict[str, Any]]] = OrderedDict()

    app = FastAPI(
        title="tabled operator API",
        version=__version__,
        description=(
            "One casino table: its state, the actions legal now, device status, the journal.\n\n"
            "Authenticate with `Authorization: Bearer TOKEN` (tokens per person, made by "
            '`tabled token`). WebSocket `/api/events`: send `{"token": ..., "after": SEQ}` '
            'first; then receive `{"type": "event", "event": {...}}` for every durable '
            'journal event and `{"type": "state", ...}` after them.'
        ),
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, limit=max_body)
    app.mount("/static", _Revalidated(directory=str(STATIC)), name="static")
    # Host and Origin allow-lists, bad-token budgets, refusal summaries: daemon.api.doors.
    gate = install_doors(
        app,
        api_config,
        table.journal_security,
        clock=clock,
        allowed_origins=allowed_origins,
        auth_max_failures=auth_max_failures,
        auth_window=auth_window,
        auth_lockout=auth_lockout,
    )
    refused = gate.refused
    authenticate = gate.authenticate

    def the_table_id() -> str:
        return table_id or str(table.snapshot().get("table", "")) or "unknown"

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.error, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()))
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return _error(422, "invalid_input", "; ".join(problems) or "invalid input")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        names = {404: "not_found", 405: "method_not_allowed"}
        return _error(
            exc.status_code,
            names.get(exc.status_code, "http_error"),
            f"{request.method} {request.url.path}: {exc.detail}",
            headers=getattr(exc, "headers", None),
        )

    # --- pages and public endpoints ---

    @app.get("/", include_in_schema=False)
    async def console() -> HTMLResponse:
        html = (STATIC / "index.html").read_text(encoding="utf-8")
        return HTMLResponse(
            html,
            headers={
                "Content-Security-Policy": "default-src 'self'; connect-src 'self' ws: wss:; "
                "img-src 'self' data:; frame-ancestors 'none'",
                "Cache-Control": "no-store",
            },
        )

    @app.get("/api/health", response_model=HealthBody, tags=["public"])
    async def health() -> HealthBody:
        """Liveness for monitoring; needs no token."""
        return HealthBody(status="ok", version=__version__)

    @app.get(
        "/metrics",
        tags=["public"],
        response_class=PlainTextResponse,
        responses={200: {"content": {metrics_text.CONTENT_TYPE: {}}}},
    )
    async def prometheus() -> Response:
        """Prometheus text exposition: rounds, violations by article, faults and frame errors by
        device, link round-trip time, journal fsync latency, API refusals."""
        body = metrics_text.render(
            table.metrics(),
            the_table_id(),
            {"tabled_api_refused_total": dict(refused)},
        )
        return Response(body, media_type=metrics_text.CONTENT_TYPE)

    # --- reads ---

    @app.get("/api/state", response_model=StateBody, responses=_AUTH_ERRORS, tags=["read"])
    async def state(who: Who) -> StateBody:
        """The table now and the actions legal for the caller's role."""
        return StateBody(
            actor=who.actor,
            role=who.role,
            state=table.snapshot(),
            legal=table.legal_actions(who.role),
        )

    @app.get("/api/actions", response_model=ActionsBody, responses=_AUTH_ERRORS, tags=["read"])
    async def actions(who: Who) -> ActionsBody:
        """Every action the table knows (with parameters and labels) and those legal now."""
        return ActionsBody(
            legal=table.legal_actions(who.role),
            catalog=[spec_json(s) for s in table.actions()],
            console_idle_seconds=api_config.console_idle_seconds,
        )

    @app.get("/api/devices", response_model=DevicesBody, responses=_AUTH_ERRORS, tags=["read"])
    async def devices(who: Who) -> DevicesBody:
        """Each device: link, identity, approval, open fault."""
        return DevicesBody(devices=table.device_status())

    @app.get(
        "/api/journal",
        response_model=JournalBody,
        responses={
            **_AUTH_ERRORS,
            422: {"model": ErrorBody},
            503: {"model": ErrorBody, "description": "the journal's files could not be read"},
        },
        tags=["read"],
    )
    async def journal(
        *,
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
        return JournalBody(events=events)

    # --- actions ---

    @app.post(
        "/api/actions/{action}",
        response_model=ActResult,
        responses={
            **_AUTH_ERRORS,
            **_INPUT_ERRORS,
            403: {"model": ErrorBody, "description": "the caller's role may not take this action"},
            404: {"model": ErrorBody, "description": "no such action at this table"},
            409: {"model": Refusal, "description": "refused by the procedure; journaled"},
            413: {"model": ErrorBody, "description": "body over 64 KiB"},
            503: {"model": ErrorBody, "description": "the table is not running; nothing done"},
        },
        openapi_extra={
            "requestBody": {
                "required": False,
                "content": {"application/json": {"schema": ActRequest.model_json_schema()}},
            }
        },
        tags=["act"],
    )
    async def act(action: str, request: Request, who: Who) -> JSONResponse:
        """Ask the table to take `action`. 200 when the procedure accepted it (durable in the
        journal), 409 with the violation when it refused it (also journaled)."""
        if who.role == "surveillance":
            raise ApiError(403, "forbidden", "surveillance is read-only")
        specs = {s.name: s for s in table.actions()}
        spec = specs.get(action)
        if spec is None:
            known = ", ".join(sorted(specs))
            raise ApiError(404, "unknown_action", f"unknown action {action[:64]!r}; known: {known}")
        if who.role not in spec.roles:
            await table.journal_security(
                "api.forbidden", {"actor": who.actor, "role": who.role, "action": action}
            )
            allowed = ", ".join(sorted(spec.roles))
            raise ApiError(
                403, "forbidden", f"{action} is for {allowed}; {who.actor} is {who.role}"
            )
        body = await _read_act_request(request)
        if spec.requires_reason and len((body.reason or "").strip()) < MIN_REASON:
            raise ApiError(
                422, "reason_required", f"{action} needs a reason (journaled with {who.actor})"
            )
        problem = check_payload(spec, body.payload)
        if problem:
            raise ApiError(422, "invalid_payload", problem)
        key = (who.actor, body.request_id) if body.request_id else None
        asked = json.dumps([action, body.payload, body.reason], sort_keys=True, default=str)
        if key is not None and key in answered:
            first, status, content = answered[key]
            if first != asked:
                raise ApiError(
                    422,
                    "request_id_reused",
                    f"request_id {body.request_id!r} was {who.actor}'s "
                    f"{content.get('action')} with other details; use a new one for this "
                    f"{action}",
                )
            return JSONResponse({**content, "replayed": True}, status)
        payload = dict(body.payload)
        if body.reason is not None:
            payload["reason"] = body.reason.strip()
        try:
            outcome = await table.act(action, who.actor, who.role, payload)
        except Exception as exc:
            # The table stopped or its journal failed: nothing was acknowledged, and the
            # operator must know the step did not happen.
            log.error("api.act_failed", actor=who.actor, action=action, error=repr(exc))
            raise ApiError(
                503, "table_unavailable", f"{action} not taken: the table answered {exc}"
            ) from exc
        if outcome.get("accepted"):
            status = 200
            content = {**outcome, "accepted": True, "action": action, "actor": who.actor}
        else:
            status = 409
            violation = dict(outcome.get("violation") or {})
            content = {
                "error": "violation",
                "message": f"{action} refused in phase {violation.get('phase', '?')}: "
                f"{violation.get('reason', 'not legal now')} ({violation.get('article', '')})",
                "violation": violation,
                "action": action,
                "actor": who.actor,
            }
        if key is not None:
            answered[key] = (asked, status, content)
            while len(answered) > IDEMPOTENCY_CACHE:
                answered.popitem(last=False)
        log.info("api.action", actor=who.actor, role=who.role, action=action, status=status)
        return JSONResponse(content, status)

    plain_openapi = app.openapi

    def openapi_with_actions() -> dict[str, Any]:
        # The actions this table knows, in the schema: documentation for integrators, and what
        # a schema-driven fuzzer needs to reach the procedure instead of stopping at 404.
        if app.openapi_schema is None:
            schema = plain_openapi()
            post = schema["paths"]["/api/actions/{action}"]["post"]
            for param in post.get("parameters", []):
                if param.get("name") == "action":
                    param["schema"]["enum"] = sorted(s.name for s in table.actions())
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi_with_actions  # type: ignore[method-assign]

    # --- push ---

    @app.websocket("/api/events")
    async def events(ws: WebSocket) -> None:
        # Its Host and Origin were checked at the doors (daemon.api.doors).
        await ws.accept()
        client = ws.client.host if ws.client else "unknown"
        try:
            raw = await asyncio.wait_for(ws.receive_text(), WS_AUTH_TIMEOUT)
        except (TimeoutError, WebSocketDisconnect):
            with contextlib.suppress(Exception):
                await ws.close(4401)
            return
        try:
            try:
                hello = json.loads(raw)
            except RecursionError:
                raise ValueError("the first message is nested too deeply to read") from None
            if not isinstance(hello, dict):
                raise ValueError("expected an object")
            token, after = hello.get("token"), hello.get("after")
            if not isinstance(token, str) or (
                after is not None and (not isinstance(after, int) or isinstance(after, bool))
            ):
                raise ValueError('send {"token": "...", "after": SEQ or null}')
            who = await authenticate(token, client)
        except ValueError as exc:
            await ws.send_json({"type": "error", "error": "invalid_input", "message": str(exc)})
            await ws.close(4400)
            return
        except ApiError as exc:
            await ws.send_json({"type": "error", "error": exc.error, "message": exc.message})
            await ws.close(4429 if exc.status == 429 else 4401)
            return
        await _push(ws, table, who, after, lambda: gate.tokens.lookup(token) == who)

    return app


async def _read_act_request(request: Request) -> ActRequest:
    raw = await request.body()
    if not raw.strip():
        return ActRequest()
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, "malformed_json", f"body is not JSON: {exc}") from None
    except RecursionError:
        raise ApiError(400, "malformed_json", "body is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_input", "body: expected a JSON object")
    try:
        return ActRequest.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        ]
        raise ApiError(422, "invalid_input", "; ".join(problems)) from None


async def _push(
    ws: WebSocket,
    table: TableFacade,
    who: Principal,
    after: int | None,
    still_valid: Callable[[], bool],
) -> None:
    """Forward durable events to one console; a state message follows each burst of them.
    A token withdrawn meanwhile (tokens file) ends the feed at the next event."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=10_000)
    subscription = table.subscribe(after)

    async def state() -> None:
        await ws.send_json(
            {"type": "state", "state": table.snapshot(), "legal": table.legal_actions(who.role)}
        )

    try:
        await ws.send_json({"type": "hello", "actor": who.actor, "role": who.role})
        await state()
        # Structured: when any of the three ends (the journal closes, the console goes), the
        # others are cancelled with it.
        async with anyio.create_task_group() as tasks:

            async def pump() -> None:
                async for event in subscription:
                    await queue.put(event)
                tasks.cancel_scope.cancel()

            async def forward() -> None:
                while True:
                    event = await queue.get()
                    if not still_valid():
                        await ws.send_json(
                            {
                                "type": "error",
                                "error": "unauthorized",
                                "message": f"the token of {who.actor} has been withdrawn",
                            }
                        )
                        await ws.close(4401)
                        tasks.cancel_scope.cancel()
                        return
                    await ws.send_json({"type": "event", "event": event})
                    if queue.empty():
                        await state()

            async def listen() -> None:
                while (await ws.receive())["type"] != "websocket.disconnect":
                    pass
                tasks.cancel_scope.cancel()

            tasks.start_soon(pump)
            tasks.start_soon(forward)
            tasks.start_soon(listen)
    except* (WebSocketDisconnect, RuntimeError, OSError):
        pass  # the console went away mid-send: nothing to tell it
    finally:
        with anyio.CancelScope(shield=True):
            await subscription.aclose()
            with contextlib.suppress(Exception):
                await ws.close()
