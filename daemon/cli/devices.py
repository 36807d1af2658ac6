"""`tabled devices`: connect to each configured device and show what it is and how its link is.

For each enabled device: its kind (drivers.kinds: built in, or a plug-in's), its identity,
whether that build is on the config's approved list, the link state (up/down), the median
round-trip time of a few GET_STATUS exchanges, and the link's error counters. Exit status 0 when
every device is up and none is unapproved, else 1 (2 for a bad config).

`tabled devices --kinds`: the device kinds this installation knows (the built-in ones and those
the installed packages declare in the `tabled.devices` entry-point group, docs/devices.md),
without a config or a port (every plug-in's module is imported to list it). A plug-in that
cannot be read is one line on stderr naming its package, and exit status 1. Probing imports
only the plug-ins the config names: one of those that cannot be read is a config error (2).
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
from drivers.base import driver_class
from drivers.events import DeviceError
from drivers.kinds import broken, is_plugin, kinds, package_digest
from drivers.link import LinkTiming
from drivers.settings import is_approved

PROBES = 5
# A probe must not hang on a dead port: a short reply timeout, no background polling.
PROBE_TIMING = LinkTiming(reply_timeout=0.3, tries=3, poll_interval=3600.0)


async def probe(config: DeviceConfig) -> dict[str, Any]:
    """What `tabled devices` reports about one device."""
    report: dict[str, Any] = {
        "device": config.name,
        "kind": config.kind,
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
        cls = driver_class(config.kind)
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
            # judged here from what the device reported, as the table does: not the driver's
            report["approved"] = is_approved(identity, config.approved)
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
    header = ("device", "kind", "link", "make", "model", "serial", "firmware", "approved", "rtt ms")
    rows = [header]
    for r in reports:
        rows.append(
            (
                r["device"],
                r["kind"],
                r["link"],
                r["make"] or "-",
                r["model"] or "-",
                r["serial"] or "-",
                r["firmware"] or "-",
                _approved_text(r["approved"]) if r["link"] == "up" else "-",
                "-" if r["round_trip_ms"] is None else f"{r['round_trip_ms']:.3f}",
            )
        )
    lines = _columns(rows)
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


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _kinds_report() -> list[dict[str, Any]]:
    return [
        {
            "kind": row.name,
            "role": row.role,
            "package": row.package,
            "version": row.version,
            "driver": row.driver,
            "adapter": row.adapter,
            "simulator": row.simulator,
            # What a config approves a plug-in's package by (`package_sha256`), None: tabled's.
            "package_sha256": _digest(row.name),
        }
        for row in sorted(kinds().values(), key=lambda row: (row.role, row.name))
    ]


def _digest(kind: str) -> str | None:
    if not is_plugin(kind):
        return None
    try:
        return package_digest(kind)
    except LookupError as exc:
        return f"none: {exc}"


def _kinds_table(report: list[dict[str, Any]]) -> str:
    rows = [("kind", "role", "from", "driver", "simulator")]
    for r in report:
        origin = f"{r['package']} {r['version']}".strip()
        rows.append((r["kind"], r["role"], origin, r["driver"], r["simulator"] or "-"))
    digests = [f"{r['kind']}: package_sha256 {r['package_sha256']}" for r in report
               if r["package_sha256"]]  # fmt: skip
    return "\n".join([*_columns(rows), *([""] if digests else []), *digests])


def _say_broken() -> bool:
    """Each plug-in kept out, one line on stderr; True if there is one."""
    for line in broken().values():
        print(f"tabled devices: {line}", file=sys.stderr)
    return bool(broken())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled devices",
        description="connect to each configured device; show identity, approval and link",
    )
    parser.add_argument("--config", help="table config (default: the embedded one)")
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.add_argument(
        "--kinds",
        action="store_true",
        help="list the device kinds installed (built in and plug-ins); no config, no port",
    )
    args = parser.parse_args(argv)
    if args.kinds:
        report = _kinds_report()
        print(json.dumps(report, indent=2) if args.json else _kinds_table(report), flush=True)
        return 1 if _say_broken() else 0
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
