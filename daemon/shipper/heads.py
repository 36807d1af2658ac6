"""The signed heads of the chain the shipper publishes (`daemon.journal.provenance`).

With the table's signing key the shipper publishes on ``<prefix>.<table>.head``: after the lines
it sends, one every `HEAD_SECONDS` while lines flow (and every `HEAD_LINES` lines of a backlog),
one for the last line sent once the flow pauses, one after each (re)connection for the last line
acknowledged, and one before a clean stop. A head vouches for its line and, through the ``prev``
links, every line before it: the floor takes a line into the table's history only once a head
proves it. `head_of` reads a stored head back (the reconcile after a reconnection).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.shipper.broker import FeedStatus
from daemon.shipper.tail import JournalTail, Line

if TYPE_CHECKING:
    from nats.aio.client import Client

    from daemon.journal.provenance import TableKey

# A signed head at most this often while lines flow (and this long after the last line sent):
# a line is proven at the floor within about this, its batch and the floor's fetch.
HEAD_SECONDS = 1.0
# ... and one at least every this many lines sent (a backlog after an outage ships tens of
# thousands of lines a second: the floor proves them as they come instead of holding them).
HEAD_LINES = 1000


def head_of(body: bytes, key: TableKey | None) -> tuple[str | None, bool]:
    """(the line hash a stored head names, whether it is signed by `key`)."""
    from daemon.journal.provenance import BadHead, parse_head, verify_head  # noqa: PLC0415

    try:
        head = parse_head(body)
    except BadHead:
        return None, False
    ours = (
        key is not None
        and head.key == key.fingerprint
        and verify_head(head, key.private.public_key())
    )
    return head.hash, ours


class Heads:
    """The heads one shipper owes and publishes (none without a key)."""

    def __init__(
        self,
        key: TableKey | None,
        *,
        table_id: str,
        subject_prefix: str,
        headers: dict[str, str],
        status: FeedStatus,
        journal_dir: Path,
    ) -> None:
        self.key = key
        self.table_id = table_id
        self._prefix = subject_prefix  # `<prefix>.<table>.`
        self._headers = headers
        self._status = status
        self._dir = journal_dir
        self.last_sent: Line | None = None  # the last line sent (its seq and bytes)
        self.seq = 0  # the seq of the last head published
        self.at = 0.0  # when it was (monotonic)

    async def publish(self, nc: Client, seq: int, data: bytes) -> None:
        if self.key is None:
            return
        body = self.key.head(self.table_id, seq, hashlib.sha256(data).hexdigest())
        headers = {**self._headers, "Nats-Msg-Id": f"{self.table_id}:head:{seq}"}
        await nc.publish(f"{self._prefix}head", body, headers=headers)
        self.seq, self.at = seq, time.monotonic()
        self._status.heads_total += 1

    async def if_due(
        self, nc: Client, *, probing: bool, flush_seconds: float, final: bool = False
    ) -> float | None:
        """Publish a head for the last line sent if one is owed and due (or `final`); the
        seconds until the next is due, None when none is owed. `probing`: the first line after
        a (re)connection is in flight; its head follows the window's."""
        last = self.last_sent
        if self.key is None or last is None or last.seq <= self.seq:
            return None
        if probing and not final:
            return None
        wait = self.at + HEAD_SECONDS - time.monotonic()
        if wait > 0 and not final and last.seq - self.seq < HEAD_LINES:
            return wait
        await self.publish(nc, last.seq, last.data)
        if final:  # before a stop: on the wire, not in the client's buffer
            with contextlib.suppress(Exception):
                await nc.flush(timeout=max(1, round(flush_seconds)))
        return None

    async def after_connect(self, nc: Client, acked: int) -> None:
        """A head for the last acknowledged line: one published before a lost connection may
        never have reached the stream."""
        self.seq = 0
        if self.key is None or acked < 1:
            return
        data = JournalTail(self._dir).line_at(acked)
        if data is not None:
            self.last_sent = Line(acked, "", data)
            await self.publish(nc, acked, data)
            # The next head, for the lines resent once the first is acknowledged, is due at
            # once: the floor proves a backlog as soon as it is stored, not a second later.
            self.at = 0.0
