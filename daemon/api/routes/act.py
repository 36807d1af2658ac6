"""Actions: a person asks the table to take a step (`POST /api/actions/{action}`).

The order of checks is fixed so that a caller learns nothing it is not entitled to: size, then
token (401/429), then role (403), then the action's name (404), then the body (400/422: the
action's payload model, built from its game's declaration), and only then does the table see
the request. A refused action is the table's answer (409 with the violation it journaled).
"""

from __future__ import annotations

import json

import structlog
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from daemon.api.bodies import ActRequest, ActResult, Refusal, read_act_request
from daemon.api.context import IDEMPOTENCY_CACHE, context
from daemon.api.errors import AUTH_ERRORS, INPUT_ERRORS, ApiError, ErrorBody
from daemon.api.gate import Who
from daemon.api.models import check_payload

log = structlog.get_logger("tabled.api")

MIN_REASON = 3

router = APIRouter()


@router.post(
    "/api/actions/{action}",
    response_model=ActResult,
    responses={
        **AUTH_ERRORS,
        **INPUT_ERRORS,
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
    ctx = context(request)
    table, answered = ctx.table, ctx.answered
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
        raise ApiError(403, "forbidden", f"{action} is for {allowed}; {who.actor} is {who.role}")
    body = await read_act_request(request)
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
