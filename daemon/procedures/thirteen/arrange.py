"""Thirteen cards' arrangements: `ThirteenArrangement`, the code of the five minutes in which
the banker and the players arrange their hands (Art. 2(d)), each hand opened and placed into
its rows (Art. 7, 8), a placed hand corrected on two persons' word, and the dealer's records
of advice (Art. 5) and of cards taken away (Art. 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.payload import Refused, need, text
from daemon.procedures.records import Advice, Away, Correction
from daemon.procedures.thirteen.game import (
    ARRANGEMENT_SECONDS,
    ART_2D,
    ART_3,
    ART_5,
    ART_7,
    ART_8,
    BANKER_SEAT,
    ROW_SIZES,
    ROWS,
)
from daemon.procedures.thirteen.round import ThirteenRound
from daemon.rules.cards import card_name


class ThirteenArrangement(ThirteenRound):
    # ---- arrangements -----------------------------------------------------------------------
    #
    # Art. 2(d): the banker arranges face down and only says so; the players take their cards
    # once the banker has opened, and each says when done within the five minutes. Art. 8: each
    # hand is then opened against the banker's, and only an open hand's cards are placed into
    # its rows (`enter_arrangement`): a person never names cards of a hand nobody has seen, so
    # no refusal can tell whether guessed cards are someone's.

    def _rows(self, payload: Mapping[str, Any], seat: int) -> dict[str, list[str]]:
        rows: dict[str, list[str]] = {}
        for row in ROWS:
            # A list of strings of the row's size: the declared parameter (game.py). Each name
            # `card_name` gives is a str, None where the text is not one card.
            names = [card_name(c) for c in payload[row]]
            bad = [str(c) for c, n in zip(payload[row], names, strict=True) if n is None]
            if bad:
                raise Refused(
                    ART_7,
                    f"{row}: {', '.join(bad)} is not a card (e.g. As, Td, 9h)",
                    zh=f"{_ROW_ZH[row]}：「{', '.join(bad)}」不是牌（例如 As、Td、9h）",
                )
            if len(names) != ROW_SIZES[row]:
                raise Refused(
                    ART_7,
                    f"{row} must be {ROW_SIZES[row]} cards, not {len(names)}",
                    zh=f"{_ROW_ZH[row]}須為 {ROW_SIZES[row]} 張牌，不是 {len(names)} 張",
                )
            rows[row] = names  # type: ignore[assignment]  # no None in it: refused above
        placed = [*rows["head"], *rows["middle"], *rows["tail"]]
        hand = self.seat_cards(seat)
        # The hand is open: naming its cards (or one not in it) tells nobody anything new.
        strangers = [c for c in placed if c not in hand]
        if strangers:
            raise Refused(
                ART_7,
                f"{', '.join(strangers)} is not in seat {seat}'s open hand",
                zh=f"「{', '.join(strangers)}」不在第{seat}門已開的牌中",
            )
        twice = sorted({c for c in placed if placed.count(c) > 1})
        if twice:
            raise Refused(
                ART_7, f"{', '.join(twice)} is placed twice", zh=f"「{', '.join(twice)}」放了兩次"
            )
        return rows

    def _apply_arrange_banker(self, payload: Mapping[str, Any], now: float) -> None:
        self.banker_arranged += 1
        self.emit("arrangement.banker", rearranged=self.banker_arranged > 1)

    def _apply_open_banker(self, payload: Mapping[str, Any], now: float) -> None:
        self.banker_opened = True
        self.deadline = now + ARRANGEMENT_SECONDS
        self.emit("banker.opened", deadline=self.deadline, cards=self.seat_cards(BANKER_SEAT))
        self.command("timer_bell", "start", seconds=ARRANGEMENT_SECONDS)

    def _check_player_arranged(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_3)
        if seat not in self.played_seats():
            raise Refused(
                ART_3,
                f"no bet on seat {seat}: its cards are not played",
                zh=f"第{seat}門沒有投注：其牌不參與",
            )
        if seat in self.arranged:
            raise Refused(
                ART_2D, f"seat {seat} has already said it is arranged", zh=f"第{seat}門已表示排好牌"
            )
        if now >= need(self.deadline):
            raise Refused(
                ART_2D,
                "the five minutes are over: a player not done loses",
                zh="五分鐘已過：未排好牌者作輸",
            )

    def _apply_player_arranged(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.arranged.append(seat)
        self.emit("player.arranged", seat=seat, holder=self.holder(seat))

    def _check_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_8)
        if seat not in self.played_seats():
            raise Refused(
                ART_8,
                f"no bet on seat {seat}: its cards are not played",
                zh=f"第{seat}門沒有投注：其牌不參與",
            )
        if seat in self.late:
            raise Refused(
                ART_2D,
                f"seat {seat} was not done at the bell: it loses unopened",
                zh=f"第{seat}門鈴響時未排好：不開牌作輸",
            )
        if seat in self.opened_hands:
            raise Refused(
                ART_8, f"seat {seat}'s hand is already open", zh=f"第{seat}門的牌已經打開"
            )

    def _apply_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.opened_hands.append(seat)
        self.emit("hand.opened", seat=seat, holder=self.holder(seat), cards=self.seat_cards(seat))

    def _check_enter_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        seat = int(payload["seat"])
        if seat != BANKER_SEAT or not self.banker_game:
            seat = self._seat(payload, "seat", ART_3)
            if seat not in self.played_seats():
                raise Refused(
                    ART_3,
                    f"no bet on seat {seat}: its cards are not played",
                    zh=f"第{seat}門沒有投注：其牌不參與",
                )
            if seat in self.late:
                raise Refused(
                    ART_2D,
                    f"seat {seat} was not done at the bell: it loses unopened",
                    zh=f"第{seat}門鈴響時未排好：不開牌作輸",
                )
        if not self.is_open(seat):
            raise Refused(
                ART_2D,
                f"{self._whose(seat)} hand is not open yet: its cards are placed once it is opened",
                zh=f"{self._whose_zh(seat)}的牌尚未打開：打開後才可排入三道",
            )
        if seat in self.arrangements:
            # Art. 2(d): the banker arranges again only until the players take their cards;
            # Art. 8: each hand is judged as it was opened. Placed once, a hand is final.
            raise Refused(
                ART_2D if seat == BANKER_SEAT and self.banker_game else ART_8,
                f"{self._whose(seat)} open hand is placed and final: a correction is a "
                "supervisor's, approved by a second supervisor",
                zh=f"{self._whose_zh(seat)}已開的牌已排入三道，不可再改：更正須由一位主任提出、另一位主任批准",
            )
        self._rows(payload, seat)

    def _apply_enter_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.arrangements[seat] = self._rows(payload, seat)
        self.emit(
            "arrangement.entered",
            seat=seat,
            holder=None if seat == BANKER_SEAT and self.banker_game else self.holder(seat),
            **self.arrangements[seat],
        )

    # A placed open hand corrected (the dealer tapped a card into the wrong row): one supervisor
    # proposes the rows as the hand lies open, a second, named one approves (two persons, as a
    # void: `daemon.procedures.overrides`); until then the settlement waits.
    def _ready_correct_arrangement(self) -> bool:
        return self.override is None and bool(self.arrangements)

    def _check_correct_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "reason", ART_8)
        if self.override is not None:
            raise Refused(
                ART_8,
                f"a {self.override['kind']} proposal is pending: decide it first",
                zh=f"有待決定的提議（{self.override['kind']}）：請先作決定",
            )
        seat = int(payload["seat"])
        if seat not in self.arrangements:
            raise Refused(
                ART_8,
                f"{self._whose(seat)} hand is not placed: the dealer places it once open",
                zh=f"{self._whose_zh(seat)}的牌尚未排入三道：由荷官在開牌後排入",
            )
        rows = self._rows(payload, seat)
        if rows == self.arrangements[seat]:
            raise Refused(
                ART_8,
                f"{self._whose(seat)} hand is placed so already",
                zh=f"{self._whose_zh(seat)}的牌已是這樣排的",
            )

    def _apply_correct_arrangement(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        self.propose(
            Correction(
                kind="correct_arrangement",
                **self.proposed(ART_8, now),
                seat=seat,
                reason=payload["reason"],
                placed=clone(self.arrangements[seat]),
                rows=self._rows(payload, seat),
            )
        )

    # ---- Art. 5 advice, Art. 3 cards taken away (dealer's records) ------------------------

    def _check_advise_holder(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_5)
        adviser = payload["player"]
        if self._find_bet(adviser, seat) is None:
            raise Refused(
                ART_5,
                f"{adviser} has no bet on seat {seat}: only its bettors advise",
                zh=f"{adviser} 沒有在第{seat}門下注：只有該門的投注者可提建議",
            )
        if self.holder(seat) == adviser:
            raise Refused(
                ART_5,
                f"{adviser} holds seat {seat}'s cards: the others advise",
                zh=f"{adviser} 持有第{seat}門的牌：由其他人提建議",
            )
        if seat in self.arranged:
            raise Refused(ART_5, f"seat {seat} has already arranged", zh=f"第{seat}門已排好牌")

    def _apply_advise_holder(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        entry = Advice(seat=seat, adviser=payload["player"], holder=self.holder(seat))
        self.advice.append(entry)
        self.emit("holder.advised", **entry)

    def _check_cards_away(self, payload: Mapping[str, Any], now: float) -> None:
        seat = int(payload["seat"])
        if payload["what"] == "other_seat" and self.holder(seat) == payload["player"]:
            raise Refused(
                ART_3,
                f"{payload['player']} holds seat {seat}: those are their cards",
                zh=f"{payload['player']} 持有第{seat}門：那是他自己的牌",
            )

    def _apply_cards_away(self, payload: Mapping[str, Any], now: float) -> None:
        # Recorded for the pit: the table cannot see a hand leave; a supervisor may void.
        entry = Away(
            seat=payload["seat"],
            player=payload["player"],
            what=payload["what"],
            holder=self.holder(payload["seat"]),
        )
        self.away.append(entry)
        self.emit("cards.away", **entry)

    def _check_timer_expired(self, payload: Mapping[str, Any], now: float) -> None:
        if now < need(self.deadline):
            raise Refused(
                ART_2D,
                f"the five minutes end at {self.deadline}, not yet at {now}",
                zh=f"五分鐘於 {self.deadline} 結束，現在（{now}）未到",
            )

    def _apply_timer_expired(self, payload: Mapping[str, Any], now: float) -> None:
        self.late = [s for s in self.played_seats() if s not in self.arranged]
        self.emit("timer.expired", deadline=self.deadline, late=self.late)
        # The table's clock is the authority: the bell is told to ring even if it already has.
        self.command("timer_bell", "ring")

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        arrange_banker=Hooks(apply=_apply_arrange_banker),
        open_banker=Hooks(apply=_apply_open_banker),
        player_arranged=Hooks(check=_check_player_arranged, apply=_apply_player_arranged),
        open_hand=Hooks(check=_check_open_hand, apply=_apply_open_hand),
        enter_arrangement=Hooks(check=_check_enter_arrangement, apply=_apply_enter_arrangement),
        correct_arrangement=Hooks(
            check=_check_correct_arrangement,
            apply=_apply_correct_arrangement,
            ready=_ready_correct_arrangement,
        ),
        advise_holder=Hooks(check=_check_advise_holder, apply=_apply_advise_holder),
        cards_away=Hooks(check=_check_cards_away, apply=_apply_cards_away),
        timer_expired=Hooks(check=_check_timer_expired, apply=_apply_timer_expired),
    )


# A row's name in a Chinese refusal.
_ROW_ZH = {"head": "頭道", "middle": "中道", "tail": "尾道"}
