"""Serve the operator API over the in-memory FakeTable on a free loopback port, for tests that
need a real HTTP server (the browser, the client commands run as processes).

    python tests/api/serve_fake.py TOKENS_FILE

prints `PORT <n>` once listening. `/_fake/advance?seconds=`, `/_fake/fault?device=` and
`/_fake/misread?seat=` let a test move the table's clock, break a device and have the shoe
reader miss a card; they exist on this test server only.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).parent))

from fake_table import FakeTable, ManualClock

from daemon.api.app import create_app
from daemon.api.server import ApiServer
from daemon.config import ApiConfig


async def main(tokens_file: str) -> None:
    # Logs to stderr: stdout carries only the PORT line the test waits for.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    clock = ManualClock()
    table = FakeTable(clock)
    app = create_app(table, ApiConfig(tokens_file=Path(tokens_file)), clock=clock)

    @app.post("/_fake/advance", include_in_schema=False)
    async def advance(seconds: float) -> dict[str, float]:
        table.advance(seconds)
        return {"now": clock()}

    @app.post("/_fake/fault", include_in_schema=False)
    async def fault(device: str) -> dict[str, str]:
        table.inject_fault(device)
        return {"fault": device}

    @app.post("/_fake/misread", include_in_schema=False)
    async def misread(seat: int) -> dict[str, int]:
        table.misread_card(seat)
        return {"misread": seat}

    server = ApiServer(app, "127.0.0.1:0")
    _host, port = server.bind()
    print(f"PORT {port}", flush=True)
    await server.serve()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
