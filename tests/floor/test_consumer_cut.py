"""While the stream holds more, the history commits a batch up to its last signed head and carries
the lines after it to the next batch (daemon/floor/consumer.py, `Consumer._handle`): a
shipper's catch-up window is then proven in the batch that stores it instead of waiting in
`pending_lines`. Nothing is lost or reordered: every message is committed once, in order."""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.floor.config import FloorSection
from daemon.floor.consumer import Consumer, _Raw
from daemon.floor.store import BatchResult, Incoming


class _Store:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def ingest(self, batch: list[Incoming], stream: str, parsed: Any) -> BatchResult:
        assert len(parsed) == len(batch)
        self.batches.append([m.subject for m in batch])
        return BatchResult()


def _msgs(start: int, subjects: list[str]) -> list[_Raw]:
    return [
        _Raw(s.encode(), f"$JS.ACK.TABLED.floor.1.{start + i}.{start + i}.0.0".encode(), b"x")
        for i, s in enumerate(subjects)
    ]


def _handle(consumer: Consumer, msgs: list[_Raw], *, more: bool) -> None:
    batch = [Incoming(m.subject.decode(), m.data) for m in msgs]
    ok = asyncio.run(consumer._handle(msgs, batch, [None] * len(msgs), asyncio.Event(), more=more))
    assert ok


def test_a_batch_is_cut_after_its_last_head_while_more_waits_and_nothing_is_lost() -> None:
    store = _Store()
    consumer = Consumer(FloorSection(), store)  # type: ignore[arg-type]
    first = ["tabled.T1.card.dealt", "tabled.T1.head", "tabled.T1.card.dealt", "tabled.T2.x.y"]
    _handle(consumer, _msgs(1, first), more=True)
    assert store.batches == [first[:2]]  # the two after the head wait for the next batch
    second = ["tabled.T1.round.settled", "tabled.T1.head", "tabled.T2.x.z"]
    _handle(consumer, _msgs(5, second), more=False)  # nothing more: all of it, carried first
    assert store.batches[1] == first[2:] + second
    no_head = ["tabled.T3.a.b", "tabled.T3.a.c"]
    _handle(consumer, _msgs(8, no_head), more=True)  # no head to cut at: committed whole
    assert store.batches[2] == no_head
    assert [s for b in store.batches for s in b] == first + second + no_head
