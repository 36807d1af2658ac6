"""`tabled sim`: simulated devices on pseudo-terminals, for a daemon in another process.

One simulator per configured device; prints where each listens, one line per device (a JSON
object with --json), then the control channel's socket, and runs until SIGINT or SIGTERM.
`--write-config PATH` also writes a table config naming those ports (the simulators' builds
approved), so `tabled run --config PATH` or `tabled devices --config PATH` can use them as is.
With `--by-hand` the shuffler's shuffle and the shaker's throw wait for a person on the control
channel, as in the console's training mode (docs/training.md).
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

from daemon import eventloop
from daemon.config import ConfigError, TableConfig, load_config
from daemon.logging import configure_logging
from simulators.base import SIM_MAKE, UnknownFault, firmware_digest
from simulators.control import serve_control
from simulators.pty_host import PtyDevice, PtyHost
from simulators.spec import SimSpec, check_speed, model_class, parse_sim_url
from simulators.world import get_world


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabled sim", description="start simulated devices on pseudo-terminals"
    )
    parser.add_argument("--config", help="table config (default: the embedded one)")
    parser.add_argument(
        "--seed",
        type=int,
        help="seed the simulators N, N+1, ... in config order (reproducible runs)",
    )
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
    parser.add_argument(
        "--by-hand",
        action="store_true",
        help="shuffles and throws wait for a person on the control channel "
        '({"op": "shuffle"}, {"op": "shake"}; docs/training.md)',
    )
    parser.add_argument(
        "--write-config",
        metavar="PATH",
        help="also write a table config naming these ports, with the simulators' builds approved",
    )
    return parser


def _specs(args: argparse.Namespace) -> tuple[TableConfig, list[SimSpec]]:
    if not check_speed(args.speed):
        raise ValueError(f"--speed {args.speed}: a finite number >= 0 (1 real time, 0 instant)")
    config = load_config(args.config, partial=True)  # the devices to serve, not a whole table
    faults: dict[str, list[str]] = {}
    for item in args.fault:
        device, sep, fault = item.partition(":")
        if not sep or not device or not fault:
            raise ValueError(f"--fault {item!r}: expected DEVICE:FAULT")
        if device not in config.devices:
            raise ValueError(f"--fault {item!r}: {device} is not configured")
        faults.setdefault(device, []).append(fault)
    for device, names in faults.items():
        # refused before any port is opened or printed
        model = model_class(config.devices[device].kind)
        for fault in names:
            model.check_fault(fault)
    specs = []
    for index, (name, device) in enumerate(config.devices.items()):
        if not device.enabled:
            continue
        kind = device.kind
        spec = parse_sim_url(device.port) if device.port.startswith("sim://") else SimSpec(kind)
        if spec.device != kind:
            raise ValueError(f"devices.{name}.port simulates {spec.device}, not {kind}")
        spec = replace(
            spec,
            # N, N+1, ... in config order: one seed for all would give the shuffler and the
            # dice shaker the same random stream (a die's value tied to the shuffle's swaps)
            seed=args.seed + index if args.seed is not None else spec.seed,
            speed=args.speed,
            world=config.table_id,
            address=device.address,
        ).with_faults(*faults.get(name, []))
        specs.append(spec)
    return config, specs


def _config_text(config: TableConfig, devices: list[PtyDevice]) -> str:
    """A table config for a daemon in another process: these ports, these builds approved."""
    lines = [
        "# Written by `tabled sim`: simulated devices on pseudo-terminals, valid while it runs.",
        "[table]",
        f"id = {json.dumps(config.table_id)}",
        f"game = {json.dumps(config.game)}",
        f"ruleset = {json.dumps(config.ruleset)}",
    ]
    if config.game == "paigow":
        lines.append(f"paigow_hands = {config.paigow_hands}")
    # The API's people, as in the config the simulators came from (`tabled token` makes them).
    tokens = config.api.tokens_file or Path("var/tokens.toml")
    lines += ["", "[api]", f"tokens_file = {json.dumps(str(tokens))}"]
    for device in devices:
        name = device.spec.role
        configured = config.devices[name]
        cls = model_class(configured.kind)
        lines += ["", f"[devices.{name}]"]
        if configured.kind != name:  # a plug-in's kind (docs/devices.md)
            lines.append(f"kind = {json.dumps(configured.kind)}")
        if configured.package_sha256:  # and the digest of its package the casino approved
            lines.append(f"package_sha256 = {json.dumps(configured.package_sha256)}")
        lines += [
            f"port = {json.dumps(device.port)}",
            f"baudrate = {configured.baudrate}",
            f"address = {device.spec.address}",
        ]
        if configured.options:
            lines += [f"[devices.{name}.options]"]
            lines += [f"{key} = {json.dumps(value)}" for key, value in configured.options.items()]
        lines += [
            f"[[devices.{name}.approved]]",
            f"make = {json.dumps(SIM_MAKE)}",
            f"model = {json.dumps(cls.MODEL)}",
            f"firmware = {json.dumps(cls.FIRMWARE)}",
            # the nominal build: a device started with `unapproved_firmware` still fails the check
            f"firmware_hash = {json.dumps(firmware_digest(cls.MODEL, cls.FIRMWARE).hex())}",
        ]
    return "\n".join(lines) + "\n"


async def _serve(args: argparse.Namespace, config: TableConfig, specs: list[SimSpec]) -> int:
    loop = asyncio.get_running_loop()
    world = get_world(config.table_id)
    world.by_hand = args.by_hand
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
            _say(args, {"device": spec.role, "kind": spec.device, "port": device.port})
        if args.write_config:
            Path(args.write_config).write_text(_config_text(config, host.devices))
        server = await serve_control(world, control)
        _say(args, {"control": str(control)})
        await stop.wait()
        await server.close()
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
    # stdout carries what a script reads; the log goes to stderr, in its one style (text on a
    # terminal, JSON lines otherwise), as `tabled run`'s.
    configure_logging("info")
    try:
        config, specs = _specs(args)
        return eventloop.run(_serve(args, config, specs))
    except (ConfigError, LookupError, ValueError, UnknownFault, OSError) as exc:
        print(f"tabled sim: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
