"""The floor's read queries: the SQL behind the API, the page and the audit report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from daemon.api.tokens import Principal
from daemon.floor.integrity import INTEGRITY_KINDS
from daemon.floor.redact import (
    ROUND_CLOSED,
    TABLE_GAME,
    TEXTS,
    sees_raw_lines,
    visible_alert,
    visible_payload,
    visible_row,
)
from daemon.floor.sentences import phase_said
from daemon.floor.store import Store

# Every query that returns alerts returns these (the ChainAlert shape). A constant: the f-strings
# that splice it into SQL carry `noqa: S608`.
ALERT_COLUMNS = (
    "id, table_id AS table, seq, kind, expected_hash, actual_hash, gap_to, details, "
    "detected_at, resolved_at, acknowledged_at, acknowledged_by, acknowledged_role, ack_note, "
    # Whether the line the floor holds at the alert's seq is of a closed round (or none): its
    # digests are then served to those who see closed rounds (redact.visible_alert).
    "coalesce((SELECT l.round IS NULL OR l.round = '0' OR coalesce(r.status IN ('settled', "
    "'voided'), false) FROM journal_lines l LEFT JOIN rounds r ON r.table_id = l.table_id "
    "AND r.round = l.round WHERE l.table_id = chain_alerts.table_id "
    "AND l.seq = chain_alerts.seq LIMIT 1), false) AS line_closed"
)


def judged(relation: str) -> str:
    """The columns `redact.visible_row` judges a row of `relation` by: whether its round is
    closed (settled or voided; a row of no round counts as closed, as a journal line does) and
    its table's game."""
    return (
        f"coalesce((SELECT r.status IN ('settled', 'voided') FROM rounds r "  # noqa: S608
        f"WHERE r.table_id = "
        f"{relation}.table_id AND r.round = {relation}.round), {relation}.round IS NULL OR "
        f"{relation}.round = '0') AS round_closed, (SELECT f.game FROM floor_tables f WHERE "
        f"f.table_id = {relation}.table_id) AS table_game"
    )


async def table_summaries(
    store: Store, pits: dict[str, str], role: str | None = None
) -> list[dict[str, Any]]:
    """Every table the floor holds lines of; its chain's oldest open alert as `role` may see
    it (`redact.visible_alert`), the pit the registry gives it (else the config's)."""
    rows = await store.query(
        "SELECT t.table_id AS table, t.game, t.phase, t.state, t.reason, t.round, "  # noqa: S608
        f"t.last_seq, {judged('t')}, "
        "t.contiguous_seq, t.pending_overrides, t.last_event, t.last_ts, t.received_at, "
        "extract(epoch FROM t.received_at - t.last_ts)::float8 AS lag_seconds, "
        f"(SELECT row_to_json(a) FROM (SELECT {ALERT_COLUMNS} FROM chain_alerts "
        "WHERE table_id = t.table_id AND resolved_at IS NULL "
        f"AND kind <> ALL('{{{','.join(INTEGRITY_KINDS)}}}'::text[]) "  # the chain's own only
        "ORDER BY id LIMIT 1) a) AS alert, "
        "(SELECT e.pit FROM enrolled_tables e WHERE e.table_id = t.table_id) AS enrolled_pit "
        "FROM floor_tables t ORDER BY t.table_id"
    )
    for row in rows:
        visible_row(row, role)  # a held table's reason may name a card
        alert = row.pop("alert")
        row["chain"] = "ok" if alert is None else visible_alert(alert, role)
        enrolled_pit = row.pop("enrolled_pit", None)
        row["pit"] = enrolled_pit or pits.get(row["table"])
        row["phase_said"] = phase_said(row["game"], row["phase"])
    return rows


# Rows a fetch of an export's server-side cursor: what it holds in memory at once, however long
# its period.
async def table_games(store: Store) -> dict[str, str | None]:
    """Each table's game, as the floor knows it (for the sentences its lines are said in)."""
    rows = await store.query("SELECT table_id, game FROM floor_tables")
    return {row["table_id"]: row["game"] for row in rows}


async def rounds(store: Store, table: str, limit: int) -> list[dict[str, Any]]:
    return await store.query(
        "SELECT table_id AS table, round, first_seq, last_seq, started_at, ended_at, status, "
        "lines FROM rounds WHERE table_id = %s ORDER BY first_seq DESC LIMIT %s",
        (table, limit),
    )


