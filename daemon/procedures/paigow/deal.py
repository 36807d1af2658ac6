"""Taiwan Pai Gow's tiles from the shuffle to the deal: `PaiGowDeal`, the code of the shuffle
and the stacks moved (Art. 2(6)), the head tiles put out (Art. 5(3)), the banker's shake that
closes the bets and names the first hand (Art. 2(2), 2(5), 2(7)), each door dealt in turn (Art.
2(3)) and a tile turned face up in the deal (Art. 4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.paigow.game import (
    ART_2_2,
    ART_2_3,
    ART_2_5,
    ART_2_6,
    ART_2_7,
    ART_4,
    ART_5_3,
    MAX_STACK_MOVERS,
)
from daemon.procedures.paigow.round import PaiGowRound
from daemon.procedures.payload import Refused, dice_reading, integer
from daemon.procedures.records import StackMove
from daemon.rules import paigow
from daemon.rules.paigow.tiles import TileParseError, parse_tiles


class PaiGowDeal(PaiGowRound):
    # ---- shuffle, stacks, bets, stake -------------------------------------------------------

    def _apply_confirm_tile_shuffle(self, payload: Mapping[str, Any], now: float) -> None:
        new_set = payload.get("new_set", False)
        self.set_number += 1
        self.new_sets += int(new_set)
        self.used_tiles = []
        self.emit("tiles.shuffled", new_set=new_set)

    def _check_move_stacks(self, payload: Mapping[str, Any], now: float) -> None:
        by, player = payload["by"], payload["player"]
        if not payload["one_hand"]:
            raise Refused(ART_2_6, "the stacks are moved with one hand only", zh="只可單手移動牌墩")
        if self.head_out:
            raise Refused(
                ART_5_3,
                "the head tiles are out: the stacks are not moved again",
                zh="頭牌已出：牌墩不再移動",
            )
        banker_moved = any(m["by"] == "banker" for m in self.stack_moves)
        if by == "banker":
            if player != self.banker:
                raise Refused(ART_2_6, f"{player} is not the banker", zh=f"{player} 不是莊家")
        else:
            if player == self.banker:
                raise Refused(
                    ART_2_6,
                    "the banker moves as the banker, after the players",
                    zh="莊家以莊家身分在玩家之後移動",
                )
            if banker_moved:
                raise Refused(
                    ART_2_6,
                    "the banker has moved the stacks; players may not now",
                    zh="莊家已移動牌墩；玩家現在不可再移",
                )
            movers = {m["player"] for m in self.stack_moves if m["by"] == "player"}
            if player not in movers and len(movers) >= MAX_STACK_MOVERS:
                raise Refused(
                    ART_2_6, "only two players may move the stacks", zh="只有兩名玩家可移動牌墩"
                )

    def _apply_move_stacks(self, payload: Mapping[str, Any], now: float) -> None:
        move: StackMove = {"by": payload["by"], "player": payload["player"]}
        self.stack_moves.append(move)
        self.emit("stacks.moved", **move)

    def _check_head_tiles_out(self, payload: Mapping[str, Any], now: float) -> None:
        if self.head_out:
            raise Refused(ART_5_3, "the head tiles are already out", zh="頭牌已經出了")
        if self.stake is None:
            raise Refused(
                ART_5_3,
                "the banker's stake goes on the layout before the head tiles",
                zh="莊本須在頭牌之前放上枱面",
            )

    def _apply_head_tiles_out(self, payload: Mapping[str, Any], now: float) -> None:
        self.head_out = True
        self.emit("tiles.head_out", banker=self.banker)

    def _check_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        if payload["player"] != self.banker:
            raise Refused(
                ART_2_2,
                f"the banker ({self.banker}) shakes; nobody for him",
                zh=f"由莊家（{self.banker}）搖骰，他人不可代搖",
            )
        if self.stake is None:
            raise Refused(
                ART_5_3, "the banker's stake is placed before the shake", zh="莊本須在搖骰之前放好"
            )
        if not self.head_out:
            raise Refused(
                ART_5_3,
                "the banker puts out the head tiles first, then shakes",
                zh="莊家先出頭牌，然後搖骰",
            )
        if not self.bets:
            raise Refused(
                ART_2_7,
                "the players' bets are placed before the shake; there is none",
                zh="玩家須在搖骰前下注；現時沒有投注",
            )

    def _apply_shake_dice(self, payload: Mapping[str, Any], now: float) -> None:
        self.bets_closed = True
        self.invalid_shakes = 0
        self.emit(
            "bets.closed",
            bets=clone(self.bets),
            stake=self.stake,
            co_bankers=clone(self.co_bankers),
            holders={str(s): self.holder(s) for s in self.played_seats()},
        )
        self.command("dice_shaker", "shake")

    def _check_dice_landed(self, payload: Mapping[str, Any], now: float) -> None:
        dice_reading(payload, ART_2_2, ART_2_5)

    def _dice_counted(self, dice: list[int]) -> dict[str, Any]:
        # Art. 2(5): an invalid throw never gets here; the banker has shaken again.
        offset = paigow.first_hand_from_dice(sum(dice), self.hands)
        self.first_hand = (self._banker_seat() + offset) % self.hands
        return {"first_hand": self.first_hand}

    def _check_tile_face_up(self, payload: Mapping[str, Any], now: float) -> None:
        seat = integer(payload, "seat", ART_4, 0, self.hands - 1)
        try:
            tiles = parse_tiles(payload["tile"])
        except TileParseError as exc:
            raise Refused(ART_4, str(exc), zh=f"無法辨認的牌：{exc}") from None
        if len(tiles) != 1:
            raise Refused(ART_4, "name one tile", zh="請只報一張牌")
        # The tile turned while a door was dealt: the door being dealt, or one dealt before.
        being_dealt = self.deal_order()[len(self.dealt)]
        if seat != being_dealt and seat not in self.dealt:
            raise Refused(
                ART_4,
                f"door {seat} is not dealt yet (door {being_dealt} is next)",
                zh=f"第{seat}門尚未派牌（下一門是第{being_dealt}門）",
            )
        if sum(1 for f in self.face_up if f["seat"] == seat) >= 4:
            raise Refused(
                ART_4,
                f"door {seat} has four tiles; all four are reported face up",
                zh=f"第{seat}門已有四張牌，四張都已報為翻開",
            )

    def _apply_tile_face_up(self, payload: Mapping[str, Any], now: float) -> None:
        tile = str(parse_tiles(payload["tile"])[0])
        by_name = not any(ch.isdigit() for ch in payload["tile"])
        self.face_up.append({"seat": payload["seat"], "tile": tile, "by_name": by_name})
        self.emit("tile.face_up", seat=payload["seat"], tile=tile, by_name=by_name)

    def _check_deal_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = integer(payload, "seat", ART_2_3, 0, self.hands - 1)
        turn = self.deal_order()[len(self.dealt)]
        if seat != turn:
            raise Refused(
                ART_2_3,
                f"the deal runs counter-clockwise from door {self.first_hand}: "
                f"door {turn} is dealt next, not door {seat}",
                zh=f"由第{self.first_hand}門起逆時針派牌：下一門是第{turn}門，不是第{seat}門",
            )

    def _apply_deal_hand(self, payload: Mapping[str, Any], now: float) -> None:
        self.dealt.append(payload["seat"])
        self.emit("hand.dealt", seat=payload["seat"], turn=len(self.dealt))
        if len(self.dealt) == self.hands:
            self.emit("tiles.dealt", hands=self.hands, first_hand=self.first_hand)

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        confirm_tile_shuffle=Hooks(apply=_apply_confirm_tile_shuffle),
        move_stacks=Hooks(check=_check_move_stacks, apply=_apply_move_stacks),
        head_tiles_out=Hooks(check=_check_head_tiles_out, apply=_apply_head_tiles_out),
        shake_dice=Hooks(check=_check_shake_dice, apply=_apply_shake_dice),
        dice_landed=Hooks(check=_check_dice_landed),
        tile_face_up=Hooks(check=_check_tile_face_up, apply=_apply_tile_face_up),
        deal_hand=Hooks(check=_check_deal_hand, apply=_apply_deal_hand),
    )
