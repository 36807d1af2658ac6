"""The procedure that plays Thirteen cards: `ThirteenProcedure`, the code each action runs.

The legal procedure it follows, article by article, is told in `daemon/procedures/thirteen/game.py`
(with the game's phases, actions and transition table). The code is in layers by step, each
binding its own actions' hooks: the round's state (`round.py`), the bets and dice
(`betting.py`), the deck and the deal (`deal.py`), the arrangements (`arrange.py`); here the
two-person decisions they propose, the settlement, and what entering a phase, a HOLD or a TILT
does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.payload import Refused, need
from daemon.procedures.records import Entered, GameProposal
from daemon.procedures.stakes import Stakes
from daemon.procedures.thirteen.arrange import ThirteenArrangement
from daemon.procedures.thirteen.betting import ThirteenBetting
from daemon.procedures.thirteen.deal import ThirteenDeal
from daemon.procedures.thirteen.game import ART_4, ART_7, ART_8, BANKER_SEAT, DECK, P
from daemon.procedures.thirteen.settle import settle_table, settle_thirteen

if TYPE_CHECKING:
    from daemon.config import TableConfig


class ThirteenProcedure(ThirteenArrangement, ThirteenDeal, ThirteenBetting):
    @classmethod
    def from_config(cls, config: TableConfig, devices: tuple[str, ...]) -> ThirteenProcedure:
        """The procedure a table's configuration describes (`daemon.procedures.build`)."""
        return cls(
            config.table_id,
            ruleset=config.ruleset,
            devices=devices,
            stakes=Stakes(config.unit, config.currency, config.min_bet, config.max_bet),
            rules=config.rules,
            shaker=config.shaker,
            timer_in_hold=config.timer_in_hold,
        )

    def _check_override(self, pending: GameProposal, now: float) -> None:
        if pending["kind"] == "correct_arrangement":
            if self.arrangements.get(pending["seat"]) != pending["placed"]:
                raise Refused(
                    ART_8,
                    f"seat {pending['seat']}'s placement changed since",
                    zh=f"第{pending['seat']}門的排牌在提議後已改變",
                )
            return
        if len(self.dealt) + 1 != pending["index"]:
            raise Refused(
                ART_4,
                f"card #{pending['index']} is no longer the one due",
                zh=f"第{pending['index']}張已不是應派的牌",
            )
        if self.is_dealt(pending["card"]):
            raise Refused(
                ART_4,
                f"{pending['card']} has already been dealt",
                zh=f"「{pending['card']}」已經派出",
            )

    def _apply_override(self, pending: GameProposal, now: float) -> None:
        if pending["kind"] == "correct_arrangement":
            seat = pending["seat"]
            self.arrangements[seat] = clone(pending["rows"])
            self.emit(
                "arrangement.corrected",
                seat=seat,
                holder=None if seat == BANKER_SEAT and self.banker_game else self.holder(seat),
                placed=clone(pending["placed"]),
                **clone(pending["rows"]),
                reason=pending["reason"],
                proposed_by=pending["proposed_by"],
                approved_by=need(self._input).actor,
                approval_reason=need(self._input).payload["reason"],
            )
            return
        card, seat, index = pending["card"], pending["seat"], pending["index"]
        self.misread = None
        entered: Entered = {"by": pending["proposed_by"], "approved_by": need(self._input).actor}
        self.dealt.append({"card": card, "seat": seat, "face_up": False, "entered": entered})
        self.emit("card.dealt", card=card, seat=seat, index=index, face_up=False, entered=entered)

    # ---- settlement -------------------------------------------------------------------------

    def _ready_settle_round(self) -> bool:
        return not self._to_place() and self.override is None

    def _check_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.override is not None:
            raise Refused(
                ART_8,
                f"a {self.override['kind']} proposal is pending: a supervisor decides first",
                zh=f"有待決定的提議（{self.override['kind']}）：須先由主任決定",
            )
        waiting = self._to_place()
        if waiting:
            unopened = [s for s in waiting if not self.is_open(s)]
            if unopened:
                raise Refused(
                    ART_8,
                    f"open seat {unopened[0]}'s hand first, then place its cards",
                    zh=f"請先打開第{unopened[0]}門的牌，然後排入三道",
                )
            raise Refused(
                ART_7,
                f"seat {waiting[0]}'s open cards are not yet placed in rows",
                zh=f"第{waiting[0]}門已開的牌尚未排入三道",
            )

    def _apply_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.banker_game:
            self.settlement = settle_thirteen(self.arrangements, self.bets, self.late, self._rules)
        else:
            self.settlement = settle_table(
                self.arrangements, self.bets, self.late, self._rules, self.stakes.unit
            )
        self.emit("round.settled", settlement=clone(self.settlement))

    def _apply_start_round(self, payload: Mapping[str, Any], now: float) -> None:
        self.round_id += 1
        self._new_round_state()
        self.emit("round.started")

    # ---- entering phases, HOLD and TILT -----------------------------------------------------

    def _on_enter(self, previous: str, now: float) -> None:
        if previous == P.DEALING.name:
            # The reader is armed only while dealing is allowed: a card drawn after the deal,
            # or while the table is held, is out of phase.
            self.command("shoe_reader", "disarm")
            if self.phase == P.PLAYERS_ARRANGING.name:
                # No banker to open (003 way 3, 四人对比): the five minutes start at the deal's end.
                self._start_timer(now)
        if self.phase == P.SETTLING.name:
            if not self.late:
                self.command("timer_bell", "stop")  # every seat done before the bell
            self.deadline = None

    def _on_suspend(self, now: float) -> None:
        if self.deadline is None or self.phase != P.PLAYERS_ARRANGING.name:
            return
        if self._timer_in_hold == "running":
            # The house lets the five minutes run on (`timer_in_hold = "running"`): the bell
            # keeps counting, and a seat not done when the table resumes after it rang is late.
            self.held_deadline, self.deadline = self.deadline, None
            return
        # By default the five minutes do not run while the table is held: the players hold
        # their cards but cannot place an arrangement.
        self.timer_remaining = max(self.deadline - now, 0.0)
        self.deadline = None
        self.command("timer_bell", "stop")

    def _on_resume(self, phase: str, now: float) -> None:
        if self.held_deadline is not None:
            self.deadline, self.held_deadline = self.held_deadline, None
        if self.timer_remaining is not None:
            self.deadline = now + self.timer_remaining
            self.command("timer_bell", "start", seconds=self.timer_remaining)
            self.timer_remaining = None
        # A device whose answer the phase waits for may have lost it while the table was held:
        # it is asked again. Its answer is read fresh (a shuffle counted again, dice shaken
        # again), never re-entered by hand; a stale answer arriving later is out of phase.
        if phase == P.MACHINE_SHUFFLE.name:
            self.command("shuffler", "shuffle", mode="random")
        elif phase == P.SHAKING.name:
            self.command("dice_shaker", "shake")
        elif phase == P.DEALING.name:
            # A misread card has left the shoe too: it is not in the cards left to draw.
            drawn = len(self.dealt) + (self.misread is not None)
            self.command("shoe_reader", "arm", cards=DECK - drawn)

    def _on_redirect(self, target: str, now: float) -> None:
        if target == P.HAND_SHUFFLE.name:
            self.shuffle, self.cut = None, None

    def _on_void(self, now: float) -> None:
        if self.opened:
            self.emit("bets.returned", bets=clone(self.bets))
            self.round_id += 1
            self._new_round_state()

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        settle_round=Hooks(
            check=_check_settle_round, apply=_apply_settle_round, ready=_ready_settle_round
        ),
        start_round=Hooks(apply=_apply_start_round),
    )
