"""The operator API: a small factory that puts FastAPI's routers over a `TableFacade`.

Every `/api` call carries `Authorization: Bearer TOKEN`; the token names the person (the actor
journaled with whatever they do) and their role (`gate`). Before anything else, the doors
(`doors`) refuse a Host name that is not this table's (421) and a push feed opened by another
site's page (`Origin`), and count what is refused for its form. Reads are open to every role
(`routes.read`), actions to the roles their `ActionSpec` names, never to surveillance
(`routes.act`, which fixes the order of checks: Host, size, token, role, name, body). The push feed
is `routes.push`; the console page, health and metrics are `routes.public`. Each action's
payload is checked by a model built from its game's declaration (`models`), and
`/openapi.json` documents each of them.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable
from importlib.resources import files
from typing import Any

from fastapi import FastAPI

from daemon import __version__
from daemon.api.context import AppContext
from daemon.api.doors import install as install_doors
from daemon.api.errors import install_handlers
from daemon.api.middleware import BodyLimit, Revalidated
from daemon.api.models import payload_schemas
from daemon.api.routes import act, public, push, read, training
from daemon.api.tokens import TokenStore
from daemon.config import ApiConfig, TableConfig
from daemon.contract.facade import TableFacade

MAX_BODY_BYTES = 64 * 1024

STATIC = files("daemon.api") / "static"


def create_app(
    table: TableFacade,
    config: ApiConfig | TableConfig,
    *,
    clock: Callable[[], float] = time.monotonic,
    max_body: int = MAX_BODY_BYTES,
    auth_max_failures: int = 10,
    auth_window: float = 60.0,
    auth_lockout: float = 60.0,
    allowed_origins: Iterable[str] | None = None,
    tokens: TokenStore | None = None,
) -> FastAPI:
    """The operator API, console and metrics for `table`.

    `config` is the table's config or its `[api]` section; `tokens_file` names the tokens.
    `clock` (monotonic seconds) times the bad-token lockout; tests pass a fake one.
    `allowed_origins` (else the config's `allowed_origins`, if it has one) are the browser
    origins, besides the console's own, that may open the push WebSocket. `tokens`: the people
    as the table's process sent them to its API process (else the tokens file is read).
    """
    api_config = config.api if isinstance(config, TableConfig) else config
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
    app.mount("/static", Revalidated(directory=str(STATIC)), name="static")
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
        tokens=tokens,
    )
    app.state.context = AppContext(
        table=table,
        gate=gate,
        tokens=gate.tokens,
        configured_table_id=config.table_id if isinstance(config, TableConfig) else None,
        console_idle_seconds=api_config.console_idle_seconds,
    )
    install_handlers(app)
    app.router.routes.extend(read.LEAN)
    for routes in (public, read, act, push, training):
        app.include_router(routes.router)
    _document_actions(app, table)
    return app


def _document_actions(app: FastAPI, table: TableFacade) -> None:
    """The actions this table knows, in the schema: documentation for integrators, and what a
    schema-driven fuzzer needs to reach the procedure instead of stopping at 404."""
    plain_openapi = app.openapi

    def openapi_with_actions() -> dict[str, Any]:
        if app.openapi_schema is None:
            # A copy: the routers (and the schema parts they carry) are shared by every app.
            schema = copy.deepcopy(plain_openapi())
            specs = table.actions()
            post = schema["paths"]["/api/actions/{action}"]["post"]
            for param in post.get("parameters", []):
                if param.get("name") == "action":
                    param["schema"]["enum"] = sorted(s.name for s in specs)
            # Each action's parameters, from the game's declaration: the payload is one of them
            # (which one the path's action says; `x-payload-by-action` maps the two).
            payloads = payload_schemas(specs)
            schema.setdefault("components", {}).setdefault("schemas", {}).update(payloads)
            body = post["requestBody"]["content"]["application/json"]["schema"]
            refs = {n: {"$ref": f"#/components/schemas/{n}"} for n in sorted(payloads)}
            if refs:
                body["properties"]["payload"] = {
                    "description": body["properties"]["payload"].get("description", ""),
                    "anyOf": list(refs.values()),
                }
            post["x-payload-by-action"] = {
                s.name: refs[f"Payload_{s.name}"] for s in specs if f"Payload_{s.name}" in refs
            }
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi_with_actions  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema
