"""The event loop `tabled run` and `tabled sim` run on: uvloop's (libuv), not asyncio's own.

The table's loop carries every device exchange, the procedure and the journal; what the loop
itself costs a turn is paid twice an exchange (the frame out, its answer in). uvloop does the
same work as asyncio's selector loop for less CPU: measured back to back (bench/bench_cpu.py's
harness, 2 shared cores), a Thirteen round about 5 % less and a GET_STATUS exchange through a pty
about 20 % less. Nothing in the daemon depends on which loop runs it: the drivers watch their
ports with `add_reader`, threads hand results over with `call_soon_threadsafe`, signals come
through `add_signal_handler`, and `drivers.clock.MonotonicClock` converts a deadline into the
running loop's own time (uvloop's `loop.time()` counts milliseconds from its own start).

The API process (daemon/api/worker.py) keeps asyncio's loop: `asyncio.run` there is not this
function, and uvicorn's `Server.serve()` uses the loop it is given.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

_T = TypeVar("_T")


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """`asyncio.run(main)` on a new uvloop loop (a Runner: tasks left are cancelled, async
    generators and the default executor shut down, the loop closed)."""
    return uvloop.run(main)
