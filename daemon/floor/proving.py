"""The store's proof (daemon/floor/store.py): each table's lines proven by a signed head before
they are the table's, the others waiting in `pending_lines` (a backlog read a window a batch),
a key rotation the old key signed, and the `unproven` alert of lines that wait too long."""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime
from typing import Any

import psycopg
import structlog
from psycopg.types.json import Jsonb

from daemon.floor.custody import Alert
from daemon.floor.decoding import decode_line
from daemon.floor.proof import Candidate, Verdicts, prove
from daemon.floor.storebase import (
    PENDING_ALERT_LINES,
    PENDING_ALERT_SECONDS,
    PENDING_CHECK_SECONDS,
    PENDING_WINDOW,
    BatchResult,
    Decoded,
    TableKeyRow,
    _known,
    _resolved,
    _StoreBase,
    _Work,
    parse_ts,
)
from daemon.journal.format import Record
from daemon.journal.provenance import (
    KEY_ROTATED,
    fingerprint,
    parse_public,
    verify_head,
    verify_rotation,
)

log = structlog.get_logger("tabled.floor")


class _Proving(_StoreBase):
    async def _unproven_tx(self, conn: psycopg.AsyncConnection[Any], result: BatchResult) -> None:
        """Every PENDING_CHECK_SECONDS: an `unproven` alert for each table whose lines waiting
        for a head exceed PENDING_ALERT_LINES or PENDING_ALERT_SECONDS (one open a table, its
        counts updated), resolved when they no longer do."""
        now = time.monotonic()
        if now - self._pending_checked < PENDING_CHECK_SECONDS:
            return
        self._pending_checked = now
        cur = await conn.execute(
            "SELECT table_id, count(*), min(seq), max(seq), "
            "extract(epoch FROM now() - min(received_at))::float8 FROM pending_lines "
            "GROUP BY table_id"
        )
        waiting = {row[0]: row[1:] for row in await cur.fetchall()}
        cur = await conn.execute(
            "SELECT table_id, id FROM chain_alerts WHERE kind = 'unproven' AND resolved_at IS NULL"
        )
        open_ = {row[0]: int(row[1]) for row in await cur.fetchall()}
        for table, (lines, low, high, age) in sorted(waiting.items()):
            details = {
                "lines": int(lines), "oldest_seq": int(low), "newest_seq": int(high),
                "oldest_seconds": round(float(age), 1), "bound_lines": PENDING_ALERT_LINES,
                "bound_seconds": PENDING_ALERT_SECONDS, "read_per_batch": PENDING_WINDOW,
            }  # fmt: skip
            over = lines > PENDING_ALERT_LINES or age > PENDING_ALERT_SECONDS
            if over and table not in open_:
                await self._insert_alert(conn, Alert(table, int(low), "unproven",
                                                     details=details), result)  # fmt: skip
            elif over:
                await conn.execute(
                    "UPDATE chain_alerts SET details = %s WHERE id = %s",
                    (Jsonb(details), open_.pop(table)),
                )
        for alert_id in sorted(open_.values()):  # left open: no longer over its bounds
            cur = await conn.execute(
                "UPDATE chain_alerts SET resolved_at = now() WHERE id = %s "
                "RETURNING id, table_id, seq, gap_to",
                (alert_id,),
            )
            _resolved(result, await cur.fetchall())

    async def _prove(  # noqa: PLR0915 - the batch's queries, then a table at a time
        self, conn: psycopg.AsyncConnection[Any], work: _Work
    ) -> dict[str, list[tuple[Record, datetime]]]:
        """Each table's lines proven by a signed head (to the custody, in seq order); the
        forged ones to the quarantine; the others wait in `pending_lines`."""
        pending_tables = self._pending_tables or set()
        tables = sorted(set(work.lines) | set(work.heads) | (self.backlog & pending_tables))
        by_table: dict[str, list[tuple[Record, datetime]]] = {}
        if not tables:
            return by_table
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('floor-table:' || t)) "
            "FROM unnest(%s::text[]) AS t ORDER BY t",
            (tables,),
        )
        cur = await conn.execute(
            "SELECT table_id, last_seq FROM floor_tables WHERE table_id = ANY(%s)", (tables,)
        )
        last = {row[0]: int(row[1]) for row in await cur.fetchall()}
        # What the batch needs from the database, a query each for all its tables (a query a
        # table cost more than the proof): lines waiting from earlier batches and the heads
        # above them, and the lines held at the seqs below a table's head.
        cands: dict[str, list[Candidate]] = {t: list(work.lines.get(t, ())) for t in tables}
        heads: dict[str, dict[int, str]] = {t: {} for t in tables}
        waiting_tables = [t for t in tables if t in pending_tables]
        if waiting_tables:
            cur = await conn.execute(
                "SELECT h.table_id, h.seq, h.hash FROM signed_heads h JOIN (SELECT table_id, "
                "min(seq) AS low FROM pending_lines WHERE table_id = ANY(%s) GROUP BY 1) p "
                "ON p.table_id = h.table_id WHERE h.seq >= p.low",
                (waiting_tables,),
            )
            for table, seq, digest in await cur.fetchall():
                heads[table][int(seq)] = bytes(digest).hex()
            for table, (rec, ts), subject in await self._waiting(conn, waiting_tables, heads,
                                                                  work):  # fmt: skip
                await self._turn(1)
                cands[table].append(Candidate(rec, ts, subject, stored=True))
        held: dict[str, dict[int, tuple[str, str]]] = {t: {} for t in tables}
        wanted = sorted(
            {
                (t, seq + d)
                for t, below in ((t, last.get(t, 0)) for t in tables)
                for seq in (c.rec.seq for c in cands[t])
                if seq <= below
                for d in (0, 1)
            }
        )
        if wanted:
            cur = await conn.execute(
                "SELECT table_id, seq, hash, prev FROM journal_lines WHERE (table_id, seq) IN "
                "(SELECT * FROM unnest(%s::text[], %s::bigint[]))",
                ([w[0] for w in wanted], [w[1] for w in wanted]),
            )
            for table, seq, digest, prev in await cur.fetchall():
                held[table][int(seq)] = (bytes(digest).hex(), bytes(prev).hex())
        # The arrays of lines and hashes go in binary (%b): psycopg's text arrays escape every
        # element with a regex (~100 us a waiting line in a catch-up; binary ~1 us).
        pending_rows: list[tuple[Any, ...]] = []
        gone: list[tuple[str, Candidate]] = []
        for table in tables:
            # A key rotation announced in a line: the new key is signed by one of the table's
            # keys (not revoked), so it is the table's from here on, before the line itself is
            # proven (a head signed with the new key proves it).
            for cand in cands[table]:
                if (
                    cand.rec.event == KEY_ROTATED
                    and not cand.stored
                    and await self._rotate(conn, table, cand.rec)
                ):
                    work.rotated = True
            # The batch's heads from the highest down: a check (~150-230 us) only for a head
            # that says something the chain proven so far does not: usually the highest one,
            # whose line proves the lines below it, so the lower heads agree and cost nothing.
            # With no head and no line of the table's held, a proof proves nothing (`known` is
            # empty): a table with heads in the batch is then proven once, after them.
            await self._turn(len(cands[table]))
            batch_heads = work.heads.get(table, ())
            verdicts: Verdicts | None = None
            known: dict[int, str] = {}
            if heads[table] or held[table] or not batch_heads:
                verdicts = prove(cands[table], heads[table], held[table])
                known = _known(verdicts, held[table])
            for head, msg in sorted(batch_heads, key=lambda h: -h[0].seq):
                have = known.get(head.seq)
                if have == head.hash:
                    continue  # what the proven chain says already
                key = self._key_for(table, head.key, head.seq)
                if key is None:
                    work.quarantine(
                        msg, table, head.seq, "forged",
                        f"a head signed with key {head.key[:40]!r}, which is not one of "
                        f"{table}'s for seq {head.seq}",
                    )  # fmt: skip
                elif not verify_head(head, key.parsed):
                    work.quarantine(
                        msg, table, head.seq, "forged",
                        f"a head whose signature does not verify with key {head.key}",
                    )  # fmt: skip
                elif have is not None:
                    work.quarantine(
                        msg, table, head.seq, "forged",
                        f"a head signed with the table's key {head.key} for another line than "
                        "its proven one at this seq (a journal started anew? a stolen key?)",
                    )  # fmt: skip
                else:
                    heads[table][head.seq] = head.hash
                    work.new_heads.append((table, head.seq, bytes.fromhex(head.hash), key.id))
                    verdicts = prove(cands[table], heads[table], held[table])
                    known = _known(verdicts, held[table])
            if verdicts is None:
                verdicts = prove(cands[table], heads[table], held[table])
            proven = verdicts.proven
            for cand, want, why in verdicts.forged:
                work.forge(table, cand, want, why)
            gone += [(table, c) for c in (*proven, *verdicts.duplicate) if c.stored]
            gone += [(table, c) for c, _, _ in verdicts.forged if c.stored]
            for cand in verdicts.waiting:
                if not cand.stored:
                    rec = cand.rec
                    digest = bytes.fromhex(rec.hash)
                    pending_rows.append(
                        (table, rec.seq, digest, bytes.fromhex(rec.prev), rec.line, cand.subject)
                    )
                    work.waited.append(((table, rec.seq, digest), (rec, cand.ts)))
            if verdicts.waiting or table in self.backlog:  # a backlog: more wait, unread
                work.now_pending.add(table)
            else:
                work.cleared.add(table)
            if proven:
                by_table[table] = [(c.rec, c.ts) for c in proven]  # in seq order (`prove`)
        if gone:
            work.unwaited += [(t, c.rec.seq, bytes.fromhex(c.rec.hash)) for t, c in gone]
            await conn.execute(
                "DELETE FROM pending_lines WHERE (table_id, seq, hash) IN "
                "(SELECT * FROM unnest(%b::text[], %b::bigint[], %b::bytea[]))",
                tuple(list(column) for column in zip(*work.unwaited, strict=True)),
            )
        if pending_rows:
            await conn.execute(
                "INSERT INTO pending_lines (table_id, seq, hash, prev, line, subject) "
                "SELECT * FROM unnest(%b::text[], %b::bigint[], %b::bytea[], %b::bytea[], "
                "%b::bytea[], %b::text[]) ON CONFLICT DO NOTHING",
                [list(column) for column in zip(*pending_rows, strict=True)],
            )
        if work.new_heads:
            await conn.execute(
                "INSERT INTO signed_heads (table_id, seq, hash, key_id) SELECT * FROM "
                "unnest(%b::text[], %b::bigint[], %b::bytea[], %b::bigint[]) "
                "ON CONFLICT DO NOTHING",
                [list(column) for column in zip(*work.new_heads, strict=True)],
            )
        return by_table

    async def _waiting(
        self,
        conn: psycopg.AsyncConnection[Any],
        tables: list[str],
        heads: dict[str, dict[int, str]],
        work: _Work,
    ) -> list[tuple[str, Decoded, str]]:
        """The waiting lines a batch reads of these tables (table, its record and ts, subject;
        decoded when this floor wrote it, `_decoded`, else here): all of a table's, up to
        PENDING_WINDOW; beyond it (a backlog), the PENDING_WINDOW lines just below its lowest
        head (one of this batch's or stored) that the proof can link down from, else its lowest.
        A backlog is read on by the next batches, idle ones too (`backlog`), a window a batch:
        the lines above the ones proven are held, so each window links to the one above it."""
        cur = await conn.execute(
            "SELECT t.id, (SELECT min(seq) FROM pending_lines WHERE table_id = t.id) "
            "FROM unnest(%s::text[]) AS t(id) WHERE EXISTS (SELECT 1 FROM (SELECT 1 FROM "
            "pending_lines WHERE table_id = t.id ORDER BY seq OFFSET %s LIMIT 1) x)",
            (tables, PENDING_WINDOW),
        )
        backlog = {row[0]: int(row[1]) for row in await cur.fetchall()}
        self.backlog = (self.backlog - set(tables)) | set(backlog)
        cur = await conn.execute(
            "SELECT table_id, seq, hash, subject FROM pending_lines WHERE table_id = ANY(%s)",
            ([t for t in tables if t not in backlog],),
        )
        rows: list[tuple[Any, ...]] = list(await cur.fetchall())
        for table, low in backlog.items():
            batch = (h.seq for h, _ in work.heads.get(table, ()))
            anchor = min((seq for seq in (*heads[table], *batch) if seq >= low), default=None)
            if anchor is None:  # no head to link from yet: its lowest, for the duplicates
                cur = await conn.execute(
                    "SELECT table_id, seq, hash, subject FROM pending_lines WHERE table_id = %s "
                    "ORDER BY seq LIMIT %s",
                    (table, PENDING_WINDOW),
                )
            else:
                cur = await conn.execute(
                    "SELECT table_id, seq, hash, subject FROM pending_lines WHERE table_id = %s "
                    "AND seq <= %s ORDER BY seq DESC LIMIT %s",
                    (table, anchor, PENDING_WINDOW),
                )
            rows += await cur.fetchall()
        decoded = self._decoded
        out: list[tuple[str, Decoded, str]] = []
        missed: list[tuple[str, int, bytes]] = []
        for table, seq, digest, subject in rows:
            found = decoded.get((table, int(seq), bytes(digest)))
            if found is None:
                missed.append((table, int(seq), bytes(digest)))
            else:
                out.append((table, found, subject))
        if missed:
            cur = await conn.execute(
                "SELECT table_id, line, subject FROM pending_lines WHERE (table_id, seq, hash) "
                "IN (SELECT * FROM unnest(%b::text[], %b::bigint[], %b::bytea[]))",
                tuple(list(column) for column in zip(*missed, strict=True)),
            )
            for table, line, subject in await cur.fetchall():
                rec = decode_line(bytes(line))
                out.append((table, (rec, parse_ts(rec.ts)), subject))
        return out

    async def _rotate(self, conn: psycopg.AsyncConnection[Any], table: str, rec: Record) -> bool:
        """A proven `table.key_rotated` line: the old key (one of the table's, not revoked)
        signed the new one: the old key covers heads up to this seq, the new one after it."""
        new = verify_rotation(table, rec.payload)
        old = rec.payload.get("old_key")
        keys = {k.public: k for k in self._keys.get(table, ()) if k.status != "revoked"}
        if new is None or old not in keys or new in keys:
            log.warning("floor.rotation_refused", table=table, seq=rec.seq)
            return False
        await conn.execute(
            "UPDATE table_keys SET status = 'retired', until_seq = %s WHERE id = %s",
            (rec.seq, keys[old].id),
        )
        cur = await conn.execute(
            "INSERT INTO table_keys (table_id, public_key, fingerprint, from_seq, status, via, "
            "added_by) VALUES (%s, %s, %s, %s, 'active', 'rotation', %s) "
            "ON CONFLICT DO NOTHING RETURNING id",
            (
                table,
                new,
                fingerprint(new),
                rec.seq + 1,
                f"{table} (signed by {keys[old].fingerprint})",
            ),
        )
        row = await cur.fetchone()
        if row is None:
            return False
        # The batch goes on with the new key (the registry is read again after the commit).
        rows = self._keys.setdefault(table, [])
        rows[rows.index(keys[old])] = dataclasses.replace(
            keys[old], status="retired", until_seq=rec.seq
        )
        rows.append(
            TableKeyRow(int(row[0]), new, parse_public(new), fingerprint(new), rec.seq + 1, None,
                        "active")
        )  # fmt: skip
        log.info("floor.key_rotated", table=table, seq=rec.seq, key=fingerprint(new))
        return True
