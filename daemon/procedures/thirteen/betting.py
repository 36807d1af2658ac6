"""Thirteen cards' bets and dice: `ThirteenBetting`, the code of placing and moving a bet
(Art. 3, 11; each against each, one player a seat) and of the shake that closes the bets and
counts the seat the deal starts from (Art. 2(b), 2(c))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.payload import Refused, dice_reading
from daemon.procedures.records import Bet
from daemon.procedures.thirteen.game import ART_2B, ART_2C, ART_3, ART_11, HK_SCORING, HK_STAKES
from daemon.procedures.thirteen.round import ThirteenRound


class ThirteenBetting(ThirteenRound):
    # ---- bets -------------------------------------------------------------------------------

    def _check_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_3)
        units = payload["units"]
        if self.units is not None and units not in self.units:
            raise Refused(
                ART_11,
                f"a bet is {', '.join(map(str, self.units))} units, not {units}",
                zh=f"每次投注為 {'、'.join(map(str, self.units))} 注，不是 {units} 注",
            )
        if not self.banker_game:
            self._one_player_a_seat(payload["player"], seat)
            if self._rules.stakes == "per-point" and units != 1:
                raise Refused(
                    HK_STAKES,
                    "money per point (1分×元): a seat is taken with one unit, the points pay",
                    zh="每分×元：每門以一注入座，按分數賠付",
                )

    def _one_player_a_seat(self, player: str, seat: int) -> None:
        """Each against each, a seat is one player's score and a player plays one seat
        (003 way 3, 4人分別比牌)."""
        for bet in self.bets:
            if bet["seat"] == seat and bet["player"] != player:
                raise Refused(
                    HK_SCORING,
                    f"seat {seat} is {bet['player']}'s: one player a seat",
                    zh=f"第{seat}門屬於 {bet['player']}：每門一名玩家",
                )
            if bet["seat"] != seat and bet["player"] == player:
                raise Refused(
                    HK_SCORING,
                    f"{player} plays seat {bet['seat']}: one seat a player",
                    zh=f"{player} 已玩第{bet['seat']}門：每名玩家一門",
                )

    def _check_move_bet(self, payload: Mapping[str, Any], now: float) -> None:
        super()._check_move_bet(payload, now)
        if not self.banker_game:
            target = self._seat(payload, "to_seat", ART_2C)
            taken = next((b["player"] for b in self.bets if b["seat"] == target), None)
            if taken is not None:
                raise Refused(
                    HK_SCORING,
                    f"seat {target} is {taken}'s: one player a seat",
                    zh=f"第{target}門屬於 {taken}：每門一名玩家",
                )

    def _apply_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        old = self._find_bet(payload["player"], payload["seat"])
        if old is not None:
            self.bets.remove(old)
        self.bet_seq += 1
        bet: Bet = {
            "seq": self.bet_seq,
            "player": payload["player"],
            "seat": payload["seat"],
            # Art. 11: the money of the units at the table's unit value (checked on admission).
            "amount": self.stakes.bet_amount(payload, ART_11),
            "units": payload["units"],
            "seated": payload["seated"],
        }
        self.bets.append(bet)
        self.emit("bet.placed", replaced=old is not None, **bet)

    # ---- dice -------------------------------------------------------------------------------

    def _check_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        player = payload["player"]
        highest = self.highest_bettor()
        if highest is None:
            raise Refused(
                ART_2B,
                "no bets: the highest bettor shakes, and there is none",
                zh="沒有投注：由投注最高者搖骰，現時沒有",
            )
        if player != highest:
            raise Refused(
                ART_2B,
                f"{highest} is the highest bettor and shakes, not {player}",
                zh=f"投注最高的是 {highest}，由他搖骰，不是 {player}",
            )
        if not self.banker_game and len(self.played_seats()) < 2:
            raise Refused(
                HK_SCORING,
                "each against each: at least two seats play",
                zh="四人對比：至少兩門參與",
            )

    def _apply_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        self.bets_closed = True
        self.shooter = payload["player"]
        self.invalid_shakes = 0
        self.emit(
            "bets.closed",
            bets=clone(self.bets),
            holders={str(s): self.holder(s) for s in self.played_seats()},
        )
        self.command("dice_shaker", "shake")

    def _check_dice_landed(self, payload: Mapping[str, Any], now: float) -> None:
        dice_reading(payload, ART_2B, ART_2B)

    def _dice_counted(self, dice: list[int]) -> dict[str, Any]:
        self._set_deal_order()
        return {"first_seat": self.first_seat}

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        place_bet=Hooks(check=_check_place_bet, apply=_apply_place_bet),
        move_bet=Hooks(check=_check_move_bet),
        shake_dice=Hooks(check=_check_shake_dice, apply=_apply_shake_dice),
        dice_landed=Hooks(check=_check_dice_landed),
    )
