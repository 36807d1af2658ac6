"""The push feed: `/api/events` sends each journal event as it becomes durable, then the state.

Its first client message is `{"token": ..., "after": SEQ or null}`, so the token never appears
in a URL (and so in no access log). With `"batch": true` as well, the events come as
`{"type": "events", "events": [...]}`, all those queued in one message (for a client that
watches a busy table). A client that falls `MAX_PENDING` events behind is closed with code 4408
(`daemon.api.fanout`); it reconnects with `after` and misses nothing.

Its Host and the page that opened it (`Origin`) were checked at the doors (`daemon.api.doors`):
only the console's own origin, or one in `allowed_origins`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from daemon.api.context import AppContext, context
from daemon.api.errors import ApiError
from daemon.api.fanout import (
    CLOSE_TOO_SLOW,
    Batch,
    Item,
    PushClient,
    event_message,
    events_message,
    shown_text,
    withheld,
)
from daemon.api.tokens import Principal, hash_token
from daemon.contract.facade import Subscription
from daemon.procedures import visibility

WS_AUTH_TIMEOUT = 10.0
CLOSE_TIMEOUT = 5.0  # seconds to say goodbye to a client that may not be reading

router = APIRouter()


@router.websocket("/api/events")
async def events(ws: WebSocket) -> None:
    ctx = context(ws)
    tokens = ctx.tokens
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
        batch = hello.get("batch", False)
        if (
            not isinstance(token, str)
            or (after is not None and (not isinstance(after, int) or isinstance(after, bool)))
            or not isinstance(batch, bool)
        ):
            raise ValueError('send {"token": "...", "after": SEQ or null, "batch": false}')
        who = await ctx.gate.authenticate(token, client)
    except ValueError as exc:
        await ws.send_json({"type": "error", "error": "invalid_input", "message": str(exc)})
        await ws.close(4400)
        return
    except ApiError as exc:
        await ws.send_json({"type": "error", "error": exc.error, "message": exc.message})
        await ws.close(4429 if exc.status == 429 else 4401)
        return
    # Checked before each message: the hub reads the tokens file again (if it changed) once
    # per batch, not once per console (`AppContext.push_hub`).
    digest = hash_token(token)
    feed = _Feed(
        ws, ctx, who, after=after, batch=batch, still_valid=lambda: tokens.holder(digest) == who
    )
    await feed.run()


class _Ended(Exception):
    """This client's feed is over (its token withdrawn)."""


