"""What the stream holds of this table, checked against the journal.

- After a (re)connection, before anything is sent, the last message of this table the stream
  holds (`last_line_stored`): when it is this journal's line (or this table's signed head of
  it), the cursor moves up to it, so a resend after a long outage is not stored twice even past
  JetStream's de-duplication window; other bytes under this table's name stop the shipping.
- A line answered `duplicate` (`Duplicates`): the message stored under its id is read and
  compared; it is acknowledged only if that message is this very line (a resend), else it is a
  conflict: journaled, counted, and the table's own line published on the conflict subject with
  its own id, where the floor takes it beside the other (docs/floor.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.shipper.broker import (
    CONFLICT_EVENT,
    MSG_ID,
    FeedMismatch,
    Stored,
    conflict_msg_id,
    is_head,
    last_stored,
    own_messages,
    stored_message,
    stored_seq,
)
from daemon.shipper.config import FeedConfig
from daemon.shipper.heads import head_of
from daemon.shipper.health import FeedHealth
from daemon.shipper.tail import JournalTail, Line
from daemon.shipper.window import Window

if TYPE_CHECKING:
    from nats.js.client import JetStreamContext

    from daemon.journal.provenance import TableKey


async def last_line_stored(
    js: JetStreamContext,
    feed: FeedConfig,
    table_id: str,
    journal_dir: Path,
    *,
    key: TableKey | None,
    acked: int,
    head: int | None,
    log: Any,
) -> int | None:
    """The seq past `acked` of the last line of this table the stream holds, when the stream
    holds this journal's line there (or this table's signed head of it); None when it holds
    nothing past `acked` or a message that is not this table's. FeedMismatch when it holds
    other bytes under this table's name, signed by no other (`head`: the journal's durable seq,
    None without a journal)."""
    msg = await last_stored(js, feed, table_id)
    if msg is None:
        return None
    seq = stored_seq(msg, table_id)
    if seq is None or seq <= acked:
        return None
    line = None if head is not None and seq > head else JournalTail(journal_dir).line_at(seq)
    ours = False
    if is_head(msg, table_id):
        # Our signed head for line `seq`, published after it on the same connection: the
        # stream holds what it vouches for if its hash is our line's.
        digest, ours = head_of(msg.data or b"", key)
        same = line is not None and digest == hashlib.sha256(line).hexdigest()
    else:
        same = line == msg.data
    if not same and key is not None and not ours:
        # Not this journal's, and not signed by this table: anyone on the broker may have
        # published it. Nothing is skipped for it: the lines are sent from the cursor, and
        # one whose id it took goes out on the conflict subject (the floor takes the line
        # this table's heads prove).
        log.warning("feed.foreign_last_message", seq=seq, subject=str(getattr(msg, "subject", "")))
        return None
    if not same:
        raise FeedMismatch(
            f"stream {feed.stream} holds {table_id}:{seq} with other bytes than "
            f"this journal's line {seq} (is another table configured as {table_id}, "
            f"or was this journal started anew?); nothing more is shipped"
        )
    return seq


class Duplicates:
    """Checks the lines of `window` answered `duplicate`, marking each done once checked; a
    conflict is counted, logged and journaled through `health`."""

    def __init__(
        self,
        feed: FeedConfig,
        table_id: str,
        *,
        subject_prefix: str,
        headers: dict[str, str],
        window: Window,
        health: FeedHealth,
    ) -> None:
        self.feed = feed
        self.table_id = table_id
        self._prefix = subject_prefix
        self._headers = headers
        self._inflight = window.inflight
        self._done = window.done
        self._status = health.status
        self._log = health.log
        self._journal_event = health.journal_event
        self._conflicted: set[int] = set()  # seqs journaled as conflicts by this shipper

    async def check(self, js: JetStreamContext, duplicates: dict[int, int]) -> None:
        """Read the stored message of each line in `duplicates` (seq -> the stream seq of the
        message holding its id; emptied) and compare; a line whose id another message holds
        is journaled as a conflict and published on the conflict subject, where the floor
        takes it beside the other."""
        while duplicates:
            pending = sorted(duplicates.items())
            duplicates.clear()
            held_at = await self._own_messages_at([stored for _, stored in pending if stored], js)
            for seq, stored in pending:
                await self._check_one(js, seq, stored, held_at.get(stored))

    async def _own_messages_at(self, seqs: list[int], js: JetStreamContext) -> dict[int, Stored]:
        """This table's messages at these stream seqs, in one read of its own consumer (after a
        reconnection, a window of resends is answered `duplicate` at once)."""
        if not seqs:
            return {}
        low, high = min(seqs), max(seqs)
        found = await own_messages(
            js, self.feed, self.table_id, start=low, limit=min(high - low + 1, 10_000)
        )
        held = {msg.seq: msg for msg in found}
        last = found[-1].seq if found else high
        for seq in seqs:
            if seq > last and seq not in held:  # past what one read brought: read it alone
                one = await stored_message(js, self.feed, self.table_id, seq)
                if one is not None:
                    held[seq] = one
        return held

    async def _check_one(
        self, js: JetStreamContext, seq: int, stored: int, held: Stored | None
    ) -> None:
        line = self._inflight.get(seq)
        if line is not None:
            expected = self._prefix + line.event
            if (
                held is not None
                and held.subject == expected
                and held.data == line.data
                and ((held.headers or {}).get(MSG_ID) == f"{self.table_id}:{seq}")
            ):
                self._done.add(seq)  # the stream holds this very line: a resend, dropped
                return
            await self._conflict(js, line, stored, held)
            self._done.add(seq)

    async def _conflict(
        self, js: JetStreamContext, line: Line, stored: int, held: Stored | None
    ) -> None:
        """Journal the conflict (the supervisor sees it; /api/health counts it) and publish the
        table's own line on ``<prefix>.<table>.conflict`` with its own id (docs/floor.md)."""
        digest = hashlib.sha256(line.data).hexdigest()
        msg_id = conflict_msg_id(self.table_id, line.seq, line.data)
        headers = {**self._headers, MSG_ID: msg_id}
        ack = await js.publish(self._prefix + CONFLICT_EVENT, line.data, headers=headers)
        taken = False
        if ack.duplicate:
            again = await stored_message(js, self.feed, self.table_id, ack.seq)
            taken = again is None or again.data != line.data
        if line.seq in self._conflicted:
            return  # published again after a reconnection: journaled once
        self._conflicted.add(line.seq)
        self._status.conflicts_total += 1
        self._status.last_conflict = line.seq
        # No digest of either message in the journal: the line may hold a card a reader of the
        # journal may not see, and its SHA-256 (or the id's 16 hex) would let them try the 52
        # (docs/security.md). The floor has both messages; the operator's log has the digests.
        record: dict[str, Any] = {
            "seq": line.seq,
            "event": line.event,
            "stream_seq": stored or None,
            # The message that holds the id, when it is on this table's subjects (a table reads
            # no other table's messages: then only its stream seq is known, and the floor has it).
            "stored_on_own_subjects": held is not None,
            "stored_subject": held.subject if held is not None else None,
            "stored_msg_id": (held.headers or {}).get(MSG_ID) if held is not None else None,
            "published_on": self._prefix + CONFLICT_EVENT,
        }
        if taken:
            record["conflict_id_taken"] = True  # another message holds even this id
        self._log.error(
            "feed.conflict",
            **{k: v for k, v in record.items() if k != "event"},
            line_event=line.event,
            line_sha256=digest,
            stored_sha256=hashlib.sha256(held.data).hexdigest() if held is not None else None,
            published_as=msg_id,
        )
        self._journal_event("feed.conflict", record)
