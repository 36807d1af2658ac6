"""A line waiting for its head is decoded once: the store keeps the record it decoded when it
wrote the line to `pending_lines` and takes it from there when a later batch proves the line;
a store that does not hold it (a restart) reads the line from the database. Either way the same
rows are stored (daemon/floor/proving.py, docs/floor-service.md "Lines waiting for a head")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from daemon.api.tokens import Principal
from daemon.floor import proving
from daemon.floor.localservers import PostgresCluster
from daemon.floor.registry import enrol
from daemon.floor.store import Incoming, Store
from daemon.floor.synthetic import SyntheticTable, subject_of, table_key
from daemon.journal.format import line_hash

LINES = 300
STORED = (
    "SELECT table_id, seq, ts, event, round, actor, hash, prev, line FROM journal_lines "
    "ORDER BY seq"
)


async def _run(dsn: str, lines: list[bytes], restart: bool, decodes: list[bytes]) -> list[Any]:
    key = table_key("W01")
    store = Store(dsn)
    await store.migrate()
    await enrol(store, Principal("test", "admin"), "W01", key.public)
    batch = []
    for i, line in enumerate(lines):
        subject, msg_id = subject_of("tabled", line)
        batch.append(Incoming(subject, line, i + 1, msg_id))
    result = await store.ingest(batch)
    assert result.inserted == 0  # no head yet: every line waits
    if restart:
        await store.close()
        store = Store(dsn)
    decodes.clear()
    head = key.head("W01", LINES, line_hash(lines[-1]))
    result = await store.ingest([Incoming("tabled.W01.head", head, LINES + 1)])
    assert result.inserted == LINES and result.tables == {"W01": LINES}
    rows = await store.query(STORED)
    waiting = await store.query("SELECT count(*) AS n FROM pending_lines")
    await store.close()
    assert waiting == [{"n": 0}]
    assert [bytes(r["line"]) for r in rows] == lines
    return rows


def test_a_waiting_line_is_decoded_once_and_stored_the_same_either_way(
    pg: PostgresCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    decodes: list[bytes] = []
    decode = proving.decode_line

    def counted(line: bytes) -> Any:
        decodes.append(line)
        return decode(line)

    monkeypatch.setattr(proving, "decode_line", counted)
    lines = SyntheticTable("W01", seed=3).lines(LINES)  # the same lines both ways
    held = asyncio.run(_run(pg.create_database("waiting_held"), lines, False, decodes))
    assert decodes == []  # proven from the records kept: not decoded again
    read = asyncio.run(_run(pg.create_database("waiting_read"), lines, True, decodes))
    assert len(decodes) == LINES  # a new store reads and decodes them from the database
    assert held == read
