"""Prometheus text exposition (format 0.0.4) of the table's metrics, written by hand.

The table keeps its latencies in `daemon.contract.metrics.LatencyHistogram`s; their snapshots
are the `Histogram`s that `TableFacade.metrics()` returns and `render` writes out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from daemon.contract.facade import Histogram, TableMetrics

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_: str) -> None:
        self.lines.append(f"# HELP {name} {help_}")
        self.lines.append(f"# TYPE {name} {kind}")

    def sample(self, name: str, labels: Mapping[str, str], value: float) -> None:
        self.lines.append(f"{name}{_labels(labels)} {_number(value)}")

    def histogram(self, name: str, labels: Mapping[str, str], h: Histogram) -> None:
        for bound, count in h.buckets:
            self.sample(f"{name}_bucket", {**labels, "le": _number(bound)}, count)
        self.sample(f"{name}_bucket", {**labels, "le": "+Inf"}, h.count)
        self.sample(f"{name}_sum", labels, h.sum)
        self.sample(f"{name}_count", labels, h.count)


def render(
    m: TableMetrics, table: str, extra: Mapping[str, Mapping[str, int]] | None = None
) -> str:
    """The exposition text. `extra` adds API counters: {metric name: {label value: count}}."""
    base = {"table": table}
    w = _Writer()
    w.family(
        "tabled_rounds_total", "counter", "Rounds settled at this table since the daemon started."
    )
    w.sample("tabled_rounds_total", base, m.rounds_total)
    w.family("tabled_violations_total", "counter", "Procedure violations by regulation article.")
    for article, n in sorted(m.violations_by_article.items()):
        w.sample("tabled_violations_total", {**base, "article": article}, n)
    w.family("tabled_device_faults_total", "counter", "Device faults by device.")
    for device, n in sorted(m.faults_by_device.items()):
        w.sample("tabled_device_faults_total", {**base, "device": device}, n)
    w.family("tabled_frame_errors_total", "counter", "Bad frames (CRC, length, seq) by device.")
    for device, n in sorted(m.frame_errors_by_device.items()):
        w.sample("tabled_frame_errors_total", {**base, "device": device}, n)
    w.family("tabled_link_up", "gauge", "1 while the device's serial link answers.")
    for device, up in sorted(m.link_up_by_device.items()):
        w.sample("tabled_link_up", {**base, "device": device}, 1 if up else 0)
    w.family(
        "tabled_link_round_trip_seconds",
        "histogram",
        "Request to answer (commands and status polls), by device.",
    )
    for device, h in sorted(m.link_round_trip_seconds.items()):
        w.histogram("tabled_link_round_trip_seconds", {**base, "device": device}, h)
    w.family("tabled_journal_fsync_seconds", "histogram", "Time to make a commit point durable.")
    if m.journal_fsync_seconds is not None:
        w.histogram("tabled_journal_fsync_seconds", base, m.journal_fsync_seconds)
    for name, by_label in (extra or {}).items():
        w.family(name, "counter", "Operator API requests refused, by reason.")
        for reason, n in sorted(by_label.items()):
            w.sample(name, {**base, "reason": reason}, n)
    return "\n".join(w.lines) + "\n"
