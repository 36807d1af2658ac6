"""Serve the operator API over the real table runtime (`daemon.table.Table`) with every device
simulated in this process (`sim://` ports), on a free loopback port, for the end-to-end browser
test. The table's clock is a simulation clock so the test can jump over the five minutes.

    python tests/api/serve_table.py TOKENS_FILE JOURNAL_DIR [CONFIG]

prints `PORT <n>` once the devices are up. The API reads the table's publications as
`tabled run --http`'s API process does, served on the table's own loop (`in_process.py`).
Test-only routes reach the simulators' control channel (`/_sim/control`, the dealer drawing
cards, a cable pulled) and the clock (`/_sim/jump?seconds=`); they exist on this test server
only.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
from pathlib import Path
from typing import Any

import structlog
from fastapi import FastAPI
from in_process import InProcess

from daemon.autoplay import SimulationClock
from daemon.config import ApiConfig, load_config
from daemon.table import Table
from drivers.clock import MonotonicClock
from simulators.control import handle_control
from simulators.spec import parse_sim_url
from simulators.world import get_world


async def main(tokens_file: str, journal_dir: str, config_file: str | None) -> None:
    # Logs to stderr: stdout carries only the PORT line the test waits for.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    config = load_config(config_file)
    clock = SimulationClock()
    table = Table(config, journal_dir=Path(journal_dir), clock=clock, driver_clock=MonotonicClock())
    await table.start()
    if not await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"), 30):
        raise SystemExit("the simulated devices did not come up")
    [world_key] = {parse_sim_url(d.port).world for d in config.devices.values()}
    world = get_world(world_key)

    def test_routes(app: FastAPI) -> FastAPI:
        @app.post("/_sim/control", include_in_schema=False)
        async def control(request: dict[str, Any]) -> dict[str, Any]:
            reply = handle_control(world, request)
            await asyncio.sleep(0)
            return reply

        @app.post("/_sim/jump", include_in_schema=False)
        async def jump(seconds: float) -> dict[str, float]:
            clock.jump(seconds)
            return {"now": clock.now()}

        return app

    served = dataclasses.replace(config, api=ApiConfig(tokens_file=Path(tokens_file)))
    api = InProcess.build(table, served, "127.0.0.1:0", decorate=test_routes)
    port = api.url().rsplit(":", 1)[1]
    api.start()
    print(f"PORT {port}", flush=True)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await api.stop()
        await table.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
