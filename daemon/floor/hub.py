"""The floor's push hub: each committed batch, alert and acknowledgement fanned out to the
feed's sockets, each with a bounded queue; a socket that falls behind is closed (4408)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from daemon.api.tokens import Principal
from daemon.floor.redact import visible_alert, visible_row
from daemon.floor.store import BatchResult, dumps

PUSH_QUEUE = 2048


class Hub:
    """Fans each committed batch out to the feed's sockets; a socket that lags is dropped."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[str | None]] = set()

    def publish(self, message: dict[str, Any]) -> None:
        text = dumps(message)
        for queue in list(self.queues):
            try:
                queue.put_nowait(text)
            except asyncio.QueueFull:
                self.queues.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.get_nowait()
                    queue.put_nowait(None)

    def committed(self, result: BatchResult) -> None:
        """A batch the history committed, on the feed."""
        for alert in result.alerts:
            # Pushed to every role alike: without its digests (visible_alert); a role that may
            # have them reads them from /api/alerts.
            self.publish({"type": "alert", "alert": visible_alert(alert, None)})
        for resolved in result.resolved:
            self.publish({"type": "resolved", "alert": resolved})
        for kind, rows in (
            ("violation", result.violations),
            ("override", result.overrides),
            ("fault", result.faults),
        ):
            for row in rows:
                # Pushed to every role alike: a card its text names blotted out, as for a round
                # in play (visible_row); a role that sees it whole reads it from the API.
                self.publish({"type": kind, kind: visible_row(dict(row), None)})
        if result.tables:
            self.publish(
                {
                    "type": "batch",
                    "tables": result.tables,
                    "inserted": result.inserted,
                    "at": time.time(),
                }
            )


async def pump(ws: WebSocket, hub: Hub, who: Principal) -> None:
    """Send the hub's messages to one socket until it closes or falls behind."""
    queue: asyncio.Queue[str | None] = asyncio.Queue(PUSH_QUEUE)
    hub.queues.add(queue)
    try:
        await ws.send_json({"type": "hello", "actor": who.actor, "role": who.role})

        async def drain_client() -> None:
            with contextlib.suppress(WebSocketDisconnect):
                while True:
                    await ws.receive_text()

        reader = asyncio.create_task(drain_client())
        try:
            while not reader.done():
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    break
                text = getter.result()
                if text is None:
                    await ws.close(4408)
                    break
                await ws.send_text(text)
        finally:
            reader.cancel()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        hub.queues.discard(queue)
