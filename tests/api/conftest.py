from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

# The test doubles and helpers beside this file are imported by name from every test module here.
sys.path.insert(0, str(Path(__file__).parent))

from api_support import write_tokens
from fake_table import FakeTable, ManualClock

from daemon.api.app import create_app
from daemon.config import ApiConfig


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    return write_tokens(tmp_path / "tokens.toml")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def table(clock: ManualClock) -> FakeTable:
    return FakeTable(clock)


@pytest.fixture
def client(table: FakeTable, tokens_file: Path, clock: ManualClock) -> Iterator[TestClient]:
    app = create_app(table, ApiConfig(tokens_file=tokens_file), clock=clock)
    with TestClient(app) as c:
        yield c