class _Feed:
    """One console's feed: what it was sent, what the hub queued for it."""

    def __init__(
        self,
        ws: WebSocket,
        ctx: AppContext,
        who: Principal,
        *,
        after: int | None,
        batch: bool,
        still_valid: Callable[[], bool],
    ) -> None:
        self.ws, self.ctx, self.who = ws, ctx, who
        self.batch, self.still_valid = batch, still_valid
        self.hub, self.states = ctx.push_hub(), ctx.states
        self.client = PushClient(who.role)
        self.client.last = after
        self.after = after
        self.state_seq: int | None = None
        # What the game has opened, for the events a reconnecting console catches up on from
        # the journal (the live ones come from the hub, redacted there once per audience).
        self.seen: visibility.Seen | None = None
        if after is not None:
            self.seen = visibility.Seen(state=json.loads(self.states.latest().state))
        self.unstated = False  # events sent since the last state message

    def deliver(self, record: Mapping[str, Any]) -> Item:
        """A journal record read by this client's catch-up, as the client's role may see it,
        with what the game has opened so far (daemon.procedures.visibility): its seq and JSON
        text."""
        if self.seen is None:
            self.seen = visibility.Seen(state=json.loads(self.states.latest().state))
        try:
            shown = self.seen.redact(record, self.who.role)
            return int(record["seq"]), shown_text(record, shown)
        except Exception as exc:  # shown as withheld (fail closed); the catch-up goes on
            return int(record["seq"]), shown_text(record, withheld(record, exc))

    async def send_state(self) -> None:
        """After a burst of events, or when the table announced a new state (a table that
        publishes its state announces it itself: the same state is not sent twice)."""
        client, states = self.client, self.states
        if not states.publishing:
            # A table that does not publish is read as it is now: the catch-up can send an
            # event before the hub's next batch has refreshed the state it leads to.
            states.refresh()
        published = states.latest()
        same = states.publishing and published.seq == self.state_seq
        if self.state_seq is not None and not (client.state_due or (self.unstated and not same)):
            return
        self.state_seq, self.unstated = published.seq, False
        client.state_due = False
        await self.ws.send_text(states.push_message(self.who.role))

    async def send_batch(self, batch: Batch) -> None:
        """A batch the hub queued: its messages for this client's audience, shared with every
        client of it, unless some of its events were already sent by the catch-up."""
        last, audience = self.client.last, self.client.audience
        if last is None or batch.first > last:
            await self._send(batch.messages(audience, self.batch), batch.last)
        else:
            await self.send([item for item in batch.items(audience) if item[0] > last])

    async def send(self, items: list[Item]) -> None:
        """Events already shown as this client may see them (seq, JSON text), in order."""
        last = self.client.last
        items = [item for item in items if last is None or item[0] > last]
        if not items:
            return
        if self.batch:
            messages: Iterable[str] = (events_message(items),)
        else:
            messages = (event_message(text) for _, text in items)
        await self._send(messages, items[-1][0])

    async def _send(self, messages: Iterable[str], last: int) -> None:
        if not self.still_valid():
            await self.ws.send_json(
                {
                    "type": "error",
                    "error": "unauthorized",
                    "message": f"the token of {self.who.actor} has been withdrawn",
                }
            )
            await self.ws.close(4401)
            raise _Ended
        for message in messages:
            await self.ws.send_text(message)
        self.client.last = last
        self.unstated = True

    async def run(self) -> None:
        ws, client = self.ws, self.client
        catch_up: Subscription | None = None
        try:
            await ws.send_json({"type": "hello", "actor": self.who.actor, "role": self.who.role})
            self.states.refresh()
            self.hub.join(client)
            await self.send_state()
            if self.after is not None:
                catch_up = self.ctx.table.subscribe(self.after)
            async with anyio.create_task_group() as tasks:
                client.on_drop = tasks.cancel_scope.cancel

                async def listen() -> None:
                    while (await ws.receive())["type"] != "websocket.disconnect":
                        pass
                    tasks.cancel_scope.cancel()

                tasks.start_soon(self.forward, catch_up, tasks.cancel_scope)
                tasks.start_soon(listen)
        except* (WebSocketDisconnect, RuntimeError, OSError, _Ended):
            pass  # the console went away mid-send, or its feed ended: nothing more to tell it
        finally:
            with anyio.CancelScope(shield=True):
                await self.hub.leave(client)
                if catch_up is not None:
                    await catch_up.aclose()
                with contextlib.suppress(Exception), anyio.move_on_after(CLOSE_TIMEOUT):
                    if client.dropped:
                        await ws.close(CLOSE_TOO_SLOW, "fell behind; reconnect with after")
                    else:
                        await ws.close()

    async def forward(self, catch_up: Subscription | None, scope: anyio.CancelScope) -> None:
        client = self.client
        if catch_up is not None:
            await self.catch_up(catch_up)
            await catch_up.aclose()
        while True:
            while not client.has_work():
                client.wake.clear()
                await client.wake.wait()
            if client.dropped:
                return
            for queued in client.take():
                await self.send_batch(queued)
            if client.ended:
                scope.cancel()
                return
            await self.send_state()

    async def catch_up(self, backlog: Subscription) -> None:
        """Send what a reconnecting console missed (from the journal, gap-free), until the
        hub's queue for it takes over: its first queued event follows the last one sent."""
        client = self.client
        events = backlog.__aiter__()
        upcoming: asyncio.Future[dict[str, Any]] | None = None
        try:
            while True:
                first, last = client.first_seq(), client.last
                if client.dropped or (first is not None and last is not None and first <= last + 1):
                    return
                if upcoming is None:
                    upcoming = asyncio.ensure_future(anext(events))
                    await asyncio.sleep(0)
                    if not upcoming.done():
                        await self.send_state()  # the end of a burst: the state follows it
                woken: asyncio.Future[Any] = asyncio.ensure_future(client.wake.wait())
                waits: set[asyncio.Future[Any]] = {upcoming, woken}
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                client.wake.clear()
                if upcoming not in done:
                    if client.state_due:
                        await self.send_state()
                    continue
                try:
                    event = upcoming.result()
                except StopAsyncIteration:
                    return
                upcoming = None
                await self.send([self.deliver(event)])
        finally:
            if upcoming is not None:
                upcoming.cancel()
                with contextlib.suppress(BaseException):
                    await upcoming
