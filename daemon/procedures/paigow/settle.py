"""A Pai Gow round settled by the rules engine, doors counter-clockwise from the first hand,
within the banker's stake, with the commission (Portaria 15/90/M Art. 5(3), 6(3), 8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from daemon.procedures.records import Bet, CoBanker, RoundSettled, Setting
from daemon.rules import paigow


def _hand(setting: Setting) -> paigow.Hand:
    front = paigow.parse_tiles(" ".join(setting["front"]))
    back = paigow.parse_tiles(" ".join(setting["back"]))
    return ((front[0], front[1]), (back[0], back[1]))


def _tiles(pair: paigow.Pair) -> list[str]:
    return [str(tile) for tile in pair]


def wrongly_set(setting: Setting, ruleset: str = "macau-1990", *, banker: bool = False) -> bool:
    """Art. 6(2), by the rules engine under the table's rule set: the croupier must re-set this
    hand. A player's hand whose back pair is not the largest the tiles allow, unless the rule set
    lets players set freely (`largest_back_required`); the banker's only when the rule set
    corrects the banker too (`correct_banker_setting`). A hand handed over larger pair first is
    not re-set: opening it puts the smaller pair in front (`pairs_swapped`)."""
    rules = paigow.ruleset(ruleset)
    if banker and not rules.correct_banker_setting:
        return False
    check = paigow.correct_setting(_hand(setting), largest_back=rules.largest_back_required)
    return check.correction == "back_not_largest"


def settle_paigow(
    settings: Mapping[int, Setting],
    bets: Sequence[Bet],
    *,
    banker_seat: int,
    total: int,
    hands: int,
    stake: int,
    ruleset: str,
    co_bankers: Sequence[CoBanker] = (),
) -> RoundSettled:
    """The round settled by the rules engine, doors counter-clockwise from 头门 (Art. 2(3)).

    Seats are numbered counter-clockwise, so a seat's door is its offset from the banker's.
    """
    played = {int(b["seat"]) for b in bets}
    seat_of = {(seat - banker_seat) % hands: seat for seat in range(hands)}
    order = [seat_of[d] for d in paigow.door_order(total, hands) if seat_of[d] in played]
    doors = [
        paigow.Door(
            hand=_hand(settings[seat]),
            bet=sum(int(b["amount"]) for b in bets if b["seat"] == seat),
            bettors=frozenset(str(b["player"]) for b in bets if b["seat"] == seat),
        )
        for seat in order
    ]
    result = paigow.settle_round(
        _hand(settings[banker_seat]),
        doors,
        stake,
        co_bankers=[
            # Named apart from the main banker and the bettors: the procedure has already
            # refused a co-banker who bets (Art. 5(5)), and a guest may be called "banker".
            paigow.CoBanker(f"co-bank {i}", int(c["amount"]), bool(c["house"]))
            for i, c in enumerate(co_bankers, start=1)
        ],
        rules=paigow.ruleset(ruleset),
    )
    return {
        "order": order,
        "banker_hand": {
            "front": _tiles(result.banker_hand[0]),
            "back": _tiles(result.banker_hand[1]),
        },
        "doors": [
            {
                "seat": seat,
                "front": _tiles(door.hand[0]),
                "back": _tiles(door.hand[1]),
                "correction": door.correction,
                "outcome": door.outcome,
                "bet": door.bet,
                "won": door.won,
                "lost": door.lost,
                "commission": door.commission,
                "net": door.net,
                "limited": door.limited,
                "bettors": [
                    {"player": b["player"], "amount": b["amount"]}
                    for b in bets
                    if b["seat"] == seat
                ],
            }
            for seat, door in zip(order, result.doors, strict=True)
        ],
        "bank_stake": result.bank_stake,
        "bank_result": result.bank_result,
        "banker_commission": result.banker.commission,
        "banker_net": result.banker.net,
        "banker_carried": result.banker.carried,
        "co_bankers": [
            {
                "player": co["player"],
                "stake": share.stake,
                "result": share.result,
                "commission": share.commission,
                "net": share.net,
                "house": bool(co["house"]),
            }
            for share, co in zip(result.shares[1:], co_bankers, strict=True)
        ],
        "commission": result.commission,
    }
