"""Thirteen cards (十三张), Macau, Portaria 51/89/M of 10 March 1989.

The game as data: here its constants, its phases and the text a dealer reads in each, and its
journal events; its actions (roles, parameters, bilingual labels, the article each check
cites) in `actions.py` and its transition table in `transitions.py`; and here, the legal
procedure they encode.

Art. 1 names the equipment: one 52-card deck, the metal shoe with a white card, four dice with a
shaker, and a shuffling machine. The table opens only when each device is identified and
approved (`device_identified`, `open_table`).

Art. 2(a): the cards are hand-shuffled by the dealer (`confirm_hand_shuffle`), then shuffled by
the machine (`shuffle_completed`; its count must be 52, else the deck is out of play: TILT, and
a supervisor's clear returns to the hand shuffle with a new deck), then cut with the white card
by any player, or by the dealer when no player will, with one hand and at least ten cards
(`confirm_cut`), and put face down into the shoe (`load_shoe`).

Art. 3 and 5: players bet on the three players' seats of the four (the fourth is the banker's);
several may bet on one seat, and the highest bettor who holds a seat at the table holds the
cards (`place_bet`, `withdraw_bet`, `move_bet`). Art. 11: a bet is one, two or three units
(一注、二注或三注) of the table's unit value, its money follows from them, and the table's
minimum and maximum hold (`daemon.procedures.stakes`). Art. 2(b): the highest bettor at the
table shakes the dice (`shake_dice`; who shakes when the highest bettor stands is the table's
`shaker` setting); the bets close at the shake (Art. 2(c)): any bet, withdrawal or
move after it is refused. The shaker's result (`dice_landed`) is never edited. The first seat
is counted from the banker counter-clockwise by the dice total, and the cards go one at a time
counter-clockwise until each of the four seats has 13, whatever the number of players; each card
the shoe reader reports (`card_read`) is assigned in that order.

Art. 4: a card dealt face up stays valid and is journaled; wrongly dealt cards are put right by
dealing them again in the normal order (`correct_misdeal`, journaled: the reader's order
stands); when that cannot be done the dealt cards are void and the procedure returns to the hand
shuffle (`void_deal`). The bets and the dice stand (Art. 2(c)), and after the new cut and shoe
the deal starts again from the same first seat.

Art. 2(d): the banker arranges face down and says so (`arrange_banker`: no cards, nobody but
the banker has seen them) and may arrange again until the players take their cards, which they
do only after the banker has opened (`open_banker`: the banker's 13 cards lie face up, and the
dealer places them into head, middle and tail as the banker set them, `enter_arrangement` for
seat 0). Then the players have five minutes: the bell (`timer_bell`) is started and the
table's own clock is the authority (`timer_expired`); each player says when the hand is
arranged (`player_arranged`), and a player not done when it rings loses the round. Art. 7–11:
each hand is opened against the banker's (`open_hand`: its 13 cards face up), the dealer places
its cards into the three rows as the player set them (`enter_arrangement`), fouls are found and
the round is settled by the rules engine (`settle_round`). An open hand is final: the banker's
may be arranged again only until the players take their cards (Art. 2(d)), and each hand is
judged as it was opened (Art. 8), so the dealer places each hand once; a placement the dealer
got wrong is corrected only by a supervisor's proposal (`correct_arrangement`) that a second,
named supervisor approves (`approve_override`), both journaled. An arrangement is entered only from
an open hand: before that the system never compares cards a person names with a hand nobody
has seen, so a refusal cannot tell whether guessed cards are someone's.

Art. 3: a player may not leave the table holding cards nor hold another seat's cards; the
table cannot see hands, so the dealer records it when it happens (`cards_away`). Art. 5: the
other bettors on a seat may advise its holder how to arrange; the dealer records who advised
(`advise_holder`), refused unless the adviser bets on that seat and does not hold it.

Without a banker (003: `hk-points`, way 3; `hk-four`, way 2's 「四人对比」) the four seats are
players' (seat 0 too), one player a seat; after the deal every played seat arranges within
the five minutes, and each is settled against each other seat in points (money per point, or
a pot the highest score takes: the rule set's `stakes`).

The procedure that plays it is `procedure.py` (on its layers: `round.py`, `betting.py`,
`deal.py`, `arrange.py`); the settlement of a round, `settle.py`.
"""

