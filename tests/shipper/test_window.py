"""The lines in flight and when they were sent: the pump's acknowledgement timeout reads the
oldest line in flight's send time, kept a batch at a time."""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path

from daemon.shipper.tail import Line
from daemon.shipper.window import LINGER_SECONDS, Linger, Window, _ticks


def test_the_oldest_line_in_flight_is_timed_from_its_batch(tmp_path: Path) -> None:
    window = Window(tmp_path, None)
    window.resend = deque(Line(seq, "shoe.card_read", b"{}\n") for seq in range(1, 7))
    assert [line.seq for line in window.take(3, 10.0)] == [1, 2, 3]
    assert [line.seq for line in window.take(3, 20.0)] == [4, 5, 6]
    assert window.oldest_sent(30.0) == 10.0
    window.done.update({1, 2})
    assert window.collect() == 2
    assert window.oldest_sent(30.0) == 10.0  # line 3, of the first batch, is still in flight
    window.acked = 2
    window.done.update({3, 5})
    assert window.collect() == 3
    assert window.oldest_sent(30.0) == 20.0  # 4 waits, out of the second batch
    window.acked = 3
    window.done.update({4, 6})
    assert window.collect() == 6
    assert window.oldest_sent(30.0) == 30.0  # nothing in flight
    assert not window.inflight


def test_the_ticks_wake_the_pump_while_commits_come_and_end_with_them() -> None:
    class FakeJournal:
        durable_seq = 5

    journal = FakeJournal()
    linger = Linger()
    wakes: list[int] = []

    async def run() -> int:
        wake = asyncio.Event()

        async def pump() -> None:
            while True:
                await wake.wait()
                wake.clear()
                wakes.append(journal.durable_seq)

        task = asyncio.ensure_future(pump())
        loop = asyncio.get_running_loop()
        for n, seq in enumerate((7, 9)):
            loop.call_later(LINGER_SECONDS * (n + 0.5), setattr, journal, "durable_seq", seq)
        seen = await _ticks(journal, 3, wake, linger)  # type: ignore[arg-type]
        await asyncio.sleep(0)
        task.cancel()
        return seen

    assert asyncio.run(run()) == 9
    assert wakes == [5, 7, 9]  # one wake-up a tick while the durable seq moved
    assert linger.flowing and linger.ticked  # `watch_journal` turns the flow off after
