"""The control channel of a simulated table: what a test, a trainer or a lab operator does to
the simulated devices while they run (pull a die out of the cup, open the shuffler's lid, draw
the next card). In process it is `handle_control(world, request)`; `tabled sim` serves it on a
unix socket, one JSON object per line each way (docs/protocol.md, "Control channel")."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import structlog

from simulators.base import UnknownFault
from simulators.registry import model_class
from simulators.world import TableWorld

MAX_LINE = 64 * 1024


def handle_control(world: TableWorld, request: Any) -> dict[str, Any]:
    """Carry out one control request; never raises on a bad request."""
    if not isinstance(request, dict):
        return {"ok": False, "error": "a request is a JSON object with an 'op'"}
    op = request.get("op")
    device = request.get("device")
    fault = request.get("fault")
    try:
        if op in ("inject", "clear"):
            if not isinstance(device, str) or not isinstance(fault, str):
                return {"ok": False, "error": f"{op} needs 'device' and 'fault'"}
            if op == "inject":
                world.inject(device, fault)
            else:
                world.clear(device, fault)
            return {"ok": True}
        if op in ("unplug", "plug"):
            if not isinstance(device, str):
                return {"ok": False, "error": f"{op} needs 'device'"}
            model_class(device)  # a device name with a typo must not be "unplugged" silently
            (world.unplug if op == "unplug" else world.plug)(device)
            return {"ok": True}
        if op == "draw":
            return {"ok": True, **world.dealer_draw()}
        if op == "state":
            return {"ok": True, **world.describe()}
    except (LookupError, UnknownFault, ValueError) as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": False, "error": f"unknown op {op!r} (inject, clear, unplug, plug, draw, state)"}


class ControlServer:
    """The control channel's unix socket server and its open sessions."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.sessions: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}

    async def close(self) -> None:
        """Stop listening and end every open session at a line boundary (its client sees
        EOF), so a `tabled sim` stopped by a signal exits with no task left half-way."""
        if self.server is not None:
            self.server.close()
        for writer in self.sessions.values():
            writer.close()
        await asyncio.gather(*self.sessions, return_exceptions=True)
        if self.server is not None:
            await self.server.wait_closed()


async def serve_control(world: TableWorld, path: Path) -> ControlServer:
    """Serve the control channel on a unix socket at `path`."""
    log = structlog.get_logger("tabled.simulators").bind(world=world.key)
    control = ControlServer()

    async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            control.sessions[task] = writer
        try:
            while line := await reader.readline():
                try:
                    request = json.loads(line)
                except ValueError as exc:
                    reply: dict[str, Any] = {"ok": False, "error": f"not JSON: {exc}"}
                else:
                    reply = handle_control(world, request)
                    log.info("simulator.control", request=request, ok=reply["ok"])
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
        except (asyncio.LimitOverrunError, ValueError):
            # a line over the limit: say so before hanging up (the stream cannot resync)
            with contextlib.suppress(ConnectionError):
                error = {"ok": False, "error": f"request line longer than {MAX_LINE} bytes"}
                writer.write(json.dumps(error).encode() + b"\n")
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            if task is not None:
                del control.sessions[task]
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    control.server = await asyncio.start_unix_server(session, path=str(path), limit=MAX_LINE)
    return control
