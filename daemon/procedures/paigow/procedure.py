"""The procedure that plays Taiwan Pai Gow: `PaiGowProcedure`, the code each action runs.

The legal procedure it follows, article by article, is told in `daemon/procedures/paigow/game.py`
(with the game's phases, actions and transition table). The code is in layers by step, each
binding its own actions' hooks: the round's state (`round.py`), the bank, the bets and the
stake (`bank.py`), the tiles from the shuffle to the deal (`deal.py`); here the hands set,
opened and re-set (Art. 6) and the round settled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from daemon.procedures.checkpoint import clone
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.paigow.bank import PaiGowBank
from daemon.procedures.paigow.deal import PaiGowDeal
from daemon.procedures.paigow.game import ART_4, ART_6_1, ART_6_2
from daemon.procedures.paigow.settle import settle_paigow, wrongly_set
from daemon.procedures.payload import Refused, integer, need
from daemon.procedures.records import FaceUp, Setting
from daemon.procedures.stakes import Stakes
from daemon.rules.paigow.tiles import (
    TILE_SET,
    TileParseError,
    format_tiles,
    parse_deal,
)
from daemon.rules.paigow.tiles import Tile as _Tile

if TYPE_CHECKING:
    from daemon.config import TableConfig


class PaiGowProcedure(PaiGowBank, PaiGowDeal):
    @classmethod
    def from_config(cls, config: TableConfig, devices: tuple[str, ...]) -> PaiGowProcedure:
        """The procedure a table's configuration describes (`daemon.procedures.build`), its
        bets in table units (daemon/procedures/stakes.py)."""
        procedure = cls(
            config.table_id, hands=config.paigow_hands, ruleset=config.ruleset, devices=devices
        )
        procedure.stakes = Stakes(config.unit, config.currency, config.min_bet, config.max_bet)
        return procedure

    # ---- setting and opening ----------------------------------------------------------------

    def _setting(self, payload: Mapping[str, Any], seat: int, article: str) -> Setting:
        raws = [str(payload[key]) for key in ("front", "back")]  # strings: the declared params
        try:
            # One deal, not two parses: a name shared by two faces (杂九 is 4-5 or 3-6) must
            # resolve to both faces when it stands once in front and once behind.
            pairs = parse_deal([str(raw) for raw in raws])
        except TileParseError as exc:
            raise Refused(article, str(exc), zh=f"無法辨認的牌：{exc}") from None
        for key, tiles in zip(("front", "back"), pairs, strict=True):
            if len(tiles) != 2:
                raise Refused(
                    article,
                    f"{key} must be two tiles, not {len(tiles)}",
                    zh=f"{'前手' if key == 'front' else '後手'}須為兩張牌，不是 {len(tiles)} 張",
                )
        front, back = (format_tiles(tiles).split() for tiles in pairs)
        setting: Setting = {"front": front, "back": back}
        others = [t for s, h in self.settings.items() if s != seat for t in h["front"] + h["back"]]
        _check_in_set([*self.used_tiles, *others, *setting["front"], *setting["back"]], article)
        return setting

    def _check_set_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._seat(payload, "seat", ART_6_1)
        if seat not in self.played_seats():
            raise Refused(
                ART_6_1,
                f"no bet on door {seat}: its tiles are not played",
                zh=f"第{seat}門沒有投注：其牌不參與",
            )
        if seat in self.set_seats:
            raise Refused(ART_6_1, f"door {seat} has set its hand", zh=f"第{seat}門已配好牌")

    def _apply_set_hand(self, payload: Mapping[str, Any], now: float) -> None:
        # Set face down (Art. 6(1)): the system records that the door has set, not its tiles,
        # which nobody may learn before the croupier opens the hand (Art. 6(2)).
        seat = payload["seat"]
        self.set_seats.append(seat)
        self.emit("hand.set", seat=seat, holder=self.holder(seat))

    def _apply_set_banker(self, payload: Mapping[str, Any], now: float) -> None:
        seat = self._banker_seat()
        self.set_seats.append(seat)
        self.emit("hand.set", seat=seat, holder=self.banker, banker=True)

    def _check_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = integer(payload, "seat", ART_6_2, 0, self.hands - 1)
        turn = next(s for s in self.opening_order() if s not in self.settings)
        if seat != turn:
            raise Refused(
                ART_6_2,
                f"door {turn} is opened next, not door {seat}",
                zh=f"下一門開牌的是第{turn}門，不是第{seat}門",
            )
        setting = self._setting(payload, seat, ART_6_2)
        _check_face_up(self.face_up, seat, [*setting["front"], *setting["back"]])

    def _apply_open_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        banker = seat == self.banker_seat
        setting = self.settings[seat] = self._setting(payload, seat, ART_6_2)
        wrong = wrongly_set(setting, self.ruleset, banker=banker)
        if wrong:
            self.wrongly_set.append(seat)
        holder = self.banker if banker else self.holder(seat)
        extra = {"banker": True} if banker else {}
        self.emit("hand.opened", seat=seat, holder=holder, wrongly_set=wrong, **extra, **setting)
        if self.all_open(None):
            self.opened_hands = True
            self.emit("hands.opened", wrongly_set=list(self.wrongly_set))

    def _check_reset_hand(self, payload: Mapping[str, Any], now: float) -> None:
        # The banker's door too, when the rule set corrects the banker (it is then in the list).
        seat = integer(payload, "seat", ART_6_2, 0, self.hands - 1)
        if seat not in self.wrongly_set:
            raise Refused(
                ART_6_2,
                f"door {seat} is set as the rule asks; it is not re-set",
                zh=f"第{seat}門已按規則配牌，不須重配",
            )
        setting = self._setting(payload, seat, ART_6_2)
        if sorted(setting["front"] + setting["back"]) != sorted(
            self.settings[seat]["front"] + self.settings[seat]["back"]
        ):
            raise Refused(ART_6_2, "a re-set uses the same four tiles", zh="重新配牌須用同樣四張牌")
        if wrongly_set(setting, self.ruleset, banker=seat == self.banker_seat):
            raise Refused(
                ART_6_2,
                "the re-set hand must put the largest pair behind",
                zh="重新配牌須把大對放在後手",
            )

    def _apply_reset_hand(self, payload: Mapping[str, Any], now: float) -> None:
        seat = payload["seat"]
        before = self.settings[seat]
        self.settings[seat] = self._setting(payload, seat, ART_6_2)
        self.wrongly_set.remove(seat)
        self.resets.append({"seat": seat, "before": before, "after": self.settings[seat]})
        extra = {"banker": True} if seat == self.banker_seat else {}
        self.emit("hand.reset", seat=seat, before=before, **extra, **self.settings[seat])

    def _check_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        if self.wrongly_set:
            raise Refused(
                ART_6_2,
                f"doors {self.wrongly_set} must be re-set by the croupier",
                zh=f"第 {self.wrongly_set} 門須由荷官重新配牌",
            )

    def _apply_settle_round(self, payload: Mapping[str, Any], now: float) -> None:
        stake = need(self.stake)
        self.settlement = settle_paigow(
            self.settings,
            self.bets,
            banker_seat=self._banker_seat(),
            total=sum(need(self.dice)),
            hands=self.hands,
            stake=stake,
            ruleset=self.ruleset,
            co_bankers=self.co_bankers,
        )
        self.bank_rounds += 1
        # Art. 5(4): the next round's stake is at least what this one left on the layout (the
        # winnings join the stake); it may grow, never shrink.
        self.min_stake = max(int(self.settlement["banker_carried"]), 0)
        if self.hands == 4 and not self.tiles_kept_for_next:
            self.used_tiles = [t for h in self.settings.values() for t in h["front"] + h["back"]]
            self.tiles_kept_for_next = True
            self.emit("tiles.shown_face_up", tiles=self.used_tiles)
        else:
            self.tiles_kept_for_next = False
        self.emit("round.settled", settlement=clone(self.settlement))

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        set_hand=Hooks(check=_check_set_hand, apply=_apply_set_hand),
        set_banker=Hooks(apply=_apply_set_banker),
        open_hand=Hooks(check=_check_open_hand, apply=_apply_open_hand),
        reset_hand=Hooks(check=_check_reset_hand, apply=_apply_reset_hand),
        settle_round=Hooks(check=_check_settle_round, apply=_apply_settle_round),
    )


def _check_face_up(face_up: Sequence[FaceUp], seat: int, hand: Sequence[str]) -> None:
    """Art. 4: a tile dealt face up at a door stays in play, so the hand opened there holds it
    (issue 9: a hand entered without it would put another tile in its place)."""
    left = list(hand)
    # Faces named by pips first, so a name (杂九) does not take the face a pip entry needs.
    shown_here = sorted(
        (f for f in face_up if f["seat"] == seat), key=lambda f: bool(f.get("by_name"))
    )
    for shown in shown_here:
        names = [_name(t) for t in left]
        if shown.get("by_name") and _name(shown["tile"]) in names:
            left.pop(names.index(_name(shown["tile"])))
        elif not shown.get("by_name") and shown["tile"] in left:
            left.remove(shown["tile"])
        else:
            what = _name(shown["tile"]) if shown.get("by_name") else shown["tile"]
            raise Refused(
                ART_4,
                f"door {seat} was dealt {what} face up; the hand opened lacks it",
                zh=f"第{seat}門派牌時翻開了 {what}；開出的牌中沒有它",
            )


def _name(tile: str) -> str:
    low, high = (int(x) for x in tile.split("-"))
    return _Tile(low, high).name


def _check_in_set(tiles: Sequence[str], article: str) -> None:
    """The tiles named so far fit in one 32-tile set (with the used half of a 4-hand set)."""
    available = Counter(str(t) for t in TILE_SET)
    named = Counter(tiles)
    over = sorted(t for t, n in named.items() if n > available[t])
    if over:
        raise Refused(
            article,
            f"one set holds fewer of {', '.join(over)} than were named",
            zh=f"一副牌九中 {', '.join(over)} 的數目少於所列",
        )
