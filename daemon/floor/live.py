"""The floor's live view: every table's newest state and alerts from the newest lines, while the
history catches up behind it.

The history (daemon/floor/consumer.py) reads the stream in order through the durable consumer
and stores a line only after its chain is checked and a signed head proves it. After an outage
(the floor, its database or its broker down), or at a floor's first start, that history has a
backlog to read first: an hour of 800 tables is 4.8 M lines, minutes of work, and the page would
show each table as it was that long ago. So a second consumer of the same stream,
`<durable>-live`, reads only what is new: at its start the last message of each subject (each
table's newest line of each event: the state, the phase, the round, the last tilt and
violation), then every message as it comes. From each line, without its history, it keeps what
the line alone says:

- the table's newest seq, event and time, and its game, phase, state (with the hold or tilt
  reason) and round, applied in seq order over the state the history last stored
  (`derived._TableState`, the history's own rule); the pending overrides are a count over the
  history and stay the history's;
- the violations, tilts, holds and overrides of lines the history does not hold yet
  (`derived._Derived`, the history's own rows), pushed at once marked `provisional`.

Nothing of it is written to the database, and nothing the history does changes: the chain
custody, the proof by signed heads, the stored lines and rows, the alerts of the chain. The
live view is only a view: `/api/tables` and the push feed's `live` messages show a table's live
state where it is newer than its history, `provisional` while the history is more than
`PROVISIONAL_SECONDS` behind it (a line is normally proven and stored within a second or two, the
heads' pace, so a table in step is not marked). A line the live view took that the history later
finds forged, forked or missing is judged by the history as ever: its alert is the history's.

Anyone who may publish on a table's subjects could show the pit false provisional items, so the
live view also checks the table's signed heads while the history is behind (`provisional`):
a head signed with one of the table's enrolled keys, naming the hash of a line the live view
holds, proves that line and every line below it whose `prev` links to it (the history's rule,
on the lines the live view has seen). A tile says whether its newest line is `proven`; a pushed
item says whether its line is; a `proven` message names the seqs a later head proved. The page
hides what stays unproven (daemon/floor/static/floor.js, `[floor] provisional_hide_seconds`).
A head is checked only while the table's history is behind and only the newest of a pull's
(each check ~0.1-0.2 ms), so a floor in step pays nothing for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import structlog

from daemon.floor.consumer import (
    _Raw,
)
from daemon.floor.decoding import decode_line
from daemon.floor.derived import _Derived, _TableState
from daemon.floor.redact import visible_row
from daemon.floor.sentences import phase_said, sentence
from daemon.floor.store import BatchResult, Store, parse_ts
from daemon.journal.provenance import (
    CONFLICT_SUBJECT,
    HEAD_SUBJECT,
    BadHead,
    parse_head,
    parse_public,
    verify_head,
)

log = structlog.get_logger("tabled.floor")

LIVE_BATCH = 1000  # messages a pull
# A table whose history is this far behind its newest line (in the table's own time) is shown
# `provisional`: more than the second or two a line normally waits for its signed head.
PROVISIONAL_SECONDS = 3.0
PUSH_SECONDS = 0.05  # `live` messages on the push feed at most this often
PULL_SECONDS = 1.0  # a pull request stays open this long
CHECK_SECONDS = 10.0  # no message this long: is the live consumer still on the broker?
INACTIVE_SECONDS = 60.0  # the broker drops a live consumer nobody pulled from this long
CHAIN_KEPT = 20_000  # a table's newest unproven lines whose hashes the live view keeps


def live_name(durable: str) -> str:
    """The live consumer's name beside the durable one (`floor` -> `floor-live`)."""
    return f"{durable}-live"


