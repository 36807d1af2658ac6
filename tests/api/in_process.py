"""The operator API served in the table's own process and loop, over the table's in-process
facade (`Table.facade`) with its state published as `tabled run --http` publishes it
(`daemon.table.publish.publisher`): for the tests that add routes reaching the table.

    api = InProcess.build(table, config, listen, decorate=...)  # on the table's loop
    url = api.url()          # bound now
    api.start()              # the publisher and the server, tasks on the table's loop
    ...
    await api.stop()         # before the table stops: the API's last journal lines go in
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from daemon.api.app import create_app
from daemon.api.context import AppContext
from daemon.api.server import ApiServer
from daemon.api.snapshots import StateCache
from daemon.config import TableConfig
from daemon.contract.published import Published
from daemon.table import Table
from daemon.table.publish.facade import LocalFacade
from daemon.table.publish.publisher import SnapshotPublisher


class Publishing(LocalFacade):
    """The in-process facade read through the table's publications, as the API process reads
    them: the latest one for the state, and an action's answer after its state is published."""

    def __init__(self, table: Table, publisher: SnapshotPublisher) -> None:
        super().__init__(table)
        self.publisher = publisher

    def published(self) -> Published:
        return self.publisher.latest

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        answer = await super().act(action, actor, role, payload)
        await self.publisher.publish_durable()
        return answer


class InProcess:
    """The API server of one table, served on the table's loop."""

    def __init__(self, server: ApiServer, publisher: SnapshotPublisher, context: AppContext):
        self.server, self.publisher, self.context = server, publisher, context
        self._task: asyncio.Future[None] | None = None

    @classmethod
    def build(
        cls,
        table: Table,
        config: TableConfig,
        listen: str,
        *,
        decorate: Callable[[FastAPI], Any] | None = None,
        **app_options: Any,
    ) -> InProcess:
        """On the table's running loop: the app over the table's facade (nothing served yet)."""
        publisher = SnapshotPublisher(table)
        publisher.publish()
        facade = Publishing(table, publisher)
        app = create_app(facade, config, **app_options)
        if decorate is not None:
            app = decorate(app)
        context: AppContext = app.state.context
        context.state_cache = StateCache(facade, table.wall)
        publisher.listen(lambda: context.push_hub().state_changed())
        return cls(ApiServer(app, listen), publisher, context)

    def url(self) -> str:
        return self.server.url()

    def start(self) -> None:
        self.server.bind()
        self.publisher.start()
        self._task = asyncio.ensure_future(self.server.serve())

    async def stop(self) -> None:
        """Stop serving (open connections closed), then the publisher."""
        self.server.stop()
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception):
                await task
        hub = self.context.hub
        if hub is not None:
            await hub.close()
        await self.publisher.stop()
