"""The `nats_server` fixture: a real nats-server per test (see support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shipper.support import NATS_SERVER, NatsServer


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    if not Path(NATS_SERVER).exists():
        pytest.fail("nats-server is not installed (.ci/run installs Debian's nats-server)")
    server = NatsServer(tmp_path / "nats")
    server.start()
    try:
        yield server
    finally:
        server.stop()
