"""Training mode: a person handles the simulated devices of a table whose every device is
simulated in this process (`sim://` ports, the embedded default config).

A casino trains dealers before they touch a live table, and a lab walks through the procedure by
hand; on a simulated table nobody can draw a card from the shoe or tilt a die, so the trainer
does it here: the shuffler's shuffle (with or without a fault), the dice shaker's throw (tilt a
die, drop one out of the cup), the shoe (draw the next card, deal the whole round, draw face up,
misread), the bell, the doors and lids, each device's faults and power. The requests are the
simulators' control channel (`simulators.control.handle_control`, also served by `tabled sim`);
this module finds the table's simulated world, says which controls there are (with the
bilingual labels the console shows), and journals every control used as an operator action
(`training.control`: a person touched the table). The API's `/api/training` routes
(`daemon.api.routes.training`) and the console's TRAINING panel are its only callers.

When any configured device is real there is no training mode: `Training.of(table)` is None,
the routes answer 404 and the console shows no panel.
"""

from __future__ import annotations

import random
from typing import Any

import structlog

from daemon.rules import paigow
from daemon.rules import thirteen as rules13
from daemon.rules.cards import parse_card
from drivers.shoe_reader.messages import card_name
from simulators.control import DOORS, OPERATED, device_faults, handle_control
from simulators.spec import parse_sim_url
from simulators.world import TableWorld, get_world

log = structlog.get_logger("tabled.training")

TRAINING_EVENT = "training.control"
ROLES = ("admin", "trainer")
DECK = 52

# What the panel offers, device by device: (op, fault, zh, en). `fault` None: as it comes.
CONTROLS: dict[str, tuple[tuple[str, str | None, str, str], ...]] = {
    "shuffler": (("shuffle", None, "洗牌", "Shuffle"),),
    "dice_shaker": (
        ("shake", None, "搖骰", "Shake"),
        ("shake", "die_tilted", "骰子傾斜", "Tilt a die"),
        ("shake", "die_out_of_cup", "骰子跌出骰盅", "Drop a die out of the cup"),
    ),
    "shoe_reader": (
        ("draw", None, "抽下一張", "Draw the next card"),
        ("deal", None, "發完本局", "Deal the whole round"),
        ("draw", "face_up", "翻開抽牌", "Draw face up"),
        ("draw", "misread", "誤讀一張", "Misread a card"),
    ),
    "timer_bell": (("ring", None, "試鐘", "Ring the bell"),),
}
DEVICE_NAMES = {
    "shuffler": ("洗牌機", "Shuffler"),
    "dice_shaker": ("搖骰機", "Dice shaker"),
    "shoe_reader": ("牌靴", "Shoe"),
    "timer_bell": ("計時鐘", "Bell"),
}
DOOR_NAMES = {
    "shuffler": ("洗牌機蓋", "Lid"),
    "shoe_reader": ("牌靴離座", "Shoe out of its base"),
    "dice_shaker": ("骰盅離座", "Shaker off its base"),
}
FAULT_NAMES = {
    "jam": ("卡牌", "jam"),
    "wrong_count": ("張數不符", "wrong count"),
    "foreign_card": ("外來牌", "foreign card"),
    "unreadable_card": ("無法讀牌", "unreadable card"),
    "power_lost": ("斷電", "power lost"),
    "sort_mode": ("排序模式", "sort mode"),
    "die_tilted": ("骰子傾斜", "die tilted"),
    "dice_stacked": ("骰子疊起", "dice stacked"),
    "die_out_of_cup": ("骰子跌出", "die out of the cup"),
    "short_shake": ("搖骰太短", "short shake"),
    "no_shake": ("沒有搖動", "no shake"),
    "reader_lost": ("讀骰器失效", "reader lost"),
    "misread": ("誤讀", "misread"),
    "duplicate_card": ("重複的牌", "duplicate card"),
    "face_up": ("牌面朝上", "face up"),
    "card_out_of_phase": ("非發牌時出牌", "card out of phase"),
    "cut_card": ("切牌卡", "cut card"),
    "reader_blocked": ("出牌口堵塞", "reader blocked"),
    "double_start": ("重複啟動", "double start"),
    "bell_failed": ("鐘不響", "bell failed"),
    "no_response": ("無回應", "no response"),
    "bad_crc": ("傳輸錯誤", "bad CRC"),
    "unapproved_firmware": ("未批准韌體", "unapproved firmware"),
    "replaced": ("已換另一台", "replaced by another unit"),
}
# Each control as the journal line of its use says it (`training.control`'s `op`).
OP_NAMES = {
    "shuffle": ("洗牌", "shuffle"),
    "shake": ("搖骰", "shake"),
    "draw": ("抽牌", "draw a card"),
    "deal": ("發完本局", "deal the round"),
    "ring": ("試鐘", "ring the bell"),
    "door": ("門/蓋", "door"),
    "power": ("電源", "power"),
    "by_hand": ("人手操作", "by hand"),
    "inject": ("加入故障", "fault on"),
    "clear": ("清除故障", "fault off"),
}
# The request fields a control may carry (the rest of a request is not journaled).
FIELDS = ("op", "device", "fault", "open", "on", "count")


