"""Setting and comparing four-tile hands, and the dice that start the deal (Portaria 15/90/M).

Art. 2(2): the banker shakes four dice; the total is counted counter-clockwise starting with the
banker as one, and the door it reaches takes the first four tiles. That door is 头门 and the
others are numbered in dealing order, counter-clockwise; if the banker takes the first four
tiles, the door on the banker's right (the next counter-clockwise) is 头门. Art. 2(3): dealing,
collecting and paying all run counter-clockwise, right to left. Art. 2(4), 3(1): eight or four
doors, the banker's included; the count runs over the doors dealt.

Art. 6(1)-(2): each door's four tiles are set as two pairs; the croupier opens them and the
smaller pair is the front (前对), the larger the back (後对). The player must set the back pair
as large as possible; if not, the croupier sets the hand again. `set_hand` is that setting: the
largest back pair the four tiles allow and, among settings with that back, the largest front.

Art. 6(3): the banker wins when both pairs beat the player's, the player when both beat the
banker's; a tie in one pair leaves the other pair to decide; one pair each, or both tied, is a
push. Art. 9(1): the banker does not take ties (no 夹棍), so the outcome is antisymmetric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from daemon.rules.paigow.classes import PairClass, classify
from daemon.rules.paigow.tiles import TILE_SET, Tile

Pair = tuple[Tile, Tile]
Hand = tuple[Pair, Pair]  # (front, back)
Outcome = Literal["banker", "player", "push"]
Correction = Literal["pairs_swapped", "back_not_largest"]

_COPIES_IN_SET = Counter(TILE_SET)


def check_from_one_set(tiles: Iterable[Tile]) -> None:
    """Refuse tiles that one set of 32 cannot hold (three 天牌, two 大鸡)."""
    seen: dict[Tile, int] = {}
    for tile in tiles:
        count = seen[tile] = seen.get(tile, 0) + 1
        if count > _COPIES_IN_SET[tile]:
            raise ValueError(f"one set holds only {_COPIES_IN_SET[tile]} of {tile} ({tile.name})")


def _ordered_pair(a: Tile, b: Tile) -> Pair:
    return (a, b) if (a.rank, a.low) <= (b.rank, b.low) else (b, a)


def _splits(tiles: Sequence[Tile]) -> list[Hand]:
    a, b, c, d = tiles
    hands: list[Hand] = []
    for first, second in (((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))):
        one, two = _ordered_pair(*first), _ordered_pair(*second)
        # Equal classes are put in tile order so a setting does not depend on the order dealt.
        key_one = (classify(*one), _tile_order(one[0]), _tile_order(one[1]))
        key_two = (classify(*two), _tile_order(two[0]), _tile_order(two[1]))
        hands.append((one, two) if key_one <= key_two else (two, one))
    return hands


def _four(tiles: Sequence[Tile]) -> None:
    if len(tiles) != 4:
        raise ValueError(f"a pai gow hand is four tiles, not {len(tiles)} (Art. 2(4))")
    check_from_one_set(tiles)


def setting_key(hand: Hand) -> tuple[PairClass, PairClass]:
    """The objective `set_hand` maximises: the back pair's class, then the front pair's."""
    front, back = hand
    return classify(*back), classify(*front)


def legal_settings(tiles4: Sequence[Tile]) -> tuple[Hand, ...]:
    """The three ways to split four tiles into a front and a back pair, smaller pair in front."""
    _four(tiles4)
    return tuple(_splits(tiles4))


def set_hand(tiles4: Sequence[Tile]) -> Hand:
    """(front, back) with the largest back pair, then the largest front pair (Art. 6(2))."""
    _four(tiles4)
    return _best_setting(tuple(sorted(tiles4, key=_tile_order)))


def _tile_order(tile: Tile) -> tuple[int, int]:
    return tile.rank, tile.low


@cache
def _best_setting(tiles4: tuple[Tile, Tile, Tile, Tile]) -> Hand:
    # Equal faces are interchangeable, so the setting of a sorted multiset serves every order;
    # at most 7,000-odd multisets exist, which simulators revisit constantly.
    return max(_splits(tiles4), key=setting_key)


def normalise(hand: Hand) -> Hand:
    """The hand as the croupier opens it: the smaller pair is the front (Art. 6(2))."""
    front, back = hand
    if len(front) != 2 or len(back) != 2:
        raise ValueError("a set hand is two pairs of two tiles")
    check_from_one_set((*front, *back))
    return _opened(hand)


def _opened(hand: Hand) -> Hand:
    front, back = hand
    return (front, back) if classify(*front) <= classify(*back) else (back, front)


@dataclass(frozen=True)
class SettingCheck:
    """The croupier's look at a set hand: the hand opened, and the correction made, if any."""

    hand: Hand
    correction: Correction | None

    @property
    def corrected(self) -> bool:
        return self.correction is not None


