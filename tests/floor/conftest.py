"""Fixtures: one throwaway PostgreSQL cluster per session (a database per test), a nats-server
per test; both stopped by PID."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.floor.localservers import NatsServer, PostgresCluster
from tests.floor.floor_support import FloorEnv, floor_config, write_tokens

_databases = itertools.count(1)


@pytest.fixture(scope="session")
def pg() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster().init().start()
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def broker() -> Iterator[NatsServer]:
    server = NatsServer().start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def env(pg: PostgresCluster, broker: NatsServer, tmp_path: Path) -> Iterator[FloorEnv]:
    dsn = pg.create_database(f"floor{next(_databases)}")
    tokens = write_tokens(tmp_path / "tokens.toml")
    config = floor_config(tmp_path / "floor.toml", dsn, broker.url, tmp_path / "tokens.toml")
    floor_env = FloorEnv(pg, broker, dsn, tmp_path, tokens, config)
    try:
        yield floor_env
    finally:
        for floor in floor_env.floors:
            floor.stop()
