"""Actions: a person asks the table to take a step (`POST /api/actions/{action}`).

The order of checks is fixed so that a caller learns nothing it is not entitled to: size, then
token (401/429), then role (403), then the action's name (404), then the body (400/422: the
action's payload model, built from its game's declaration), and only then does the table see
the request. A refused action is the table's answer (409 with the violation it journaled).

What the regulation forbids is journaled whichever layer sees it first. A payload that is well
formed (known fields of the declared kinds) but breaks a declared bound (a cut of 9 cards, a bet
on seat 0) is handed to the table anyway, whose procedure refuses it from the same declaration
with its article: a `table.violation` naming the person, the role, the action, the field and the
article, as any refusal of the procedure. The answer stays 422 `invalid_payload` (with the
violation and its seq), marked journaled so the doors do not count it again in the summaries.
A malformed request (not JSON, an unknown field, a value of the wrong kind, a field missing)
breaks no article and is counted only in the rate-limited `api.input_refused` summaries. Each
refused action spends the person's refusal budget (`daemon.api.gate.RefusalBudget`); a person
whose budget is spent is answered 429 before the table sees anything.
"""

from __future__ import annotations

import json
from typing import Any

import structlog
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from daemon.api.bodies import ActRequest, ActResult, Refusal, read_act_request
from daemon.api.context import IDEMPOTENCY_CACHE, context
from daemon.api.errors import AUTH_ERRORS, INPUT_ERRORS, ApiError, ErrorBody
from daemon.api.gate import Gate, Who, credential
from daemon.api.models import check_payload
from daemon.api.tokens import Principal
from daemon.contract.facade import ActionSpec, TableFacade
from daemon.procedures.visibility import redact_value

log = structlog.get_logger("tabled.api")

MIN_REASON = 3
# On an answer whose refusal the table journaled itself: the doors do not summarise it again.
JOURNALED = "X-Tabled-Journaled"


def _of_kind(kind: str, value: object) -> bool:
    def number(item: object) -> bool:
        return isinstance(item, int) and not isinstance(item, bool)

    if kind == "int":
        return number(value)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if not isinstance(value, list):
        return False
    return all(number(v) if kind == "list[int]" else isinstance(v, str) for v in value)


def declared_breach(spec: ActionSpec, payload: dict[str, object]) -> bool:
    """Whether a payload the model refused is well formed: every field known, of its declared
    kind, none required missing. Then what it breaks is a declared bound (a range, a length, a
    choice), which the regulation's article governs."""
    if set(payload) - set(spec.params):
        return False
    for name, param in spec.params.items():
        if name not in payload:
            if param.required:
                return False
        elif not _of_kind(param.kind, payload[name]):
            return False
    return True


router = APIRouter()


async def _spec_for(table: TableFacade, action: str, who: Principal) -> ActionSpec:
    """The action's declaration, once the caller's role may take it (403/404 otherwise)."""
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
    return spec


def _refusal(action: str, actor: str, outcome: dict[str, Any]) -> dict[str, Any]:
    violation = dict(outcome.get("violation") or {})
    return {
        "error": "violation",
        "message": f"{action} refused in phase {violation.get('phase', '?')}: "
        f"{violation.get('reason', 'not legal now')} ({violation.get('article', '')})",
        "violation": violation,
        "action": action,
        "actor": actor,
    }


async def _within_budget(gate: Gate, person: str, path: str) -> None:
    """429 when `person`'s refused actions spent their budget (counted in the summaries)."""
    wait = gate.budget.retry_after(person)
    if wait > 0:
        gate.refused["refusal_budget"] += 1
        await gate.refusals.input("refusal_budget", person, path)
        raise _over_budget(gate, person, wait)


def _over_budget(gate: Gate, person: str, wait: float) -> ApiError:
    """The 429 for `person`, whose refused actions spent their budget for `wait` seconds more."""
    return ApiError(
        429,
        "refusal_budget",
        f"{person}: {gate.budget.limit} refused actions within {gate.budget.window:.0f} s; "
        f"the table takes {person}'s actions again in {int(wait) + 1} s",
        {"Retry-After": str(int(wait) + 1)},
    )


