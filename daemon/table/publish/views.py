"""What the table runtime needs to answer the API in a few lines: the operator actions of each
game with their parameters and bilingual labels, and the console's view of a procedure snapshot.

`action_specs(procedure.ACTIONS)` gives `TableFacade.actions()`; `console_snapshot(...)`
turns `Procedure.snapshot()` (daemon/procedures/) into the `Snapshot` the dealer console shows.
Both read each game's declaration (`daemon.procedures.spec.Game`: the actions' parameters and
labels, each phase's text, what the game has opened) and keep no copy of it. The view holds every
card the table knows: it is served to a person only through
`daemon.procedures.visibility.redact_state`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from daemon.contract.facade import ActionSpec
from daemon.procedures.common import OVERRIDES
from daemon.procedures.games import GAMES
from daemon.procedures.spec import OPERATOR_ROLES, Action, PhaseText
from daemon.procedures.visibility import opened
from daemon.table.publish import explain


def action_specs(actions: Mapping[str, Action], game: str | None = None) -> list[ActionSpec]:
    """The operator actions (dealer and supervisor) of a game's `ACTIONS`, as the API offers
    them, with the parameters and labels the game declares (daemon/procedures/*/game.py);
    supervisor actions carry a required reason. `game` is not needed: the actions say it all."""
    specs = []
    for name, action in actions.items():
        roles = frozenset(action.roles) & OPERATOR_ROLES
        if not roles:
            continue
        specs.append(
            ActionSpec(
                name=name,
                roles=roles,
                params=action.params or {},
                requires_reason=action.requires_reason,
                payload_checked=action.params is not None,
                label_en=action.label_en or name.replace("_", " "),
                label_zh=action.label_zh or name,
            )
        )
    return specs


def _number(value: Any) -> float | None:
    try:
        return float(Decimal(str(value)))
    except (InvalidOperation, ValueError):
        return None


def _seat_results(settlement: Any) -> dict[int, dict[str, Any]]:
    """Per seat: {"result", "amount"} from either game's settlement."""
    rows: Iterable[Mapping[str, Any]]
    if isinstance(settlement, Mapping):
        rows = settlement.get("doors") or []
    elif isinstance(settlement, Sequence):
        rows = [r for r in settlement if isinstance(r, Mapping)]
    else:
        return {}
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        seat = row.get("seat")
        if not isinstance(seat, int):
            continue
        entry = out.setdefault(seat, {"result": str(row.get("outcome", "")), "amount": 0.0})
        net = _number(row.get("net", 0))
        entry["amount"] = round(entry["amount"] + (net or 0.0), 2)
        if row.get("late"):
            entry["result"] = "late"
    return out


def _seat_details(snapshot: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """Per settled seat, why it won or lost (`daemon.api.explain`)."""
    settlement = snapshot.get("settlement")
    out: dict[int, dict[str, Any]] = {}
    if isinstance(settlement, Mapping):
        # The hands the croupier re-set (Art. 6(2)), by door.
        reset = {r.get("seat") for r in snapshot.get("resets") or [] if isinstance(r, Mapping)}
        for door in settlement.get("doors") or []:
            if isinstance(door, Mapping) and isinstance(door.get("seat"), int):
                out[door["seat"]] = explain.paigow_detail(door, door["seat"] in reset)
        banker_seat, hand = snapshot.get("banker_seat"), settlement.get("banker_hand")
        if isinstance(banker_seat, int) and isinstance(hand, Mapping):
            out[banker_seat] = explain.paigow_detail(hand, banker_seat in reset)
    elif isinstance(settlement, Sequence):
        by_seat: dict[int, list[Mapping[str, Any]]] = {}
        for entry in settlement:
            if isinstance(entry, Mapping) and isinstance(entry.get("seat"), int):
                by_seat.setdefault(entry["seat"], []).append(entry)
        for seat, entries in by_seat.items():
            detail = explain.thirteen_detail(entries)
            if detail is not None:
                out[seat] = detail
    return out


def _override_view(pending: Any) -> dict[str, Any] | None:
    """A proposal waiting for a supervisor: what it is, in words, beside its details."""
    if not isinstance(pending, Mapping):
        return None
    kind = str(pending.get("kind", ""))
    en, zh = OVERRIDES.get(kind, (kind.replace("_", " "), kind))
    detail = zh_detail = ""
    if kind == "enter_card":
        card, index, seat = pending.get("card"), pending.get("index"), pending.get("seat")
        detail = zh_detail = f" {card} (card #{index}, seat {seat})"
    elif kind == "correct_arrangement":
        seat = pending.get("seat")
        detail, zh_detail = f" (seat {seat})", f"（第{seat}門）"
    view = {k: v for k, v in pending.items() if k != "since"}
    view["label"] = {"en": en + detail, "zh": zh + zh_detail}
    return view


def console_snapshot(
    snapshot: Mapping[str, Any],
    *,
    now: float,
    wall_now: float,
    violations: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The dealer console's view of `Procedure.snapshot()`.

    `now` is the clock the procedure's inputs carry (its deadlines are on it) and `wall_now`
    the wall-clock time at that same instant; `violations` are the recent ones the runtime
    keeps (the procedure does not hold refusals).
    """
    phase = str(snapshot.get("phase", ""))
    game = GAMES.get(str(snapshot.get("game", "")))
    text = game.phase_text(phase) if game is not None else PhaseText(phase, phase, "", "")
    en, zh, next_en, next_zh = text.label_en, text.label_zh, text.next_en, text.next_zh
    banker_seat = snapshot.get("banker_seat")
    bets_by_seat: dict[Any, list[dict[str, Any]]] = {}
    for bet in snapshot.get("bets") or []:
        bets_by_seat.setdefault(bet.get("seat"), []).append(
            {"bettor": bet.get("player"), "amount": bet.get("amount")}
        )
    results = _seat_results(snapshot.get("settlement"))
    details = _seat_details(snapshot)
    # Thirteen lists the seats opened; a Pai Gow hand is open once its tiles are known.
    listed = snapshot.get("opened_hands")
    opened_hands = listed if isinstance(listed, list) else []
    place = "Door" if snapshot.get("game") == "paigow" else "Seat"
    late = set()
    seats = []
    for raw in snapshot.get("seats") or []:
        seat = raw.get("seat")
        is_banker = bool(raw.get("banker")) or (banker_seat is not None and seat == banker_seat)
        setting = raw.get("setting")
        arrangement = raw.get("arrangement") or setting
        cards = list(raw.get("cards") or [])
        if not cards and isinstance(setting, Mapping):
            cards = [t for key in ("front", "back") for t in setting.get(key) or []]
        if raw.get("late"):
            late.add(seat)
        seats.append(
            {
                "seat": seat,
                "name": "Banker" if is_banker else f"{place} {seat}",
                "name_zh": "莊家" if is_banker else f"第{seat}門",
                "holder": raw.get("holder"),
                "bets": bets_by_seat.get(seat, []),
                "cards": cards,
                "arrangement": arrangement,
                "settlement": results.get(seat) if isinstance(seat, int) else None,
                "detail": details.get(seat) if isinstance(seat, int) else None,
                "late": bool(raw.get("late")),
                # Where the hand is: dealt (Pai Gow's doors), said arranged or set face down,
                # lying open for its cards to be placed.
                "dealt": bool(raw.get("dealt", bool(cards))),
                "arranged": bool(raw.get("arranged") or raw.get("set")),
                "open": bool(raw.get("open"))
                or seat in opened_hands
                or isinstance(raw.get("setting"), Mapping),
                "wrongly_set": bool(raw.get("wrongly_set")),
            }
        )

    timer = None
    raw_timer = snapshot.get("timer")
    if isinstance(raw_timer, Mapping):
        deadline, paused = raw_timer.get("deadline"), raw_timer.get("paused_remaining")
        if isinstance(deadline, int | float):
            remaining = max(0.0, deadline - now)
            timer = {
                "deadline": wall_now + (deadline - now),
                "remaining": remaining,
                "running": remaining > 0,
                "rang": remaining <= 0,
            }
        elif isinstance(paused, int | float):
            timer = {"remaining": float(paused), "running": False, "rang": False}
    if timer is None and late:
        timer = {"deadline": wall_now, "remaining": 0.0, "running": False, "rang": True}

    faults = snapshot.get("faults") or {}
    open_faults = {d: f for d, f in faults.items() if isinstance(f, Mapping)}
    hold = None
    if phase in ("HOLD", "TILT") or snapshot.get("suspended"):
        # The table's own hold (a restart) says its reason whole; a device's names the device.
        reason = "; ".join(
            str(f.get("fault", "")) if d == "table" else f"{d}: {f.get('fault', '')}"
            for d, f in open_faults.items()
        )
        since = [
            float(f["since"])
            for f in open_faults.values()
            if isinstance(f.get("since"), int | float)
        ]
        hold = {
            "kind": "tilt" if phase == "TILT" else "hold",
            "reason": reason or phase,
            "device": next(iter(open_faults), None),
            "since": wall_now + (min(since) - now) if since else wall_now,
            "resumes": snapshot.get("resume_to") or snapshot.get("suspended") or "",
        }

    dice = snapshot.get("dice")
    settlements = [{"seat": s, **r} for s, r in sorted(results.items())]
    return {
        "table": snapshot.get("table"),
        "game": snapshot.get("game"),
        "round": snapshot.get("round"),
        "phase": phase,
        "phase_label": {"en": en, "zh": zh},
        "next": next_en,
        "next_zh": next_zh,
        "hold": hold,
        "seats": seats,
        "banker": None,
        "dice": list(dice) if isinstance(dice, list) else None,
        "dice_total": sum(dice) if isinstance(dice, list) else None,
        "timer": timer,
        "settlements": settlements,
        "progress": explain.progress(snapshot),
        "bank": explain.paigow_bank(snapshot.get("settlement"))
        if snapshot.get("game") == "paigow"
        else None,
        "stake": snapshot.get("stake"),
        "co_bankers": snapshot.get("co_bankers"),
        "first_hand": snapshot.get("first_hand"),
        "hands": snapshot.get("hands"),
        "violations": [dict(v) for v in violations][-10:],
        # Open faults: a device healthy again is still not cleared until a supervisor says so.
        "faults": [
            {
                "device": d,
                "fault": f.get("fault"),
                "kind": f.get("kind", "tilt" if phase == "TILT" else "hold"),
                "healthy": bool(f.get("healthy")),
                "cleared": False,
            }
            for d, f in open_faults.items()
        ],
        "override": _override_view(snapshot.get("override")),
        "server_time": wall_now,
        # What the game has opened of this round (public facts), so that what each person is
        # served can be cut from this one view (`daemon.procedures.visibility.redact_state`).
        "revealed": opened(game, snapshot).as_json(),
    }
