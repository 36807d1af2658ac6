"""The lines in flight and when they were sent: the pump's acknowledgement timeout reads the
oldest line in flight's send time, kept a batch at a time."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from daemon.shipper.tail import Line
from daemon.shipper.window import Window


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
