"""The shared shape of a game procedure, and the names the runtime and the tests import.

A procedure is a pure `transitions` state machine that the table runtime feeds with inputs:
operator actions (dealer, supervisor), device facts (device) and timer facts (system). It does
no I/O. Each input returns an `Outcome`: accepted or refused, the journal events to append (each
marked when it is a commit point), and the device commands to issue. Every refused input is a
procedure violation that cites the article it breaks; an unknown action, a wrong role, an action
out of phase and a malformed payload are all refused the same way, never raised.

Recovery is by replay. Every change of state comes from an accepted input, time comes only in
the input's `now`, and a refused input changes nothing: feeding the accepted inputs of a journal
to a fresh procedure of the same configuration reproduces the same `snapshot()`.

The layers, one job each: `engine.Engine` (admission, the machine, events, commands,
checkpoints), `faults.WithFaults` (HOLD and TILT), `overrides.WithOverrides` (two-person
steps), and `Procedure` here: the equipment check, bets and dice both games write the same.
A link lost mid-round is a HOLD like any other: the restored link only marks the device
healthy; the table moves again only when a supervisor clears it (`table.resumed`).

Actors are written `role` or `role:id` (`dealer:D17`, `device:shoe_reader`, `system`,
`supervisor:S03`); the role decides which actions the actor may send.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.common import (
    HOUSE_DICE,
    HOUSE_FAULTS,
    HOUSE_OVERRIDE,
    HOUSE_ROLES,
    common_actions,
    fault_transitions,
    override_actions,
)
from daemon.procedures.engine import Hooks, bind, replay
from daemon.procedures.outcome import (
    DeviceCommand,
    Input,
    JournalEvent,
    Outcome,
    Violation,
    role_of,
)
from daemon.procedures.overrides import WithOverrides
from daemon.procedures.payload import (
    INVALID_REASONS,
    Refused,
    dice_reading,
    flag,
    integer,
    need,
    text,
)
from daemon.procedures.records import Bet, Identity, Throw
from daemon.procedures.spec import ROLES, Action
from daemon.procedures.stakes import Stakes

if TYPE_CHECKING:
    from daemon.config import TableConfig

__all__ = [
    "HOUSE_DICE",
    "HOUSE_FAULTS",
    "HOUSE_OVERRIDE",
    "HOUSE_ROLES",
    "INVALID_REASONS",
    "MAX_INVALID_SHAKES",
    "ROLES",
    "Action",
    "DeviceCommand",
    "Input",
    "JournalEvent",
    "Outcome",
    "Procedure",
    "Refused",
    "Violation",
    "common_actions",
    "dice_reading",
    "fault_transitions",
    "flag",
    "integer",
    "need",
    "override_actions",
    "replay",
    "role_of",
    "text",
]

MAX_INVALID_SHAKES = 3


class Procedure(WithOverrides):
    """The base of each game's procedure; subclasses give the data and the per-action code.

    A subclass defines `Phase` (an Enum with HOLD and TILT), `TRANSITIONS` (transition dicts),
    `ACTIONS` (name -> Action, from its game's declaration), and for each action an optional
    `_check_<action>(payload, now)` that raises `Refused`, and `_apply_<action>(payload, now)`
    that changes state and emits events and commands. Conditions in `TRANSITIONS` read the
    state after `_apply_`; the engine checks the declared parameters before `_check_`.
    """

    @classmethod
    def from_config(cls, config: TableConfig, devices: tuple[str, ...]) -> Procedure:
        """The procedure a table's configuration describes, with the devices configured of those
        the game knows (`daemon.procedures.build`); each game's procedure says how."""
        raise NotImplementedError

    def snapshot(self) -> dict[str, Any]:
        """Everything the round holds, JSON-able; equal snapshots mean equal procedures."""
        return {
            "game": type(self).GAME,
            "table": self.table_id,
            "round": self.round_id,
            "phase": self.phase,
            "suspended": self.suspended,
            "resume_to": self.resume_to,
            "faults": clone(self.faults),
            "invalid_shakes": self.invalid_shakes,
            "override": clone(self.override),
            # The table's unit of money, currency and limits, for whoever shows an amount.
            "stakes": None if self.stakes is None else self.stakes.as_dict(),
            **self._game_snapshot(),
        }

    def _closed_refusal(self, action: str) -> Refused | None:
        """The refusal of an action out of phase when a rule stronger than the phase forbids
        it (a bet after the shake breaks the closing of the bets, in HOLD as anywhere)."""
        if action in type(self).BET_ACTIONS and self.bets_closed:
            return Refused(
                type(self).BETS_CLOSED_ARTICLE,
                f"the bets closed at the shake: no {action} after it",
                zh=f"搖骰後投注已截止：之後不可「{type(self).ACTIONS[action].label_zh or action}」",
            )
        return None

    def _opened(self) -> dict[str, Any]:
        """Effects of opening the table; returns what `table.opened` carries besides devices."""
        return {}

    def _seat(self, payload: Mapping[str, Any], key: str, article: str) -> int:
        """The seat a bet names under `key`, refused if players do not bet on it."""
        raise NotImplementedError

    # ---- bets in table units (daemon.procedures.stakes) ---------------------------------------

    # The table's unit of money and its limits, from its config (`daemon.procedures.build`);
    # None (a procedure built bare, in a test): bets are not checked against them.
    stakes: Stakes | None = None

    def _admit_checked(
        self, action: str, actor: str, payload: Mapping[str, Any], now: float
    ) -> None:
        super()._admit_checked(action, actor, payload, now)
        if action == "place_bet" and self.stakes is not None:
            spec = type(self).ACTIONS[action]
            amount = (spec.params or {}).get("amount")
            self.stakes.bet_amount(payload, (amount and amount.article) or spec.article)

    # ---- equipment, bets (what both games write the same) -------------------------------------

    # A game names the article of its equipment check, the actions its shake closes and the
    # article that closes them, and what a bet is placed on ("door", "seat"). Its __init__ sets
    # `devices`, `identified` and `opened`; each round starts `bets`, `bets_closed` and `dice`.
    EQUIPMENT_ARTICLE: ClassVar[str]
    BET_ACTIONS: ClassVar[tuple[str, ...]] = ()
    BETS_CLOSED_ARTICLE: ClassVar[str]
    SEAT_NAME: ClassVar[str] = "seat"

    devices: tuple[str, ...]
    identified: dict[str, Identity]
    opened: bool
    bets: list[Bet]
    bets_closed: bool
    dice: list[int] | None

    def dice_good(self, event: object) -> bool:
        return self.dice is not None

    def dice_failed(self, event: object) -> bool:
        return self.invalid_shakes >= MAX_INVALID_SHAKES

    def before_opening(self, event: object) -> bool:
        return not self.opened

    def played_seats(self) -> list[int]:
        return sorted({b["seat"] for b in self.bets})

    def _find_bet(self, player: str, seat: int) -> Bet | None:
        return next((b for b in self.bets if b["player"] == player and b["seat"] == seat), None)

    def _check_device_identified(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).EQUIPMENT_ARTICLE
        device = text(payload, "device", article)
        if device not in self.devices:
            raise Refused(
                article, f"{device} is not equipment of this table", zh=f"{device} 不是本枱的設備"
            )
        flag(payload, "approved", article)

    def _apply_device_identified(self, payload: Mapping[str, Any], now: float) -> None:
        identity = {k: v for k, v in payload.items() if k != "device"}
        self.identified[payload["device"]] = clone(identity)
        self.emit("device.identified", device=payload["device"], **identity)

    def _check_open_table(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).EQUIPMENT_ARTICLE
        missing = [d for d in self.devices if d not in self.identified]
        if missing:
            raise Refused(
                article, f"not identified: {', '.join(missing)}", zh=f"未識別：{', '.join(missing)}"
            )
        unapproved = [d for d in self.devices if not self.identified[d]["approved"]]
        if unapproved:
            raise Refused(
                article,
                f"not approved: {', '.join(unapproved)}",
                zh=f"未獲批准：{', '.join(unapproved)}",
            )

    def _apply_open_table(self, payload: Mapping[str, Any], now: float) -> None:
        self.opened = True
        opened = self._opened()
        self.emit("table.opened", devices=sorted(self.identified), **opened)

    def _check_withdraw_bet(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).ACTIONS["withdraw_bet"].article
        player = text(payload, "player", article)
        if self._find_bet(player, self._seat(payload, "seat", article)) is None:
            raise Refused(
                article,
                f"{player} has no bet on {self.SEAT_NAME} {payload['seat']}",
                zh=f"{player} 沒有在第{payload['seat']}門下注",
            )

    def _apply_withdraw_bet(self, payload: Mapping[str, Any], now: float) -> None:
        bet = need(self._find_bet(payload["player"], payload["seat"]))
        self.bets.remove(bet)
        self.emit("bet.withdrawn", player=payload["player"], seat=payload["seat"])

    def _check_move_bet(self, payload: Mapping[str, Any], now: float) -> None:
        article = type(self).ACTIONS["move_bet"].article
        player = text(payload, "player", article)
        source = self._seat(payload, "from_seat", article)
        target = self._seat(payload, "to_seat", article)
        if self._find_bet(player, source) is None:
            raise Refused(
                article,
                f"{player} has no bet on {self.SEAT_NAME} {source}",
                zh=f"{player} 沒有在第{source}門下注",
            )
        if source == target or self._find_bet(player, target) is not None:
            raise Refused(
                article,
                f"{player} already bets on {self.SEAT_NAME} {target}",
                zh=f"{player} 已在第{target}門下注",
            )

    def _apply_move_bet(self, payload: Mapping[str, Any], now: float) -> None:
        bet = need(self._find_bet(payload["player"], payload["from_seat"]))
        bet["seat"] = payload["to_seat"]
        self.emit(
            "bet.moved", player=bet["player"], from_seat=payload["from_seat"], seat=bet["seat"]
        )

    # ---- dice ---------------------------------------------------------------------------------

    shakes: list[Throw]

    def _apply_dice_landed(self, payload: Mapping[str, Any], now: float) -> None:
        if not payload.get("valid", True):
            # A die tilted or out of the cup: the same player shakes again (`invalid_throw`).
            self.shakes.append(self.invalid_throw(payload, now))
            return
        dice = list(payload["dice"])
        self.shakes.append({"dice": dice, "valid": True, "reason": None})
        self.invalid_shakes = 0
        self.dice = dice
        self.emit("dice.landed", dice=dice, total=sum(dice), **self._dice_counted(dice))

    def _dice_counted(self, dice: list[int]) -> dict[str, Any]:
        """Where the deal starts from a valid throw; returns what `dice.landed` adds."""
        raise NotImplementedError

    def invalid_throw(self, payload: Mapping[str, Any], now: float) -> Throw:
        """An invalid throw (H3, R10): shaken again, and the third in a row is a TILT whose
        clear asks the shaker again. Returns the throw as recorded; nothing is made up for
        dice the shaker did not read."""
        throw: Throw = {"valid": False, "reason": payload.get("reason")}
        if payload.get("dice") is not None:
            throw["dice"] = list(payload["dice"])
        if "die" in payload:
            throw["die"] = payload["die"]
        self.invalid_shakes += 1
        self.emit("dice.invalid", **throw, count=self.invalid_shakes)
        if self.invalid_shakes >= MAX_INVALID_SHAKES:
            self.tilt("dice_shaker", f"{self.invalid_shakes} invalid throws in a row", now)
        else:
            self.command("dice_shaker", "shake")
        return throw

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        device_identified=Hooks(check=_check_device_identified, apply=_apply_device_identified),
        open_table=Hooks(check=_check_open_table, apply=_apply_open_table),
        withdraw_bet=Hooks(check=_check_withdraw_bet, apply=_apply_withdraw_bet),
        move_bet=Hooks(check=_check_move_bet, apply=_apply_move_bet),
        dice_landed=Hooks(apply=_apply_dice_landed),
    )
