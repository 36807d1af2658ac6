"""The store's writing of a batch (daemon/floor/store.py): each table's lines judged by its
custody in seq order, copied into `journal_lines` (one COPY buffer), the derived rows and the
audited facts (daemon/floor/derived.py, facts.py), each table's state and cursor, the chain
alerts; a month's partition made before its first line."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from daemon.floor.custody import Alert, Custody
from daemon.floor.derived import _Derived, _round_text, _TableState
from daemon.floor.facts import Facts
from daemon.floor.storebase import (
    NULL,
    BatchResult,
    _copy_text,
    _resolved,
    _StoreBase,
    next_month,
    partition_name,
)
from daemon.journal.format import Record

COPY_LINES = (
    "COPY journal_lines (table_id, seq, ts, event, round, actor, hash, prev, line) FROM STDIN"
)
COPY_CHUNK_ROWS = 200  # lines' rows handed to the COPY at a time (~140 KB)


class _Writing(_StoreBase):
    async def _ensure_partitions_tx(
        self, conn: psycopg.AsyncConnection[Any], months: Iterable[datetime]
    ) -> None:
        for start in sorted(set(months) - self._months):
            await conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} PARTITION OF journal_lines "
                    "FOR VALUES FROM ({}) TO ({})"
                ).format(
                    sql.Identifier(partition_name(start)),
                    sql.Literal(start),
                    sql.Literal(next_month(start)),
                )
            )
            self._months_new.add(start)

    async def _ingest_tx(  # noqa: PLR0915 - one pass over a batch, in the order it commits
        self,
        conn: psycopg.AsyncConnection[Any],
        by_table: dict[str, list[tuple[Record, datetime]]],
        alerts: list[Alert],
        result: BatchResult,
    ) -> None:
        tables = sorted(by_table)
        heads: dict[str, tuple[Any, ...]] = {}
        if tables:
            await conn.execute(
                "INSERT INTO floor_tables (table_id) SELECT unnest(%s::text[]) "
                "ON CONFLICT DO NOTHING",
                (tables,),
            )
            cur = await conn.execute(
                "SELECT table_id, last_seq, head_hash, contiguous_seq, game, phase, state, "
                "reason, round, pending_overrides FROM floor_tables "
                "WHERE table_id = ANY(%s) ORDER BY table_id FOR UPDATE",
                (tables,),
            )
            heads = {row[0]: row for row in await cur.fetchall()}
        # Each table's custody, with the lines it holds around a line at or below its head (a
        # fill, a duplicate), read first; then the COPY is open while the lines are judged and
        # takes their rows as they are made (their text, formatted here: the hashes are already
        # hex, bytea's input form), so PostgreSQL stores a table's lines while the next ones
        # are judged (one buffer after them all before: its wait was the batch's largest).
        custodies: dict[str, Custody] = {}
        for table in tables:
            recs = by_table[table]  # in seq order, as `prove` gives them
            last_seq, head_hash = int(heads[table][1]), heads[table][2]
            custody = custodies[table] = Custody(
                table, last_seq, head_hash.hex() if head_hash else None
            )
            if recs[0][0].seq > last_seq:
                continue
            below = {r.seq for r, _ in recs if r.seq <= last_seq}
            wanted = sorted({s + d for s in below for d in (-1, 0, 1)} - {0})
            cur = await conn.execute(
                "SELECT seq, hash, prev FROM journal_lines WHERE table_id = %s AND seq = ANY(%s)",
                (table, wanted),
            )
            for seq, digest, prev in await cur.fetchall():
                custody.known[int(seq)] = (bytes(digest).hex(), bytes(prev).hex())
        copy_rows: list[str] = []
        derived = _Derived()
        facts = Facts()
        table_updates: list[tuple[Any, ...]] = []
        filled_tables: list[str] = []
        async with contextlib.AsyncExitStack() as opened:
            copy = (
                await opened.enter_async_context(conn.cursor().copy(COPY_LINES)) if tables else None
            )
            for table in tables:
                recs = by_table[table]  # in seq order, as `prove` gives them
                await self._turn(len(recs))
                head = heads[table]
                last_seq, contiguous = int(head[1]), int(head[3])
                game, phase, state, reason, rnd, pending = head[4:10]
                custody = custodies[table]
                table_text = _copy_text(table)
                now_state = _TableState(game, phase, state, reason, rnd, int(pending))
                last_ts: datetime | None = None
                last_event: str | None = None
                inserted_here = 0
                for rec, ts in recs:
                    verdict, found = custody.judge(rec)
                    alerts.extend(found)
                    if verdict in ("duplicate", "fork"):
                        result.duplicates += verdict == "duplicate"
                        continue
                    inserted_here += 1
                    rnd_text = _round_text(rec.round_id)
                    copy_rows.append(
                        f"{table_text}\t{rec.seq}\t{ts.isoformat()}\t{_copy_text(rec.event)}\t"
                        f"{NULL if rnd_text is None else _copy_text(rnd_text)}\t"
                        f"{_copy_text(rec.actor)}\t\\\\x{rec.hash}\t\\\\x{rec.prev}\t"
                        f"\\\\x{rec.line.hex()}\n"
                    )
                    derived.add(rec, ts, self._devices)
                    facts.add(rec, ts)
                    if verdict == "new":
                        now_state.apply(rec)
                        last_ts, last_event = ts, rec.event
                    else:
                        filled_tables.append(table)
                if copy is not None and len(copy_rows) >= COPY_CHUNK_ROWS:
                    await copy.write("".join(copy_rows).encode())
                    copy_rows.clear()
                if inserted_here == 0 and custody.last_seq == last_seq:
                    continue
                new_gap = any(a.kind == "gap" and a.table == table for a in alerts)
                if new_gap:
                    contiguous = min(
                        int(contiguous), min(a.seq for a in alerts if a.kind == "gap") - 1
                    )
                elif int(contiguous) == int(last_seq):
                    contiguous = custody.last_seq
                result.inserted += inserted_here
                result.tables[table] = custody.last_seq
                if last_ts is not None:
                    result.stamps[table] = last_ts
                table_updates.append(
                    (
                        now_state.game,
                        now_state.phase,
                        now_state.state,
                        now_state.reason,
                        now_state.round,
                        custody.last_seq,
                        bytes.fromhex(custody.head_hash) if custody.head_hash else None,
                        contiguous,
                        last_event,
                        last_ts,
                        now_state.pending,
                        inserted_here,
                        table,
                    )
                )
            if copy is not None and copy_rows:
                await copy.write("".join(copy_rows).encode())
        await derived.write(conn, self._devices)
        await facts.write(conn)
        result.violations, result.overrides, result.faults = (
            derived.violation_dicts(),
            derived.override_dicts(),
            derived.fault_dicts(),
        )
        if table_updates:
            await conn.execute(
                "UPDATE floor_tables t SET game = u.game, phase = u.phase, state = u.state, "
                "reason = u.reason, round = u.round, last_seq = u.last_seq, "
                "head_hash = u.head_hash, contiguous_seq = u.contiguous_seq, "
                "last_event = coalesce(u.last_event, t.last_event), "
                "last_ts = coalesce(u.last_ts, t.last_ts), "
                "pending_overrides = u.pending, lines = t.lines + u.lines, received_at = now() "
                "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::bigint[], %s::bytea[], %s::bigint[], %s::text[], %s::timestamptz[], "
                "%s::int[], %s::bigint[], %s::text[]) AS u(game, phase, state, reason, round, "
                "last_seq, head_hash, contiguous_seq, last_event, last_ts, pending, lines, "
                "table_id) WHERE t.table_id = u.table_id",
                [list(column) for column in zip(*table_updates, strict=True)],
            )
        for alert in alerts:
            await self._insert_alert(conn, alert, result)
        for table in sorted(set(filled_tables)):
            cur = await conn.execute(
                "UPDATE chain_alerts a SET resolved_at = now() WHERE a.table_id = %s "
                "AND a.kind = 'gap' AND a.resolved_at IS NULL AND (SELECT count(*) "
                "FROM journal_lines l WHERE l.table_id = a.table_id AND l.seq BETWEEN a.seq "
                "AND a.gap_to) = a.gap_to - a.seq + 1 RETURNING id, table_id, seq, gap_to",
                (table,),
            )
            _resolved(result, await cur.fetchall())
            await conn.execute(
                "UPDATE floor_tables t SET contiguous_seq = coalesce((SELECT min(seq) - 1 "
                "FROM chain_alerts a WHERE a.table_id = t.table_id AND a.kind = 'gap' "
                "AND a.resolved_at IS NULL), t.last_seq) WHERE t.table_id = %s",
                (table,),
            )

    # --- queries (the API's) ---------------------------------------------------------------