async def _ask(
    request: Request, action: str, who: Principal, payload: dict[str, Any], request_id: str | None
) -> dict[str, Any]:
    """The table's answer to `action` (503 when it has none to give)."""
    table = context(request).table
    try:
        act_as = getattr(table, "act_as", None)
        if act_as is None:
            outcome: dict[str, Any] = await table.act(action, who.actor, who.role, payload)
        else:
            # The table in another process (daemon.api.worker): it looks the person up by the
            # token itself, and keeps the answers to request_ids across API processes.
            outcome = await act_as(
                action,
                who.actor,
                who.role,
                payload,
                token=credential(request),
                request_id=request_id,
            )
    except ApiError:  # refused before it reached the table (a request too large to send)
        raise
    except Exception as exc:
        # The table stopped or its journal failed: nothing was acknowledged, and the
        # operator must know the step did not happen.
        log.error("api.act_failed", actor=who.actor, action=action, error=repr(exc))
        raise ApiError(
            503, "table_unavailable", f"{action} not taken: the table answered {exc}"
        ) from exc
    if outcome.get("request_id_reused"):
        raise ApiError(
            422,
            "request_id_reused",
            f"request_id {request_id!r} was {who.actor}'s {outcome.get('action')} with "
            f"other details; use a new one for this {action}",
        )
    if outcome.get("refusal_budget"):  # the table's process's count of the same budget
        gate: Gate = request.app.state.gate
        gate.refused["refusal_budget"] += 1
        wait = float(outcome.get("retry_after") or 1)
        raise _over_budget(gate, who.actor, wait)
    if outcome.get("in_progress"):
        raise ApiError(
            409,
            "in_progress",
            f"request_id {request_id!r}: {who.actor}'s {outcome.get('action')} is still being "
            "taken; ask again with the same request_id for its answer",
        )
    return outcome


@router.post(
    "/api/actions/{action}",
    response_model=ActResult,
    responses={
        **AUTH_ERRORS,
        **INPUT_ERRORS,
        403: {"model": ErrorBody, "description": "the caller's role may not take this action"},
        404: {"model": ErrorBody, "description": "no such action at this table"},
        409: {
            "model": Refusal,
            "description": "refused by the procedure; journaled (or, `in_progress`, a retry "
            "of a request_id whose first asking is not answered yet)",
        },
        413: {"model": ErrorBody, "description": "body over 16 KiB (or too large to send on)"},
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
    spec = await _spec_for(table, action, who)
    gate: Gate = request.app.state.gate
    await _within_budget(gate, who.actor, request.url.path)
    body = await read_act_request(request)
    if spec.requires_reason and len((body.reason or "").strip()) < MIN_REASON:
        raise ApiError(
            422, "reason_required", f"{action} needs a reason (journaled with {who.actor})"
        )
    problem = check_payload(spec, body.payload)
    if problem and not declared_breach(spec, body.payload):
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
    outcome = await _ask(request, action, who, payload, body.request_id)
    replayed = bool(outcome.pop("replayed", False))  # the table's answer to its first asking
    headers: dict[str, str] = {}
    if outcome.get("accepted"):
        status = 200
        content = {**outcome, "accepted": True, "action": action, "actor": who.actor}
        if problem:
            # The API's model and the table's procedure read the same declaration: a table
            # that took what the model refuses is a table to look at.
            log.error("api.model_and_table_disagree", action=action, problem=problem)
    else:
        if not replayed:
            gate.budget.spend(who.actor)
        # The reason goes back to the sender as the sender may see it: a refusal that names a
        # face-down card ("... already dealt") must not confirm it (issue 9).
        refusal = _refusal(action, who.actor, outcome)
        status, content = 409, redact_value(None, refusal, who.role, table.snapshot())
        if problem:
            # A declared bound broken: the answer says so as before, journaled as a violation.
            status, headers[JOURNALED] = 422, "table.violation"
            content = {**content, "error": "invalid_payload", "message": problem}
    if key is not None:
        answered[key] = (asked, status, content)
        while len(answered) > IDEMPOTENCY_CACHE:
            answered.popitem(last=False)
    log.info("api.action", actor=who.actor, role=who.role, action=action, status=status)
    if replayed:
        content = {**content, "replayed": True}
    return JSONResponse(content, status, headers=headers)