async def events(
    store: Store, *, role: str, table: str, round_: str | None, before: int | None, limit: int
) -> list[dict[str, Any]]:
    """A table's journal lines, newest first, each payload as `role` may see it."""
    rows = await store.query(
        "SELECT l.seq, l.ts, l.event, l.round, l.actor, l.line, "
        "coalesce(r.status IN ('settled', 'voided'), l.round IS NULL OR l.round = '0') "
        "AS closed, t.game AS game FROM journal_lines l LEFT JOIN rounds r "
        "ON r.table_id = l.table_id AND r.round = l.round "
        "LEFT JOIN floor_tables t ON t.table_id = l.table_id WHERE l.table_id = %s "
        "AND (%s::text IS NULL OR l.round = %s) AND (%s::bigint IS NULL OR l.seq < %s) "
        "ORDER BY l.seq DESC LIMIT %s",
        (table, round_, round_, before, before, limit),
    )
    out = []
    for row in rows:
        line = bytes(row.pop("line"))
        payload = json.loads(line)["payload"]
        # The table's own game's rule (what its `table.started` said), every game's when it is
        # not known yet: another game's names for its hands do not hide this one's settings.
        game = row.pop("game")
        shown, hidden = visible_payload(
            role,
            row["event"],
            payload,
            bool(row["closed"]),
            game if isinstance(game, str) else None,
        )
        out.append(
            {
                **{k: v for k, v in row.items() if k != "closed"},
                "payload": shown,
                "redacted": hidden,
                "line": line.decode("utf-8", "replace")
                if sees_raw_lines(role, bool(row["closed"]))
                else None,
            }
        )
    return out


async def table_alerts(store: Store, table: str, limit: int = 100) -> list[dict[str, Any]]:
    return await store.query(
        f"SELECT {ALERT_COLUMNS} FROM chain_alerts "  # noqa: S608 - a constant column list
        "WHERE table_id = %s ORDER BY id DESC LIMIT %s",
        (table, limit),
    )


async def alerts(
    store: Store, table: str | None, kind: str | None, open_only: bool, limit: int
) -> list[dict[str, Any]]:
    return await store.query(
        f"SELECT {ALERT_COLUMNS} FROM chain_alerts WHERE "  # noqa: S608 - constant columns
        "(%s::text IS NULL OR table_id = %s) AND (%s::text IS NULL OR kind = %s) "
        "AND (NOT %s OR resolved_at IS NULL) ORDER BY id DESC LIMIT %s",
        (table, table, kind, kind, open_only, limit),
    )


ACK_COLUMNS = "acknowledged_at, acknowledged_by, acknowledged_role, ack_note"
VIOLATION_COLUMNS = (
    f"table_id AS table, seq, ts, round, actor, article, action, phase, reason, {ACK_COLUMNS}"
)
FAULT_COLUMNS = (
    f"table_id AS table, seq, ts, round, device, fault, kind, make, model, serial, {ACK_COLUMNS}"
)
# What a person acknowledges on the floor: (its table, its columns, the key that finds one).
ACKNOWLEDGED = {
    "alert": ("chain_alerts", ALERT_COLUMNS, "id = %s"),
    "violation": (
        "violations",
        f"{VIOLATION_COLUMNS}, {judged('violations')}",
        "table_id = %s AND seq = %s",
    ),
    "fault": (
        "device_faults",
        f"{FAULT_COLUMNS}, {judged('device_faults')}",
        "table_id = %s AND seq = %s",
    ),
}


async def acknowledge_row(
    store: Store, what: str, key: tuple[Any, ...], *, actor: str, role: str, note: str
) -> tuple[str, dict[str, Any] | None]:
    """Mark a chain alert, a violation or a device fault (`what`) acknowledged, once:
    ("done" | "missing" | "already", the row; a violation's or fault's with the columns
    `redact.visible_row` judges it by, for the caller to serve it by).

    An acknowledgement says a person has seen it and taken it in hand, with a note; it changes
    nothing else (a fork stays a fork, a violation stays journaled as the table wrote it)."""
    relation, columns, where = ACKNOWLEDGED[what]
    # The reader connection autocommits: these are the API's writes.
    rows = await store.query(
        f"UPDATE {relation} SET acknowledged_at = now(), acknowledged_by = %s, "  # noqa: S608 - constants
        f"acknowledged_role = %s, ack_note = %s WHERE {where} AND acknowledged_at IS NULL "
        f"RETURNING {columns}",
        (actor, role, note, *key),
    )
    if rows:
        return "done", rows[0]
    found = await store.query(
        f"SELECT {columns} FROM {relation} WHERE {where}",  # noqa: S608 - constants
        key,
    )
    return ("already", found[0]) if found else ("missing", None)


async def acknowledge(
    store: Store, alert_id: int, actor: str, role: str, note: str
) -> tuple[str, dict[str, Any] | None]:
    """A chain alert acknowledged (`acknowledge_row`); only a resend that fills a gap resolves
    one."""
    return await acknowledge_row(store, "alert", (alert_id,), actor=actor, role=role, note=note)


