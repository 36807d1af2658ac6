"""An in-memory table for the API tests: a tiny Thirteen-like procedure behind `TableFacade`.

It enforces its own small legal-action table (so a refusal the API reports is a real refusal
with a journaled violation), keeps a hash-chained journal in memory, runs the five-minute timer
on an injected clock and can be put in TILT. The real table runtime replaces it in the
end-to-end tests; nothing here is a shortcut the API relies on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from daemon.api.models import check_payload
from daemon.contract.facade import ActionSpec, Histogram, ParamSpec, TableMetrics
from daemon.contract.metrics import LatencyHistogram

WALL_EPOCH = datetime(2026, 11, 29, 12, 0, tzinfo=UTC).timestamp()
ARRANGE_SECONDS = 300.0
SUITS = "SHDC"
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]

DEALER = frozenset({"dealer"})
SUPERVISOR = frozenset({"supervisor"})

CATALOG = [
    ActionSpec("open_round", DEALER, label_en="Open round", label_zh="開局"),
    ActionSpec(
        "place_bet",
        DEALER,
        {
            "seat": ParamSpec("int", minimum=1, maximum=4, label_en="Seat", label_zh="座位"),
            "amount": ParamSpec(
                "int", minimum=1, maximum=10_000_000, label_en="Amount", label_zh="金額"
            ),
            "bettor": ParamSpec("str", max_length=32, label_en="Bettor", label_zh="投注人"),
        },
        label_en="Place bet",
        label_zh="下注",
    ),
    ActionSpec("shake_dice", DEALER, label_en="Shake dice", label_zh="搖骰"),
    ActionSpec("deal", DEALER, label_en="Deal", label_zh="發牌"),
    ActionSpec("arrangements_done", DEALER, label_en="Arrangements in", label_zh="排牌完成"),
    ActionSpec("settle", DEALER, label_en="Settle", label_zh="結算"),
    ActionSpec(
        "clear_hold", SUPERVISOR, requires_reason=True, label_en="Clear hold", label_zh="解除暫停"
    ),
    ActionSpec(
        "void_round", SUPERVISOR, requires_reason=True, label_en="Void round", label_zh="作廢本局"
    ),
    # A two-person step: the dealer enters a card the reader missed; a supervisor decides.
    ActionSpec(
        "propose_card",
        DEALER,
        {"card": ParamSpec("str", min_length=2, max_length=3, label_en="Card", label_zh="牌")},
        label_en="Enter misread card",
        label_zh="輸入誤讀的牌",
    ),
    ActionSpec(
        "approve_override",
        SUPERVISOR,
        requires_reason=True,
        label_en="Approve override",
        label_zh="批准更正",
    ),
    ActionSpec(
        "reject_override",
        SUPERVISOR,
        requires_reason=True,
        label_en="Reject override",
        label_zh="駁回更正",
    ),
]
SPECS = {spec.name: spec for spec in CATALOG}

# phase -> {action: next phase}
PROCEDURE: dict[str, dict[str, str]] = {
    "idle": {"open_round": "betting"},
    "betting": {"place_bet": "betting", "shake_dice": "dealing"},
    "dealing": {"deal": "arranging"},
    "arranging": {"arrangements_done": "settling"},
    "settling": {"settle": "settled"},
    "settled": {"open_round": "betting"},
}
IN_ROUND = {"betting", "dealing", "arranging", "settling"}
# Why a step out of order is refused: the article it would break.
ARTICLES = {
    "place_bet": "Art. 2(b)",
    "shake_dice": "Art. 2(b)",
    "deal": "Art. 2(c)",
    "arrangements_done": "Art. 2(d)",
    "settle": "Art. 7",
    "open_round": "Art. 2(a)",
}
NEXT = {
    "idle": ("open a round", "開局"),
    "betting": ("bets on the four seats, then the dice", "四門下注，然後搖骰"),
    "dealing": ("deal 13 cards to each seat", "每門發十三張牌"),
    "arranging": ("players arrange within five minutes", "玩家五分鐘內排牌"),
    "settling": ("settle the round", "結算"),
    "settled": ("open the next round", "開下一局"),
}
# Each phase's name in both languages, as a real table's view serves it (`phase_label`).
PHASE_LABELS = {
    "idle": ("Idle", "待開局"),
    "betting": ("Betting", "下注"),
    "dealing": ("Dealing", "發牌"),
    "arranging": ("Players arrange", "玩家排牌"),
    "settling": ("Settling", "結算"),
    "settled": ("Settled", "已結算"),
}


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class _Subscription:
    def __init__(self, table: FakeTable, after_seq: int | None) -> None:
        self._table = table
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        table._subscribers.append(self._queue)
        self._backlog = [e for e in table.journal if after_seq is not None and e["seq"] > after_seq]
        self._last = self._backlog[-1]["seq"] if self._backlog else (after_seq or 0)
        self.closed = False

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        for event in self._backlog:
            yield event
        while not self.closed:
            event = await self._queue.get()
            if event["seq"] > self._last:
                self._last = event["seq"]
                yield event

    async def aclose(self) -> None:
        self.closed = True
        if self._queue in self._table._subscribers:
            self._table._subscribers.remove(self._queue)


class FakeTable:
    # The round's state, set by _new_round_state.
    bets: dict[int, list[dict[str, Any]]]
    cards: dict[int, list[str]]
    entered: list[tuple[int, str]]  # cards entered by hand: (seat, card)
    dice: list[int] | None
    deadline: float | None
    rang: bool
    late: set[int]
    settlement: dict[int, dict[str, Any]]

    def __init__(self, clock: ManualClock | None = None, seed: int = 7) -> None:
        self.clock = clock or ManualClock()
        self._start = self.clock()
        self.rng = random.Random(seed)
        self.journal: list[dict[str, Any]] = []
        self._subscribers: list[asyncio.Queue[dict[str, Any]]] = []
        self.phase = "idle"
        self.round: int | None = None
        self.rounds_total = 0
        self.hold: dict[str, Any] | None = None
        self.violation_counts: Counter[str] = Counter()
        self.fault_counts: Counter[str] = Counter()
        self.fsync = LatencyHistogram()
        self.acts: list[tuple[str, str, str, dict[str, Any]]] = []
        self.misread: int | None = None  # the seat a card the reader missed belongs to
        self.override: dict[str, Any] | None = None
        self._new_round_state()

    # --- facade ---

    def actions(self) -> list[ActionSpec]:
        return list(CATALOG)

    def snapshot(self) -> dict[str, Any]:
        timer = None
        if self.deadline is not None:
            remaining = max(0.0, self.deadline - self.clock())
            timer = {
                "deadline": self._wall(self.deadline),
                "remaining": remaining,
                "running": remaining > 0 and not self.rang,
                "rang": self.rang,
            }
        en, zh = NEXT[self.phase]
        label_en, label_zh = PHASE_LABELS[self.phase]
        return {
            "table": "T01",
            "game": "thirteen",
            "round": self.round,
            "phase": self.phase,
            "phase_label": {"en": label_en, "zh": label_zh},
            "next": "a supervisor clears the hold" if self.hold else en,
            "next_zh": "由主任解除暫停" if self.hold else zh,
            "hold": self.hold,
            "seats": [
                {
                    "seat": n,
                    "name": f"Seat {n}",
                    "holder": max(self.bets[n], key=lambda b: b["amount"])["bettor"]
                    if self.bets[n]
                    else None,
                    "bets": list(self.bets[n]),
                    "cards": list(self.cards[n]),
                    "settlement": self.settlement.get(n),
                    "late": n in self.late,
                }
                for n in range(1, 5)
            ],
            "banker": None,
            "dice": self.dice,
            "dice_total": sum(self.dice) if self.dice else None,
            "timer": timer,
            "settlements": [{"seat": n, **s} for n, s in sorted(self.settlement.items())],
            "violations": [
                {k: e["payload"].get(k) for k in ("article", "action", "phase")}
                | {"seq": e["seq"], "actor": e["actor"]}
                for e in self.journal
                if e["event"] == "table.violation"
            ][-5:],
            "faults": [
                {"seq": e["seq"], **e["payload"]}
                for e in self.journal
                if e["event"] == "device.fault"
            ][-5:],
            "override": self.override,
            "server_time": self._wall(self.clock()),
            # What the round has opened, as the real table's view says it: a card entered by
            # hand is dealt face down like any other (Art. 2(b)); the settlement opens the seats
            # compared and closes the round.
            "revealed": {
                "closed": bool(self.settlement),
                "seats": [n for n in self.settlement if n not in self.late],
                "face_up": [],
            },
        }

    def legal_actions(self, role: str) -> list[str]:
        if self.hold is not None:
            names = ["clear_hold"] + (["void_round"] if self.round is not None else [])
        elif self.override is not None:
            names = ["approve_override", "reject_override", "void_round"]
        elif self.misread is not None:
            names = ["propose_card", "void_round"]
        else:
            names = list(PROCEDURE[self.phase])
            if self.phase in IN_ROUND:
                names.append("void_round")
        return [n for n in names if role in SPECS[n].roles]

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        self.acts.append((action, actor, role, payload))
        spec = SPECS.get(action)
        # Like a procedure, it refuses a value out of its declared bounds (with the article).
        bounds = check_payload(spec, payload) if spec is not None and spec.params else None
        if action not in self.legal_actions(role) or bounds:
            article = "R5 hold" if self.hold else ARTICLES.get(action, "Art. 2")
            self.violation_counts[article] += 1
            reason = "the table is on hold" if self.hold else f"not legal in {self.phase}"
            reason = bounds or reason
            event = self._append(
                "table.violation",
                actor,
                {"action": action, "phase": self.phase, "article": article, "reason": reason},
            )
            return {
                "accepted": False,
                "violation": {
                    "article": article,
                    "phase": self.phase,
                    "reason": reason,
                    "seq": event["seq"],
                },
            }
        handler = getattr(self, f"_do_{action}", None)
        if handler is not None:
            handler(actor, payload)
        if action in PROCEDURE.get(self.phase, {}):
            self.phase = PROCEDURE[self.phase][action]
        event = self._append(f"table.{action}", actor, payload)
        return {"accepted": True, "seq": event["seq"], "phase": self.phase}

    def device_status(self) -> list[dict[str, Any]]:
        faulty = self.hold.get("device") if self.hold else None
        return [
            {
                "name": name,
                "port": f"sim://{name}",
                "link": "up",
                "identity": {"make": "tabled", "model": f"sim-{name}", "firmware": "1.0"},
                "approved": True,
                "fault": "jam" if name == faulty else None,
            }
            for name in ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")
        ]

    def journal_query(
        self,
        *,
        round: str | None = None,
        event: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        def keep(e: dict[str, Any]) -> bool:
            if round is not None and str(e["round"]) != round:
                return False
            if event is not None and not (
                e["event"].startswith(event) if event.endswith(".") else e["event"] == event
            ):
                return False
            if since is not None and e["wall"] < since.timestamp():
                return False
            return not (until is not None and e["wall"] > until.timestamp())

        return [e for e in self.journal if keep(e)][-limit:]

    def subscribe(self, after_seq: int | None = None) -> _Subscription:
        return _Subscription(self, after_seq)

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        self._append(event, "api", payload)

    async def training(self, name: str, args: list[Any], token: str) -> Any:
        """No simulated devices: no training mode."""
        return None

    def metrics(self) -> TableMetrics:
        return TableMetrics(
            rounds_total=self.rounds_total,
            violations_by_article=dict(self.violation_counts),
            faults_by_device=dict(self.fault_counts),
            frame_errors_by_device={"shoe_reader": 2},
            link_round_trip_seconds={
                "shuffler": Histogram(buckets=((0.001, 3), (0.01, 5)), sum=0.02, count=5)
            },
            journal_fsync_seconds=self.fsync.snapshot(),
            link_up_by_device={"shuffler": True, "shoe_reader": True},
        )

    # --- what the tests drive directly: time and faults ---

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        if self.deadline is not None and not self.rang and self.clock() >= self.deadline:
            self.rang = True
            self.late = {n for n in range(1, 5) if self.cards[n]}
            self._append("timer.expired", "timer_bell", {"late_seats": sorted(self.late)})
            self._append("bell.rang", "timer_bell", {})

    def inject_fault(self, device: str, fault: str = "jam") -> None:
        self.fault_counts[device] += 1
        self.hold = {
            "kind": "tilt",
            "reason": f"{device}: {fault}",
            "device": device,
            "since": self._wall(self.clock()),
            "resumes": self.phase,
        }
        self._append("device.fault", device, {"device": device, "fault": fault})

    def misread_card(self, seat: int = 1) -> None:
        self.misread = seat
        self._append("card.misread", "shoe_reader", {"seat": seat})

    # --- the procedure's effects ---

    def _do_propose_card(self, actor: str, payload: dict[str, Any]) -> None:
        card, seat = payload["card"], self.misread
        self.override = {
            "kind": "enter_card",
            "card": card,
            "seat": seat,
            "proposed_by": actor,
            "label": {"en": f"Enter card by hand {card} (seat {seat})", "zh": f"人手輸入牌 {card}"},
        }

    def _do_approve_override(self, actor: str, payload: dict[str, Any]) -> None:
        pending = self.override or {}
        self.cards[pending["seat"]].append(pending["card"])
        self.entered.append((pending["seat"], pending["card"]))
        self.override = self.misread = None

    def _do_reject_override(self, actor: str, payload: dict[str, Any]) -> None:
        self.override = None

    def _new_round_state(self) -> None:
        self.bets = {n: [] for n in range(1, 5)}
        self.cards = {n: [] for n in range(1, 5)}
        self.entered = []
        self.dice = None
        self.deadline = None
        self.rang = False
        self.late = set()
        self.settlement = {}

    def _do_open_round(self, actor: str, payload: dict[str, Any]) -> None:
        self._new_round_state()
        self.round = (self.round or 0) + 1

    def _do_place_bet(self, actor: str, payload: dict[str, Any]) -> None:
        self.bets[payload["seat"]].append(
            {"bettor": payload["bettor"], "amount": payload["amount"]}
        )

    def _do_shake_dice(self, actor: str, payload: dict[str, Any]) -> None:
        self.dice = [self.rng.randint(1, 6) for _ in range(4)]

    def _do_deal(self, actor: str, payload: dict[str, Any]) -> None:
        deck = [r + s for s in SUITS for r in RANKS]
        self.rng.shuffle(deck)
        first = (sum(self.dice or [1]) - 1) % 4 + 1
        for i, card in enumerate(deck):
            self.cards[(first - 1 + i) % 4 + 1].append(card)
        self.deadline = self.clock() + ARRANGE_SECONDS

    def _do_arrangements_done(self, actor: str, payload: dict[str, Any]) -> None:
        self.deadline = None if not self.rang else self.deadline

    def _do_settle(self, actor: str, payload: dict[str, Any]) -> None:
        for n in range(1, 5):
            staked = sum(b["amount"] for b in self.bets[n])
            if n in self.late:
                self.settlement[n] = {"result": "late", "amount": -staked}
            else:
                win = sum(RANKS.index(c[:-1]) for c in self.cards[n]) % 2 == 0
                self.settlement[n] = {
                    "result": "win" if win else "lose",
                    "amount": staked if win else -staked,
                }
        self.rounds_total += 1
        self.fsync.observe(0.0004)

    def _do_clear_hold(self, actor: str, payload: dict[str, Any]) -> None:
        self.hold = None

    def _do_void_round(self, actor: str, payload: dict[str, Any]) -> None:
        self.hold = None
        self.phase = "idle"
        self.rounds_total += 1
        self._new_round_state()

    # --- the journal ---

    def _wall(self, mono: float) -> float:
        return WALL_EPOCH + (mono - self._start)

    def _append(self, event: str, actor: str, payload: dict[str, Any]) -> dict[str, Any]:
        prev = self.journal[-1]["hash"] if self.journal else "0" * 64
        wall = self._wall(self.clock())
        entry: dict[str, Any] = {
            "seq": len(self.journal) + 1,
            "time": datetime.fromtimestamp(wall, UTC).isoformat(),
            "wall": wall,
            "mono": self.clock(),
            "table": "T01",
            "round": self.round,
            "actor": actor,
            "event": event,
            "payload": payload,
            "prev": prev,
        }
        entry["hash"] = hashlib.sha256(
            (prev + json.dumps(entry, sort_keys=True)).encode()
        ).hexdigest()
        self.journal.append(entry)
        for queue in self._subscribers:
            queue.put_nowait(entry)
        return entry
