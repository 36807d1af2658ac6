"""What the table runtime needs to answer the API in a few lines: the operator actions of each
game with their parameters and bilingual labels, and the console's view of a procedure snapshot.

`action_specs(procedure.ACTIONS, game)` gives `TableFacade.actions()`; `console_snapshot(...)`
turns `Procedure.snapshot()` (daemon/procedures/) into the `Snapshot` the dealer console shows.
Both read the procedures' data as it is; an action this module does not know is still offered,
with its payload left for the procedure to check (so a new trigger never disappears from the
console because nobody wrote its form yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from daemon.api.facade import ActionSpec, ParamSpec

OPERATOR_ROLES = frozenset({"dealer", "supervisor"})


class ProcedureAction(Protocol):
    """The shape of `daemon.procedures.base.Action` this module reads."""

    @property
    def name(self) -> str: ...

    @property
    def roles(self) -> frozenset[str]: ...


def _player(en: str = "Player", zh: str = "玩家") -> ParamSpec:
    return ParamSpec("str", max_length=64, label_en=en, label_zh=zh)


def _seat(lo: int, hi: int, en: str = "Seat", zh: str = "門") -> ParamSpec:
    return ParamSpec("int", minimum=lo, maximum=hi, label_en=en, label_zh=zh)


_AMOUNT = ParamSpec("int", minimum=1, maximum=10**12, label_en="Amount", label_zh="金額")


def _cards(n: int, en: str, zh: str, exactly: bool = True) -> ParamSpec:
    return ParamSpec(
        "list[str]", min_length=n if exactly else 1, max_length=n, label_en=en, label_zh=zh
    )


_ROWS13 = {
    "head": _cards(3, "Head (3)", "頭道"),
    "middle": _cards(5, "Middle (5)", "中道"),
    "tail": _cards(5, "Tail (5)", "尾道"),
}
_PAIR = {
    "front": ParamSpec("str", max_length=64, label_en="Front pair", label_zh="前手"),
    "back": ParamSpec("str", max_length=64, label_en="Back pair", label_zh="後手"),
}

# game -> action -> payload fields, as the procedure's checks read them.
PARAMS: dict[str, dict[str, dict[str, ParamSpec]]] = {
    "thirteen": {
        "open_table": {},
        "confirm_hand_shuffle": {},
        "confirm_cut": {
            "by": ParamSpec(
                "str", choices=("player", "dealer"), label_en="Cut by", label_zh="切牌者"
            ),
            "player": ParamSpec(
                "str", required=False, max_length=64, label_en="Player", label_zh="玩家"
            ),
            "players_declined": ParamSpec(
                "bool", required=False, label_en="No player will cut", label_zh="玩家不切"
            ),
            "cards": ParamSpec(
                "int", minimum=10, maximum=42, label_en="Cards cut", label_zh="切牌張數"
            ),
            "one_hand": ParamSpec("bool", label_en="One hand", label_zh="單手"),
        },
        "load_shoe": {},
        "place_bet": {
            "player": _player(),
            "seat": _seat(1, 3),
            "amount": _AMOUNT,
            "units": ParamSpec("int", minimum=1, maximum=100, label_en="Units", label_zh="注數"),
            "seated": ParamSpec("bool", label_en="Seated", label_zh="在座"),
        },
        "withdraw_bet": {"player": _player(), "seat": _seat(1, 3)},
        "move_bet": {
            "player": _player(),
            "from_seat": _seat(1, 3, "From seat", "原門"),
            "to_seat": _seat(1, 3, "To seat", "新門"),
        },
        "shake_dice": {"player": _player("Highest bettor", "最高投注者")},
        "correct_misdeal": {"cards": _cards(52, "Cards to re-deal", "重發的牌", exactly=False)},
        "arrange_banker": dict(_ROWS13),
        "open_banker": {},
        "enter_arrangement": {"seat": _seat(1, 3), **_ROWS13},
        "settle_round": {},
        "start_round": {},
        "propose_card": {
            "card": ParamSpec("str", min_length=2, max_length=3, label_en="Card", label_zh="牌"),
            "note": ParamSpec(
                "str", required=False, max_length=200, label_en="Note", label_zh="備註"
            ),
        },
        "approve_override": {},
        "reject_override": {},
        "void_deal": {},
        "clear_hold": {},
        "clear_tilt": {},
        "void_round": {},
    },
    "paigow": {
        "open_table": {},
        "take_bank": {"player": _player(), "seat": _seat(0, 7, "Door", "門")},
        "decline_bank": {"player": _player()},
        "confirm_tile_shuffle": {
            "new_set": ParamSpec("bool", required=False, label_en="New set", label_zh="新牌"),
        },
        "move_stacks": {
            "by": ParamSpec(
                "str", choices=("player", "banker"), label_en="Moved by", label_zh="移牌者"
            ),
            "player": _player(),
            "one_hand": ParamSpec("bool", label_en="One hand", label_zh="單手"),
        },
        "place_bet": {"player": _player(), "seat": _seat(0, 7, "Door", "門"), "amount": _AMOUNT},
        "withdraw_bet": {"player": _player(), "seat": _seat(0, 7, "Door", "門")},
        "move_bet": {
            "player": _player(),
            "from_seat": _seat(0, 7, "From door", "原門"),
            "to_seat": _seat(0, 7, "To door", "新門"),
        },
        "place_stake": {"amount": _AMOUNT},
        "shake_dice": {"player": _player("Banker", "莊家")},
        "tile_face_up": {"seat": _seat(0, 7, "Door", "門"), "tile": _player("Tile", "牌")},
        "confirm_deal": {},
        "set_hand": {"seat": _seat(0, 7, "Door", "門"), **_PAIR},
        "set_banker": dict(_PAIR),
        "open_hands": {},
        "reset_hand": {"seat": _seat(0, 7, "Door", "門"), **_PAIR},
        "settle_round": {},
        "extend_bank": {
            "consents": ParamSpec(
                "list[int]",
                minimum=0,
                maximum=7,
                max_length=8,
                label_en="Doors agreeing",
                label_zh="同意的門",
            )
        },
        "next_round": {},
        "clear_hold": {},
        "clear_tilt": {},
        "void_round": {},
    },
}

LABELS: dict[str, tuple[str, str]] = {
    "open_table": ("Open table", "開枱"),
    "confirm_hand_shuffle": ("Hand shuffle done", "人手洗牌完成"),
    "confirm_cut": ("Cut", "切牌"),
    "load_shoe": ("Load shoe", "入牌靴"),
    "place_bet": ("Place bet", "下注"),
    "withdraw_bet": ("Withdraw bet", "撤注"),
    "move_bet": ("Move bet", "移注"),
    "shake_dice": ("Shake dice", "搖骰"),
    "correct_misdeal": ("Correct misdeal", "更正錯發"),
    "void_deal": ("Void the deal", "作廢此次發牌"),
    "arrange_banker": ("Banker arranges", "莊家排牌"),
    "open_banker": ("Banker opens", "莊家開牌"),
    "enter_arrangement": ("Enter arrangement", "輸入排牌"),
    "settle_round": ("Settle", "結算"),
    "start_round": ("Next round", "下一局"),
    "take_bank": ("Take the bank", "做莊"),
    "decline_bank": ("Decline the bank", "不做莊"),
    "confirm_tile_shuffle": ("Tiles shuffled", "洗牌完成"),
    "move_stacks": ("Move stacks", "移牌疊"),
    "place_stake": ("Banker's stake", "莊家本金"),
    "confirm_deal": ("Deal done", "派牌完成"),
    "tile_face_up": ("Tile face up", "牌面朝上"),
    "set_hand": ("Set hand", "配牌"),
    "set_banker": ("Banker sets", "莊家配牌"),
    "open_hands": ("Open hands", "開牌"),
    "reset_hand": ("Re-set hand", "重新配牌"),
    "extend_bank": ("Extend the bank", "續莊"),
    "next_round": ("Next round", "下一局"),
    "propose_card": ("Enter misread card", "輸入誤讀的牌"),
    "approve_override": ("Approve override", "批准更正"),
    "reject_override": ("Reject override", "駁回更正"),
    "clear_hold": ("Clear HOLD", "解除暫停"),
    "clear_tilt": ("Clear TILT", "解除故障"),
    "void_round": ("Void round", "作廢本局"),
}

# phase -> (English, Chinese, what comes next in English, in Chinese)
PHASES: dict[str, tuple[str, str, str, str]] = {
    "EQUIPMENT_CHECK": (
        "Equipment check",
        "設備檢查",
        "identify devices, open the table",
        "識別設備，開枱",
    ),
    "HAND_SHUFFLE": ("Hand shuffle", "人手洗牌", "the dealer hand-shuffles", "荷官人手洗牌"),
    "MACHINE_SHUFFLE": (
        "Machine shuffle",
        "洗牌機洗牌",
        "the shuffler counts 52",
        "洗牌機點算52張",
    ),
    "CUT": ("Cut", "切牌", "a player cuts, one hand, at least 10", "玩家單手切牌，至少十張"),
    "SHOE_LOADING": ("Shoe", "入牌靴", "cards into the shoe", "牌放入牌靴"),
    "BETTING": ("Betting", "下注", "bets on the seats, then the dice", "下注，然後搖骰"),
    "SHAKING": ("Dice", "搖骰", "the shaker reports the dice", "等待骰子結果"),
    "DEALING": ("Dealing", "發牌", "the shoe deals 13 to each seat", "每門發十三張"),
    "BANKER_ARRANGING": ("Banker arranges", "莊家排牌", "the banker arranges", "莊家排牌"),
    "BANKER_ARRANGED": ("Banker arranged", "莊家已排牌", "the banker opens", "莊家開牌"),
    "PLAYERS_ARRANGING": (
        "Players arrange",
        "玩家排牌",
        "arrangements within 5 minutes",
        "五分鐘內排牌",
    ),
    "SETTLING": ("Settling", "結算", "settle the round", "結算本局"),
    "ROUND_OVER": ("Round over", "本局完", "the next round", "下一局"),
    "BANK_OFFER": ("Bank offer", "做莊", "a player takes the bank", "玩家做莊"),
    "SHUFFLE": ("Shuffle", "洗牌", "tiles shuffled, stacks moved", "洗牌，移牌疊"),
    "SETTING": ("Setting", "配牌", "players set their hands", "玩家配牌"),
    "BANKER_SETTING": ("Banker sets", "莊家配牌", "the banker sets", "莊家配牌"),
    "OPENING": ("Opening", "開牌", "the croupier opens the hands", "荷官開牌"),
    "OPENED": ("Opened", "已開牌", "re-set wrong hands, settle", "更正配牌，結算"),
    "HOLD": ("HOLD", "暫停", "a supervisor clears the hold", "由主任解除暫停"),
    "TILT": ("TILT", "故障", "a supervisor clears the tilt", "由主任解除故障"),
}


def action_specs(actions: Mapping[str, ProcedureAction], game: str) -> list[ActionSpec]:
    """The operator actions (dealer and supervisor) of a procedure's `ACTIONS`, as the API
    offers them; supervisor actions carry a required reason."""
    known = PARAMS.get(game, {})
    specs = []
    for name, action in actions.items():
        roles = frozenset(action.roles) & OPERATOR_ROLES
        if not roles:
            continue
        en, zh = LABELS.get(name, (name.replace("_", " "), name))
        params = known.get(name)
        specs.append(
            ActionSpec(
                name=name,
                roles=roles,
                params=params or {},
                requires_reason="supervisor" in roles,
                payload_checked=params is not None,
                label_en=en,
                label_zh=zh,
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


# override kind -> (English, Chinese) of what the supervisor is asked to approve
OVERRIDES: dict[str, tuple[str, str]] = {
    "enter_card": ("Enter card by hand", "人手輸入牌"),
}


def _override_view(pending: Any) -> dict[str, Any] | None:
    """A proposal waiting for a supervisor: what it is, in words, beside its details."""
    if not isinstance(pending, Mapping):
        return None
    kind = str(pending.get("kind", ""))
    en, zh = OVERRIDES.get(kind, (kind.replace("_", " "), kind))
    detail = ""
    if kind == "enter_card":
        card, index, seat = pending.get("card"), pending.get("index"), pending.get("seat")
        detail = f" {card} (card #{index}, seat {seat})"
    view = {k: v for k, v in pending.items() if k != "since"}
    view["label"] = {"en": en + detail, "zh": zh + detail}
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
    en, zh, next_en, next_zh = PHASES.get(phase, (phase, phase, "", ""))
    banker_seat = snapshot.get("banker_seat")
    bets_by_seat: dict[Any, list[dict[str, Any]]] = {}
    for bet in snapshot.get("bets") or []:
        bets_by_seat.setdefault(bet.get("seat"), []).append(
            {"bettor": bet.get("player"), "amount": bet.get("amount")}
        )
    results = _seat_results(snapshot.get("settlement"))
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
                "late": bool(raw.get("late")),
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
        reason = "; ".join(f"{d}: {f.get('fault', '')}" for d, f in open_faults.items())
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
    }
