"""What the floor page's Integrity view draws, from the sums the integrity passes keep
(daemon/floor/integrity.py): no line is read.

- `devices`: every shaker and shuffler the passes have audited, per table and serial, with its
  samples and whether an integrity alert of it is open (flagged), and the tables with hold sums;
- `dice`: one shaker's face counts (its dice pooled) with each face's expected count and 99 %
  band for fair dice (`daemon.analytics.dice.face_band`, as the report draws it);
- `shuffle`: one shuffler's card x position table as count / expected (the report's heat map)
  and its rising sequences beside a random deck's (counts expected of that many decks);
- `hold`: one table's hold z per shift (`daemon.analytics.hold.judge`, the alert's own z) for a
  control chart with its +-3 limits.

numpy and scipy (the analytics extra) are imported on demand: a floor without them answers 503
with what to install, and every other part of the page works.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from daemon.floor.integrity import ALERT_OF, analytics_missing
from daemon.floor.shapes import ApiError

if TYPE_CHECKING:
    from daemon.floor.store import Store

SHIFT_ORDER = {"night": 0, "day": 1, "swing": 2}  # Macau time: 00-08, 08-16, 16-24


def _need_analytics() -> None:
    missing = analytics_missing()
    if missing:
        raise ApiError(503, "analytics_missing", f"the integrity view needs numpy: {missing}")


async def devices(store: Store) -> dict[str, Any]:
    rows = await store.query(
        "SELECT d.table_id AS table, d.kind, d.serial, d.samples, EXISTS (SELECT 1 FROM "
        "chain_alerts a WHERE a.table_id = d.table_id AND a.resolved_at IS NULL AND a.kind = "
        "CASE d.kind WHEN 'dice' THEN %s ELSE %s END AND a.details->>'subject' = d.serial) "
        "AS flagged FROM integrity_devices d ORDER BY d.kind, d.table_id, d.serial",
        (ALERT_OF["dice"], ALERT_OF["shuffle"]),
    )
    # The tables with a shift's hold: one probe of the key's prefix a table of the floor (a
    # DISTINCT over integrity_hold read a year's ~876,000 shift rows: bench_floor_year.py).
    tables = await store.query(
        "SELECT t.table_id AS table, EXISTS (SELECT 1 FROM chain_alerts a WHERE a.table_id = "
        "t.table_id AND a.kind = %s AND a.resolved_at IS NULL) AS flagged FROM floor_tables t "
        "WHERE EXISTS (SELECT 1 FROM integrity_hold h WHERE h.table_id = t.table_id "
        "AND h.grouping = 'shift') ORDER BY t.table_id",
        (ALERT_OF["hold"],),
    )
    dice = [{k: r[k] for k in r if k != "kind"} for r in rows if r["kind"] == "dice"]
    decks = [{k: r[k] for k in r if k != "kind"} for r in rows if r["kind"] == "shuffle"]
    return {"dice": dice, "shuffle": decks, "hold": tables}


async def _stats(store: Store, kind: str, table: str, serial: str) -> dict[str, Any]:
    rows = await store.query(
        "SELECT stats FROM integrity_devices WHERE table_id = %s AND kind = %s AND serial = %s",
        (table, kind, serial),
    )
    if not rows:
        raise ApiError(404, "not_found", f"no {kind} audit of {serial} at table {table}")
    stats: dict[str, Any] = rows[0]["stats"]
    return stats


async def dice(store: Store, table: str, serial: str) -> dict[str, Any]:
    _need_analytics()
    from daemon.analytics.dice import face_band  # noqa: PLC0415 - numpy, on demand

    stats = await _stats(store, "dice", table, serial)
    faces = [sum(position[face] for position in stats["counts"]) for face in range(6)]
    expected, low, high = face_band(sum(faces))
    return {"table": table, "serial": serial, "throws": stats["throws"], "faces": faces,
            "expected": expected, "low": low, "high": high}  # fmt: skip


async def shuffle(store: Store, table: str, serial: str) -> dict[str, Any]:
    _need_analytics()
    import numpy as np  # noqa: PLC0415 - numpy, on demand

    from daemon.analytics.shuffle import (  # noqa: PLC0415
        CARDS,
        ShuffleStats,
        random_rising_distribution,
    )

    stats = await _stats(store, "shuffle", table, serial)
    decks = int(stats["decks"])
    counts = ShuffleStats.from_json(stats).table  # as the passes keep it (int32 or int64)
    ratio = np.asarray(counts, dtype=np.float64).reshape(CARDS, CARDS) / max(decks / CARDS, 1e-9)
    _, p = random_rising_distribution()
    return {
        "table": table,
        "serial": serial,
        "decks": decks,
        "ratio": np.round(ratio, 3).tolist(),
        "rising": list(stats["rising"]),
        "random_rising": np.round(p * decks, 3).tolist(),
    }


def _shift_key(key: str) -> tuple[str, int]:
    day, _, name = key.partition(" ")
    return day, SHIFT_ORDER.get(name, 3)


async def hold(store: Store, table: str) -> dict[str, Any]:
    _need_analytics()
    from daemon.analytics.hold import HoldSums, game_math, judge  # noqa: PLC0415 - numpy

    rows = await store.query(
        "SELECT key, ruleset, rounds, drop::float8 AS drop, win::float8 AS win, "
        "commission::float8 AS commission, squares::float8 AS squares, "
        "cross_sum::float8 AS cross FROM integrity_hold WHERE table_id = %s "
        "AND grouping = 'shift'",
        (table,),
    )
    groups: dict[str, dict[str, HoldSums]] = defaultdict(dict)
    for r in rows:
        groups[r["key"]][r["ruleset"]] = HoldSums(
            int(r["rounds"]), r["drop"], r["win"], r["commission"], r["squares"], r["cross"]
        )
    figures = game_math()
    points = []
    for key in sorted(groups, key=_shift_key):
        found = judge(f"shift {key}", groups[key], "shift", figures)
        points.append({"shift": key, "z": found.statistic, "flagged": found.flagged,
                       "hold": found.extra["hold"], "rounds": found.samples})  # fmt: skip
    return {"table": table, "limit": 3.0, "points": points}