@dataclass
class _Tile:
    """A table as its newest lines say it is."""

    now: _TableState
    seq: int
    ts: datetime
    event: str
    received: float  # wall time the live view took it
    # The lines above the history's taken and not proven yet: seq -> (hash, prev).
    chain: dict[int, tuple[str, str]] = field(default_factory=dict)
    proven: list[tuple[int, int]] = field(default_factory=list)  # seq ranges a head proved

    def is_proven(self, seq: int) -> bool:
        return any(lo <= seq <= hi for lo, hi in self.proven)


@dataclass(frozen=True)
class _Key:
    fingerprint: str
    parsed: Any  # Ed25519PublicKey
    until_seq: int | None


@dataclass
class LiveStats:
    lines: int = 0  # lines applied to a tile
    pushes: int = 0  # `live` messages pushed
    alerts: int = 0  # provisional violations, faults and overrides pushed
    connected: bool = False
    heads: int = 0  # heads checked
    proven: int = 0  # lines proven by them


class LiveView:
    """Each enrolled table's live tile, the history's newest stored seq beside it, and the
    push of both (`publish`: the hub's)."""

    def __init__(
        self,
        pits: Mapping[str, str],
        publish: Callable[[dict[str, Any]], None] | None = None,
        prefix: str = "tabled",
    ) -> None:
        self.pits = pits
        self.publish = publish
        self.prefix = prefix + "."
        self.enrolled: dict[str, str | None] = {}  # table -> the registry's pit
        self.base: dict[str, _TableState] = {}  # a table's state as its history last held it
        self.stored: dict[str, tuple[int, datetime | None]] = {}  # history: seq, its line's ts
        self.tiles: dict[str, _Tile] = {}
        self.devices: dict[tuple[str, str], tuple[str | None, str | None, str | None]] = {}
        self.changed: set[str] = set()
        self.keys: dict[str, list[_Key]] = {}  # table -> its keys not revoked
        self._parsed: dict[str, Any] = {}
        self.stats = LiveStats()
        self._pushed_at = 0.0
        self._push_due: asyncio.TimerHandle | None = None

    # --- what the history holds ------------------------------------------------------------

    async def load(self, store: Store) -> None:
        """The registry (which tables are the floor's) and what the history holds of each."""
        rows = await store.query(
            "SELECT e.table_id AS table, e.pit, t.game, t.phase, t.state, t.reason, t.round, "
            "t.last_seq, t.last_ts FROM enrolled_tables e "
            "LEFT JOIN floor_tables t ON t.table_id = e.table_id"
        )
        self.enrolled = {row["table"]: row["pit"] for row in rows}
        for row in rows:
            table = row["table"]
            if row["last_seq"] is not None:
                self._stored(table, int(row["last_seq"]), row["last_ts"])
                self.base[table] = _TableState(
                    row["game"], row["phase"], row["state"] or "playing", row["reason"],
                    row["round"], 0,
                )  # fmt: skip
        for table in set(self.tiles) - set(self.enrolled):
            del self.tiles[table]  # no longer enrolled: no longer shown
        keys: dict[str, list[_Key]] = {}
        for row in await store.query(
            "SELECT table_id AS table, public_key, fingerprint, until_seq FROM table_keys "
            "WHERE status <> 'revoked' ORDER BY id"
        ):
            parsed = self._parsed.get(row["public_key"])
            if parsed is None:
                parsed = self._parsed[row["public_key"]] = parse_public(row["public_key"])
            keys.setdefault(row["table"], []).append(
                _Key(row["fingerprint"], parsed, row["until_seq"])
            )
        self.keys = keys

    def _stored(self, table: str, seq: int, ts: datetime | None) -> None:
        if seq > self.stored.get(table, (0, None))[0]:
            self.stored[table] = (seq, ts)
            tile = self.tiles.get(table)
            if tile is not None and tile.chain and min(tile.chain) <= seq:
                tile.chain = {s: h for s, h in tile.chain.items() if s > seq}

    def committed(self, result: BatchResult) -> None:
        """The history committed a batch: its newest seq of each table it touched."""
        for table, seq in result.tables.items():
            self._stored(table, seq, result.stamps.get(table))

    # --- what the newest lines say ---------------------------------------------------------

    def take(self, msgs: Sequence[_Raw]) -> None:
        """Apply a pull's messages: each table's lines newer than both its tile and its stored
        history, in order; push the provisional alerts at once and the tiles (at most every
        PUSH_SECONDS)."""
        derived = _Derived()
        games: dict[str, str | None] = {}
        heads: dict[str, bytes] = {}  # each table's newest head in the pull
        now = time.time()
        for msg in msgs:
            subject = msg.subject.decode("utf-8", "replace")
            table, _, kind = subject.removeprefix(self.prefix).partition(".")
            if table not in self.enrolled:
                continue
            if kind == HEAD_SUBJECT:
                heads[table] = msg.data
                continue
            if kind == CONFLICT_SUBJECT:
                continue
            owner, _, number = msg.msg_id.rpartition(":")
            if owner != table or not number.isdigit():
                continue  # not as its shipper sends a line: the history judges it
            seq = int(number)
            tile = self.tiles.get(table)
            if (tile is not None and seq <= tile.seq) or seq <= self.stored.get(table, (0,))[0]:
                continue
            try:
                rec = decode_line(msg.data)
                ts = parse_ts(rec.ts)
            except ValueError:
                continue  # the history quarantines it and says why
            if rec.table != table or rec.seq != seq or rec.event != kind:
                continue
            if tile is None:
                base = self.base.get(table) or _TableState(None, None, "playing", None, None, 0)
                tile = self.tiles[table] = _Tile(replace(base), seq, ts, kind, now)
            tile.now.apply(rec)
            tile.seq, tile.ts, tile.event, tile.received = seq, ts, kind, now
            tile.chain[seq] = (rec.hash, rec.prev)
            if len(tile.chain) > CHAIN_KEPT:
                del tile.chain[min(tile.chain)]
            derived.add(rec, ts, self.devices)
            games[table] = tile.now.game
            self.changed.add(table)
            self.stats.lines += 1
        proved = {table: got for table, body in heads.items() if (got := self._prove(table, body))}
        self._push_alerts(derived, games)
        if self.publish is not None:
            for table, (lo, hi) in sorted(proved.items()):
                self.publish({"type": "proven", "table": table, "from_seq": lo, "to_seq": hi})
        self.push()

    def _prove(self, table: str, body: bytes) -> tuple[int, int] | None:
        """The seqs (lowest, highest) a table's head proves of the lines the live view holds,
        if it is signed by one of the table's keys and its history is behind; else None."""
        tile = self.tiles.get(table)
        if tile is None or not tile.chain:
            return None
        stored_seq, stored_ts = self.stored.get(table, (0, None))
        if not self.provisional(table, stored_seq, stored_ts):
            return None  # the history is in step: it proves and stores the lines itself
        try:
            head = parse_head(body)
        except BadHead:
            return None  # the history quarantines it and says why
        held = tile.chain.get(head.seq)
        if head.table != table or held is None or held[0] != head.hash:
            return None
        key = next(
            (
                k
                for k in self.keys.get(table, ())
                if k.fingerprint == head.key and (k.until_seq is None or head.seq <= k.until_seq)
            ),
            None,
        )
        self.stats.heads += 1
        if key is None or not verify_head(head, key.parsed):
            return None
        lo = head.seq
        while (below := tile.chain.get(lo - 1)) is not None and tile.chain[lo][1] == below[0]:
            lo -= 1
        for seq in range(lo, head.seq + 1):
            del tile.chain[seq]
        tile.proven = [*tile.proven[-7:], (lo, head.seq)]
        self.stats.proven += head.seq - lo + 1
        self.changed.add(table)
        return lo, head.seq

    def _push_alerts(self, derived: _Derived, games: Mapping[str, str | None]) -> None:
        if self.publish is None:
            return
        for kind, rows in (
            ("violation", derived.violation_dicts()),
            ("override", derived.override_dicts()),
            ("fault", derived.fault_dicts()),
        ):
            for row in rows:
                game = games.get(row["table"])
                # Pushed to every role alike, blotted as for a round in play (as the history's).
                shown = visible_row({**row, "table_game": game}, None)
                if kind != "override":
                    event = {"violation": "table.violation", "fault": None}[kind] or (
                        "table.tilted" if row["kind"] == "tilt" else "table.held"
                    )
                    shown["said"] = sentence(game, event, shown)
                tile = self.tiles.get(row["table"])
                proven = tile is not None and tile.is_proven(int(row["seq"]))
                self.publish({"type": kind, kind: shown, "provisional": True, "proven": proven})
                self.stats.alerts += 1

    def push(self) -> None:
        """The changed tiles on the push feed now, or once PUSH_SECONDS have passed since the
        last push."""
        if self.publish is None or not self.changed or self._push_due is not None:
            return
        wait = self._pushed_at + PUSH_SECONDS - time.monotonic()
        if wait > 0:
            self._push_due = asyncio.get_running_loop().call_later(wait, self._push_now)
        else:
            self._push_now()

    def _push_now(self) -> None:
        self._push_due = None
        self._pushed_at = time.monotonic()
        tables = {t: self.tile(t) for t in sorted(self.changed) if t in self.tiles}
        self.changed.clear()
        if tables and self.publish is not None:
            self.publish({"type": "live", "tables": tables, "at": time.time()})
            self.stats.pushes += 1

    # --- what is shown ---------------------------------------------------------------------

    def provisional(self, table: str, stored_seq: int, stored_ts: datetime | None) -> bool:
        """True when the table's history is more than PROVISIONAL_SECONDS behind its tile."""
        tile = self.tiles.get(table)
        if tile is None or tile.seq <= stored_seq:
            return False
        return stored_ts is None or (tile.ts - stored_ts).total_seconds() > PROVISIONAL_SECONDS

    def tile(self, table: str, role: str | None = None) -> dict[str, Any]:
        """A table's live fields as `/api/tables` names them (`last_seq`: the history's)."""
        tile = self.tiles[table]
        stored_seq, stored_ts = self.stored.get(table, (0, None))
        now = tile.now
        row: dict[str, Any] = {
            "table": table,
            "pit": self.enrolled.get(table) or self.pits.get(table),
            "game": now.game,
            "phase": now.phase,
            "phase_said": phase_said(now.game, now.phase),
            "state": now.state or "playing",
            "reason": now.reason,
            "round": now.round,
            "live_seq": tile.seq,
            "last_seq": stored_seq,
            "last_event": tile.event,
            "last_ts": tile.ts,
            "lag_seconds": tile.received - tile.ts.timestamp(),
            "provisional": self.provisional(table, stored_seq, stored_ts),
            "proven": tile.is_proven(tile.seq),
            "table_game": now.game,
        }
        return visible_row(row, role)  # a held table's reason may name a card

    def overlay(self, rows: list[dict[str, Any]], role: str | None) -> list[dict[str, Any]]:
        """`/api/tables`' rows (the history's) with each table's live state where its newest
        line is newer than its history; a table with no line stored yet gets a row too."""
        have = set()
        for row in rows:
            table = row["table"]
            have.add(table)
            tile = self.tiles.get(table)
            if tile is None or tile.seq <= int(row["last_seq"]):
                continue
            live = self.tile(table, role)
            live["provisional"] = self.provisional(table, int(row["last_seq"]), row["last_ts"])
            live["pit"] = row["pit"]
            for key in ("last_seq", "table"):
                live.pop(key)
            row.update(live)
        for table in sorted(set(self.tiles) - have):
            live = self.tile(table, role)
            live.update(contiguous_seq=0, pending_overrides=0, received_at=None, chain="ok")
            rows.append(live)
        rows.sort(key=lambda r: r["table"])
        return rows
