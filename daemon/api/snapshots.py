"""The table's state as the API serves it: built once per durable change, shared by every reader.

The table publishes a `Published` snapshot (its state and device links as JSON text, the legal
actions of each operator role, the durable seq it shows) after a durable change; readers (every
`GET /api/state`, every push-feed client) take the latest one and never touch the table.
`StateCache` serves it per *audience*: the roles that may see the same things share one text,
made once per (publication, audience). By default the audiences and the redaction are the
games' visibility rules (daemon.procedures.visibility): no face-down card reaches a reader.

Published text is immutable (str), so handing it from the table's thread to the API's needs no
copy and no lock beyond swapping one reference. The table's clock is read when a reader asks
(`server_time`), so a snapshot kept while nothing changes still tells the console the time now.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from typing import Any

from daemon.contract.facade import ROLES
from daemon.contract.published import Published
from daemon.procedures.visibility import audience, redact_state

# (state as the table built it, role) -> the state that role may see; must not change its input.
Redact = Callable[[Mapping[str, Any], str], dict[str, Any]]
Audience = Callable[[str], Hashable]


def role_audience(role: str) -> Hashable:
    """The roles that are served the same state (daemon.procedures.visibility.audience)."""
    return audience(role)


def redact_for(state: Mapping[str, Any], role: str) -> dict[str, Any]:
    """The state as `role` may see it: no face-down card or tile (issue 9)."""
    return redact_state(None, state, role)


class StateCache:
    """The state text per (publication, audience), made once however many read it.

    With a table that publishes (`published()`), the latest publication is served. Otherwise
    (a table in the API's own loop, the tests' fake table) `refresh()` builds one from
    `snapshot()` and `legal_actions()` and it is shared until the next `refresh()`.
    `wall` is the table's wall clock, read for `server_time` as each reader is answered
    (None: the time the snapshot was built).
    """

    def __init__(
        self,
        table: Any,
        wall: Callable[[], float] | None = None,
        *,
        audience: Audience = role_audience,
        redact: Redact | None = redact_for,
    ) -> None:
        self._table = table
        self._wall = wall
        self._audience, self._redact = audience, redact
        self._direct: Published | None = None
        self._direct_seq = 0
        self._texts: dict[tuple[int, Hashable], str] = {}
        self._lock = threading.Lock()
        # How many state texts were made (one per seq and audience): the tests count them.
        self.made = 0

    @property
    def publishing(self) -> bool:
        return callable(getattr(self._table, "published", None))

    def refresh(self) -> None:
        """For a table that does not publish: build the snapshot now (once for every reader
        until the next call)."""
        if self.publishing:
            return
        self._direct_seq += 1
        state = self._table.snapshot()
        legal = {role: list(self._table.legal_actions(role)) for role in ROLES}
        self._direct = replace(
            Published.build(self._direct_seq, state, legal), version=self._direct_seq
        )

    def latest(self) -> Published:
        if self.publishing:
            published: Published = self._table.published()
            return published
        if self._direct is None:
            self.refresh()
        return self._direct  # type: ignore[return-value]  # refresh() made it

    def state_text(self, role: str, published: Published | None = None) -> str:
        """The state `role` may see, as a JSON object, with the table's time now."""
        published = published or self.latest()
        key = (published.version, self._audience(role))
        text = self._texts.get(key)
        if text is None:
            with self._lock:
                text = self._texts.get(key)
                if text is None:
                    text = published.state
                    if self._redact is not None:
                        text = json.dumps(
                            self._redact(json.loads(text), role), separators=(",", ":")
                        )
                    # Only the latest publication is kept: an older one is not asked for again.
                    self._texts = {
                        k: v for k, v in self._texts.items() if k[0] == published.version
                    }
                    self._texts[key] = text
                    self.made += 1
        now = self._wall() if self._wall is not None else published.server_time
        return text if now is None else _with_time(text, now)

    def legal_text(self, role: str, published: Published | None = None) -> str:
        published = published or self.latest()
        return published.legal_text.get(role, "[]")

    def state(self, role: str) -> dict[str, Any]:
        """The state as a fresh dict (the caller may change it)."""
        loaded: dict[str, Any] = json.loads(self.state_text(role))
        return loaded

    def push_message(self, role: str) -> str:
        """The push feed's `{"type": "state", "seq": N, "state": ..., "legal": [...]}` for
        `role`. `seq` is the journal's durable seq the table read as it built the state (so the
        state shows every event up to it): an action's answer publishes the state before the
        hub's next batch carries the action's events, and the console orders the two by it. A
        table that does not publish (the tests' fakes) has no such seq: its state is read as it
        is when sent, after the events sent before it, and the message has no `seq`."""
        published = self.latest()
        seq = '"seq":' + str(published.seq) + "," if self.publishing else ""
        return (
            '{"type":"state",'
            + seq
            + '"state":'
            + self.state_text(role, published)
            + ',"legal":'
            + self.legal_text(role, published)
            + "}"
        )

    def state_body(self, actor: str, role: str) -> str:
        """`GET /api/state`'s body (`StateBody`)."""
        if not self.publishing:
            self.refresh()  # a table that does not publish is read as it is now
        published = self.latest()
        return (
            '{"actor":'
            + json.dumps(actor)
            + ',"role":'
            + json.dumps(role)
            + ',"state":'
            + self.state_text(role, published)
            + ',"legal":'
            + self.legal_text(role, published)
            + "}"
        )


def _with_time(state: str, now: float) -> str:
    if state == "{}":
        return '{"server_time":' + repr(now) + "}"
    return state[:-1] + ',"server_time":' + repr(now) + "}"
