"""The simulators' control channel, through which the script draws cards, injects faults and puts
devices right: in this process (`sim://` ports) or `tabled sim`'s unix socket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from daemon.table import Table


class AutoplayError(Exception):
    """The script could not go on (a device never answered, a legal step was refused)."""


class SimControl(Protocol):
    async def request(self, request: dict[str, Any]) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class InProcessControl:
    """The control channel of `sim://` devices in this process (their shared table world)."""

    def __init__(self, world: str) -> None:
        from simulators.world import get_world  # noqa: PLC0415 - only simulated tables need it

        self.world = get_world(world)

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        from simulators.control import handle_control  # noqa: PLC0415

        return handle_control(self.world, request)

    async def close(self) -> None:
        return None


class SocketControl:
    """The control channel `tabled sim` serves on a unix socket (one JSON object a line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._streams is None:
            self._streams = await asyncio.open_unix_connection(str(self.path))
        reader, writer = self._streams
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        line = await reader.readline()
        if not line:
            raise AutoplayError(f"control channel {self.path} closed")
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def control_for(table: Table, socket: Path | None = None) -> SimControl:
    """The control channel of the table's simulated devices; AutoplayError if it has none."""
    if socket is not None:
        return SocketControl(socket)
    from simulators.spec import parse_sim_url  # noqa: PLC0415

    worlds = {
        parse_sim_url(device.port).world
        for device in table.config.devices.values()
        if device.enabled and device.port.startswith("sim://")
    }
    if len(worlds) != 1:
        raise AutoplayError(
            "autoplay needs the table's devices simulated in one world (sim:// ports), "
            "or --control SOCKET of `tabled sim`"
        )
    return InProcessControl(worlds.pop())
