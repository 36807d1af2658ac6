"""The control channel of a simulated table: what a test, a trainer or a lab operator does to
the simulated devices while they run (pull a die out of the cup, open the shuffler's lid, draw
the next card). In process it is `handle_control(world, request)`; `tabled sim` serves it on a
unix socket, one JSON object per line each way (docs/protocol.md, "Control channel"); the
daemon's training mode (`daemon.training`) serves the same requests to the console and the API.

What a person at the table handles (docs/training.md):

    {"op": "shuffle"}                      the shuffler's waiting shuffle finishes
    {"op": "shuffle", "fault": "jam"}      ... with a fault (or, none waiting: the next one)
    {"op": "shake"} / {"op": "shake", "fault": "die_tilted" | "die_out_of_cup" | ...}
    {"op": "draw"} / {"op": "draw", "fault": "face_up" | "misread" | ...}
    {"op": "deal", "count": 52}            draw up to `count` cards, stopping at a bad read
    {"op": "ring"}                         the bell's test button
    {"op": "door", "device": D, "open": true}   the shuffler's lid, the shoe out of its base,
                                           the shaker off its base
    {"op": "power", "device": D, "on": false}   switch a device off (its port fails) and on
    {"op": "by_hand", "on": true}          shuffles and throws wait for a person
    {"op": "inject" | "clear", "device": D, "fault": F}, {"op": "unplug" | "plug", "device": D}
    {"op": "state"}
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import structlog

from simulators.base import COMMON_CONDITIONS, DeviceModel, UnknownFault
from simulators.spec import model_class
from simulators.world import TableWorld

MAX_LINE = 64 * 1024
DEAL_MAX = 64  # a deal request draws at most this many cards (a deck and a few cut cards)

# The device each hand operation is done on.
OPERATED = {"shuffle": "shuffler", "shake": "dice_shaker", "draw": "shoe_reader"}
# The condition that is each device's door (lid) standing open.
DOORS = {"shuffler": "lid_open", "shoe_reader": "shoe_removed", "dice_shaker": "shaker_detached"}
OPS = "shuffle, shake, draw, deal, ring, door, power, by_hand, inject, clear, unplug, plug, state"


def model_of(device: str, world: TableWorld | None = None) -> type[DeviceModel]:
    """The model simulating `device` (a role): the one in `world` now, a plug-in's kind
    included (docs/devices.md), else the role's built-in one; LookupError if there is none."""
    attached = world.devices.get(device) if world is not None else None
    return type(attached) if isinstance(attached, DeviceModel) else model_class(device)


def device_faults(device: str, world: TableWorld | None = None) -> dict[str, list[str]]:
    """The faults a person can give `device`: one-shot (the next operation) and conditions
    (until cleared); LookupError for a device no model simulates."""
    cls = model_of(device, world)
    return {
        "one_shot": sorted(cls.ONE_SHOT),
        "conditions": sorted((cls.CONDITIONS | COMMON_CONDITIONS) - {DOORS.get(device, "")}),
        "door": [DOORS[device]] if device in DOORS else [],
    }


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
        if op in ("unplug", "plug", "power"):
            if not isinstance(device, str):
                return {"ok": False, "error": f"{op} needs 'device'"}
            model_of(device, world)  # a device name with a typo must not be "unplugged" silently
            if op == "power":
                on = request.get("on")
                if not isinstance(on, bool):
                    return {"ok": False, "error": "power needs 'on': true or false"}
                op = "plug" if on else "unplug"
            (world.unplug if op == "unplug" else world.plug)(device)
            return {"ok": True}
        if op in OPERATED:
            return _operate(world, op, fault)
        if op == "deal":
            return _deal(world, request.get("count", 52))
        if op == "ring":
            world.ring()
            return {"ok": True}
        if op == "door":
            is_open = request.get("open")
            if not isinstance(device, str) or not isinstance(is_open, bool):
                return {"ok": False, "error": "door needs 'device' and 'open': true or false"}
            if device not in DOORS:
                return {"ok": False, "error": f"{device} has no door ({', '.join(DOORS)} do)"}
            (world.inject if is_open else world.clear)(device, DOORS[device])
            return {"ok": True}
        if op == "by_hand":
            on = request.get("on")
            if not isinstance(on, bool):
                return {"ok": False, "error": "by_hand needs 'on': true or false"}
            with world.lock:
                world.by_hand = on
                if not on:  # nobody will finish them now: let them finish as they are
                    for name in list(world.describe()["waiting"]):
                        world.release(name)
            return {"ok": True}
        if op == "state":
            return {"ok": True, **world.describe()}
    except (LookupError, UnknownFault, ValueError) as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": False, "error": f"unknown op {op!r} ({OPS})"}


def _operate(world: TableWorld, op: str, fault: Any) -> dict[str, Any]:
    """Shuffle, shake or draw, as the faults armed by then (and `fault`, if given) say."""
    device = OPERATED[op]
    one_shot = model_of(device, world).ONE_SHOT
    if fault is not None and (not isinstance(fault, str) or fault not in one_shot):
        known = ", ".join(sorted(one_shot))
        return {"ok": False, "error": f"{op} takes a 'fault' of {known}, not {fault!r}"}
    with world.lock:
        if op == "draw":
            if fault is not None:
                world.inject(device, fault)
            return {"ok": True, **world.dealer_draw()}
        waiting = world.waiting(device)
        if fault is None and not waiting:
            return {
                "ok": False,
                "error": f"the {device} has nothing waiting to {op} (it waits for a person "
                "only when the table is operated by hand)",
            }
        if fault is not None:
            world.inject(device, fault)
        if waiting:
            world.release(device)
        return {"ok": True, "finished": waiting, **({"armed": fault} if not waiting else {})}


def _deal(world: TableWorld, count: Any) -> dict[str, Any]:
    """Draw up to `count` cards, one after another, stopping at the first not read."""
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= DEAL_MAX:
        return {"ok": False, "error": f"deal needs a 'count' of 1-{DEAL_MAX}"}
    drawn = 0
    last: dict[str, Any] = {}
    for _ in range(count):
        last = world.dealer_draw()
        if last.get("drawn") is None or last.get("reader") not in ("read", None):
            break
        drawn += 1
    return {"ok": True, "dealt": drawn, "last": last}


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
