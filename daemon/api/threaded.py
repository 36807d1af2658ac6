"""The operator API on its own thread and event loop of the table's process (`daemon.api.bridge`).

`tabled run --http` serves it from a process of its own (`daemon.api.process`); this form, the
same app over the same publication, serves the tests that add routes reaching the table.

    api = ApiThread.build(table, config, listen, decorate=...)  # on the table's loop
    url = api.url()          # bound now: a taken port fails the start
    api.start()              # the publisher on the table's loop, uvicorn on its thread
    ...
    await api.stop()         # before the table stops: the API's last journal lines go in

The table's loop never runs API code: it publishes its state (`SnapshotPublisher`) and runs the
coroutines the API hands it (actions, security facts). The thread is a daemon thread, so a
stuck client can never keep the process alive after `stop()` gave up waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import structlog

from daemon.api.app import create_app
from daemon.api.bridge import SnapshotPublisher, TableBridge
from daemon.api.context import AppContext
from daemon.api.server import ApiServer
from daemon.api.snapshots import StateCache

if TYPE_CHECKING:
    from fastapi import FastAPI

    from daemon.config import TableConfig
    from daemon.table.runtime import Table

log = structlog.get_logger("tabled.api")

STOP_TIMEOUT = 5.0
# The interpreter lets a thread run this long before another that waits for the lock gets it.
# The table's loop mostly waits on devices and the disk; when it wakes it should not wait out
# a whole default interval (5 ms) behind the API's JSON work.
SWITCH_INTERVAL = 0.0005


class ApiThread:
    """The API server of one table, served from a thread of its own."""

    def __init__(self, server: ApiServer, publisher: SnapshotPublisher, context: AppContext):
        self.server, self.publisher, self.context = server, publisher, context
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Event()

    @classmethod
    def build(
        cls,
        table: Table,
        config: TableConfig,
        listen: str,
        *,
        decorate: Callable[[FastAPI], Any] | None = None,
        **app_options: Any,
    ) -> ApiThread:
        """On the table's running loop: the app over a bridge to `table` (nothing served yet)."""
        publisher = SnapshotPublisher(table)
        publisher.publish()
        bridge = TableBridge(table, asyncio.get_running_loop(), publisher)
        app = create_app(bridge, config, **app_options)
        if decorate is not None:
            app = decorate(app)
        context: AppContext = app.state.context
        context.state_cache = StateCache(bridge, bridge.wall)
        publisher.listen(context.push_hub().state_changed_threadsafe)
        return cls(ApiServer(app, listen), publisher, context)

    def url(self) -> str:
        return self.server.url()

    def start(self) -> None:
        self.server.bind()
        self.publisher.start()
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread = threading.Thread(target=self._run, name="tabled-api", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._started.set()
            try:
                await self.server.serve()
            finally:
                hub = self.context.hub
                if hub is not None:
                    await hub.close()

        try:
            asyncio.run(serve())
        except Exception as exc:  # the API failed; the table goes on without it
            log.error("api.thread_failed", error=repr(exc))
        finally:
            self._started.set()

    async def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop serving (open connections closed), then the publisher. Awaited on the table's
        loop, which keeps running meanwhile: the API's last journal lines go through it."""
        self.server.stop()
        thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join, timeout)
            if thread.is_alive():
                log.warning("api.stop_timeout", seconds=timeout)
        await self.publisher.stop()
        with contextlib.suppress(Exception):
            sys.setswitchinterval(0.005)