from __future__ import annotations

from enum import Enum

from daemon.procedures.events import TABLE_EVENTS, procedure_events
from daemon.procedures.spec import (
    Event,
    PhaseText,
    events,
)

REGULATION = "Portaria 51/89/M"
ART_1 = f"{REGULATION} Art. 1"
ART_2A = f"{REGULATION} Art. 2(a)"
ART_2B = f"{REGULATION} Art. 2(b)"
ART_2C = f"{REGULATION} Art. 2(c)"
ART_2D = f"{REGULATION} Art. 2(d)"
ART_3 = f"{REGULATION} Art. 3"
ART_4 = f"{REGULATION} Art. 4"
ART_5 = f"{REGULATION} Art. 5"
ART_7 = f"{REGULATION} Art. 7"
ART_7_11 = f"{REGULATION} Art. 7-11"
ART_8 = f"{REGULATION} Art. 8"
ART_11 = f"{REGULATION} Art. 11"
# The Hong Kong ways (seed 003) cited by their clause, as the trace catalogue names them.
HK_SCORING = "003 way 3 scoring"
HK_STAKES = "003 way 3 stakes"

# Art. 1 names this equipment; a table without it does not start.
REQUIRED_DEVICES = ("shuffler", "shoe_reader", "dice_shaker")
DEVICES = ("shuffler", "shoe_reader", "dice_shaker", "timer_bell")
SEATS = 4
BANKER_SEAT = 0
PLAYER_SEATS = (1, 2, 3)
DECK = 52
CARDS_PER_SEAT = 13
MIN_CUT = 10
ARRANGEMENT_SECONDS = 300.0
# Art. 2(c): none of these after the shake.
BET_ACTIONS = ("place_bet", "withdraw_bet", "move_bet")
ROWS = ("head", "middle", "tail")
ROW_SIZES = {"head": 3, "middle": 5, "tail": 5}


class Phase(Enum):
    EQUIPMENT_CHECK = "EQUIPMENT_CHECK"
    HAND_SHUFFLE = "HAND_SHUFFLE"
    MACHINE_SHUFFLE = "MACHINE_SHUFFLE"
    CUT = "CUT"
    SHOE_LOADING = "SHOE_LOADING"
    BETTING = "BETTING"
    SHAKING = "SHAKING"
    DEALING = "DEALING"
    BANKER_ARRANGING = "BANKER_ARRANGING"
    BANKER_ARRANGED = "BANKER_ARRANGED"
    PLAYERS_ARRANGING = "PLAYERS_ARRANGING"
    SETTLING = "SETTLING"
    ROUND_OVER = "ROUND_OVER"
    HOLD = "HOLD"
    TILT = "TILT"


P = Phase

