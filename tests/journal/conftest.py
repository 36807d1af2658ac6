from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from daemon.config import JournalConfig
from daemon.journal import Journal
from daemon.journal.format import journal_files

# 2027-01-15T09:00:00Z: a fixed wall clock, so file names and timestamps are known.
START_WALL = 1_800_003_600.0


class FakeClock:
    """Wall and monotonic time that only move when a test says so."""

    def __init__(self, wall: float = START_WALL, mono: float = 1000.0) -> None:
        self._wall = wall
        self._mono = mono

    def wall(self) -> float:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._wall += seconds
        self._mono += seconds

    def step_wall(self, seconds: float) -> None:
        """An NTP step or an operator setting the clock: monotonic time does not move."""
        self._wall += seconds


OpenJournal = Callable[..., Journal]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "journal"


@pytest.fixture
def open_journal(journal_dir: Path, clock: FakeClock) -> Iterator[OpenJournal]:
    opened: list[Journal] = []

    def factory(
        durability: str = "none", rotate_bytes: int = 1 << 20, rotate_daily: bool = True
    ) -> Journal:
        config = JournalConfig(
            dir=journal_dir,
            durability=durability,
            rotate_bytes=rotate_bytes,
            rotate_daily=rotate_daily,
        )
        journal = Journal.open(config, "T01", wall=clock.wall, monotonic=clock.monotonic)
        opened.append(journal)
        return journal

    yield factory
    for journal in opened:
        journal.close()


@pytest.fixture
def all_lines() -> Callable[[Path], list[bytes]]:
    """Every line of every journal file of a directory, in chain order."""

    def read(directory: Path) -> list[bytes]:
        out: list[bytes] = []
        for path in journal_files(directory):
            out.extend(path.read_bytes().splitlines(keepends=True))
        return out

    return read
