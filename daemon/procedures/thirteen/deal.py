"""Thirteen cards' deck and deal: `ThirteenDeal`, the code of the shuffle, the cut and the
shoe (Art. 2(a)), each card the reader reads into its seat (Art. 2(b), 4), a card the reader
missed entered by hand on two persons' word, and a deal voided when a misdeal cannot be put
right (Art. 4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.faults import shuffle_fault
from daemon.procedures.payload import Refused, flag, integer, need, text
from daemon.procedures.records import CardEntry, VoidDeal
from daemon.procedures.thirteen.game import ART_2A, ART_2B, ART_4, DECK, P
from daemon.procedures.thirteen.round import ThirteenRound
from daemon.rules.cards import card_name


class ThirteenDeal(ThirteenRound):
    # ---- shuffle, cut, shoe -----------------------------------------------------------------

    def _apply_confirm_hand_shuffle(self, payload: Mapping[str, Any], now: float) -> None:
        self.emit("deck.hand_shuffled")
        # Only a random shuffle is ever asked for (no sort or sequence mode reaches a live game).
        self.command("shuffler", "shuffle", mode="random")

    def _check_shuffle_completed(self, payload: Mapping[str, Any], now: float) -> None:
        integer(payload, "count", ART_2A, 0)
        mode = payload.get("mode", "random")
        if not isinstance(mode, str):
            raise Refused(ART_2A, "mode must be a string", zh="模式須為文字")
        for kind in ("foreign", "unreadable"):
            if kind in payload:
                integer(payload, kind, ART_2A, 0)

    def _apply_shuffle_completed(self, payload: Mapping[str, Any], now: float) -> None:
        count, mode = payload["count"], payload.get("mode", "random")
        # A good shuffle is 52 known, distinct, genuine cards in random mode (R1-R2): a foreign
        # card or one the machine could not read takes the deck out of play before any deal.
        fault = shuffle_fault(count, mode, payload.get("foreign", 0), payload.get("unreadable", 0))
        good = fault is None
        self.shuffle = {"count": count, "mode": mode, "good": good}
        self.emit("deck.machine_shuffled", count=count, mode=mode, **_odd_cards(payload))
        if fault is not None:
            # The deck is out of play: clearing the TILT starts again from the hand shuffle.
            self.tilt("shuffler", fault, now, resume_to=P.HAND_SHUFFLE.name)

    def _check_confirm_cut(self, payload: Mapping[str, Any], now: float) -> None:
        # Kinds and bounds (by, cards 10..42) are the declared parameters' (game.py).
        if payload["by"] == "player":
            if "player" not in payload:
                raise Refused(ART_2A, "player must be a non-empty string", zh="玩家名稱不可留空")
        elif not payload.get("players_declined", False):
            raise Refused(
                ART_2A,
                "the dealer cuts only when no player will",
                zh="只有在無玩家願意割牌時才由荷官割牌",
            )
        if not payload["one_hand"]:
            raise Refused(ART_2A, "the cut is made with one hand only", zh="割牌只可用一隻手")

    def _apply_confirm_cut(self, payload: Mapping[str, Any], now: float) -> None:
        self.cut = {
            "by": payload["by"],
            "player": payload.get("player"),
            "cards": payload["cards"],
        }
        self.emit("deck.cut", **self.cut)

    def _apply_load_shoe(self, payload: Mapping[str, Any], now: float) -> None:
        self.emit("shoe.loaded", redeal=self.redealing)
        self.command("shoe_reader", "arm", cards=DECK)

    # ---- the deal ---------------------------------------------------------------------------

    def _check_card_read(self, payload: Mapping[str, Any], now: float) -> None:
        # A misread: a card went past the reader unread (the wire names none).
        if flag(payload, "misread", ART_2B, False):
            if payload.get("card") is not None:
                raise Refused(ART_2B, "a misread names no card", zh="誤讀不註明牌")
        elif not isinstance(payload.get("card"), str):
            raise Refused(ART_2B, "card must be a string", zh="牌須為文字")
        pending = self.override
        if pending is not None and pending["kind"] == "enter_card":
            raise Refused(
                ART_4,
                f"card #{pending['index']} waits for a supervisor's decision",
                zh=f"第{pending['index']}張牌待主任決定",
            )
        if pending is not None:
            raise Refused(
                ART_4,
                f"a {pending['kind']} proposal is pending: decide it first",
                zh=f"有待決定的提議（{pending['kind']}）：請先作決定",
            )
        flag(payload, "face_up", ART_4, False)
        if "index" in payload:
            integer(payload, "index", ART_2B, 1)

    def _apply_card_read(self, payload: Mapping[str, Any], now: float) -> None:
        raw = payload.get("card")
        card = None if raw is None else card_name(raw)
        if card is None:
            due = len(self.dealt) + 1
            if payload.get("index", due) == due and self.misread is None:
                # Its place is known: the dealer may enter it by hand once the reader is
                # healthy, and a supervisor approve it (Art. 4: the deal is put right in order).
                self.misread = {"index": due, "seat": self.order[due - 1], "read": raw}
            self.tilt("shoe_reader", "misread" if raw is None else f"misread {raw!r}", now)
            return
        if self.is_dealt(card):
            self.tilt("shoe_reader", f"duplicate card {card}", now, misdeal=True)
            return
        index = len(self.dealt)
        # The reader numbers its reads: a gap means a card drawn whose read was lost, so the
        # seats of every later card would be wrong.
        if payload.get("index", index + 1) != index + 1:
            gap = f"read #{payload['index']} where #{index + 1} was due"
            self.tilt("shoe_reader", gap, now, misdeal=True)
            return
        seat = self.order[index]
        face_up = payload.get("face_up", False)
        self.dealt.append({"card": card, "seat": seat, "face_up": face_up})
        # Art. 4: a card dealt face up stays valid; it is journaled as such.
        self.emit("card.dealt", card=card, seat=seat, index=index + 1, face_up=face_up)

    def _check_correct_misdeal(self, payload: Mapping[str, Any], now: float) -> None:
        dealt = {d["card"] for d in self.dealt}
        for raw in payload["cards"]:
            card = card_name(raw)
            if card not in dealt:
                raise Refused(ART_4, f"{raw!r} has not been dealt", zh=f"{raw!r} 尚未派出")

    def _apply_correct_misdeal(self, payload: Mapping[str, Any], now: float) -> None:
        fixed = [d for d in self.dealt if d["card"] in {card_name(c) for c in payload["cards"]}]
        # The reader's order is the normal order: the cards are moved to the seats recorded.
        self.emit("deal.corrected", cards=[{"card": d["card"], "seat": d["seat"]} for d in fixed])

    def _ready_propose_card(self) -> bool:
        return self.misread is not None and self.override is None

    def _check_propose_card(self, payload: Mapping[str, Any], now: float) -> None:
        raw = payload["card"]
        if self.misread is None:
            # Only what the reader could not name is entered by hand: a card it read stands.
            raise Refused(
                ART_4,
                "no misread card is waiting: the reader's reads are not edited",
                zh="沒有誤讀待輸入的牌：讀牌器讀出的牌不可修改",
            )
        if self.override is not None:
            raise Refused(
                ART_4,
                "a proposal is already pending a supervisor's decision",
                zh="已有提議待主任決定",
            )
        card = card_name(raw)
        if card is None:
            raise Refused(ART_4, f"{raw!r} is not one card", zh=f"{raw!r} 不是一張牌")
        if self.is_dealt(card):
            raise Refused(ART_4, f"{card} has already been dealt", zh=f"「{card}」已經派出")

    def _apply_propose_card(self, payload: Mapping[str, Any], now: float) -> None:
        misread = need(self.misread)
        self.propose(
            CardEntry(
                kind="enter_card",
                **self.proposed(ART_4, now),
                card=need(card_name(payload["card"])),
                index=misread["index"],
                seat=misread["seat"],
                read=misread["read"],
                note=payload.get("note"),
            )
        )

    # Art. 4 voids the dealt cards only when a misdeal cannot be put right: the misdeal must be
    # on record (a card the reader could not name and nobody entered, a duplicate card, a read
    # lost), and two supervisors decide it (H5: one proposes, another approves).
    def _ready_void_deal(self) -> bool:
        return self.override is None and self._misdeal_on_record() is not None

    def _misdeal_on_record(self) -> str | None:
        if self.misread is not None:
            return f"card #{self.misread['index']} went past the reader unread"
        if self.misdeal is not None and self.misdeal["round"] == self.round_id:
            return str(self.misdeal["fault"])
        return None

    def _check_void_deal_now(self, now: float) -> None:
        if self._misdeal_on_record() is None:
            raise Refused(
                ART_4,
                "no misdeal on record: dealt cards are corrected, not voided",
                zh="沒有記錄在案的派牌失誤：已派的牌應更正，不應作廢",
            )

    def _check_void_deal(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "reason", ART_4)
        if self.override is not None:
            raise Refused(
                ART_4,
                f"a {self.override['kind']} proposal is pending: decide it first",
                zh=f"有待決定的提議（{self.override['kind']}）：請先作決定",
            )
        self._check_void_deal_now(now)

    def _apply_void_deal(self, payload: Mapping[str, Any], now: float) -> None:
        misdeal = self._misdeal_on_record()
        reason = payload["reason"]
        self.propose(
            VoidDeal(
                kind="void_deal",
                **self.proposed(ART_4, now),
                reason=reason,
                phase=self.phase,
                misdeal=misdeal,
            )
        )

    def _void_deal(self, now: float, **decided: Any) -> None:
        self.voided_deals.append(clone(self.dealt))
        self.emit("deal.voided", cards=[d["card"] for d in self.dealt], **decided)
        self.dealt, self.arrangements, self.banker_opened = [], {}, False
        self.banker_arranged, self.arranged, self.opened_hands = 0, [], []
        self.misread, self.override, self.misdeal = None, None, None
        self.shuffle, self.cut = None, None
        self.redealing = True
        self._target = "VOIDED"

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        confirm_hand_shuffle=Hooks(apply=_apply_confirm_hand_shuffle),
        shuffle_completed=Hooks(check=_check_shuffle_completed, apply=_apply_shuffle_completed),
        confirm_cut=Hooks(check=_check_confirm_cut, apply=_apply_confirm_cut),
        load_shoe=Hooks(apply=_apply_load_shoe),
        card_read=Hooks(check=_check_card_read, apply=_apply_card_read),
        correct_misdeal=Hooks(check=_check_correct_misdeal, apply=_apply_correct_misdeal),
        propose_card=Hooks(
            check=_check_propose_card, apply=_apply_propose_card, ready=_ready_propose_card
        ),
        void_deal=Hooks(check=_check_void_deal, apply=_apply_void_deal, ready=_ready_void_deal),
    )


def _odd_cards(payload: Mapping[str, Any]) -> dict[str, int]:
    return {k: payload[k] for k in ("foreign", "unreadable") if payload.get(k)}
