"""The audit report streamed a chunk at a time writes what the whole report wrote: the same
JSON text as `dumps` of its sections and the same CSV as `report_csv`, across chunk boundaries,
with empty sections first, between and last."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from daemon.floor.export import (
    report_csv,
    report_csv_chunks,
    report_json,
    report_json_indented,
)
from daemon.floor.store import dumps

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