PHASES: dict[str, PhaseText] = {
    "EQUIPMENT_CHECK": PhaseText(
        "Equipment check", "設備檢查", "identify devices, open the table", "識別設備，開枱"
    ),
    "HAND_SHUFFLE": PhaseText(
        "Hand shuffle", "人手洗牌", "the dealer hand-shuffles", "荷官人手洗牌"
    ),
    "MACHINE_SHUFFLE": PhaseText(
        "Machine shuffle", "洗牌機洗牌", "the shuffler counts 52", "洗牌機點算52張"
    ),
    "CUT": PhaseText(
        "Cut", "切牌", "a player cuts, one hand, at least 10", "玩家單手切牌，至少十張"
    ),
    "SHOE_LOADING": PhaseText("Shoe", "入牌靴", "cards into the shoe", "牌放入牌靴"),
    "BETTING": PhaseText("Betting", "下注", "bets on the seats, then the dice", "下注，然後搖骰"),
    "SHAKING": PhaseText("Dice", "搖骰", "the shaker reports the dice", "等待骰子結果"),
    "DEALING": PhaseText("Dealing", "發牌", "the shoe deals 13 to each seat", "每門發十三張"),
    "BANKER_ARRANGING": PhaseText(
        "Banker arranges", "莊家排牌", "the banker arranges face down", "莊家蓋牌排牌"
    ),
    "BANKER_ARRANGED": PhaseText(
        "Banker arranged",
        "莊家已排牌",
        "the banker may arrange again, then opens",
        "莊家可重新排牌，然後開牌",
    ),
    "PLAYERS_ARRANGING": PhaseText(
        "Players arrange",
        "玩家排牌",
        "players arrange within 5 minutes; place the banker's open cards",
        "玩家五分鐘內排牌；將莊家已開的牌排入三道",
    ),
    "SETTLING": PhaseText(
        "Settling",
        "結算",
        "open each hand, place its cards in the rows, settle",
        "逐門開牌，將牌排入三道，結算",
    ),
    "ROUND_OVER": PhaseText("Round over", "本局完", "the next round", "下一局"),
    "HOLD": PhaseText("HOLD", "暫停", "a supervisor clears the hold", "由主任解除暫停"),
    "TILT": PhaseText("TILT", "故障", "a supervisor clears the tilt", "由主任解除故障"),
}


# Every journal line a Thirteen table writes: its procedure's own events, the shared layers'
# and the table's around it (daemon/procedures/events.py). `emit` refuses any other name.
EVENTS: dict[str, Event] = events(
    *procedure_events(opened_to="HAND_SHUFFLE"),
    Event("round.started", "Round started", "新一局", "HAND_SHUFFLE"),
    Event("deck.hand_shuffled", "Hand shuffle done", "人手洗牌完成", "MACHINE_SHUFFLE"),
    # The cut follows, unless the count was wrong (its `table.tilted` follows).
    Event("deck.machine_shuffled", "Machine shuffle done", "洗牌機洗牌完成", "CUT"),
    Event("deck.cut", "Deck cut", "已切牌", "SHOE_LOADING"),
    # Betting, or the redeal after a voided deal (the bets and dice stand, Art. 2(c)).
    Event("shoe.loaded", "Shoe loaded", "牌靴已裝好"),
    # Art. 2(b): dealt face down; Art. 4: one dealt face up stays valid and lies open. A card
    # the reader missed and the dealer entered by hand (`entered`) is dealt face down too.
    Event("card.dealt", "Card dealt", "已派牌", opens="face_up"),
    Event("deal.corrected", "Deal corrected", "已更正派牌"),
    # Art. 4: the dealt cards go back unseen, to the hand shuffle; one that lay face up is
    # dealt again face down.
    Event("deal.voided", "Deal voided", "派牌作廢", "HAND_SHUFFLE", opens="deck"),
    Event("arrangement.banker", "Banker arranged", "莊家已排牌", "BANKER_ARRANGED"),
    # Art. 2(d): the banker's hand is open, the players arrange.
    Event("banker.opened", "Banker opened", "莊家已開牌", "PLAYERS_ARRANGING", opens="banker"),
    Event("timer.started", "Timer started", "計時開始"),
    # Art. 2(d): a player says the hand is arranged, face down (its cards stay closed).
    Event("player.arranged", "Player arranged", "閒家已排牌"),
    # Art. 8: a player's hand opened against the banker's, its 13 cards face up to everyone.
    Event("hand.opened", "Hand opened", "已開牌", opens="door"),
    Event("arrangement.entered", "Arrangement entered", "已輸入排牌"),
    # A placed hand's rows corrected: proposed by one supervisor, approved by another.
    Event("arrangement.corrected", "Placed hand corrected", "已更正排牌"),
    Event("holder.advised", "Holder advised", "已提醒持牌人"),
    Event("cards.away", "Cards away", "牌已離手"),
    Event("timer.expired", "Time up", "時間到", "SETTLING"),
    *TABLE_EVENTS,
)
