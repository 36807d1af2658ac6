from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
import uvloop

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


# Run a test's coroutine on a new loop of each kind: asyncio's own (what the library and the
# in-process tests use) and uvloop's (what `tabled run` and `tabled sim` use, daemon/eventloop.py).
LoopRun = Callable[[Coroutine[Any, Any, Any]], Any]
LOOPS: dict[str, LoopRun] = {"asyncio": asyncio.run, "uvloop": uvloop.run}


@pytest.fixture(params=sorted(LOOPS))
def on_loop(request: pytest.FixtureRequest) -> LoopRun:
    return LOOPS[request.param]
