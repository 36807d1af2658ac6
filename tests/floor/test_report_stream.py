"""The audit report streamed a chunk at a time writes what the whole report wrote: the same
JSON text as `dumps` of its sections and the same CSV as `report_csv`, across chunk boundaries,
with empty sections first, between and last."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from psycopg.conninfo import make_conninfo

from daemon.floor.export import (
    REPORT_SECTIONS,
    Section,
    report_chunks,
    report_csv,
    report_csv_chunks,
    report_json,
    report_json_indented,
    report_sections,
)
from daemon.floor.localservers import PostgresCluster
from daemon.floor.queries import visible_rows
from daemon.floor.redact import visible_row
from daemon.floor.store import Store, dumps

WHEN = datetime(2026, 12, 2, 15, 4, 5, 600, tzinfo=UTC)


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {"table": f"T{i}", "seq": i, "ts": WHEN, "net": Decimal("-1.50"), "note": "名, \"q\"\n",
         "details": {"subject": "DICE-4", "n": [1, 2]}, "none": None}
        for i in range(n)
    ]  # fmt: skip


SECTIONS = {"violations": [], "settlements": _rows(5), "rounds": [], "chain_alerts": _rows(3),
            "floor_actions": [], "devices": _rows(1)}  # fmt: skip


async def _chunks(size: int) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    for name, rows in SECTIONS.items():
        if not rows:
            yield name, []
        for at in range(0, len(rows), size):
            yield name, rows[at : at + size]


async def _joined(stream: AsyncIterator[str]) -> str:
    return "".join([chunk async for chunk in stream])


def test_the_streamed_report_is_the_whole_report() -> None:
    for size in (1, 2, 5, 100):
        streamed = asyncio.run(_joined(report_json(_chunks(size))))
        assert streamed == dumps(SECTIONS), size
        assert json.loads(streamed)["settlements"][0]["net"] == "-1.50"
        assert asyncio.run(_joined(report_csv_chunks(_chunks(size)))) == report_csv(SECTIONS)
        # The CLI's: indented as json.dumps(indent=1) indents the whole report.
        indented = json.dumps(json.loads(dumps(SECTIONS)), indent=1)
        assert asyncio.run(_joined(report_json_indented(_chunks(size)))) == indented, size


def test_no_sections_at_all() -> None:
    async def nothing() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
        return
        yield  # an async generator

    assert asyncio.run(_joined(report_json(nothing()))) == dumps({})
    assert asyncio.run(_joined(report_json_indented(nothing()))) == json.dumps({}, indent=1)
    assert asyncio.run(_joined(report_csv_chunks(nothing()))) == report_csv({})


# Times the server writes as text (export._iso), in zones of a whole, a half and a negative
# offset, at 0 and at some microseconds; numerics (export._exact) that PostgreSQL and Decimal
# write alike and those Decimal writes with an exponent.
ZONES = ("UTC", "Asia/Kolkata", "America/St_Johns")
NUMERICS = ("-1.50", "0", "0.000000", "0.0000000", "0.0000001", "-0.00000012", "0.00000100",
            "0.0000010", "123456789012345678901234.5", "1E+3", "NaN", None)  # fmt: skip
# What `str(Decimal)` writes of them as PostgreSQL holds them (1E+3 is held as 1000).
DECIMALS = ["-1.50", "0", "0.000000", "0E-7", "1E-7", "-1.2E-7", "0.00000100", "0.0000010",
            "123456789012345678901234.5", "1000", "NaN", None]  # fmt: skip


async def _fill(dsn: str) -> None:
    store = Store(dsn)
    await store.migrate()
    conn = await store.writer()
    whens = [WHEN, WHEN.replace(microsecond=0), WHEN.replace(month=7, microsecond=10)]
    for i, value in enumerate(NUMERICS):
        await conn.execute(
            "INSERT INTO settlements VALUES ('T1', %s, 0, %s, 'R1', 1, 'p', %s::numeric, 'win', "
            "%s::numeric, '{}')",
            (i, whens[i % 3], value, value),
        )
    await conn.execute(
        "INSERT INTO rounds VALUES ('T1', 'R1', 1, 9, %s, %s, 'settled', 9), "
        "('T1', 'R2', 10, 19, %s, NULL, 'open', 3)",
        (whens[1], whens[0], whens[2]),
    )
    for seq, round_ in ((1, "R1"), (2, "R2"), (3, None)):  # closed, in play, of no round
        await conn.execute(
            "INSERT INTO violations VALUES ('T1', %s, %s, %s, 'dealer', 'A1', 'deal', 'play', "
            "'Qh has already been dealt')",
            (seq, whens[seq - 1], round_),
        )
        await conn.execute(
            "INSERT INTO overrides VALUES ('T1', %s, %s, %s, 'approved', 'k', 'A1', 'a', 'b', "
            "'3d seen on camera 3')",
            (seq, whens[seq - 1], round_),
        )
        await conn.execute(
            "INSERT INTO device_faults VALUES ('T1', %s, %s, %s, 'shoe', 'Kc stuck', 'tilt', "
            "'m', 'x', 's')",
            (seq, whens[seq - 1], round_),
        )
    await conn.execute(
        "INSERT INTO floor_actions (at, actor, role, action, target, outcome, note) VALUES "
        "(%s, 'ann', 'pit', 'acknowledge', 'T1', 'done', 'confirmed: Qh to seat 3'), "
        "(%s, 'bob', 'pit', 'acknowledge', 'T1', 'refused: no', NULL)",
        (whens[0], whens[1]),
    )
    await conn.execute(
        "INSERT INTO chain_alerts (table_id, seq, kind, expected_hash, actual_hash, details, "
        "detected_at) VALUES ('T1', 5, 'gap', 'ab', 'cd', '{\"prev\": \"ef\", \"n\": 1.50}', %s)",
        (whens[2],),
    )
    await conn.commit()
    await store.close()


async def _report(dsn: str, fmt: str, sections: tuple[Section, ...]) -> str:
    chunks = report_chunks(dsn, WHEN - timedelta(days=365), WHEN + timedelta(days=1), sections)
    writer = {"json": report_json, "csv": report_csv_chunks, "indented": report_json_indented}
    return await _joined(writer[fmt](chunks))


def test_the_text_the_server_writes_is_what_python_wrote(pg: PostgresCluster) -> None:
    """The report as read with the server writing its times and numerics (the export's own
    queries) is byte for byte the report as read in Python types and written by `_plain`,
    `_cell` and the writers (the same queries, those columns as they are), redaction and all."""
    dsn = pg.create_database("report_text")
    asyncio.run(_fill(dsn))
    as_is = lambda column, name: f"{column} AS {name}"  # noqa: E731
    native = report_sections(as_is, as_is)
    for zone in ZONES:
        zoned = make_conninfo(dsn, options=f"-c TimeZone={zone}")
        for fmt in ("json", "csv", "indented"):
            served = asyncio.run(_report(zoned, fmt, REPORT_SECTIONS))
            assert served == asyncio.run(_report(zoned, fmt, native)), (zone, fmt)
        written = json.loads(asyncio.run(_report(zoned, "json", REPORT_SECTIONS)))
        by_seq = sorted(written["settlements"], key=lambda row: row["seq"])
        assert [row["net"] for row in by_seq] == DECIMALS
        assert written["violations"][1]["reason"] != "Qh has already been dealt"  # in play
        assert written["violations"][0]["reason"] == "Qh has already been dealt"  # closed
        assert written["chain_alerts"][0]["expected_hash"] is None
    assert "0E-7" in served and "1E-7" in served and "+05:30" not in served


def test_a_list_judges_each_distinct_text_once_as_each_row_alone() -> None:
    """The other export, a list at its 5,000: its rows judged once per distinct (round closed,
    game, texts) are shown as `visible_row` shows each alone."""
    rows = [
        {"table": f"T{i}", "seq": i, "reason": reason, "fault": fault, "round_closed": closed,
         "table_game": game}
        for i, (reason, fault, closed, game) in enumerate(itertools.product(
            ("Qh has already been dealt", "no card", None), ("Kc stuck", None),
            (True, False, None), ("baccarat", "pai_gow", None)))
    ]  # fmt: skip
    rows += [dict(row) for row in rows]  # each text twice, in rows of their own
    reasons = set()
    for role in ("pit", "audit", None):
        alone = [visible_row(copy.deepcopy(row), role) for row in rows]
        assert visible_rows(copy.deepcopy(rows), role) == alone, role
        reasons |= {row["reason"] for row in alone}
    assert "Qh has already been dealt" in reasons  # whole to audit, closed
    assert reasons - {"Qh has already been dealt", "no card", None}  # blotted
