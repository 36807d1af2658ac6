"""The floor keeps each device's sums and adds each pass's lines to them: the sums of a series
cut anywhere into batches are the sums of the whole series, and give the same verdict; a pass
that goes on across calls reads what one pass over all the lines reads."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from daemon.analytics import cusum, dice, shuffle
from daemon.analytics.source import EVENTS, Pass, read_events
from daemon.journal import scan
from tests.floor.test_integrity_audit import _journal


def _batches(rng: np.random.Generator, n: int) -> list[int]:
    cuts = sorted(set(rng.integers(1, n, 6).tolist()))
    return [0, *cuts, n]


@pytest.mark.parametrize("face", [None, 6])
def test_dice_sums_in_batches_are_the_sums_of_the_whole(face: int | None) -> None:
    rng = np.random.default_rng(11)
    throws = rng.integers(1, 7, (6000, 4)).astype(np.int8)
    if face is not None:  # a loaded die: the monitor alarms, its state crosses the batches
        throws[rng.random((6000, 4)) < 0.1] = face
    whole = dice.DiceStats.of(throws)
    cut = dice.DiceStats.of(throws[:0])
    bounds = _batches(rng, len(throws))
    for a, b in itertools.pairwise(bounds):
        cut.add(throws[a:b])
        cut = dice.DiceStats.from_json(cut.json())  # as the floor stores it between passes
    assert cut == whole
    once, twice = dice.audit("S", throws), dice.audit("S", cut)
    assert (once.flagged, once.verdict, once.statistic) == (
        twice.flagged,
        twice.verdict,
        twice.statistic,
    )
    # The sums' serial correlation is numpy's on the totals.
    totals = throws.sum(axis=1, dtype=np.int64)
    centred = totals - totals.mean()
    r = float(np.dot(centred[1:], centred[:-1]) / np.dot(centred, centred))
    assert dice.fixed_tests(cut)[6].statistic == pytest.approx(r, rel=1e-12)
    assert (len(cusum.monitor(throws)) > 0) == (face is not None) == (cut.alarm_count > 0)


def test_shuffle_sums_in_batches_are_the_sums_of_the_whole() -> None:
    rng = np.random.default_rng(5)
    decks = shuffle.riffle_decks(rng, 300, 6)
    whole = shuffle.ShuffleStats.of(decks)
    cut = shuffle.ShuffleStats()
    for a, b in zip(range(0, 300, 70), range(70, 371, 70), strict=False):
        cut.add(decks[a:b])
    assert cut == whole
    assert shuffle.audit("S", decks).verdict == shuffle.audit("S", cut).verdict


def test_a_pass_that_goes_on_across_calls_reads_what_one_pass_reads(tmp_path: Path) -> None:
    _journal(tmp_path / "j", "T01", loaded=True, seed=4)
    events = list(scan(tmp_path / "j", set(EVENTS)))
    once = read_events(events)
    rng = random.Random(2)
    cuts = sorted(rng.sample(range(1, len(events)), 9))
    saved = None
    dice_sums = dice.DiceStats.of(np.zeros((0, 4), dtype=np.int8))
    decks = shuffle.ShuffleStats()
    for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True):
        reading = Pass(saved)
        data = reading.read(events[a:b])
        saved = reading.json()
        for serial in data.dice:
            dice_sums.add(data.throws(serial))
        for serial in data.deck_outputs:
            decks.add(shuffle.permutations(*data.decks(serial)))
        last = reading
    pending = last.pending()
    for serial in pending.deck_outputs:
        decks.add(shuffle.permutations(*pending.decks(serial)))
    (serial,) = once.dice
    assert dice_sums == dice.DiceStats.of(once.throws(serial))
    (serial,) = once.deck_outputs
    assert decks == shuffle.ShuffleStats.of(shuffle.permutations(*once.decks(serial)))


def test_the_monitor_a_step_at_a_time_is_the_chunked_monitor() -> None:
    """A pass's few throws go through the 30 monitors as one vector, throw by throw; a
    journal's many through each monitor in chunks: the same alarms, the same states."""
    rng = np.random.default_rng(3)
    d = cusum.design()
    limits = (d.pooled_limit, d.position_limit)
    for _ in range(20):
        throws = rng.integers(1, 7, (200, 4)).astype(np.int8)
        throws[rng.random((200, 4)) < 0.3] = 6
        states = rng.integers(0, 500, cusum.MONITORS).tolist()
        twice = np.concatenate([throws, throws])  # more than SMALL_BATCH: chunked
        assert len(twice) > cusum.SMALL_BATCH
        chunked = cusum.monitor_from(twice, limits, states, 7)
        stepped = cusum._monitor_steps(twice, limits, states, 7)
        assert stepped == chunked
