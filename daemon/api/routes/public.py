"""The pages and public endpoints: the dealer console, liveness, Prometheus metrics."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from daemon import __version__
from daemon.api import metrics as metrics_text
from daemon.api.bodies import HealthBody
from daemon.api.context import context

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
async def health() -> HealthBody:
    """Liveness for monitoring; needs no token."""
    return HealthBody(status="ok", version=__version__)


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
    body = metrics_text.render(
        ctx.table.metrics(),
        ctx.table_id(),
        {"tabled_api_refused_total": dict(ctx.gate.refused)},
    )
    return Response(body, media_type=metrics_text.CONTENT_TYPE)
