"""`tabled devices`: connect to each configured device and show what it is and how its link is.

For each enabled device: its identity, whether that build is on the config's approved list,
the link state (up/down), the median round-trip time of a few GET_STATUS exchanges, and the
link's error counters. Exit status 0 when every device is up and none is unapproved, else 1
(2 for a bad config).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from daemon.config import ConfigError, DeviceConfig, load_config
from daemon.logging import configure_logging
from drivers.base import DeviceError
from drivers.link import LinkTiming
from drivers.registry import driver_class

PROBES = 5
# A probe must not hang on a dead port: a short reply timeout, no background polling.
PROBE_TIMING = LinkTiming(reply_timeout=0.3, tries=3, poll_interval=3600.0)


async def probe(config: DeviceConfig) -> dict[str, Any]:
    """What `tabled devices` reports about one device."""
    report: dict[str, Any] = {
        "device": config.name,
        "port": config.port,
        "link": "down",
        "make": None,
        "model": None,
        "serial": None,
        "firmware": None,
        "firmware_hash": None,
        "approved": None,
        "round_trip_ms": None,
        "counters": {},
        "error": None,
    }
    try:
        cls = driver_class(config.name)
    except LookupError as exc:
        report["error"] = str(exc)
        return report
    try:
        driver = cls.from_config(config, timing=PROBE_TIMING)
    except ValueError as exc:
        report["error"] = f"config: {exc}"
        return report
    try:
        if not await driver.start(keep_trying=False):
            report["error"] = driver.last_error or "no answer"
            return report
        identity = driver.identity
        if identity is not None:
            report.update(
                make=identity.make,
                model=identity.model,
                serial=identity.serial,
                firmware=identity.firmware,
                firmware_hash=identity.firmware_hash.hex(),
            )
        report["approved"] = driver.approved
        round_trips = []
        for _ in range(PROBES):
            await driver.status()
            if driver.link.last_round_trip is not None:
                round_trips.append(driver.link.last_round_trip)
        report["link"] = "up" if driver.link_up else "down"
        if round_trips:
            report["round_trip_ms"] = round(statistics.median(round_trips) * 1000, 3)
    except DeviceError as exc:
        report["error"] = str(exc)
        report["link"] = "up" if driver.link_up else "down"
    finally:
        report["counters"] = driver.link.counters.as_dict()
        await driver.close()
    return report


async def probe_all(configs: Sequence[DeviceConfig]) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(probe(c) for c in configs)))


def _approved_text(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "no list"}[value]


def _table(reports: list[dict[str, Any]]) -> str:
    header = ("device", "link", "make", "model", "serial", "firmware", "approved", "rtt ms")
    rows = [header]
    for r in reports:
        rows.append(
            (
                r["device"],
                r["link"],
                r["make"] or "-",
                r["model"] or "-",
                r["serial"] or "-",
                r["firmware"] or "-",
                _approved_text(r["approved"]) if r["link"] == "up" else "-",
                "-" if r["round_trip_ms"] is None else f"{r['round_trip_ms']:.3f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    for r in reports:
        c = r["counters"]
        errors = ", ".join(f"{k}={v}" for k, v in c.items() if k.startswith("error_") and v)
        if r["firmware_hash"]:  # what an approved list must name, beside make, model, firmware
            lines.append(f"{r['device']}: firmware_hash {r['firmware_hash']}")
        lines.append(
            f"{r['device']}: port {r['port']}; sent {c.get('frames_sent', 0)}, received "
            f"{c.get('frames_received', 0)}, retransmits {c.get('retransmits', 0)}, timeouts "
            f"{c.get('timeouts', 0)}, protocol errors {c.get('protocol_errors', 0)}"
            + (f" ({errors})" if errors else "")
            + (f"; {r['error']}" if r["error"] else "")
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled devices",
        description="connect to each configured device; show identity, approval and link",
    )
    parser.add_argument("--config", help="table config (default: the embedded one)")
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    args = parser.parse_args(argv)
    # stdout carries what a script reads; the log goes to stderr, in its one style (text on a
    # terminal, JSON lines otherwise), as `tabled run`'s.
    configure_logging("info")
    try:
        config = load_config(args.config, partial=True)  # probes what is configured
    except ConfigError as exc:
        print(f"tabled devices: {exc}", file=sys.stderr)
        return 2
    configs = [d for d in config.devices.values() if d.enabled]
    reports = asyncio.run(probe_all(configs))
    try:
        print(json.dumps(reports, indent=2) if args.json else _table(reports), flush=True)
    except BrokenPipeError:
        # `tabled devices | head`: the reader has what it wanted. Point stdout at devnull so
        # the interpreter's own flush at exit does not fail again (the Python docs' recipe).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    healthy = all(r["link"] == "up" and r["approved"] is not False for r in reports)
    return 0 if healthy else 1


if __name__ == "__main__":
    raise SystemExit(main())
