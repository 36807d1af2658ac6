from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from simulators.world import TableWorld, forget_world, get_world

_numbers = itertools.count()


class SimTable:
    """A fresh simulated table of its own, so tests never share a deck or a device."""

    def __init__(self) -> None:
        self.key = f"test-{next(_numbers)}"
        self.world: TableWorld = get_world(self.key)

    def url(self, device: str, **options: object) -> str:
        query = "&".join(f"{k}={v}" for k, v in {"world": self.key, **options}.items())
        return f"sim://{device}?{query}"


@pytest.fixture
def table() -> Iterator[SimTable]:
    sim = SimTable()
    yield sim
    forget_world(sim.key)
