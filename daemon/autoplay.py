"""Scripted rounds on a simulated table: `tabled run --autoplay N`.

A scripted dealer, players and pit supervisor play N whole rounds through the same `Table` the
operator API drives, against simulated devices (`sim://` ports in this process, or `tabled sim`
devices reached through its control channel). Players bet and arrange mostly the house way;
some arrange a foul hand, some are still arranging when the bell rings. A configurable share of
rounds meets an injected device fault (through the simulators' control channel: a jammed or
miscounting shuffler, an open lid, a die out of the cup three times, a shoe taken out mid-deal,
a misread card, a cable pulled), which the supervisor clears the way a pit does: the device is
put right, it reports healthy, then the HOLD or TILT is cleared (or the deal voided). Another
share meets attempted violations (a bet after the dice, the wrong player shaking, a short
cut...), each of which the procedure must refuse and journal.

Nothing is settled here: the table decides every outcome and journals it; the autoplay only
acts and counts. It ends with a summary: rounds, outcomes, violations by article, faults by
device, seconds per round.

The arrangement timer is the table's: for a late player the script jumps the table's clock
(`SimulationClock`) over the five minutes instead of waiting them out, and the table's own
timer fires the bell. The device links keep real time.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import structlog

from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.rules import paigow
from daemon.rules import thirteen as rules13
from daemon.rules.cards import parse_card
from daemon.table import Table, TableError
from drivers.clock import TimerHandle
from drivers.shoe_reader import card_name

log = structlog.get_logger("tabled.autoplay")

DEALER = "D1"
SUPERVISOR = "S1"
PLAYERS = ("P1", "P2", "P3", "P4", "P5", "P6")
ARRANGEMENT_SECONDS = 300.0
WAIT = 15.0  # real seconds a device may take to answer before the script gives up

# (device, fault, where it strikes): the faults a faulty round may meet.
THIRTEEN_FAULTS = (
    ("shuffler", "wrong_count", "shuffle"),
    ("shuffler", "jam", "shuffle"),
    ("shuffler", "lid_open", "betting"),
    ("shuffler", "power_lost", "shuffle"),
    ("dice_shaker", "die_out_of_cup", "shake"),
    ("dice_shaker", "die_out_of_cup*3", "shake"),
    ("dice_shaker", "unplug", "shake"),
    ("shoe_reader", "shoe_removed", "deal"),
    ("shoe_reader", "misread", "deal"),
    ("shoe_reader", "face_up", "deal"),
    ("shoe_reader", "duplicate_card", "deal"),
)
PAIGOW_FAULTS = (
    ("dice_shaker", "die_tilted", "shake"),
    ("dice_shaker", "die_out_of_cup*3", "shake"),
    ("dice_shaker", "shaker_detached", "betting"),
    ("dice_shaker", "unplug", "shake"),
)
CONDITIONS = frozenset({"lid_open", "shoe_removed", "shaker_detached", "reader_blocked"})
SUPERVISOR_ACTIONS = frozenset({"clear_hold", "clear_tilt", "void_round", "void_deal"})


class AutoplayError(Exception):
    """The script could not go on (a device never answered, a legal step was refused)."""


class Held(Exception):
    """A step was refused because a fault held the table meanwhile: supervise, then go on."""


# ---- the simulators' control channel ------------------------------------------------------------


class SimControl(Protocol):
    async def request(self, request: dict[str, Any]) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class InProcessControl:
    """The control channel of `sim://` devices in this process (their shared table world)."""

    def __init__(self, world: str) -> None:
        from simulators.world import get_world  # noqa: PLC0415 - only simulated tables need it

        self.world = get_world(world)

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        from simulators.control import handle_control  # noqa: PLC0415

        return handle_control(self.world, request)

    async def close(self) -> None:
        return None


class SocketControl:
    """The control channel `tabled sim` serves on a unix socket (one JSON object a line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._streams is None:
            self._streams = await asyncio.open_unix_connection(str(self.path))
        reader, writer = self._streams
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        line = await reader.readline()
        if not line:
            raise AutoplayError(f"control channel {self.path} closed")
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def control_for(table: Table, socket: Path | None = None) -> SimControl:
    """The control channel of the table's simulated devices; AutoplayError if it has none."""
    if socket is not None:
        return SocketControl(socket)
    from simulators.spec import parse_sim_url  # noqa: PLC0415

    worlds = {
        parse_sim_url(device.port).world
        for device in table.config.devices.values()
        if device.enabled and device.port.startswith("sim://")
    }
    if len(worlds) != 1:
        raise AutoplayError(
            "autoplay needs the table's devices simulated in one world (sim:// ports), "
            "or --control SOCKET of `tabled sim`"
        )
    return InProcessControl(worlds.pop())


# ---- a table clock a simulation can jump ------------------------------------------------------


class _Timer:
    __slots__ = ("callback", "done", "handle", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.done = False
        self.handle: asyncio.TimerHandle | None = None

    def fire(self) -> None:
        if not self.done:
            self.done = True
            if self.handle is not None:
                self.handle.cancel()
            self.callback()

    def cancel(self) -> None:
        self.done = True
        if self.handle is not None:
            self.handle.cancel()


class SimulationClock:
    """The loop's monotonic time plus the time jumped over; timers due after a jump fire."""

    def __init__(self) -> None:
        self.skipped = 0.0
        self._timers: list[tuple[float, int, _Timer]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return asyncio.get_running_loop().time() + self.skipped

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _Timer(when, callback)
        loop = asyncio.get_running_loop()
        timer.handle = loop.call_at(when - self.skipped, timer.fire)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def jump(self, seconds: float) -> None:
        self.skipped += seconds
        now = self.now()
        while self._timers and self._timers[0][0] <= now:
            _, _, timer = heapq.heappop(self._timers)
            timer.fire()
        self._timers = [t for t in self._timers if not t[2].done]
        heapq.heapify(self._timers)


# ---- the summary --------------------------------------------------------------------------------


@dataclass
class Summary:
    game: str
    table: str
    rounds: int = 0
    seconds: list[float] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    hands: Counter[str] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    attempted: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)
    supervisor: Counter[str] = field(default_factory=Counter)
    voided: int = 0
    journal: str = ""
    last_seq: int = 0
    durability: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "table": self.table,
            "rounds": self.rounds,
            "seconds_per_round": {
                "median": statistics.median(self.seconds) if self.seconds else None,
                "mean": statistics.fmean(self.seconds) if self.seconds else None,
                "max": max(self.seconds, default=None),
                "total": sum(self.seconds),
            },
            "outcomes": dict(self.outcomes),
            "hands": dict(self.hands),
            "violations_by_article": dict(self.violations),
            "violations_attempted": dict(self.attempted),
            "faults_by_device": dict(self.faults),
            "faults_injected": dict(self.injected),
            "supervisor": dict(self.supervisor),
            "voided": self.voided,
            "journal": self.journal,
            "last_seq": self.last_seq,
            "durability": self.durability,
        }

    def render(self) -> str:
        lines = [f"autoplay: {self.rounds} round(s) of {self.game} at table {self.table}"]
        if self.seconds:
            lines.append(
                f"  seconds per round   median {statistics.median(self.seconds):.3f}   "
                f"mean {statistics.fmean(self.seconds):.3f}   max {max(self.seconds):.3f}   "
                f"(total {sum(self.seconds):.2f} s)"
            )
        lines.append("  outcomes            " + _counts(self.outcomes))
        if self.hands:
            lines.append("    of which          " + _counts(self.hands))
        if self.voided:
            lines.append(f"  voided              {self.voided} deal(s) or round(s)")
        total = sum(self.violations.values())
        lines.append(f"  violations          {total} refused and journaled")
        for article, n in sorted(self.violations.items()):
            lines.append(f"    {article:<40} {n}")
        lines.append(f"  faults              {sum(self.faults.values())} (HOLD or TILT)")
        for device, n in sorted(self.faults.items()):
            lines.append(f"    {device:<40} {n}")
        if self.injected:
            lines.append("  injected            " + _counts(self.injected))
        if self.supervisor:
            lines.append("  supervisor          " + _counts(self.supervisor))
        lines.append(
            f"  journal             {self.journal} ({self.durability}), last seq {self.last_seq}"
            f"; check it with: tabled verify-log {self.journal}"
        )
        return "\n".join(lines)


def _counts(counter: Counter[str]) -> str:
    return "   ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


# ---- the script -------------------------------------------------------------------------------


@dataclass
class Plan:
    """What one round meets."""

    fault: tuple[str, str, str] | None = None
    violations: bool = False
    late: bool = False
    foul: bool = False


class Autoplay:
    def __init__(
        self,
        table: Table,
        control: SimControl,
        *,
        rounds: int,
        seed: int | None = None,
        fault_share: float = 0.25,
        violation_share: float = 0.3,
        late_share: float = 0.1,
        foul_share: float = 0.15,
        entered_share: float = 0.5,
        clock: SimulationClock | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.table = table
        self.control = control
        self.rounds = rounds
        self.rng = random.Random(seed)
        self.fault_share = fault_share
        self.violation_share = violation_share
        self.late_share = late_share
        self.foul_share = foul_share
        # The share of misread cards the dealer saw and enters by hand for a supervisor to
        # approve (the override); the others cannot be established and the deal is voided.
        self.entered_share = entered_share
        self.clock = clock
        self.progress = progress or (lambda _line: None)
        self.summary = Summary(table.config.game, table.config.table_id)
        self.plan = Plan()
        self._struck = False
        self._conditions: list[tuple[str, str]] = []
        self._untrusted_deal = False
        self._misread_card: str | None = None
        self._settled = False
        self._tiles: list[str] = []
        self._tile_cursor = 0
        self._hands: dict[int, list[str]] = {}
        self._last_seen: dict[int, str] = {}

    @property
    def proc(self) -> Any:
        return self.table.procedure

    # ---- acting -----------------------------------------------------------------------------

    async def act(
        self, action: str, payload: dict[str, Any] | None = None, *, role: str = "dealer"
    ) -> dict[str, Any]:
        """A step the script takes as legal: AutoplayError if the table refuses it."""
        person = SUPERVISOR if role == "supervisor" else DEALER
        result = await self.table.act(action, person, role, payload or {})
        if not result["accepted"]:
            if self.proc.phase in ("HOLD", "TILT") and action not in SUPERVISOR_ACTIONS:
                raise Held(action)
            raise AutoplayError(f"{action} refused in {self.proc.phase}: {result['violation']}")
        return result

    async def attempt(self, action: str, payload: dict[str, Any], what: str) -> None:
        """An attempted violation: the table must refuse it (and journal it)."""
        result = await self.table.act(action, DEALER, "dealer", payload)
        if result["accepted"]:
            raise AutoplayError(f"the table accepted an attempted violation: {what}")
        self.summary.attempted[what] += 1

    async def wait(self, predicate: Callable[[], bool], what: str) -> None:
        if not await self.table.wait_for(predicate, WAIT):
            raise AutoplayError(f"waited {WAIT:.0f} s for {what}; phase {self.proc.phase}")

    async def control_request(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = await self.control.request(request)
        if not reply.get("ok"):
            raise AutoplayError(f"simulator control {request}: {reply.get('error')}")
        return reply

    async def inject(self, device: str, fault: str) -> None:
        self.summary.injected[f"{device}:{fault}"] += 1
        if fault == "unplug":
            await self.control_request({"op": "unplug", "device": device})
            self._conditions.append((device, "unplug"))
            return
        times = 1
        if fault.endswith("*3"):
            fault, times = fault[:-2], 3
        for _ in range(times):
            await self.control_request({"op": "inject", "device": device, "fault": fault})
        if fault in CONDITIONS:
            self._conditions.append((device, fault))
            # A door or lid opened holds the table as soon as the device reports it.
            await self.wait(lambda: self.proc.phase in ("HOLD", "TILT"), f"{device}: {fault}")

    async def strike(self, where: str) -> None:
        """Inject this round's fault if it strikes here (once a round)."""
        fault = self.plan.fault
        if fault is not None and fault[2] == where and not self._struck:
            self._struck = True
            await self.inject(fault[0], fault[1])

    # ---- the run ------------------------------------------------------------------------------

    async def run(self) -> Summary:
        game = self.table.config.game
        for number in range(1, self.rounds + 1):
            self.plan = self._plan()
            self._struck = False
            self._settled = False
            started = time.perf_counter()
            if game == "thirteen":
                await self._play(self._thirteen_step)
            else:
                await self._play(self._paigow_step)
            elapsed = time.perf_counter() - started
            self.summary.rounds += 1
            self.summary.seconds.append(elapsed)
            self.progress(
                f"round {number}/{self.rounds}: {self.proc.phase} in {elapsed:.3f} s"
                + (f", fault {self.plan.fault[0]}:{self.plan.fault[1]}" if self.plan.fault else "")
            )
        return self.finish()

    def finish(self) -> Summary:
        stats = self.table.stats
        self.summary.violations = Counter(stats.violations_by_article)
        self.summary.faults = Counter(stats.faults_by_device)
        journal = self.table.journal
        self.summary.journal = str(self.table.journal_config.dir)
        self.summary.durability = self.table.journal_config.durability
        self.summary.last_seq = journal.last_seq if journal is not None else 0
        return self.summary

    def _plan(self) -> Plan:
        faults = THIRTEEN_FAULTS if self.table.config.game == "thirteen" else PAIGOW_FAULTS
        rng = self.rng
        return Plan(
            fault=rng.choice(faults) if rng.random() < self.fault_share else None,
            violations=rng.random() < self.violation_share,
            late=rng.random() < self.late_share,
            foul=rng.random() < self.foul_share,
        )

    async def _play(self, step: Callable[[str], Any]) -> None:
        steps = 0
        while not self._settled:
            steps += 1
            if steps > 2000:
                raise AutoplayError(f"the round does not end; phase {self.proc.phase}")
            phase = self.proc.phase
            try:
                if phase in ("HOLD", "TILT"):
                    await self.supervise()
                else:
                    await step(phase)
            except Held:
                continue  # a device fault came in between two steps; the supervisor is next

    # ---- the pit supervisor -----------------------------------------------------------------

    async def supervise(self) -> None:
        """Put the devices right, wait for them to report healthy, then clear (or void)."""
        for device, fault in self._conditions:
            if fault == "unplug":
                await self.control_request({"op": "plug", "device": device})
            else:
                await self.control_request({"op": "clear", "device": device, "fault": fault})
        self._conditions.clear()
        faults = self.proc.faults
        suspended = self.proc.suspended
        if any(f.get("fault") == "link lost" for f in faults.values()):
            # The driver reconnects with backoff; the link coming up marks the device healthy.
            await self.wait(
                lambda: all(f.get("healthy") for f in self.proc.faults.values()),
                "a lost link to come back",
            )
        action = "clear_tilt" if self.proc.phase == "TILT" else "clear_hold"
        for _ in range(20):
            if self.proc.phase not in ("HOLD", "TILT"):
                return
            action = "clear_tilt" if self.proc.phase == "TILT" else "clear_hold"
            result = await self.table.act(
                action, SUPERVISOR, "supervisor", {"reason": "autoplay: device put right"}
            )
            if result["accepted"]:
                self.summary.supervisor[action] += 1
                # A card the reader got wrong mid-deal (misread, duplicate, out of phase, a read
                # lost) leaves a deal that cannot be put right in order: it is voided (Art. 4).
                shoe = faults.get("shoe_reader")
                if suspended == "DEALING" and shoe is not None and shoe.get("kind") == "tilt":
                    # A misread card the dealer saw may be entered by hand instead (Art. 4,
                    # the deal put right in order), if a supervisor approves it.
                    entered = (
                        getattr(self.proc, "misread", None) is not None
                        and self._misread_card is not None
                        and self.rng.random() < self.entered_share
                    )
                    self._untrusted_deal = not entered
                    if not entered:
                        self._misread_card = None
                return
            await self.table.wait_for(lambda: False, 0.05)
        result = await self.table.act(
            "void_round", SUPERVISOR, "supervisor", {"reason": "autoplay: cannot clear"}
        )
        if not result["accepted"]:
            raise AutoplayError(f"the supervisor can neither clear nor void: {result}")
        self.summary.supervisor["void_round"] += 1
        self.summary.voided += 1

    # ---- Thirteen -----------------------------------------------------------------------------

    async def _thirteen_step(self, phase: str) -> None:
        proc: ThirteenProcedure = self.proc
        if phase == "EQUIPMENT_CHECK":
            await self.wait(
                lambda: all(d in proc.identified for d in proc.devices), "devices identified"
            )
            await self.act("open_table")
        elif phase == "HAND_SHUFFLE":
            await self.strike("shuffle")
            await self.act("confirm_hand_shuffle")
        elif phase == "MACHINE_SHUFFLE":
            await self.wait(lambda: proc.phase != "MACHINE_SHUFFLE", "the shuffler's count")
        elif phase == "CUT":
            cards = self.rng.randint(10, 42)
            if self.plan.violations:
                await self.attempt(
                    "confirm_cut",
                    {"by": "player", "player": "P1", "cards": 6, "one_hand": True},
                    "short cut",
                )
            if self.rng.random() < 0.2:
                cut = {"by": "dealer", "players_declined": True, "cards": cards, "one_hand": True}
            else:
                cut = {"by": "player", "player": self.rng.choice(PLAYERS), "cards": cards}
                cut["one_hand"] = True
            await self.act("confirm_cut", cut)
        elif phase == "SHOE_LOADING":
            await self.act("load_shoe")
        elif phase == "BETTING":
            await self._thirteen_bets(proc)
        elif phase == "SHAKING":
            await self.wait(lambda: proc.phase != "SHAKING", "the dice")
        elif phase == "DEALING":
            await self._thirteen_deal(proc)
        elif phase == "BANKER_ARRANGING":
            await self.act("arrange_banker", _rows(house_way13(proc.seat_cards(0))))
        elif phase == "BANKER_ARRANGED":
            await self.act("open_banker")
        elif phase == "PLAYERS_ARRANGING":
            await self._thirteen_arrangements(proc)
        elif phase == "SETTLING":
            await self.act("settle_round")
            for entry in proc.settlement or []:
                if entry.get("late"):
                    self.summary.hands["late at the bell"] += 1
                elif (entry.get("rules") or {}).get("foul"):
                    self.summary.hands["foul"] += 1
                self.summary.outcomes[str(entry.get("outcome"))] += 1
            self._settled = True
        elif phase == "ROUND_OVER":
            await self.act("start_round")
        else:
            raise AutoplayError(f"no script for phase {phase}")

    async def _thirteen_bets(self, proc: ThirteenProcedure) -> None:
        if not proc.bets:
            await self.strike("betting")
            if self.proc.phase != "BETTING":
                return
            players = self.rng.sample(PLAYERS, self.rng.randint(1, 4))
            units = sorted(proc.units or (1, 2, 3))
            for player in players:
                unit = self.rng.choice(units)
                bet = {
                    "player": player,
                    "seat": self.rng.randint(1, 3),
                    "amount": unit * self.rng.choice((100, 200, 500)),
                    "units": unit,
                    "seated": self.rng.random() < 0.8,
                }
                await self.act("place_bet", bet)
                if self.proc.phase != "BETTING":
                    return
        if self.plan.violations:
            await self.attempt(
                "place_bet",
                {"player": "P9", "seat": 0, "amount": 100, "units": 1, "seated": True},
                "bet on the banker's seat",
            )
            highest = proc.highest_bettor()
            other = next(p for p in (*PLAYERS, "P9") if p != highest)
            await self.attempt("shake_dice", {"player": other}, "dice shaken by another player")
        await self.strike("shake")
        if self.proc.phase == "BETTING":
            await self.act("shake_dice", {"player": proc.highest_bettor()})

    async def _thirteen_deal(self, proc: ThirteenProcedure) -> None:
        if self._untrusted_deal:
            # A card went past the reader unread: the deal cannot be put right (Art. 4).
            self._untrusted_deal = False
            await self.act("void_deal", {"reason": "a card was misread"}, role="supervisor")
            self.summary.voided += 1
            return
        if proc.misread is not None and self._misread_card is not None:
            # The dealer shows the card the reader missed and enters it; the pit approves.
            card, self._misread_card = self._misread_card, None
            await self.act("propose_card", {"card": card, "note": "autoplay: shown face up"})
            await self.act(
                "approve_override",
                {"reason": "autoplay: the card checked on camera"},
                role="supervisor",
            )
            self.summary.supervisor["approve_override"] += 1
        if self.plan.violations and proc.bets:
            bet = dict(proc.bets[0])
            await self.attempt(
                "place_bet",
                {k: bet[k] for k in ("player", "seat", "amount", "units", "seated")},
                "bet after the dice",
            )
            await self.attempt(
                "withdraw_bet",
                {"player": bet["player"], "seat": bet["seat"]},
                "bet withdrawn after the dice",
            )
        # The dealer draws only once the reader is armed (the table arms it on entering DEALING
        # and again when a held deal resumes); a card drawn before is out of phase.
        await self.wait(self.table.quiet, "the shoe reader armed")
        strike_at = self.rng.randint(5, 45)
        while proc.phase == "DEALING":
            if len(proc.dealt) >= strike_at:
                await self.strike("deal")
            count = len(proc.dealt)
            reply = await self.control_request({"op": "draw"})
            if reply.get("reader") in ("shoe_removed", "blocked", "empty"):
                await self.wait(lambda: proc.phase != "DEALING", "the shoe's fault")
                return
            if reply.get("reader") == "misread":
                # The card the dealer holds up (the simulator says what it was).
                drawn = reply.get("drawn")
                self._misread_card = (
                    card_name(int(drawn["rank"]), int(drawn["suit"]))
                    if isinstance(drawn, dict) and "rank" in drawn
                    else None
                )
                await self.wait(lambda: proc.phase != "DEALING", "the misread")
                return
            await self.wait(
                lambda n=count: proc.phase != "DEALING" or len(proc.dealt) > n,  # type: ignore[misc]
                "the card read",
            )

    async def _thirteen_arrangements(self, proc: ThirteenProcedure) -> None:
        seats = [s for s in proc.played_seats() if s not in proc.arrangements]
        late = self.rng.choice(seats) if self.plan.late and seats else None
        for seat in seats:
            if seat == late:
                continue
            cards = proc.seat_cards(seat)
            rows = foul_rows(cards) if self.plan.foul and seat == seats[0] else house_way13(cards)
            await self.act("enter_arrangement", {"seat": seat, **_rows(rows)})
        if late is not None and proc.phase == "PLAYERS_ARRANGING":
            if self.clock is None:
                raise AutoplayError("a late player needs a SimulationClock to jump the timer")
            self.clock.jump(ARRANGEMENT_SECONDS)
            await self.wait(lambda: proc.phase != "PLAYERS_ARRANGING", "the bell")
            if self.plan.violations:
                await self.attempt(
                    "enter_arrangement",
                    {"seat": late, **_rows(house_way13(proc.seat_cards(late)))},
                    "arrangement after the bell",
                )

    # ---- Pai Gow ------------------------------------------------------------------------------

    async def _paigow_step(self, phase: str) -> None:
        proc: PaiGowProcedure = self.proc
        if phase == "EQUIPMENT_CHECK":
            await self.wait(
                lambda: all(d in proc.identified for d in proc.devices), "devices identified"
            )
            await self.act("open_table")
        elif phase == "BANK_OFFER":
            await self._paigow_bank(proc)
        elif phase == "SHUFFLE":
            tiles = [str(t) for t in paigow.TILE_SET]
            self.rng.shuffle(tiles)
            self._tiles, self._tile_cursor = tiles, 0
            await self.act("confirm_tile_shuffle", {"new_set": self.rng.random() < 0.05})
        elif phase == "BETTING":
            await self._paigow_bets(proc)
        elif phase == "SHAKING":
            await self.wait(lambda: proc.phase != "SHAKING", "the dice")
        elif phase == "DEALING":
            if self.plan.violations and proc.bets:
                bet = proc.bets[0]
                await self.attempt(
                    "place_bet",
                    {"player": bet["player"], "seat": bet["seat"], "amount": bet["amount"] * 2},
                    "bet raised after the shake",
                )
            self._deal_tiles(proc)
            await self.act("confirm_deal")
        elif phase == "SETTING":
            await self._paigow_settings(proc)
        elif phase == "BANKER_SETTING":
            seat = proc.banker_seat
            await self.act("set_banker", good_setting(self._hands[int(seat or 0)]))
        elif phase == "OPENING":
            await self.act("open_hands")
        elif phase == "OPENED":
            for seat in list(proc.wrongly_set):
                await self.act("reset_hand", {"seat": seat, **good_setting(self._hands[seat])})
            await self.act("settle_round")
            if proc.resets:
                self.summary.hands["re-set by the croupier"] += len(proc.resets)
            for door in (proc.settlement or {}).get("doors", []):
                self.summary.outcomes[str(door.get("outcome"))] += 1
            self._settled = True
        elif phase == "ROUND_OVER":
            if proc.bank_rounds >= proc.bank_limit and self.rng.random() < 0.2:
                await self.act("extend_bank", {"consents": proc.played_seats()})
            await self.act("next_round")
        else:
            raise AutoplayError(f"no script for phase {phase}")

    async def _paigow_bank(self, proc: PaiGowProcedure) -> None:
        candidates = [p for p in PLAYERS if p != proc.last_banker]
        if proc.bettors_seen and self.rng.random() < 0.3:
            await self.act("decline_bank", {"player": self.rng.choice(candidates)})
        if proc.declined:
            candidates = [p for p in candidates if p in proc.bettors_seen] or candidates
        player = self.rng.choice(candidates)
        await self.act("take_bank", {"player": player, "seat": self.rng.randrange(proc.hands)})

    async def _paigow_bets(self, proc: PaiGowProcedure) -> None:
        banker = str(proc.banker)
        if not proc.stack_moves:
            await self.strike("betting")
            if self.proc.phase != "BETTING":
                return
            movers = self.rng.sample([p for p in PLAYERS if p != banker], 2)
            await self.act("move_stacks", {"by": "player", "player": movers[0], "one_hand": True})
            await self.act("move_stacks", {"by": "banker", "player": banker, "one_hand": True})
            if self.plan.violations:
                await self.attempt(
                    "move_stacks",
                    {"by": "player", "player": movers[1], "one_hand": True},
                    "stacks moved after the banker",
                )
        if not proc.bets:
            doors = [s for s in range(proc.hands) if s != proc.banker_seat]
            for player in self.rng.sample([p for p in PLAYERS if p != banker], 3):
                bet = {
                    "player": player,
                    "seat": self.rng.choice(doors),
                    "amount": self.rng.choice((100, 200, 500)),
                }
                await self.act("place_bet", bet)
        if proc.stake is None:
            if self.plan.violations and proc.min_stake > 1:
                await self.attempt(
                    "place_stake", {"amount": proc.min_stake - 1}, "stake below the carried stake"
                )
            stake = max(proc.min_stake, self.rng.choice((1000, 2000, 5000)))
            await self.act("place_stake", {"amount": stake})
        if self.plan.violations:
            other = next(p for p in PLAYERS if p != banker)
            await self.attempt("shake_dice", {"player": other}, "dice shaken for the banker")
        await self.strike("shake")
        if self.proc.phase == "BETTING":
            await self.act("shake_dice", {"player": banker})

    def _deal_tiles(self, proc: PaiGowProcedure) -> None:
        if len(self._tiles) - self._tile_cursor < 4 * proc.hands:
            # Kept tiles were lost to a voided round: a fresh stack, as a new shuffle would.
            self._tiles = [str(t) for t in paigow.TILE_SET]
            self.rng.shuffle(self._tiles)
            self._tile_cursor = 0
        self._hands = {}
        for seat in range(proc.hands):
            at = self._tile_cursor
            self._hands[seat] = self._tiles[at : at + 4]
            self._tile_cursor += 4
        if self._tile_cursor >= len(self._tiles):
            self._tile_cursor = 0

    async def _paigow_settings(self, proc: PaiGowProcedure) -> None:
        seats = [s for s in proc.played_seats() if s not in proc.settings]
        for seat in seats:
            tiles = self._hands[seat]
            setting = bad_setting(tiles) if self.plan.foul and seat == seats[0] else None
            await self.act("set_hand", {"seat": seat, **(setting or good_setting(tiles))})


# ---- hands ------------------------------------------------------------------------------------

Rows = tuple[list[str], list[str], list[str]]


def house_way13(cards: list[str]) -> Rows:
    head, middle, tail = rules13.house_way([parse_card(c) for c in cards])
    return [str(c) for c in head], [str(c) for c in middle], [str(c) for c in tail]


def foul_rows(cards: list[str]) -> Rows:
    """The house way turned upside down: the strongest row at the head (mostly a foul)."""
    head, middle, tail = house_way13(cards)
    return tail[:3], middle, head + tail[3:]


def _rows(rows: Rows) -> dict[str, list[str]]:
    return {"head": rows[0], "middle": rows[1], "tail": rows[2]}


def good_setting(tiles4: list[str]) -> dict[str, str]:
    front, back = paigow.set_hand(paigow.parse_tiles(" ".join(tiles4)))
    return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}


def bad_setting(tiles4: list[str]) -> dict[str, str] | None:
    """A setting the croupier must re-set (Art. 6(2)), when the four tiles allow one."""
    a, b, c, d = paigow.parse_tiles(" ".join(tiles4))
    for front, back in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
        for hand in ((front, back), (back, front)):
            if paigow.correct_setting(hand).correction == "back_not_largest":
                return {"front": " ".join(map(str, hand[0])), "back": " ".join(map(str, hand[1]))}
    return None


__all__ = ["Autoplay", "AutoplayError", "SimulationClock", "Summary", "TableError", "control_for"]
