"""What every route shares for one app: the table, the token gate, the answers kept for repeated
requests, how long the console may stay idle (the doors, `daemon.api.doors`, check Host and
Origin before any route runs). `create_app` puts one `AppContext` on
`app.state`; a route reaches it through its request or socket (`context(...)`)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection

from daemon.api.fanout import PushHub
from daemon.api.gate import Gate
from daemon.api.snapshots import StateCache
from daemon.api.tokens import TokenStore
from daemon.contract.facade import TableFacade

IDEMPOTENCY_CACHE = 512


@dataclass
class AppContext:
    table: TableFacade
    gate: Gate
    tokens: TokenStore
    configured_table_id: str | None = None
    # The console signs out after this many seconds without input (`[api] console_idle_seconds`).
    console_idle_seconds: int = 600
    # (actor, request_id) -> (the request: action, payload, reason; status; answer)
    answered: OrderedDict[tuple[str, str], tuple[str, int, dict[str, Any]]] = field(
        default_factory=OrderedDict
    )
    # The state as readers get it, made once per durable change (daemon.api.snapshots).
    state_cache: StateCache | None = None
    # The push feed's fan-out, made on the API's loop by its first client (daemon.api.fanout).
    hub: PushHub | None = None

    @property
    def states(self) -> StateCache:
        if self.state_cache is None:
            self.state_cache = StateCache(self.table)
        return self.state_cache

    def push_hub(self) -> PushHub:
        if self.hub is None:
            self.hub = PushHub(self.table, on_flush=self._on_push)
        return self.hub

    def _on_push(self) -> None:
        """Before the hub hands a batch to its consoles: the state for a table that does not
        publish its own, and the tokens file read again if it changed (a token withdrawn ends
        its console's feed at the next batch; each console then checks its token in memory)."""
        self.states.refresh()
        self.tokens.reload()

    def table_id(self) -> str:
        return self.configured_table_id or str(self.table.snapshot().get("table", "")) or "unknown"


def context(connection: HTTPConnection) -> AppContext:
    """The app's shared context, from a request or a WebSocket."""
    ctx: AppContext = connection.app.state.context
    return ctx