def correct_setting(hand: Hand, *, largest_back: bool = True) -> SettingCheck:
    """Art. 6(2): a hand whose back pair is not the largest possible is set again by the croupier.

    A hand whose back pair already has the largest class possible stands as the player set it
    (the text polices only the back pair); pairs handed over larger-first are opened smaller
    first, which the check reports as `pairs_swapped`. With `largest_back=False` (a house that
    reads "尽量将後对摆大" as only "the larger pair goes behind") only the swap is made.
    """
    opened = normalise(hand)
    best = set_hand((*opened[0], *opened[1]))
    if largest_back and classify(*opened[1]) < classify(*best[1]):
        return SettingCheck(best, "back_not_largest")
    if opened != hand:
        return SettingCheck(opened, "pairs_swapped")
    return SettingCheck(opened, None)


def _sign(banker: PairClass, player: PairClass) -> int:
    return (banker > player) - (banker < player)


def hand_outcome(banker: Hand, player: Hand) -> Outcome:
    """Art. 6(3) and 9(1): who wins a door against the banker, ties not going to the banker."""
    for hand in (banker, player):
        if len(hand[0]) != 2 or len(hand[1]) != 2:
            raise ValueError("a set hand is two pairs of two tiles")
    check_from_one_set((*banker[0], *banker[1], *player[0], *player[1]))
    banker_front, banker_back = _opened(banker)
    player_front, player_back = _opened(player)
    score = _sign(classify(*banker_front), classify(*player_front)) + _sign(
        classify(*banker_back), classify(*player_back)
    )
    if score > 0:
        return "banker"
    if score < 0:
        return "player"
    return "push"


def _check_dice(total: int, hands: int) -> None:
    if hands not in (8, 4):
        raise ValueError(f"a round deals eight or four doors, banker included, not {hands}")
    if not 4 <= total <= 24:
        raise ValueError(f"four dice total 4 to 24, not {total}")


def first_hand_from_dice(total: int, hands: int = 8) -> int:
    """The door that takes the first four tiles, counted from the banker (0) counter-clockwise.

    Art. 2(2): the count starts with the banker as one, so a total of 9 with eight doors comes
    back to the banker (0) and a total of 10 reaches the door on the banker's right (1).
    """
    _check_dice(total, hands)
    return (total - 1) % hands


def deal_order(total: int, hands: int = 8) -> tuple[int, ...]:
    """Doors in the order they take tiles (0 = banker, counter-clockwise offsets)."""
    first = first_hand_from_dice(total, hands)
    return tuple((first + step) % hands for step in range(hands))


def door_order(total: int, hands: int = 8) -> tuple[int, ...]:
    """头门, 二门, ... as banker offsets: the settling order of Art. 2(2)-(3), banker excluded."""
    first = first_hand_from_dice(total, hands) or 1
    doors = ((first + step) % hands for step in range(hands))
    return tuple(door for door in doors if door)


def deal(tiles: Sequence[Tile], total: int, hands: int = 8) -> dict[int, tuple[Tile, ...]]:
    """Four tiles to each door in dealing order (Art. 2(2), 2(4)), keyed by banker offset.

    `tiles` are the stacks as they lie, first four first: 32 for eight doors, 16 for four (the
    other 16 wait for the next round, Art. 2(4)).
    """
    if len(tiles) != 4 * hands:
        raise ValueError(f"{hands} doors take {4 * hands} tiles, not {len(tiles)}")
    check_from_one_set(tiles)
    return {
        door: tuple(tiles[4 * turn : 4 * turn + 4])
        for turn, door in enumerate(deal_order(total, hands))
    }
