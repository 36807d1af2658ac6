from __future__ import annotations

from daemon.api.metrics import render
from daemon.contract.facade import TableMetrics
from daemon.contract.metrics import LatencyHistogram


def test_the_histogram_is_cumulative_with_its_sum_and_count() -> None:
    h = LatencyHistogram(buckets=(0.001, 0.01, 0.1))
    for seconds in (0.0005, 0.001, 0.002, 0.05, 3.0):
        h.observe(seconds)
    snap = h.snapshot()
    assert snap.buckets == ((0.001, 2), (0.01, 3), (0.1, 4))
    assert snap.count == 5
    assert abs(snap.sum - 3.0535) < 1e-9


def test_exposition_escapes_labels_and_writes_each_family_once() -> None:
    h = LatencyHistogram(buckets=(0.005,))
    h.observe(0.002)
    text = render(
        TableMetrics(
            rounds_total=12,
            violations_by_article={'Portaria 51/89/M Art. 2(b) "bets"': 3},
            journal_fsync_seconds=h.snapshot(),
        ),
        "T\\01",
    )
    assert 'tabled_rounds_total{table="T\\\\01"} 12' in text
    assert 'article="Portaria 51/89/M Art. 2(b) \\"bets\\""} 3' in text
    assert 'tabled_journal_fsync_seconds_bucket{table="T\\\\01",le="0.005"} 1' in text
    assert 'tabled_journal_fsync_seconds_bucket{table="T\\\\01",le="+Inf"} 1' in text
    assert 'tabled_journal_fsync_seconds_sum{table="T\\\\01"} 0.002' in text
    types = [line for line in text.splitlines() if line.startswith("# TYPE")]
    assert len(types) == len(set(types))
    assert text.endswith("\n")
    for line in text.splitlines():
        assert line.startswith("#") or line.rsplit(" ", 1)[1].replace(".", "").isdigit()


def test_the_rounds_counter_says_what_the_table_counts() -> None:
    # The runtime counts `round.settled` events (daemon/table.py); a voided round is not one.
    text = render(TableMetrics(rounds_total=1), "T01")
    help_line = "# HELP tabled_rounds_total Rounds settled at this table since the daemon started."
    assert help_line in text.splitlines()
