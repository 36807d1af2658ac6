"""Thirteen cards (十三张): fouls, special hands, settlement, house way, the deal.

Macau, 10 March 1989 (000_*.txt), and the Hong Kong ways of 003_*.txt; rule sets by name
(``rulesets``). The articles this package implements, and the module of each:

- Art. 2(b): the highest bettor's dice total counts seats counter-clockwise from the banker,
  the banker counting as 1; that seat gets the first card, then one card at a time
  counter-clockwise until every seat holds 13 (``deal``: ``first_seat_from_dice``, ``deal_order``).
- Art. 7 (摆乌龙): rows must go from small to large, head <= middle <= tail; otherwise the
  seat's bet is lost to the banker (``is_foul``).
- Art. 8: the player's three rows' total units against the banker's decide the hand; equal
  totals are a push.
- Art. 9 I: fixed combinations (一条龙, 六对半, 三花, 三顺) beat every other hand, win 3 units,
  and two of them push whatever they are (``special_hand``).
- Art. 9 II: the units of a winning row (``RuleSet.row_units``); the ranks (``ranking``).
- Art. 10 (夹棍): a row whose hands are equal goes to the banker.
- Art. 11: bets of 1, 2 or 3 units; the prize and the 2 % commission (a reading, see
  ``RuleSet.prize``).

A fixed combination settles the hand as a whole, before any row is compared, so it also beats
a foul (unless the rule set's ``foul_voids_special``); rows are then empty in the settlement.
A foul loses every row; each of those rows earns the opponent the units its own row would win
(Art. 9), so totals stay meaningful for the rule sets that pay the difference of units.
"""

from daemon.rules.cards import CardError
from daemon.rules.thirteen.deal import SEATS, deal_order, first_seat_from_dice
from daemon.rules.thirteen.hands import Arrangement, Hand, Row, house_way, is_foul, special_hand
from daemon.rules.thirteen.ranking import CATEGORIES, HandRank, rank
from daemon.rules.thirteen.rulesets import ROWS, RULESETS, RulesError, RuleSet, ruleset
from daemon.rules.thirteen.settlement import (
    MONEY_STEP,
    ReadHand,
    RowResult,
    Settlement,
    Side,
    Table,
    money_text,
    read_hand,
    settle,
    table_points,
)

__all__ = [
    "CATEGORIES",
    "MONEY_STEP",
    "ROWS",
    "RULESETS",
    "SEATS",
    "Arrangement",
    "CardError",
    "Hand",
    "HandRank",
    "ReadHand",
    "Row",
    "RowResult",
    "RuleSet",
    "RulesError",
    "Settlement",
    "Side",
    "Table",
    "deal_order",
    "first_seat_from_dice",
    "house_way",
    "is_foul",
    "money_text",
    "rank",
    "read_hand",
    "ruleset",
    "settle",
    "special_hand",
    "table_points",
]
