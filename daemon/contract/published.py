"""One publication of the table's state: what the table's process hands the API, as text.

The table builds one after each durable change (`daemon.table.publish`); the API's readers take
the latest one and never touch the table (`daemon.api.snapshots.StateCache`). Its text is
immutable, so it crosses a thread or the channel (`daemon.contract.channel`) as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Published:
    """One snapshot of the table, handed from its loop to the API as immutable text."""

    seq: int  # the journal's durable seq when it was built (its cache key)
    state: str  # JSON object of the state without `server_time` (added when served)
    legal: Mapping[str, tuple[str, ...]]  # role -> actions legal now
    devices: str = "[]"  # JSON list: `TableFacade.device_status()`
    legal_text: Mapping[str, str] = field(default_factory=dict)
    server_time: float | None = None  # the table's wall clock when it was built
    version: int = 0  # which publication: the cache's key with the audience

    @classmethod
    def build(
        cls,
        seq: int,
        state: Mapping[str, Any],
        legal: Mapping[str, list[str] | tuple[str, ...]],
        devices: list[dict[str, Any]] | None = None,
    ) -> Published:
        view = {k: v for k, v in state.items() if k != "server_time"}
        legal_tuples = {role: tuple(actions) for role, actions in legal.items()}
        return cls(
            seq=seq,
            state=json.dumps(view, default=str, separators=(",", ":")),
            legal=legal_tuples,
            devices=json.dumps(devices or [], default=str, separators=(",", ":")),
            legal_text={r: json.dumps(list(a)) for r, a in legal_tuples.items()},
            server_time=state.get("server_time"),
        )
