"""Taiwan Pai Gow's bank and what is at stake: `PaiGowBank`, the code of the bank taken,
declined, extended and passed on (Art. 5(1), 5(2)), the players' bets on the doors (Art.
3(2)), the banker's stake (Art. 5(4)) and the co-bankers (Art. 5(5))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from daemon.procedures.engine import Hooks, bind
from daemon.procedures.paigow.game import (
    ART_3_2,
    ART_5_1,
    ART_5_2,
    ART_5_4,
    ART_5_5,
    ROUNDS_PER_BANK,
)
from daemon.procedures.paigow.round import PaiGowRound
from daemon.procedures.payload import Refused, integer
from daemon.procedures.records import Bet, CoBanker
from daemon.rules import paigow


class PaiGowBank(PaiGowRound):
    def _check_take_bank(self, payload: Mapping[str, Any], now: float) -> None:
        player = payload["player"]
        seat = integer(payload, "seat", ART_5_1, 0, self.hands - 1)  # four hands: doors 0-3
        if player == self.last_banker:
            raise Refused(
                ART_5_1,
                f"{player} has just held the bank its rounds; it passes on",
                zh=f"{player} 剛做完莊的局數；莊家輪替",
            )
        if seat == self.last_bank_seat:
            raise Refused(
                ART_5_1,
                f"door {seat} has just held the bank; it passes on, under any name",
                zh=f"第{seat}門剛做完莊；莊家輪替，換名亦然",
            )
        rules = paigow.ruleset(self.ruleset)
        free = self.declined and rules.declined_bank_to == "any-door"
        if self.bank_door is not None and seat != self.bank_door and not free:
            turn = f"the bank passes {rules.bank_order} to door {self.bank_door}, not door {seat}"
            raise Refused(
                ART_5_2 if self.declined else ART_5_1,
                turn,
                zh=f"做莊依序（{rules.bank_order}）輪到第{self.bank_door}門，不是第{seat}門",
            )
        if self.declined and player not in self.bettors_seen:
            raise Refused(
                ART_5_2,
                f"the bank passes only to a player who has bet; {player} has not",
                zh=f"莊家只傳給已下注的玩家；{player} 沒有下注",
            )

    def _apply_take_bank(self, payload: Mapping[str, Any], now: float) -> None:
        self.banker, self.banker_seat = payload["player"], payload["seat"]
        self.bank_rounds, self.bank_limit, self.declined = 0, ROUNDS_PER_BANK, []
        self.bank_door = None
        self.min_stake = 0
        self.round_id += 1
        self._new_round_state()
        self.emit("bank.taken", player=self.banker, seat=self.banker_seat)

    def _check_decline_bank(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["player"] == self.last_banker:
            raise Refused(
                ART_5_2,
                f"{payload['player']} has just held the bank: none to decline",
                zh=f"{payload['player']} 剛做完莊：無莊可讓",
            )

    def _apply_decline_bank(self, payload: Mapping[str, Any], now: float) -> None:
        self.declined.append(payload["player"])
        door = self.bank_door
        if door is not None and paigow.ruleset(self.ruleset).declined_bank_to == "next-door":
            self.bank_door = self.next_bank_door(door)  # 「把庄交与下一人」: the next door's
        self.emit("bank.declined", player=payload["player"], door=door, next_door=self.bank_door)

    def _check_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["player"] == self.banker:
            raise Refused(ART_3_2, "the banker does not bet on a door", zh="莊家不在門上下注")
        if any(c["player"] == payload["player"] for c in self.co_bankers):
            raise Refused(
                ART_5_5,
                f"{payload['player']} co-banks this round: no bet on a door",
                zh=f"{payload['player']} 本局幫莊：不可在門上下注",
            )
        self._seat(payload, "seat", ART_3_2)

    def _apply_place_bet(self, payload: Mapping[str, Any], now: float) -> None:
        old = self._find_bet(payload["player"], payload["seat"])
        if old is not None:
            self.bets.remove(old)
        self.bet_seq += 1
        bet: Bet = {
            "seq": self.bet_seq,
            "player": payload["player"],
            "seat": payload["seat"],
            "amount": payload["amount"],
        }
        self.bets.append(bet)
        if bet["player"] not in self.bettors_seen:
            self.bettors_seen.append(bet["player"])
        self.emit("bet.placed", replaced=old is not None, **bet)

    def _check_place_stake(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["amount"] < self.min_stake:
            raise Refused(
                ART_5_4,
                f"the stake carries the first round's winnings: at least {self.min_stake}",
                zh=f"莊本須包括首局贏得的款項：至少 {self.min_stake}",
            )

    def _apply_place_stake(self, payload: Mapping[str, Any], now: float) -> None:
        self.stake = payload["amount"]
        self.emit("stake.placed", player=self.banker, amount=self.stake)

    def _check_co_bank(self, payload: Mapping[str, Any], now: float) -> None:
        player, house = payload["player"], payload.get("house", False)
        if player == self.banker:
            raise Refused(
                ART_5_5,
                "the banker holds the bank; co-banking is for others",
                zh="莊家自己做莊；幫莊是他人的事",
            )
        if house and not paigow.ruleset(self.ruleset).house_co_banks:
            raise Refused(
                ART_5_5,
                f"the house does not co-bank under {self.ruleset}",
                zh=f"{self.ruleset} 規則下賭場不幫莊",
            )
        if not house and any(b["player"] == player for b in self.bets):
            raise Refused(
                ART_5_5,
                f"{player} bets on a door this round and cannot co-bank",
                zh=f"{player} 本局在門上下注，不可幫莊",
            )
        if any(c["player"] == player for c in self.co_bankers):
            raise Refused(
                ART_5_5, f"{player} already co-banks this round", zh=f"{player} 本局已幫莊"
            )

    def _apply_co_bank(self, payload: Mapping[str, Any], now: float) -> None:
        share = CoBanker(
            player=payload["player"],
            amount=payload["amount"],
            house=payload.get("house", False),
        )
        self.co_bankers.append(share)
        self.emit("bank.co_banked", position=len(self.co_bankers), **share)

    def _check_extend_bank(self, payload: Mapping[str, Any], now: float) -> None:
        consents = payload["consents"]
        if self.bank_rounds < self.bank_limit:
            raise Refused(
                ART_5_1,
                "the bank has rounds left; there is nothing to extend",
                zh="做莊局數未滿：無須續莊",
            )
        # 「除取得各门客人同意外」: every guest of every door, not one voice a door.
        missing = sorted({str(b["player"]) for b in self.bets} - set(consents))
        if missing:
            raise Refused(
                ART_5_1,
                f"every door's guests must agree; {missing} have not",
                zh=f"各門客人須全部同意；{missing} 尚未同意",
            )

    def _apply_extend_bank(self, payload: Mapping[str, Any], now: float) -> None:
        self.bank_limit += 1
        self.extension_consents = sorted(set(payload["consents"]))
        self.emit("bank.extended", consents=self.extension_consents, limit=self.bank_limit)

    def _apply_next_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.bank_rounds >= self.bank_limit:
            self.last_bank_seat = self._banker_seat()
            self.bank_door = self.next_bank_door(self.last_bank_seat)
            self.emit(
                "bank.passed", player=self.banker, rounds=self.bank_rounds, door=self.bank_door
            )
            self.last_banker, self.banker, self.banker_seat = self.banker, None, None
            self.min_stake = 0
            self._new_round_state()
            return
        self.round_id += 1
        self._new_round_state()
        self.emit("round.started", banker=self.banker, min_stake=self.min_stake)

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        take_bank=Hooks(check=_check_take_bank, apply=_apply_take_bank),
        decline_bank=Hooks(check=_check_decline_bank, apply=_apply_decline_bank),
        place_bet=Hooks(check=_check_place_bet, apply=_apply_place_bet),
        place_stake=Hooks(check=_check_place_stake, apply=_apply_place_stake),
        co_bank=Hooks(check=_check_co_bank, apply=_apply_co_bank),
        extend_bank=Hooks(check=_check_extend_bank, apply=_apply_extend_bank),
        next_round=Hooks(apply=_apply_next_round),
    )