async def record_action(
    store: Store, who: Principal, *, action: str, target: str, outcome: str, note: str | None
) -> None:
    """A person's act on the floor, done or refused, kept in `floor_actions`."""
    await store.query(
        "INSERT INTO floor_actions (actor, role, action, target, outcome, note) "
        "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
        (who.actor, who.role, action, target, outcome, note),
    )


def visible_rows(rows: list[dict[str, Any]], role: str | None) -> list[dict[str, Any]]:
    """`redact.visible_row` of each row, judged once per distinct (round closed, game, free
    texts): a list of 5,000 violations holds a few hundred distinct reasons, and judging one
    is most of a row's cost. What a row is shown depends on those alone."""
    judged_texts: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = (bool(row.get(ROUND_CLOSED)), row.get(TABLE_GAME), *(row.get(k) for k in TEXTS))
        shown = judged_texts.get(key)
        if shown is None:
            probe = {k: row[k] for k in (ROUND_CLOSED, TABLE_GAME, *TEXTS) if k in row}
            shown = judged_texts[key] = visible_row(probe, role)
        row.pop(ROUND_CLOSED, None)
        row.pop(TABLE_GAME, None)
        row.update(shown)
    return rows


async def violations(
    store: Store,
    span: tuple[datetime, datetime],
    *,
    table: str | None,
    article: str | None,
    dealer: str | None,
    limit: int,
    acknowledged: bool | None = None,
    role: str = "pit",
) -> list[dict[str, Any]]:
    """Violations newest first, as `role` may see their reasons (`redact.visible_row`);
    `acknowledged` True/False keeps only those taken in hand or not yet (None: both)."""
    rows = await store.query(
        f"SELECT {VIOLATION_COLUMNS}, {judged('violations')} "  # noqa: S608 - constant columns
        "FROM violations WHERE ts >= %s AND ts < %s AND (%s::text IS NULL OR table_id = %s) "
        "AND (%s::text IS NULL OR article LIKE %s) AND (%s::text IS NULL OR actor = %s) "
        "AND (%s::boolean IS NULL OR (acknowledged_at IS NOT NULL) = %s) "
        "ORDER BY ts DESC LIMIT %s",
        (*span, table, table, article, like_prefix(article), dealer, dealer, acknowledged,
         acknowledged, limit),
    )  # fmt: skip
    return visible_rows(rows, role)


async def overrides(
    store: Store, span: tuple[datetime, datetime], table: str | None, limit: int, role: str = "pit"
) -> list[dict[str, Any]]:
    """Overrides newest first, as `role` may see their reasons (`redact.visible_row`)."""
    rows = await store.query(
        "SELECT table_id AS table, seq, ts, round, status, kind, article, proposed_by, "  # noqa: S608
        f"decided_by, reason, {judged('overrides')} FROM overrides "
        "WHERE ts >= %s AND ts < %s AND (%s::text IS NULL OR table_id = %s) "
        "ORDER BY ts DESC LIMIT %s",
        (*span, table, table, limit),
    )
    return visible_rows(rows, role)


async def faults(
    store: Store,
    span: tuple[datetime, datetime],
    *,
    table: str | None,
    serial: str | None,
    model: str | None,
    limit: int,
    kind: str | None = None,
    acknowledged: bool | None = None,
    role: str = "pit",
) -> list[dict[str, Any]]:
    """Device faults newest first, as `role` may see their text (`redact.visible_row`); `kind`
    tilt or hold; `acknowledged` as for violations."""
    rows = await store.query(
        f"SELECT {FAULT_COLUMNS}, {judged('device_faults')} "  # noqa: S608 - constant columns
        "FROM device_faults WHERE ts >= %s AND ts < %s "
        "AND (%s::text IS NULL OR table_id = %s) AND (%s::text IS NULL OR serial = %s) "
        "AND (%s::text IS NULL OR model = %s) AND (%s::text IS NULL OR kind = %s) "
        "AND (%s::boolean IS NULL OR (acknowledged_at IS NOT NULL) = %s) "
        "ORDER BY ts DESC LIMIT %s",
        (*span, table, table, serial, serial, model, model, kind, kind, acknowledged,
         acknowledged, limit),
    )  # fmt: skip
    return visible_rows(rows, role)


# Beyond this many hours the charts' bars are days (UTC), not hours.
DAY_BARS_AFTER_HOURS = 48
NO_PIT = "no pit"  # the rounds chart's series of the tables no pit names


def _bar_floor(when: datetime, bar: str) -> datetime:
    start = when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return start.replace(hour=0) if bar == "day" else start


