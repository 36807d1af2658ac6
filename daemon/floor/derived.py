"""What a journal line means for the floor's derived tables: each table's current state and the
rows a batch adds (rounds, settlements, violations, overrides, device faults), in the batch's
transaction (`daemon.floor.store.Store.ingest`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from daemon.journal.format import Record
from daemon.procedures.games import GAMES


def phase_after(game: str | None, event: str) -> str | None:
    """The phase a table is in after `event`, as its game declares it (`Event.phase_after`;
    None: the event alone does not say). A table whose game is not known yet (no
    `table.started` line seen) gets the phase only where every game declares the same."""
    found = GAMES.get(game) if game is not None else None
    if found is not None:
        declared = found.events.get(event)
        return None if declared is None else declared.phase_after
    phases = {g.events[event].phase_after if event in g.events else None for g in GAMES.values()}
    return phases.pop() if len(phases) == 1 else None


def _round_text(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _num(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass
class _TableState:
    game: str | None
    phase: str | None
    state: str | None
    reason: str | None
    round: str | None
    pending: int

    def apply(self, rec: Record) -> None:
        payload = rec.payload
        event = rec.event
        if rec.round_id is not None:
            self.round = str(rec.round_id)
        if event == "table.started":
            self.game = _text(payload.get("game")) or self.game
            self.state, self.reason, self.pending = "playing", None, 0
        if isinstance(payload.get("phase"), str) and event != "table.stopped":
            self.phase = payload["phase"]
        elif event == "table.checkpoint":
            procedure = payload.get("procedure")
            if isinstance(procedure, Mapping) and isinstance(procedure.get("phase"), str):
                self.phase = procedure["phase"]
                self.game = _text(procedure.get("game")) or self.game
        after = phase_after(self.game, event)
        if after is not None:
            self.phase = after
        if event in ("table.tilted", "table.held"):
            self.state = "tilted" if event == "table.tilted" else "held"
            self.reason = f"{payload.get('device', '?')}: {payload.get('fault', '?')}"
        elif event == "table.recovered":
            self.state, self.reason = "held", "restart: a supervisor clears"
        elif event in ("table.resumed", "round.voided"):
            self.state, self.reason = "playing", None
        elif event == "table.stopped":
            self.state, self.reason = "stopped", None
        elif event == "table.started":
            self.state = "playing"
        if event == "override.proposed":
            self.pending += 1
        elif event in ("override.approved", "override.rejected"):
            self.pending = max(0, self.pending - 1)


class _Derived:
    """The rows one batch derives from its lines, written with one statement per table."""

    def __init__(self) -> None:
        self.violations: list[tuple[Any, ...]] = []
        self.overrides: list[tuple[Any, ...]] = []
        self.faults: list[tuple[Any, ...]] = []
        self.settlements: list[tuple[Any, ...]] = []
        self.devices: list[tuple[Any, ...]] = []
        self.rounds: dict[tuple[str, str], list[Any]] = {}

    def add(
        self,
        rec: Record,
        ts: datetime,
        devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]],
    ) -> None:
        p, table, rnd = rec.payload, rec.table, _round_text(rec.round_id)
        event = rec.event
        if event == "table.violation":
            self.violations.append(
                (table, rec.seq, ts, rnd, rec.actor, _text(p.get("article")),
                 _text(p.get("action")), _text(p.get("phase")), _text(p.get("reason")))
            )  # fmt: skip
        elif event.startswith("override.") and event != "override.expired":
            status = event.removeprefix("override.")
            decided = p.get("approved_by") or p.get("rejected_by")
            self.overrides.append(
                (table, rec.seq, ts, rnd, status, _text(p.get("kind")), _text(p.get("article")),
                 _text(p.get("proposed_by")), _text(decided), _text(p.get("reason")))
            )  # fmt: skip
        elif event == "device.identified":
            device = _text(p.get("device")) or rec.actor.removeprefix("device:")
            ident = (_text(p.get("make")), _text(p.get("model")), _text(p.get("serial")))
            devices[(table, device)] = ident
            self.devices.append((table, device, *ident, _text(p.get("firmware")), rec.seq))
        elif event in ("table.tilted", "table.held"):
            device = _text(p.get("device")) or "?"
            ident = devices.get((table, device), (None, None, None))
            kind = "tilt" if event == "table.tilted" else "hold"
            self.faults.append(
                (table, rec.seq, ts, rnd, device, _text(p.get("fault")), kind, *ident)
            )
        elif event == "round.settled":
            items = p.get("settlement")
            for i, item in enumerate(items if isinstance(items, list) else []):
                if not isinstance(item, Mapping):
                    continue
                seat = item.get("seat")
                self.settlements.append(
                    (table, rec.seq, i, ts, rnd,
                     seat if isinstance(seat, int) and not isinstance(seat, bool) else None,
                     _text(item.get("player")), _num(item.get("amount")),
                     _text(item.get("outcome")), _num(item.get("net")), Jsonb(dict(item)))
                )  # fmt: skip
        if rnd is not None and rnd != "0":
            agg = self.rounds.get((table, rnd))
            closing = {"round.settled": "settled", "round.voided": "voided"}.get(event)
            if agg is None:
                self.rounds[(table, rnd)] = [rec.seq, rec.seq, ts, ts, closing, 1]
            else:
                agg[0], agg[1] = min(agg[0], rec.seq), max(agg[1], rec.seq)
                agg[2], agg[3] = min(agg[2], ts), max(agg[3], ts)
                agg[4] = closing or agg[4]
                agg[5] += 1

    async def write(
        self,
        conn: psycopg.AsyncConnection[Any],
        devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]],
    ) -> None:
        async with conn.cursor() as cur:
            if self.devices:
                await cur.executemany(
                    "INSERT INTO devices (table_id, device, make, model, serial, firmware, seq) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (table_id, device) DO "
                    "UPDATE SET make = excluded.make, model = excluded.model, serial = "
                    "excluded.serial, firmware = excluded.firmware, seq = excluded.seq "
                    "WHERE devices.seq < excluded.seq",
                    self.devices,
                )
            if self.faults:
                await self._fill_identities(cur, devices)
                await cur.executemany(
                    "INSERT INTO device_faults (table_id, seq, ts, round, device, fault, kind, "
                    "make, model, serial) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    self.faults,
                )
            if self.violations:
                await cur.executemany(
                    "INSERT INTO violations (table_id, seq, ts, round, actor, article, action, "
                    "phase, reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    self.violations,
                )
            if self.overrides:
                await cur.executemany(
                    "INSERT INTO overrides (table_id, seq, ts, round, status, kind, article, "
                    "proposed_by, decided_by, reason) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    self.overrides,
                )
            if self.settlements:
                await cur.executemany(
                    "INSERT INTO settlements (table_id, seq, item, ts, round, seat, player, "
                    "amount, outcome, net, detail) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    self.settlements,
                )
            if self.rounds:
                # One statement for the batch's rounds (a batch of a busy floor touches
                # hundreds), the rows passed as arrays.
                rows = [
                    (t, r, a[0], a[1], a[2], a[3] if a[4] else None, a[4] or "open", a[5])
                    for (t, r), a in self.rounds.items()
                ]
                await cur.execute(
                    "INSERT INTO rounds AS r (table_id, round, first_seq, last_seq, started_at, "
                    "ended_at, status, lines) SELECT * FROM unnest(%s::text[], %s::text[], "
                    "%s::bigint[], %s::bigint[], %s::timestamptz[], %s::timestamptz[], "
                    "%s::text[], %s::int[]) ON CONFLICT (table_id, round) DO UPDATE SET "
                    "first_seq = least(r.first_seq, excluded.first_seq), "
                    "last_seq = greatest(r.last_seq, excluded.last_seq), "
                    "started_at = least(r.started_at, excluded.started_at), "
                    "ended_at = coalesce(excluded.ended_at, r.ended_at), "
                    "status = CASE WHEN excluded.status = 'open' THEN r.status "
                    "ELSE excluded.status END, lines = r.lines + excluded.lines",
                    [list(column) for column in zip(*rows, strict=True)],
                )

    async def _fill_identities(
        self,
        cur: psycopg.AsyncCursor[Any],
        devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]],
    ) -> None:
        # A fault of a device identified in an earlier batch (or before a restart): its
        # identity is in the devices table.
        missing = {(f[0], f[4]) for f in self.faults if f[9] is None} - set(devices)
        for table, device in missing:
            await cur.execute(
                "SELECT make, model, serial FROM devices WHERE table_id = %s AND device = %s",
                (table, device),
            )
            row = await cur.fetchone()
            devices[(table, device)] = (row[0], row[1], row[2]) if row else (None, None, None)
        self.faults = [
            f if f[9] is not None else (*f[:7], *devices[(f[0], f[4])]) for f in self.faults
        ]

    def violation_dicts(self) -> list[dict[str, Any]]:
        keys = ("table", "seq", "ts", "round", "actor", "article", "action", "phase", "reason")
        return [_jsonable(dict(zip(keys, v, strict=True))) for v in self.violations]

    def override_dicts(self) -> list[dict[str, Any]]:
        keys = ("table", "seq", "ts", "round", "status", "kind", "article", "proposed_by",
                "decided_by", "reason")  # fmt: skip
        return [_jsonable(dict(zip(keys, v, strict=True))) for v in self.overrides]

    def fault_dicts(self) -> list[dict[str, Any]]:
        keys = ("table", "seq", "ts", "round", "device", "fault", "kind", "make", "model",
                "serial")  # fmt: skip
        return [_jsonable(dict(zip(keys, v, strict=True))) for v in self.faults]


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}
