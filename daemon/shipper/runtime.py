"""The hooks the daemon uses: start the shipper beside the table, and show its state.

`start_feed` is called by `tabled run` once the table's journal is open; the shipper runs in
its own thread and the table never waits for it. `tabled run` stops it after the table (so the
table's last lines ship too), giving it `[feed] drain_seconds` to drain while the broker
answers. `metrics_text` is the feed's part of /metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.journal import Journal
    from daemon.journal.provenance import TableKey
    from daemon.shipper.broker import FeedStatus
    from daemon.shipper.engine import Shipper


def start_feed(
    config: TableConfig, journal: Journal | None, key: TableKey | None = None
) -> Shipper | None:
    """The running shipper of this table, or None without a [feed] section. With the table's
    signing `key` it publishes signed heads of the chain (docs/security.md)."""
    if config.feed is None or journal is None:
        return None
    from daemon.shipper.engine import Shipper  # noqa: PLC0415 - nats only with a [feed]

    shipper = Shipper(config.feed, config.table_id, journal.dir, journal=journal, key=key)
    shipper.start()
    return shipper


async def stop_feed(shipper: Shipper | None) -> None:
    """Let the outbox drain (at most `[feed] drain_seconds`, while the broker answers), stop."""
    if shipper is not None:
        await shipper.stop_async()


def metrics_text(status: FeedStatus, table: str) -> str:
    """Prometheus text exposition (0.0.4) of the feed's state."""
    label = '{table="' + table.replace("\\", "\\\\").replace('"', '\\"') + '"}'
    families = (
        ("tabled_feed_connected", "gauge", "1 while the shipper has a NATS connection.",
         1 if status.connected else 0),
        ("tabled_feed_degraded", "gauge", "1 while the feed is degraded (see feed.degraded).",
         1 if status.state == "degraded" else 0),
        ("tabled_feed_cursor_seq", "gauge", "The last journal seq JetStream acknowledged.",
         status.cursor),
        ("tabled_feed_head_seq", "gauge", "The last durable journal seq.", status.head),
        ("tabled_feed_lag_lines", "gauge", "Durable journal lines not yet acknowledged.",
         status.lag_lines),
        ("tabled_feed_lag_seconds", "gauge", "Age of the oldest line not yet acknowledged.",
         round(status.lag_seconds(), 3)),
        ("tabled_feed_acked_total", "counter", "Lines JetStream acknowledged since start.",
         status.acked_total),
        ("tabled_feed_sent_total", "counter", "Messages sent, resends included.",
         status.sent_total),
        ("tabled_feed_refused_total", "counter", "Lines the broker refused for good.",
         status.refused_total),
        ("tabled_feed_reconnects_total", "counter", "Reconnections after a failure.",
         status.reconnects_total),
        ("tabled_feed_conflicts_total", "counter",
         "Lines whose id the stream held with other bytes (feed.conflict).",
         status.conflicts_total),
    )  # fmt: skip
    lines = []
    for name, kind, help_, value in families:
        lines += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}", f"{name}{label} {value}"]
    return "\n".join(lines) + "\n"


def summary(feed: Mapping[str, Any]) -> str:
    """One line for `tabled status`, from the feed's part of /api/health."""
    text = (
        f"feed {feed.get('state')}: cursor {feed.get('cursor')}, head {feed.get('head')}, lag "
        f"{feed.get('lag_lines')} lines ({feed.get('lag_seconds', 0):.1f} s)"
    )
    if feed.get("conflicts_total"):
        text += (
            f"; {feed['conflicts_total']} CONFLICT(S), last at seq {feed.get('last_conflict')} "
            "(feed.conflict in the journal)"
        )
    return text + (f"; {feed['last_error']}" if feed.get("last_error") else "")