async def chart_range(store: Store, hours: int) -> tuple[datetime, datetime, str]:
    """The charts' range and bar: every bar (an hour; a day, UTC, beyond
    `DAY_BARS_AFTER_HOURS`) that holds any of the `hours` hours up to the floor's newest line,
    the newest line's own bar last. Whole bars only, so the rounds are read from the counts
    kept per hour and per day (`rounds_hourly`, `rounds_daily`: their rows of the bar in
    progress are kept current by their triggers), never from `rounds`."""
    latest = await store.query("SELECT max(last_ts) AS t FROM floor_tables")
    newest = latest[0]["t"] or datetime.now(UTC)
    bar = "day" if hours > DAY_BARS_AFTER_HOURS else "hour"
    until = _bar_floor(newest, bar) + timedelta(**{f"{bar}s": 1})
    return _bar_floor(newest - timedelta(hours=hours), bar), until, bar


# The rounds' counts a bar: (relation, its time column).
COUNTS = {"hour": ("rounds_hourly", "hour"), "day": ("rounds_daily", "day")}


async def charts(store: Store, hours: int, pits: Mapping[str, str]) -> dict[str, Any]:
    """The page's charts over `chart_range`: violations per article per bar, faults per device
    model, and the rounds started per bar, the floor's total and each pit's (`rounds_per_pit_hour`:
    the pit the registry gives a table, else the config's `pits`; `NO_PIT` for the rest).

    A floor manager reads the floor and its pits, not 800 lines: the rounds are summed in SQL
    from `rounds_hourly` (migration 0041), so the answer is a point a pit a bar, whatever the
    number of tables (beyond 48 hours from `rounds_daily`, migration 0042)."""
    since, until, bar = await chart_range(store, hours)
    span = (since, until)
    counts, at = COUNTS[bar]
    per_pit = await store.query(
        f"SELECT coalesce(e.pit, c.pit, %(none)s) AS pit, h.{at} AS hour, "  # noqa: S608
        f"sum(h.n)::int AS n FROM {counts} h "
        "LEFT JOIN enrolled_tables e ON e.table_id = h.table_id "
        "LEFT JOIN unnest(%(tables)s::text[], %(pits)s::text[]) AS c(table_id, pit) "
        f"ON c.table_id = h.table_id WHERE h.{at} >= %(since)s AND h.{at} < %(until)s "
        "GROUP BY 1, 2 HAVING sum(h.n) > 0 ORDER BY 2, 1",
        {
            "none": NO_PIT,
            "since": since,
            "until": until,
            "tables": list(pits),
            "pits": list(pits.values()),
        },
    )
    total: dict[datetime, int] = {}
    for row in per_pit:
        total[row["hour"]] = total.get(row["hour"], 0) + row["n"]
    return {
        "since": since,
        "until": until,
        "bar": bar,
        # Beyond 48 hours from the day counts (migration 0043): a month is 100 k violations.
        "violations_per_article_hour": await store.query(
            "SELECT article, day AS hour, n FROM violations_daily WHERE day >= %s AND day < %s "
            "AND n > 0 ORDER BY 2, 1"
            if bar == "day"
            else "SELECT coalesce(article, '?') AS article, date_trunc('hour', ts, 'UTC') AS hour, "
            "count(*)::int AS n FROM violations WHERE ts >= %s AND ts < %s "
            "GROUP BY 1, 2 ORDER BY 2, 1",
            span,
        ),
        "faults_per_model": await store.query(
            "SELECT coalesce(model, device, '?') AS model, kind, count(*)::int AS n "
            "FROM device_faults WHERE ts >= %s AND ts < %s GROUP BY 1, 2 ORDER BY 1, 2",
            span,
        ),
        "rounds_per_hour": [{"hour": hour, "n": n} for hour, n in total.items()],
        "rounds_per_pit_hour": per_pit,
    }


async def table_chart(store: Store, table: str, hours: int) -> dict[str, Any]:
    """One table's rounds started per bar over `chart_range` (its drill-down's chart)."""
    since, until, bar = await chart_range(store, hours)
    counts, at = COUNTS[bar]
    return {
        "since": since,
        "until": until,
        "bar": bar,
        "rounds_per_hour": await store.query(
            f"SELECT {at} AS hour, n FROM {counts} WHERE table_id = %s "  # noqa: S608
            f"AND {at} >= %s AND {at} < %s AND n > 0 ORDER BY 1",
            (table, since, until),
        ),
    }


def like_prefix(value: str | None) -> str | None:
    """A LIKE pattern matching what starts with `value` (its own % and _ taken literally)."""
    if value is None:
        return None
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
