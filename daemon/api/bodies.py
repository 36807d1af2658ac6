"""The documented shapes of the API's requests and answers (also what schemathesis checks
responses against). Each action's payload model is built from its game's declaration
(`daemon.api.models`)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from daemon.api.errors import ApiError
from daemon.contract.channel import MAX_ACT_BODY, finite_float, no_constant


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
    game: str | None = Field(None, description="the game the table plays")
    phases: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the game's phases in order: name, label_en/zh, next_en/zh",
    )
    events: list[dict[str, Any]] = Field(
        default_factory=list,
        description="every journal event the table writes: name, label_en/zh, phase_after, "
        "closes_round, opens, by (docs/api.md)",
    )


class DevicesBody(BaseModel):
    devices: list[dict[str, Any]]


class JournalBody(BaseModel):
    events: list[dict[str, Any]]


class HealthBody(BaseModel):
    status: str
    version: str
    feed: dict[str, Any] | None = None  # the journal shipper's state, with a [feed] config


async def read_act_request(request: Request) -> ActRequest:
    raw = await request.body()
    if len(raw) > MAX_ACT_BODY:
        # No action's payload comes near it: the bound the channel to the table is sized by.
        raise ApiError(
            413, "body_too_large", f"an action's body over {MAX_ACT_BODY} bytes; nothing was done"
        )
    if not raw.strip():
        return ActRequest()
    try:
        # UTF-8 only (RFC 8259 8.1): `json.loads` would take UTF-16 and UTF-32 bytes too, which
        # the frame to the table, written UTF-8, carries half as long again, past its bound.
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            400, "malformed_json", f"body is not UTF-8 (JSON is sent as UTF-8): {exc}"
        ) from None
    try:
        data = json.loads(text, parse_float=finite_float, parse_constant=no_constant)
    except ValueError as exc:  # JSONDecodeError, NaN, 1e999, 10**5000
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
