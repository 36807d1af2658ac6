"""The store's intake (daemon/floor/store.py): each message of a batch decoded and sorted to the
table it names (a line, a head, or the quarantine), its envelope checked against its shipper's,
and the quarantine's rows written with the alert that tells of each."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from daemon.floor.custody import Alert
from daemon.floor.decoding import decode_line
from daemon.floor.proof import Candidate
from daemon.floor.storebase import (
    EVIDENCE_BYTES,
    HEX_DIGEST,
    SUBJECTS_KEPT,
    TABLE_TOKEN,
    TURN_LINES,
    BatchResult,
    Incoming,
    Parsed,
    _Held,
    _StoreBase,
    _Work,
    parse_ts,
)
from daemon.journal.format import Record
from daemon.journal.provenance import (
    CONFLICT_SUBJECT,
    HEAD_SUBJECT,
    BadHead,
    parse_head,
)


def parse(data: bytes) -> Parsed:
    """A line's record and time, or why it is not a line (ValueError)."""
    try:
        rec = decode_line(data)
        ts = parse_ts(rec.ts)
        if HEX_DIGEST.fullmatch(rec.prev) is None:
            raise ValueError("prev is not a SHA-256 hex digest")
    except ValueError as exc:
        return exc
    return rec, ts


class _Intake(_StoreBase):
    async def parse_ahead(self, batch: Sequence[Incoming]) -> list[Parsed | None]:
        """The next batch's lines decoded (None for a head, or a line over the bound) while
        this one commits: the consumer calls it as the next batch arrives, and gives the result
        to `ingest` with the batch. Pure decoding: nothing read from or written to the
        database, and the event loop handed back every TURN_LINES lines, so the commit in
        flight goes on as soon as PostgreSQL answers."""
        head = "." + HEAD_SUBJECT
        out: list[Parsed | None] = []
        for start in range(0, len(batch), TURN_LINES):
            out += [
                None
                if msg.subject.endswith(head) or len(msg.data) > self.max_line_bytes
                else parse(msg.data)
                for msg in batch[start : start + TURN_LINES]
            ]
            await asyncio.sleep(0)
        return out

    def _decode(
        self, msg: Incoming, subject_table: str, parsed: Parsed | None
    ) -> tuple[Record | None, datetime | None, Alert | None]:
        if parsed is None:
            parsed = parse(msg.data)
        if isinstance(parsed, ValueError):
            return (
                None,
                None,
                Alert(
                    subject_table or "?",
                    0,
                    "malformed",
                    details={"subject": msg.subject[:300], "problem": str(parsed)[:300]},
                    evidence=msg.data[:EVIDENCE_BYTES],
                ),
            )
        rec, ts = parsed
        if rec.table != subject_table:
            return (
                None,
                None,
                Alert(
                    subject_table or "?",
                    rec.seq,
                    "malformed",
                    actual_hash=rec.hash,
                    details={
                        "subject": msg.subject[:300],
                        "problem": f"the subject names table {subject_table!r}, "
                        f"the line {rec.table[:100]!r}",
                    },
                    evidence=msg.data[:EVIDENCE_BYTES],
                ),
            )
        return rec, ts, None

    def _sort(
        self, batch: Sequence[Incoming], work: _Work, parsed: Sequence[Parsed | None] = ()
    ) -> None:
        """Each message to the table it names: a line (or the shipper's conflict line), a head,
        or the quarantine (a bad table id, an oversized line, an unknown table, not a line).
        `parsed`: the lines decoded ahead (`parse_ahead`), or nothing."""
        prefix = self.prefix + "."
        split = self._subjects
        ahead = iter(parsed) if parsed else itertools.repeat(None)
        for msg in batch:
            pre = next(ahead)
            subject = msg.subject
            parts = split.get(subject)
            if parts is None:  # a subject not seen lately: split and checked once
                rest = subject[len(prefix) :] if subject.startswith(prefix) else subject
                table, _, kind = rest.partition(".")
                parts = (table, kind, TABLE_TOKEN.match(table) is not None)
                if len(split) >= SUBJECTS_KEPT:
                    split.clear()
                split[subject] = parts
            table, kind, token = parts
            if not token:
                work.quarantine(msg, table, None, "malformed", "the subject's table id is not one")
                continue
            if len(msg.data) > self.max_line_bytes:
                work.quarantine(
                    msg, table, None, "malformed",
                    f"{len(msg.data)} bytes, over the floor's limit of {self.max_line_bytes}",
                )  # fmt: skip
                continue
            if table not in self._keys:
                work.quarantine(msg, table, None, "unknown_table", "no table enrolled as this")
                continue
            if kind == HEAD_SUBJECT:
                try:
                    head = parse_head(msg.data)
                except BadHead as exc:
                    work.quarantine(msg, table, None, "forged", f"not a head: {exc}")
                    continue
                if head.table != table:
                    work.quarantine(msg, table, head.seq, "forged", "a head for another table")
                    continue
                work.heads.setdefault(table, []).append((head, msg))
                continue
            if kind != CONFLICT_SUBJECT and "." not in kind:
                work.quarantine(msg, table, None, "malformed", "not a line's subject")
                continue
            rec, ts, bad = self._decode(msg, table, pre)
            if bad is not None:
                work.alerts.append(bad)
                work.quarantine(msg, table, bad.seq or None, "malformed", bad.details["problem"])
            elif rec is not None and ts is not None:
                envelope = self._envelope(msg, table, kind, rec)
                if envelope:
                    work.quarantine(msg, table, rec.seq, "replay", envelope)
                else:
                    work.lines.setdefault(table, []).append(Candidate(rec, ts, subject))

    @staticmethod
    def _envelope(msg: Incoming, table: str, kind: str, rec: Record) -> str | None:
        """Why this line's envelope is not the one its shipper gives it (None: it is)."""
        if kind == CONFLICT_SUBJECT:
            want = f"{table}:{rec.seq}:conflict:{rec.hash[:16]}"
        else:
            if kind != rec.event:
                return f"published on event {kind[:100]!r}, the line is {rec.event[:100]!r}"
            want = f"{table}:{rec.seq}"
        if msg.msg_id is not None and msg.msg_id != want:
            return f"published under Nats-Msg-Id {msg.msg_id[:100]!r}, not {want!r}"
        return None

    async def _quarantine(
        self, conn: psycopg.AsyncConnection[Any], work: _Work, result: BatchResult
    ) -> None:
        """The quarantine's rows, each with the alert that tells of it: one `forged` alert a
        forged line or head, one `malformed` a malformed message (already made), and one open
        `unknown_table` alert a table id (its count grows while it is open)."""
        if not work.held:
            return
        unknown: dict[str, list[_Held]] = {}
        rows: list[tuple[Any, ...]] = []
        malformed = iter([a for a in result.alerts if a["kind"] == "malformed"])
        for held in work.held:
            alert_id: int | None = None
            if held.kind == "unknown_table":
                unknown.setdefault(held.table, []).append(held)
                continue
            if held.kind == "forged":
                alert_id = await self._insert_alert(
                    conn,
                    Alert(held.table, held.seq or 0, "forged", expected_hash=held.want,
                          actual_hash=held.digest,
                          details={"reason": held.reason, "subject": held.subject[:300],
                                   "bytes": held.size}, evidence=held.body),
                    result,
                )  # fmt: skip
            elif held.from_alert:
                alert_id = next(malformed)["id"]
            else:
                alert_id = await self._insert_alert(
                    conn,
                    Alert(held.table, held.seq or 0, held.kind,
                          details={"problem": held.reason, "subject": held.subject[:300],
                                   "bytes": held.size}, evidence=held.body),
                    result,
                )  # fmt: skip
            rows.append(held.row(alert_id))
        for table, items in unknown.items():
            cur = await conn.execute(
                "UPDATE chain_alerts SET details = jsonb_set(details, '{count}', "
                "to_jsonb(coalesce((details->>'count')::bigint, 0) + %s)) "
                "WHERE id = (SELECT id FROM chain_alerts WHERE table_id = %s AND "
                "kind = 'unknown_table' AND resolved_at IS NULL AND acknowledged_at IS NULL "
                "ORDER BY id DESC LIMIT 1) RETURNING id",
                (len(items), table),
            )
            found = await cur.fetchone()
            if found is not None:
                alert_id = int(found[0])
            else:
                first = items[0]
                alert_id = await self._insert_alert(
                    conn,
                    Alert(table, first.seq or 0, "unknown_table", actual_hash=first.digest,
                          details={"reason": first.reason, "subject": first.subject[:300],
                                   "count": len(items)}, evidence=first.body),
                    result,
                )  # fmt: skip
            rows += [held.row(alert_id) for held in items]
        async with conn.cursor() as cur2:
            await cur2.executemany(
                "INSERT INTO quarantine (table_id, seq, kind, reason, subject, hash, body, bytes, "
                "alert_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
