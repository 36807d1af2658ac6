"""The stream refuses a message longer than the floor's line bound (`max_msg_size`, 256 KiB), so
a publisher cannot fill it with messages the floor would only quarantine: set when the floor
makes the stream, and on a stream made before (a real nats-server, the floor as a process)."""

from __future__ import annotations

import asyncio
import time

import nats
import pytest
from nats.js.errors import APIError

from daemon.journal.format import MAX_LINE_BYTES
from tests.floor.floor_support import FloorEnv


async def _bound(url: str) -> int | None:
    nc = await nats.connect(url)
    try:
        return (await nc.jetstream().stream_info("TABLED")).config.max_msg_size
    except nats.js.errors.NotFoundError:
        return None
    finally:
        await nc.close()


def _until_bound(url: str) -> None:
    deadline = time.monotonic() + 60
    while (found := asyncio.run(_bound(url))) != MAX_LINE_BYTES:
        assert time.monotonic() < deadline, f"max_msg_size {found}"
        time.sleep(0.3)


async def _publish(url: str, size: int, seq: int) -> None:
    nc = await nats.connect(url)
    try:
        await nc.jetstream().publish(
            "tabled.T01.card.dealt", b"x" * size, headers={"Nats-Msg-Id": f"T01:{seq}"}
        )
    finally:
        await nc.close()


async def _remake_unbounded(url: str) -> None:
    """The stream as a floor before the bound made it: no max_msg_size."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.delete_stream("TABLED")
        await js.add_stream(name="TABLED", subjects=["tabled.>"])
    finally:
        await nc.close()


def test_the_stream_refuses_a_message_beyond_the_line_bound(env: FloorEnv) -> None:
    url = env.broker.url
    floor = env.start_floor()  # it makes the stream
    _until_bound(url)
    with pytest.raises(APIError) as refused:
        asyncio.run(_publish(url, MAX_LINE_BYTES + 1, 1))
    assert refused.value.err_code == 10054  # the shipper's REFUSED_FOR_GOOD: journaled, passed
    asyncio.run(_publish(url, MAX_LINE_BYTES - 1024, 2))  # within the bound: stored
    floor.stop()

    asyncio.run(_remake_unbounded(url))
    assert asyncio.run(_bound(url)) == -1
    env.start_floor()  # the floor sets the bound on the stream it finds
    _until_bound(url)
    with pytest.raises(APIError):
        asyncio.run(_publish(url, 900 * 1024, 3))
