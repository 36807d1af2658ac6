"""The accumulator the table keeps for link round-trip time and journal fsync latency.

Its `snapshot()` is the `Histogram` that `TableFacade.metrics()` returns; the API writes it out
for Prometheus (`daemon.api.metrics.render`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from daemon.contract.facade import Histogram

# Seconds: a frame at 115,200 baud takes ~1 ms on the wire; fsync on an SSD 0.1-10 ms.
DEFAULT_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
)


class LatencyHistogram:
    def __init__(self, buckets: Iterable[float] = DEFAULT_BUCKETS) -> None:
        self.bounds = tuple(sorted(buckets))
        self._counts = [0] * len(self.bounds)
        self._sum = 0.0
        self._count = 0

    def observe(self, seconds: float) -> None:
        i = bisect.bisect_left(self.bounds, seconds)
        if i < len(self._counts):
            self._counts[i] += 1
        self._sum += seconds
        self._count += 1

    def snapshot(self) -> Histogram:
        cumulative, running = [], 0
        for bound, n in zip(self.bounds, self._counts, strict=True):
            running += n
            cumulative.append((bound, running))
        return Histogram(buckets=tuple(cumulative), sum=self._sum, count=self._count)
