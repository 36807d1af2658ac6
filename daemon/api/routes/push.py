"""The push feed: `/api/events` sends each journal event as it becomes durable, then the state.

Its first client message is `{"token": ..., "after": SEQ or null}`, so the token never appears
in a URL (and so in no access log). Its Host and the page that opened it (`Origin`) were checked
at the doors (`daemon.api.doors`): only the console's own origin, or one in `allowed_origins`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

import anyio
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from daemon.api.context import context
from daemon.api.errors import ApiError
from daemon.api.facade import TableFacade
from daemon.api.tokens import Principal
from daemon.procedures import visibility

WS_AUTH_TIMEOUT = 10.0

router = APIRouter()


@router.websocket("/api/events")
async def events(ws: WebSocket) -> None:
    ctx = context(ws)
    table, tokens = ctx.table, ctx.tokens
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
        who = await ctx.gate.authenticate(token, client)
    except ValueError as exc:
        await ws.send_json({"type": "error", "error": "invalid_input", "message": str(exc)})
        await ws.close(4400)
        return
    except ApiError as exc:
        await ws.send_json({"type": "error", "error": exc.error, "message": exc.message})
        await ws.close(4429 if exc.status == 429 else 4401)
        return
    await _push(ws, table, who, after, lambda: tokens.lookup(token) == who)


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
    seen = visibility.Seen(state=table.snapshot())  # what the game opened, round by round

    async def state() -> None:
        await ws.send_json(
            {
                "type": "state",
                "state": visibility.redact_state(None, table.snapshot(), who.role),
                "legal": table.legal_actions(who.role),
            }
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
                    await ws.send_json({"type": "event", "event": seen.redact(event, who.role)})
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
