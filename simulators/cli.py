"""`tabled sim`: simulated devices on pseudo-terminals, for a daemon in another process.

One simulator per configured device; prints where each listens, one line per device (a JSON
object with --json), then the control channel's socket, and runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import structlog

from daemon.config import ConfigError, load_config
from simulators.base import UnknownFault
from simulators.control import serve_control
from simulators.pty_host import PtyHost
from simulators.registry import model_class
from simulators.spec import SimSpec, parse_sim_url
from simulators.world import get_world


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabled sim", description="start simulated devices on pseudo-terminals"
    )
    parser.add_argument("--config", help="table config (default: the embedded one)")
    parser.add_argument("--seed", type=int, help="seed every simulator (reproducible runs)")
    parser.add_argument(
        "--speed", type=float, default=1.0, help="device timing factor: 1 real time, 0 instant"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="DEVICE:FAULT",
        help="inject a fault at start (repeatable), e.g. dice_shaker:die_tilted",
    )
    parser.add_argument("--control", help="control socket path (default: in a temp dir)")
    return parser


def _specs(args: argparse.Namespace) -> tuple[str, list[SimSpec]]:
    config = load_config(args.config)
    faults: dict[str, list[str]] = {}
    for item in args.fault:
        device, sep, fault = item.partition(":")
        if not sep or not device or not fault:
            raise ValueError(f"--fault {item!r}: expected DEVICE:FAULT")
        if device not in config.devices:
            raise ValueError(f"--fault {item!r}: {device} is not configured")
        faults.setdefault(device, []).append(fault)
    specs = []
    for name, device in config.devices.items():
        if not device.enabled:
            continue
        spec = parse_sim_url(device.port) if device.port.startswith("sim://") else SimSpec(name)
        if spec.device != name:
            raise ValueError(f"devices.{name}.port simulates {spec.device}, not {name}")
        spec = replace(
            spec,
            seed=args.seed if args.seed is not None else spec.seed,
            speed=args.speed,
            world=config.table_id,
            address=device.address,
        ).with_faults(*faults.get(name, []))
        specs.append(spec)
    return config.table_id, specs


async def _serve(args: argparse.Namespace, table_id: str, specs: list[SimSpec]) -> int:
    loop = asyncio.get_running_loop()
    world = get_world(table_id)
    host = PtyHost(loop)
    control_dir = None
    if args.control:
        control = Path(args.control)
    else:
        control_dir = tempfile.TemporaryDirectory(prefix="tabled-sim-")
        control = Path(control_dir.name) / "control.sock"
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        for spec in specs:
            try:
                model_class(spec.device)
            except LookupError as exc:
                print(f"tabled sim: skipping {spec.device}: {exc}", file=sys.stderr)
                continue
            device = host.add(spec, world)
            _say(args, {"device": spec.device, "port": device.port})
        server = await serve_control(world, control)
        _say(args, {"control": str(control)})
        await stop.wait()
        server.close()
        await server.wait_closed()
        return 0
    finally:
        host.close()
        if control_dir is not None:
            control_dir.cleanup()
        elif control.is_socket():
            control.unlink()


def _say(args: argparse.Namespace, item: dict[str, str]) -> None:
    if args.json:
        print(json.dumps(item), flush=True)
    elif "device" in item:
        print(f"{item['device']}\t{item['port']}", flush=True)
    else:
        print(f"control\t{item['control']}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # stdout carries the port list; logs go to stderr
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    try:
        table_id, specs = _specs(args)
        return asyncio.run(_serve(args, table_id, specs))
    except (ConfigError, ValueError, UnknownFault) as exc:
        print(f"tabled sim: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
