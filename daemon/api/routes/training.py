"""Training mode over the API (`daemon.training`): a trainer handles the simulated devices, and
the console's settings (the table's currency) for every role.

`GET /api/training` and `POST /api/training/{op}` are for the `admin` and `trainer` roles (403
for the others, journaled like any refused role) and exist only while every device of the table
is simulated in this process (404 otherwise: a real device is never handled from here). Each
control used is journaled as `training.control` with who used it. What a simulated shoe drew
is a card of the round: the reply serves it as the table's state does
(`daemon.procedures.visibility`), face down to every role.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from daemon.api import explain
from daemon.api.context import context
from daemon.api.errors import AUTH_ERRORS, INPUT_ERRORS, ApiError, ErrorBody
from daemon.api.gate import Who, credential
from daemon.procedures.visibility import redact_value
from daemon.training import ROLES, Training, named

router = APIRouter()

DEFAULT_CURRENCY = "MOP"

Op = Literal[
    "shuffle", "shake", "draw", "deal", "ring", "door", "power", "by_hand", "inject", "clear"
]
Device = Literal["shuffler", "dice_shaker", "shoe_reader", "timer_bell"]


class ControlRequest(BaseModel):
    """What the control needs: `device` for door, power, inject and clear; `fault` to shuffle,
    shake or draw with a fault (one-shot), or to inject or clear; `open` for a door, `on` for
    power and by_hand; `count` to deal that many cards (default: what the round still needs)."""

    model_config = ConfigDict(extra="forbid")
    device: Device | None = None
    fault: str | None = Field(default=None, min_length=1, max_length=64)
    open: bool | None = None
    on: bool | None = None
    count: int | None = Field(default=None, ge=1, le=64)


class ConsoleBody(BaseModel):
    currency: str = Field(description="the table's currency, for the amounts the console shows")
    training: bool = Field(description="every device is simulated: a trainer may handle them")
    trainer: bool = Field(description="the caller may handle them (the trainer or admin role)")
    tiles: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Pai Gow: the 32-tile set by Table I (faces, names), for the tile pictures",
    )
    words: dict[str, Any] = Field(
        default_factory=dict,
        description="the game's phases, inputs, articles, roles and results in both languages",
    )


async def _training(request: Request, actor: str, role: str, op: str) -> None:
    """Refuse a caller who may not train (journaled) and a table with a real device (404)."""
    table = context(request).table
    if role not in ROLES:
        await table.journal_security(
            "api.forbidden", {"actor": actor, "role": role, "action": f"training.{op}"}
        )
        raise ApiError(403, "forbidden", f"training is for {' and '.join(ROLES)}; not {role}")
    if Training.of(table) is None:
        raise ApiError(404, "not_simulated", "this table's devices are real: no training mode")


async def _on_table(request: Request, name: str, *args: Any) -> Any:
    """The training control `name` (`describe`, `control`) where the table's devices live (in
    the table's process: `TableFacade.training`), as the person whose token asked."""
    table = context(request).table
    result = await table.training(name, list(args), credential(request))
    if result is None:
        raise ApiError(404, "not_simulated", "this table's devices are real: no training mode")
    return result


def currency_of(table: Any) -> str:
    """The table's currency (`[table] currency`), MOP when the config does not say."""
    value = getattr(getattr(table, "config", None), "currency", None)
    return value if isinstance(value, str) and value else DEFAULT_CURRENCY


@router.get("/api/console", response_model=ConsoleBody, responses=AUTH_ERRORS, tags=["read"])
async def console(request: Request, who: Who) -> ConsoleBody:
    """What the console shows beside the table's state: the currency, and whether the table is
    in training mode (its devices all simulated)."""
    table = context(request).table
    training = Training.of(table) is not None
    game = str(table.snapshot().get("game"))
    return ConsoleBody(
        currency=currency_of(table),
        training=training,
        trainer=training and who.role in ROLES,
        tiles=explain.tile_set() if game == "paigow" else [],
        words=explain.console_data(game),
    )


@router.get(
    "/api/training",
    responses={
        **AUTH_ERRORS,
        403: {"model": ErrorBody, "description": "not a trainer or admin"},
        404: {"model": ErrorBody, "description": "a device is real: no training mode"},
    },
    tags=["training"],
)
async def training_state(request: Request, who: Who) -> dict[str, Any]:
    """The simulated devices as a trainer sees them, and the controls each offers."""
    await _training(request, who.actor, who.role, "state")

    described: dict[str, Any] = await _on_table(request, "describe")
    return described


@router.post(
    "/api/training/{op}",
    responses={
        **AUTH_ERRORS,
        **INPUT_ERRORS,
        403: {"model": ErrorBody, "description": "not a trainer or admin"},
        404: {"model": ErrorBody, "description": "a device is real: no training mode"},
        409: {"model": ErrorBody, "description": "the device could not do it (journaled)"},
    },
    tags=["training"],
)
async def control(
    op: Op, request: Request, who: Who, body: ControlRequest | None = None
) -> JSONResponse:
    """Handle a simulated device: `shuffle` or `shake` (finish the waiting operation, with a
    `fault` or as it comes; with a fault and none waiting, arm the next one), `draw` (`fault`:
    face_up, misread, ...), `deal` (the whole round), `ring`, `door` (`open`), `power` (`on`),
    `by_hand` (`on`: shuffles and throws wait for the trainer), `inject` / `clear` a fault."""
    await _training(request, who.actor, who.role, op)
    asked: dict[str, Any] = {"op": op}
    if body is not None:
        asked |= body.model_dump(exclude_none=True)

    reply: dict[str, Any] = await _on_table(request, "control", asked, who.actor, who.role)
    if not reply.get("ok"):
        message = str(reply.get("error", "refused"))
        return JSONResponse({"error": "refused", "message": message}, 409)
    table = context(request).table
    return JSONResponse(redact_value(None, named(reply), who.role, table.snapshot()), 200)