def named(reply: dict[str, Any]) -> dict[str, Any]:
    """A control's reply with what a simulated shoe drew (`drawn`, also in the `last` of a
    deal) named as the table journals it ("As", "4-5"), so the visibility engine can serve it
    as the table's state serves that card (`daemon.api.routes.training`)."""

    def name(item: Any) -> Any:
        if isinstance(item, list):
            return [name(i) for i in item]
        if isinstance(item, dict) and {"rank", "suit"} <= item.keys():
            return card_name(int(item["rank"]), int(item["suit"]))
        if isinstance(item, dict) and {"top", "bottom"} <= item.keys():
            low, high = sorted((int(item["top"]), int(item["bottom"])))
            return f"{low}-{high}"
        return item

    out = dict(reply)
    if "drawn" in out:
        out["drawn"] = name(out["drawn"])
    if isinstance(out.get("last"), dict):
        out["last"] = named(out["last"])
    return out


def _label(names: dict[str, tuple[str, str]], key: str) -> dict[str, str]:
    zh, en = names.get(key, (key, key.replace("_", " ")))
    return {"zh": zh, "en": en}


class Training:
    """The training controls of one table whose devices are all simulated in one world."""

    def __init__(self, table: Any, world: TableWorld, devices: tuple[str, ...]) -> None:
        self.table = table
        self.world = world
        self.devices = devices

    @classmethod
    def of(cls, table: Any) -> Training | None:
        """The table's training mode, or None when any configured device is real (or the
        table has no config to tell)."""
        config = getattr(table, "config", None)
        configured = getattr(config, "devices", None)
        if not isinstance(configured, dict) or not configured:
            return None
        enabled = {n: d for n, d in configured.items() if getattr(d, "enabled", True)}
        if not enabled or not all(str(d.port).startswith("sim://") for d in enabled.values()):
            return None
        try:
            worlds = {parse_sim_url(str(d.port)).world for d in enabled.values()}
        except ValueError:
            return None
        if len(worlds) != 1:
            return None
        return cls(table, get_world(worlds.pop()), tuple(sorted(enabled)))

    # --- what there is ------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The devices as a trainer sees them (every card in the shoe's order stays hidden),
        and the controls each offers."""
        world = self.world.describe()
        devices = []
        for name in self.devices:
            now = world["devices"].get(name, {})
            faults = device_faults(name, self.world)
            devices.append(
                {
                    "name": name,
                    "label": _label(DEVICE_NAMES, name),
                    "powered": name not in self.world.unplugged,
                    "present": name in world["devices"],
                    "waiting": name in world["waiting"],
                    "busy": bool(now.get("busy")),
                    "armed": list(now.get("armed", [])),
                    "conditions": list(now.get("conditions", [])),
                    "latched": list(now.get("latched", [])),
                    "door": (
                        {
                            "label": _label(DOOR_NAMES, name),
                            "condition": DOORS[name],
                            "open": DOORS[name] in now.get("conditions", []),
                        }
                        if name in DOORS
                        else None
                    ),
                    "controls": [
                        {
                            "op": op,
                            "fault": fault,
                            "label": {"zh": zh, "en": en},
                        }
                        for op, fault, zh, en in CONTROLS.get(name, ())
                    ],
                    "faults": [
                        {"fault": f, "kind": kind, "label": _label(FAULT_NAMES, f)}
                        for kind in ("one_shot", "conditions")
                        for f in faults[kind]
                    ],
                }
            )
        return {
            "world": world["world"],
            "by_hand": world["by_hand"],
            "remaining": world["remaining"],
            "devices": devices,
            "table": self.physical_table(),
        }

    # --- the simulated physical table ---------------------------------------------------------

    def physical_table(self) -> dict[str, Any] | None:
        """The simulated "physical table", for the trainer's eyes only: each seat's cards (or
        each door's tiles) as its player holds them, set the house way once the seat has them
        all. At a real table nobody but the player sees a hand before it is opened; here the
        trainer plays every player, so the trainer sees them all (and tells the dealer what a
        player shows, as a player would). Thirteen's cards are the ones the simulated shoe
        dealt; Pai Gow's tiles are not read by any device, so the simulated table deals a set
        shuffled by the round (the same every time it is asked)."""
        snapshot = getattr(self.table, "procedure_snapshot", None)
        raw = snapshot() if callable(snapshot) else None
        if not isinstance(raw, dict):
            return None
        if raw.get("game") == "paigow":
            return self._paigow_table(raw)
        if raw.get("game") == "thirteen":
            return self._thirteen_table(raw)
        return None

    def _thirteen_table(self, raw: dict[str, Any]) -> dict[str, Any]:
        rules = rules13.ruleset(str(raw.get("ruleset", "macau-1989")))
        seats = []
        for seat in raw.get("seats") or []:
            cards = [str(c) for c in seat.get("cards") or []]
            rows = None
            if len(cards) == 13:
                head, middle, tail = rules13.house_way([parse_card(c) for c in cards], rules)
                rows = {
                    "head": [str(c) for c in head],
                    "middle": [str(c) for c in middle],
                    "tail": [str(c) for c in tail],
                }
            seats.append(
                {
                    "seat": seat.get("seat"),
                    "banker": bool(seat.get("banker")),
                    "cards": cards,
                    "rows": rows,
                }
            )
        return {"game": "thirteen", "seats": seats}

    def _paigow_table(self, raw: dict[str, Any]) -> dict[str, Any]:
        tiles = [str(t) for t in paigow.TILE_SET]
        seed = f"{self.world.key}:{raw.get('round')}:{raw.get('set_number')}"
        random.Random(seed).shuffle(tiles)
        seats = []
        for k, door in enumerate(raw.get("dealt_doors") or []):
            four = tiles[4 * k : 4 * k + 4]
            front, back = paigow.set_hand(paigow.parse_tiles(" ".join(four)))
            seats.append(
                {
                    "seat": door,
                    "banker": door == raw.get("banker_seat"),
                    "tiles": four,
                    "rows": {"front": [str(t) for t in front], "back": [str(t) for t in back]},
                }
            )
        return {"game": "paigow", "seats": sorted(seats, key=lambda s: s["seat"])}

    # --- using it -----------------------------------------------------------------------------

    def _deal_count(self) -> int:
        """The cards the round still needs from the shoe (a whole deck when the game does not
        say)."""
        snapshot = getattr(self.table, "procedure_snapshot", None)
        raw = snapshot() if callable(snapshot) else {}
        dealt = raw.get("dealt") if isinstance(raw, dict) else None
        return DECK - len(dealt) if isinstance(dealt, list) else DECK

    async def control(self, request: dict[str, Any], actor: str, role: str) -> dict[str, Any]:
        """Carry out one control for `actor` and journal it (used or refused)."""
        asked = {k: request[k] for k in FIELDS if k in request}
        device = asked.get("device") or OPERATED.get(str(asked.get("op")))
        if asked.get("op") == "deal":
            device = "shoe_reader"
            if "count" not in asked:
                asked["count"] = self._deal_count()
        if asked.get("op") == "ring":
            device = "timer_bell"
        if device is not None and device not in self.devices:
            reply: dict[str, Any] = {"ok": False, "error": f"{device} is not at this table"}
        elif asked.get("op") == "deal" and asked.get("count", 1) < 1:
            reply = {"ok": False, "error": "the round has all its cards"}
        else:
            reply = handle_control(self.world, asked)
        journaled = {**asked, "ok": reply.get("ok", False), "role": role}
        for key in ("error", "reader", "finished", "armed", "dealt"):
            if key in reply:
                journaled[key] = reply[key]
        if isinstance(reply.get("last"), dict) and "reader" in reply["last"]:
            journaled["reader"] = reply["last"]["reader"]
        journal = getattr(self.table, "journal", None)
        round_id = getattr(getattr(self.table, "procedure", None), "round_id", None)
        if journal is not None:
            await journal.append_async(
                TRAINING_EVENT,
                actor=f"{role}:{actor}",
                round_id=round_id,
                payload={"actor": f"{role}:{actor}", **journaled},
                commit=True,
            )
        log.info(TRAINING_EVENT, actor=actor, **journaled)
        notify = getattr(self.table, "notify", None)
        if callable(notify):
            await notify()
        return reply
