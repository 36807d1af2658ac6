"""Device-round benchmark: one whole simulated Thirteen round through the unchanged drivers.

A round, as the table drives it: START_SHUFFLE and its SHUFFLE_DONE, SHAKE and its throw, ARM,
52 cards drawn by the dealer (through the table world, as the control channel does) and read,
DISARM, START_TIMER and CANCEL_TIMER. The four drivers run on one event loop against the
in-process `sim://` simulators at speed 0, so what is timed is the daemon's side (drivers,
codec, link, asyncio) plus the simulators' own work, never a device's mechanical delay.

Printed side by side: the round's time through the drivers (median and p90 over the rounds),
and the wire time of the very same bytes (counted by the drivers' tap, escaping included, 10
bits a byte) at 115,200 and 9,600 baud, the peer a real serial line would cost. The table
issue's goal is a median at most 10 ms.

Run: .venv/bin/python bench/bench_device_round.py [--rounds N]
The CI machine is shared and loaded: read the figures as orders of magnitude.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from daemon.logging import configure_logging
from drivers.base import DeviceDriver
from drivers.dice_shaker.driver import DiceShakerDriver
from drivers.link import LinkTiming, wire_time
from drivers.shoe_reader.driver import CardDrawn, ShoeReaderDriver
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver
from drivers.timer_bell.driver import TimerBellDriver
from simulators.world import forget_world, get_world

TIMING = LinkTiming(poll_interval=1e9)  # no status polls inside the timed rounds


async def run(rounds: int) -> tuple[list[float], int, int]:
    world_key = f"bench-{os.getpid()}"
    traffic = {"bytes": 0, "chunks": 0}

    def tap(direction: str, data: bytes) -> None:
        traffic["bytes"] += len(data)
        traffic["chunks"] += 1

    def url(device: str) -> str:
        return f"sim://{device}?seed=1&world={world_key}"

    shuffler = ShufflerDriver(url("shuffler"), timing=TIMING, tap=tap)
    dice = DiceShakerDriver(url("dice_shaker"), timing=TIMING, tap=tap)
    shoe = ShoeReaderDriver(url("shoe_reader"), timing=TIMING, tap=tap)
    bell = TimerBellDriver(url("timer_bell"), timing=TIMING, tap=tap)
    drivers: list[DeviceDriver] = [shuffler, dice, shoe, bell]
    for driver in drivers:
        if not await driver.start():
            raise SystemExit(f"{driver.name}: no link")
        driver.pending_events()
    world = get_world(world_key)
    times: list[float] = []
    counted = (0, 0)
    for number in range(rounds + 1):  # round 0 warms up and counts the bytes
        before = dict(traffic)
        started = time.perf_counter()
        await shuffler.shuffle(expected=52)
        if not isinstance(await shuffler.next_event(), ShuffleCompleted):
            raise SystemExit("no shuffle result")
        await dice.shake()
        await dice.next_event()
        await shoe.arm(new_shoe=True)
        for _ in range(52):
            world.dealer_draw()
            if not isinstance(await shoe.next_event(), CardDrawn):
                raise SystemExit("a card was not read")
        await shoe.disarm()
        await bell.start_timer(300, warn_before=60)
        await bell.cancel_timer()
        elapsed = time.perf_counter() - started
        for driver in drivers:
            driver.pending_events()
        if number == 0:
            counted = (traffic["bytes"] - before["bytes"], traffic["chunks"] - before["chunks"])
        else:
            times.append(elapsed)
    for driver in drivers:
        await driver.close()
    forget_world(world_key)
    return times, *counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    configure_logging("warning", json=True, stream=open(os.devnull, "w"))  # noqa: SIM115
    gc.collect()
    times, size, chunks = asyncio.run(run(args.rounds))
    times.sort()
    p90 = times[int(len(times) * 0.9) - 1]
    print(f"one Thirteen round's device traffic: {size} bytes in {chunks} writes and reads")
    print(f"{'':34}{'median':>12}{'p90':>12}")
    print(f"{'through the drivers on sim://':34}{median(times) * 1e3:>10.2f}ms{p90 * 1e3:>10.2f}ms")
    for baud in (115200, 9600):
        wire = wire_time(size, baud) * 1e3
        print(f"{f'the same bytes on the wire, {baud}':34}{wire:>10.2f}ms{'':>12}")
    print(f"goal: median <= 10 ms ({'met' if median(times) <= 0.010 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
