"""`tabled status`: the table now, the actions legal for you, its devices and its feed, from
the operator API (daemon/cli/client.py); `--watch` as a live view (daemon/cli/watch.py)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from daemon.cli.client import (
    Api,
    ClientError,
    api_from,
    common_options,
    print_json,
    run,
)
from daemon.cli.watch import Refused, watch
from daemon.procedures.spec import HIDDEN
from daemon.safetext import safe_lines
from daemon.shipper.runtime import summary


def _clock(seconds: float) -> str:
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _cards(cards: Sequence[Any]) -> str:
    """A seat's cards as served: the open ones by name, the others counted (face down)."""
    shown = [str(c) for c in cards if c != HIDDEN]
    down = len(cards) - len(shown)
    return " ".join(shown + ([f"({down} face down)"] if down else []))


def format_status(state: dict[str, Any], legal: list[str], who: dict[str, Any]) -> str:
    lines = [
        f"{state.get('table', '?')} {state.get('game', '?')}  round {state.get('round') or '-'}"
        f"  phase {state.get('phase', '?')}"
        + (f"  next: {state['next']}" if state.get("next") else "")
    ]
    hold = state.get("hold")
    if hold:
        device = f"{hold['device']}: " if hold.get("device") else ""
        lines.append(
            f"{str(hold.get('kind', 'hold')).upper()}: {device}{hold.get('reason', '')}"
            "  (a supervisor clears it)"
        )
    pending = state.get("override")
    if isinstance(pending, dict):
        label = (pending.get("label") or {}).get("en") or pending.get("kind", "a proposal")
        lines.append(
            f"AWAITING A SUPERVISOR: {label}, proposed by {pending.get('proposed_by', '?')}"
            "  (approve_override or reject_override, with --reason)"
        )
    if state.get("dice"):
        dice = " ".join(str(d) for d in state["dice"])
        lines.append(f"dice: {dice} (total {state.get('dice_total', sum(state['dice']))})")
    timer = state.get("timer")
    if timer:
        left = "bell rang" if timer.get("rang") else f"{_clock(timer.get('remaining', 0))} left"
        lines.append(f"timer: {left}")
    for seat in state.get("seats") or []:
        bets = ", ".join(f"{b.get('bettor')} {b.get('amount')}" for b in seat.get("bets") or [])
        text = str(seat.get("name") or f"seat {seat.get('seat')}")
        if seat.get("holder"):
            text += f"  holder {seat['holder']}"
        if bets:
            text += f"  bets {bets}"
        if seat.get("cards"):
            text += f"  cards {_cards(seat['cards'])}"
        if seat.get("settlement"):
            s = seat["settlement"]
            text += f"  {s.get('result')} {s.get('amount', '')}"
        if seat.get("late"):
            text += "  LATE"
        lines.append(text)
    for v in (state.get("violations") or [])[-3:]:
        lines.append(
            f"violation #{v.get('seq')}: {v.get('action')} in {v.get('phase')}"
            f" ({v.get('article')}) by {v.get('actor')}"
        )
    lines.append(
        f"legal now for {who.get('actor')} ({who.get('role')}): {', '.join(legal) or 'nothing'}"
    )
    return "\n".join(lines)


def status_text(api: Api) -> str:
    """What `tabled status` prints: the table now, the legal actions, the devices, the feed."""
    state = api.get("/api/state")
    devices = api.get("/api/devices")["devices"]
    feed = api.get("/api/health").get("feed")  # the journal shipper's state, if it ships
    lines = [format_status(state["state"], state["legal"], state)]
    for d in devices:
        fault = d.get("fault")
        if isinstance(fault, dict):  # the procedure's record: {"fault", "kind", "healthy"}
            healthy = " (healthy again; a supervisor clears)" if fault.get("healthy") else ""
            fault = f"{fault.get('fault')}{healthy}"
        fault = f"  FAULT {fault}" if fault else ""
        approved = "" if d.get("approved", True) else "  NOT APPROVED"
        lines.append(f"device {d.get('name')}: link {d.get('link', '?')}{approved}{fault}")
    if feed:
        lines.append(summary(feed))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """`tabled status`: the table now, the actions legal for you, the devices; `--watch`: the
    same as a live view, redrawn every `--interval` seconds until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="tabled status", description=main.__doc__)
    common_options(parser)
    parser.add_argument("--watch", "-w", action="store_true", help="a live view until Ctrl-C")
    parser.add_argument(
        "--interval", type=float, default=1.0, metavar="SECONDS", help="--watch: redraw every"
    )
    args = parser.parse_args(argv)
    if not 0.1 <= args.interval <= 3600:
        parser.error("--interval takes seconds from 0.1 to 3600")

    def work() -> int:
        api = api_from(args)
        if args.watch:
            if args.json:
                parser.error("--watch shows text; --json prints one reading")

            def read() -> str:
                try:
                    return status_text(api)
                except ClientError as exc:
                    if exc.status in (401, 403):  # the token, not the table: retrying cannot help
                        raise Refused(exc.message) from None
                    raise

            try:
                return watch(read, args.interval)
            except Refused as exc:
                raise ClientError(401, str(exc)) from None
        if args.json:
            state = api.get("/api/state")
            devices = api.get("/api/devices")["devices"]
            feed = api.get("/api/health").get("feed")
            print_json({**state, "devices": devices, "feed": feed})
            return 0
        print(safe_lines(status_text(api)))
        return 0

    return run(work)
