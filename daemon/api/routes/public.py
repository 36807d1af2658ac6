"""The pages and public endpoints: the dealer console, liveness, Prometheus metrics."""

from __future__ import annotations

import inspect
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from daemon import __version__
from daemon.api import metrics as metrics_text
from daemon.api.bodies import HealthBody
from daemon.api.context import context
from daemon.shipper.runtime import metrics_text as feed_metrics

STATIC = files("daemon.api") / "static"

router = APIRouter()


@router.get("/", include_in_schema=False)
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


@router.get("/api/health", response_model=HealthBody, tags=["public"])
async def health(request: Request) -> HealthBody:
    """Liveness for monitoring; needs no token. With a `[feed]`, the shipper's state and lag."""
    status = await _feed_status(request)
    return HealthBody(
        status="ok", version=__version__, feed=status.as_dict() if status is not None else None
    )


@router.get(
    "/metrics",
    tags=["public"],
    response_class=PlainTextResponse,
    responses={200: {"content": {metrics_text.CONTENT_TYPE: {}}}},
)
async def prometheus(request: Request) -> Response:
    """Prometheus text exposition: rounds, violations by article, faults and frame errors by
    device, link round-trip time, journal fsync latency, API refusals."""
    ctx = context(request)
    table_metrics = getattr(ctx.table, "metrics_async", None)  # a table in another process
    body = metrics_text.render(
        await table_metrics() if table_metrics is not None else ctx.table.metrics(),
        ctx.table_id(),
        {"tabled_api_refused_total": dict(ctx.gate.refused)},
    )
    status = await _feed_status(request)
    if status is not None:
        body += feed_metrics(status, ctx.table_id())
    return Response(body, media_type=metrics_text.CONTENT_TYPE)


async def _feed_status(request: Request) -> Any:
    """The shipper's state (`[feed]`), or None without one; asked of the table's process when
    the API runs in a process of its own (`daemon.api.worker`)."""
    feed = getattr(request.app.state, "feed", None)
    if feed is None:
        return None
    status = feed.status()
    return await status if inspect.isawaitable(status) else status
