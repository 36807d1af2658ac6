"""The floor's test harness: real PostgreSQL, real nats-server, `tabled floor` as a process.

Waiting is event-driven: `FloorFeed` reads the floor's own push feed until each table's last
seq is committed, so no test sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import nats
import websockets

from daemon.api.tokens import Principal, new_token, token_entry
from daemon.floor.localservers import NatsServer, PostgresCluster
from daemon.floor.registry import enrol
from daemon.floor.store import Store
from daemon.floor.synthetic import ensure_stream, publish, table_key
from daemon.journal.provenance import TableKey
from tests.loopback_http import http

ROLES = ("pit", "surveillance", "audit", "admin")
REPO = Path(__file__).resolve().parents[2]


def write_tokens(path: Path) -> dict[str, str]:
    tokens = {role: new_token() for role in ROLES}
    path.write_text("".join(token_entry(f"{r}.person", r, t) + "\n" for r, t in tokens.items()))
    path.chmod(0o600)  # a tokens file others can read is refused
    return tokens


@dataclass
class FloorProcess:
    config: Path
    url: str = ""
    proc: subprocess.Popen[str] | None = None
    log: Path | None = None

    def start(self) -> FloorProcess:
        self.log = self.config.with_suffix(".log")
        err = self.log.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "daemon", "floor", "--config", str(self.config),
             "--http", "127.0.0.1:0", "--ack-wait", "2"],
            stdout=subprocess.PIPE, stderr=err, text=True, cwd=REPO,
        )  # fmt: skip
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("floor: "):
            self.proc.wait(timeout=10)
            raise AssertionError(f"floor did not start: {first!r}\n{self.log.read_text()}")
        self.url = first.split(" ", 1)[1].strip().rstrip("/")
        return self

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        os.kill(self.proc.pid, signal.SIGTERM)
        return self.proc.wait(timeout=30)


@dataclass
class FloorEnv:
    pg: PostgresCluster
    broker: NatsServer
    dsn: str
    root: Path
    tokens: dict[str, str]
    config: Path
    floors: list[FloorProcess] = field(default_factory=list)
    keys: dict[str, TableKey] = field(default_factory=dict)  # the tables enrolled, their keys

    def start_floor(self) -> FloorProcess:
        floor = FloorProcess(self.config).start()
        self.floors.append(floor)
        return floor

    def get(self, floor: FloorProcess, path: str, role: str = "audit", **params: Any) -> Any:
        r = http.get(
            floor.url + path,
            params=params,
            headers={"Authorization": f"Bearer {self.tokens[role]}"},
            timeout=30,
        )
        assert r.status_code == 200, (path, r.status_code, r.text)
        return r.json()

    async def enrol(self, tables: Iterable[str]) -> None:
        """Enrol these tables (each with its synthetic key) as a floor admin would."""
        new = sorted(set(tables) - set(self.keys))
        if not new:
            return
        store = Store(self.dsn)
        try:
            await store.migrate()
            for table in new:
                key = table_key(table)
                await enrol(store, Principal("admin.person", "admin"), table, key.public)
                self.keys[table] = key
        finally:
            await store.close()

    async def publish(self, lines: Iterable[bytes], **stream_opts: Any) -> None:
        """Publish these lines of enrolled tables (enrolled first if new) with signed heads,
        as their shippers would."""
        lines = list(lines)
        await self.enrol({json.loads(line)["table"] for line in lines})
        nc = await nats.connect(self.broker.url)
        try:
            js = nc.jetstream()
            await ensure_stream(js, **stream_opts)
            await publish(js, lines, keys=self.keys)
        finally:
            await nc.close()

    async def wait_committed(
        self, floor: FloorProcess, want: dict[str, int], timeout: float = 60
    ) -> None:
        """Until the floor has committed every table up to the seq given (read off its feed)."""
        ws_url = floor.url.replace("http://", "ws://") + "/api/feed"
        async with websockets.connect(ws_url) as ws:
            await ws.send(json.dumps({"token": self.tokens["pit"]}))
            hello = json.loads(await ws.recv())
            assert hello["type"] == "hello", hello
            async with httpx.AsyncClient() as client:
                r = await client.get(
                    floor.url + "/api/tables",
                    headers={"Authorization": f"Bearer {self.tokens['pit']}"},
                )
            seen = {t["table"]: t["last_seq"] for t in r.json()}

            def done() -> bool:
                return all(seen.get(t, 0) >= s for t, s in want.items())

            async def read() -> None:
                while not done():
                    msg = json.loads(await ws.recv())
                    if msg["type"] == "batch":
                        for t, s in msg["tables"].items():
                            seen[t] = max(seen.get(t, 0), s)

            try:
                await asyncio.wait_for(read(), timeout)
            except TimeoutError:
                raise AssertionError(f"floor committed {seen}, wanted {want}") from None

    def psql(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg  # noqa: PLC0415

        with psycopg.connect(self.dsn) as conn:
            return list(conn.execute(sql.encode(), params).fetchall())


def floor_config(path: Path, dsn: str, broker: str, tokens: Path, batch: int = 500) -> Path:
    path.write_text(
        f'[floor]\nservers = ["{broker}"]\ndatabase = "{dsn}"\nbatch = {batch}\n'
        f'[api]\ntokens_file = "{tokens}"\n[pits]\n"Pit A" = ["T01", "T02"]\n"Pit B" = ["T03"]\n'
    )
    return path
