"""Thirteen cards (十三张), Macau, Portaria 51/89/M of 10 March 1989.

The game as data: its phases and the text a dealer reads in each, its actions (roles,
parameters, bilingual labels, the article each check cites) and its transition table; and
here, the legal procedure it encodes.

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

The procedure that plays it is `procedure.py`; the settlement of a round, `settle.py`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from daemon.procedures.common import VOIDED, common_actions, fault_transitions, override_actions
from daemon.procedures.events import TABLE_EVENTS, procedure_events
from daemon.procedures.spec import (
    Action,
    Event,
    Param,
    PhaseText,
    actions,
    events,
    one_hand,
    player,
    seat,
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


def _row(n: int, en: str, zh: str) -> Param:
    return Param("list[str]", min_length=n, max_length=n, label_en=en, label_zh=zh, article=ART_7)


_ROWS = {
    "head": _row(3, "Head (3)", "頭道"),
    "middle": _row(5, "Middle (5)", "中道"),
    "tail": _row(5, "Tail (5)", "尾道"),
}
# Seats 0-3: seat 0 is the banker's in a game with a banker (refused there, Art. 3), a
# player's in one without (003 way 3, 「4人分別比牌」).
_SEAT = seat(0, 3, "Seat", "門")
_AWAY = ("left_table", "other_seat")
DEALER, SUPERVISOR, DEVICE, SYSTEM = (
    frozenset({"dealer"}),
    frozenset({"supervisor"}),
    frozenset({"device"}),
    frozenset({"system"}),
)

ACTIONS: dict[str, Action] = actions(
    Action(
        "device_identified",
        DEVICE,
        ART_1,
        "a device's identity is read",
        label_en="Device identified",
        label_zh="設備已識別",
    ),
    Action(
        "open_table",
        DEALER,
        ART_1,
        "open the table, equipment checked",
        label_en="Open table",
        label_zh="開枱",
        params={},
    ),
    Action(
        "confirm_hand_shuffle",
        DEALER,
        ART_2A,
        "the dealer hand-shuffled",
        label_en="Hand shuffle done",
        label_zh="人手洗牌完成",
        params={},
    ),
    Action(
        "shuffle_completed",
        DEVICE,
        ART_2A,
        "the shuffler reports a count",
        label_en="Shuffle done",
        label_zh="洗牌機完成",
    ),
    Action(
        "confirm_cut",
        DEALER,
        ART_2A,
        "the cut with the white card",
        label_en="Cut",
        label_zh="切牌",
        params={
            "by": Param("str", choices=("player", "dealer"), label_en="Cut by", label_zh="切牌者"),
            "player": Param(
                "str",
                required=False,
                min_length=1,
                max_length=64,
                label_en="Player",
                label_zh="玩家",
            ),
            "players_declined": Param(
                "bool", required=False, label_en="No player will cut", label_zh="玩家不切"
            ),
            # The text sets only the lower bound; a cut leaving fewer than ten is the same short
            # cut taken from the other end, so both packets must hold ten.
            "cards": Param(
                "int",
                minimum=MIN_CUT,
                maximum=DECK - MIN_CUT,
                label_en="Cards cut",
                label_zh="切牌張數",
            ),
            "one_hand": one_hand(),
        },
    ),
    Action(
        "load_shoe",
        DEALER,
        ART_2A,
        "the cut cards go into the shoe",
        label_en="Load shoe",
        label_zh="入牌靴",
        params={},
    ),
    Action(
        "place_bet",
        DEALER,
        ART_3,
        "a player's bet on a seat",
        label_en="Place bet",
        label_zh="下注",
        params={
            "player": player(),
            "seat": _SEAT,
            "units": Param(
                "int", minimum=1, maximum=100, label_en="Units", label_zh="注數", article=ART_11
            ),
            # The money follows from the units and the table's unit value; when given it must
            # be that (`daemon.procedures.stakes`).
            "amount": Param(
                "int",
                required=False,
                minimum=1,
                maximum=10**12,
                label_en="Amount",
                label_zh="金額",
                article=ART_11,
            ),
            "seated": Param("bool", label_en="Seated", label_zh="在座", article=ART_5),
        },
    ),
    Action(
        "withdraw_bet",
        DEALER,
        ART_2C,
        "a bet is taken back",
        label_en="Withdraw bet",
        label_zh="撤注",
        params={"player": player(), "seat": _SEAT},
    ),
    Action(
        "move_bet",
        DEALER,
        ART_2C,
        "a bet moves to another seat",
        label_en="Move bet",
        label_zh="移注",
        params={
            "player": player(),
            "from_seat": seat(0, 3, "From seat", "原門"),
            "to_seat": seat(0, 3, "To seat", "新門"),
        },
    ),
    Action(
        "shake_dice",
        DEALER,
        ART_2B,
        "the highest bettor shakes",
        label_en="Shake dice",
        label_zh="搖骰",
        params={"player": player("Highest bettor", "最高投注者")},
    ),
    Action(
        "dice_landed",
        DEVICE,
        ART_2B,
        "the shaker reports the dice",
        label_en="Dice landed",
        label_zh="骰子結果",
    ),
    Action(
        "card_read",
        DEVICE,
        ART_2B,
        "the shoe reader reads a card",
        label_en="Card read",
        label_zh="讀牌",
    ),
    Action(
        "correct_misdeal",
        DEALER,
        ART_4,
        "wrongly dealt cards put right",
        label_en="Correct misdeal",
        label_zh="更正錯發",
        params={
            "cards": Param(
                "list[str]",
                min_length=1,
                max_length=DECK,
                label_en="Cards to re-deal",
                label_zh="重發的牌",
            )
        },
    ),
    Action(
        "void_deal",
        SUPERVISOR,
        ART_4,
        "a misdeal that cannot be put right",
        label_en="Void the deal",
        label_zh="作廢此次發牌",
        params={},
    ),
    Action(
        "propose_card",
        DEALER,
        ART_4,
        "the dealer enters a misread card by hand, pending a supervisor",
        label_en="Enter misread card",
        label_zh="輸入誤讀的牌",
        params={
            "card": Param("str", min_length=2, max_length=3, label_en="Card", label_zh="牌"),
            "note": Param("str", required=False, max_length=200, label_en="Note", label_zh="備註"),
        },
    ),
    Action(
        "arrange_banker",
        DEALER,
        ART_2D,
        "the banker has arranged, face down (no cards named)",
        label_en="Banker arranged",
        label_zh="莊家已排牌",
        params={},
    ),
    Action(
        "open_banker",
        DEALER,
        ART_2D,
        "the banker opens",
        label_en="Banker opens",
        label_zh="莊家開牌",
        params={},
    ),
    Action(
        "player_arranged",
        DEALER,
        ART_2D,
        "a player's hand is arranged, face down, within the five minutes",
        label_en="Player arranged",
        label_zh="閒家已排牌",
        params={"seat": _SEAT},
    ),
    Action(
        "open_hand",
        DEALER,
        ART_8,
        "a player's hand is opened against the banker's: 13 cards face up",
        label_en="Open hand",
        label_zh="開牌",
        params={"seat": _SEAT},
        opens="door",  # Art. 8: its 13 cards face up, from this input on
    ),
    Action(
        "enter_arrangement",
        DEALER,
        ART_2D,
        "an open hand's cards placed into head, middle and tail",
        label_en="Place the open hand",
        label_zh="排入三道",
        params={"seat": _SEAT, **_ROWS},
    ),
    Action(
        "correct_arrangement",
        SUPERVISOR,
        ART_8,
        "correct a placed open hand's rows: a supervisor's proposal a second supervisor approves",
        label_en="Correct a placed hand",
        label_zh="更正已排的牌",
        params={"seat": _SEAT, **_ROWS},
    ),
    Action(
        "advise_holder",
        DEALER,
        ART_5,
        "another bettor on the seat advises its holder",
        label_en="Holder advised",
        label_zh="同門建議排牌",
        params={"player": player("Adviser", "建議者"), "seat": _SEAT},
    ),
    Action(
        "cards_away",
        DEALER,
        ART_3,
        "a player left the table with cards, or holds another seat's",
        label_en="Cards away",
        label_zh="持牌離枱/持他門牌",
        params={
            "player": player(),
            "seat": _SEAT,
            "what": Param(
                "str",
                choices=_AWAY,
                label_en="Left the table / other seat's cards",
                label_zh="離枱 / 他門牌",
            ),
        },
    ),
    Action(
        "timer_expired",
        SYSTEM,
        ART_2D,
        "the five minutes are over",
        label_en="Time up",
        label_zh="時間到",
    ),
    Action(
        "settle_round",
        DEALER,
        ART_7_11,
        "settle the round",
        label_en="Settle",
        label_zh="結算",
        params={},
    ),
    Action(
        "start_round",
        DEALER,
        ART_2A,
        "the next round begins",
        label_en="Next round",
        label_zh="下一局",
        params={},
    ),
    *override_actions(ART_4),
    *common_actions(REGULATION),
)

TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "device_identified", "source": P.EQUIPMENT_CHECK, "dest": P.EQUIPMENT_CHECK},
    {"trigger": "open_table", "source": P.EQUIPMENT_CHECK, "dest": P.HAND_SHUFFLE},
    {"trigger": "confirm_hand_shuffle", "source": P.HAND_SHUFFLE, "dest": P.MACHINE_SHUFFLE},
    {
        "trigger": "shuffle_completed",
        "source": P.MACHINE_SHUFFLE,
        "dest": P.CUT,
        "conditions": "shuffle_good",
    },
    {"trigger": "shuffle_completed", "source": P.MACHINE_SHUFFLE, "dest": P.TILT},
    {"trigger": "confirm_cut", "source": P.CUT, "dest": P.SHOE_LOADING},
    {"trigger": "load_shoe", "source": P.SHOE_LOADING, "dest": P.DEALING, "conditions": "redeal"},
    {"trigger": "load_shoe", "source": P.SHOE_LOADING, "dest": P.BETTING},
    {"trigger": "place_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "withdraw_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "move_bet", "source": P.BETTING, "dest": P.BETTING},
    {"trigger": "shake_dice", "source": P.BETTING, "dest": P.SHAKING},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.DEALING, "conditions": "dice_good"},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.TILT, "conditions": "dice_failed"},
    {"trigger": "dice_landed", "source": P.SHAKING, "dest": P.SHAKING},
    # A card of the deal under way, the shoe sound: 51 of a round's 52 reads. Written first, its
    # guards exclude every other row of card_read (daemon.procedures.guards.exclusive), so
    # `transitions` finds it first and no other row could have fired instead.
    {
        "trigger": "card_read",
        "source": P.DEALING,
        "dest": P.DEALING,
        "unless": ["shoe_faulted", "deal_complete"],
    },
    {"trigger": "card_read", "source": P.DEALING, "dest": P.TILT, "conditions": "shoe_faulted"},
    # Without a banker (003 way 3, 「四人对比」) every seat arranges at once after the deal.
    {
        "trigger": "card_read",
        "source": P.DEALING,
        "dest": P.PLAYERS_ARRANGING,
        "conditions": ["deal_complete", "no_banker"],
    },
    {
        "trigger": "card_read",
        "source": P.DEALING,
        "dest": P.BANKER_ARRANGING,
        "conditions": "deal_complete",
    },
    {"trigger": "propose_card", "source": P.DEALING, "dest": P.DEALING},
    {"trigger": "reject_override", "source": P.DEALING, "dest": P.DEALING},
    {
        "trigger": "approve_override",
        "source": [P.DEALING, P.BANKER_ARRANGING, P.BANKER_ARRANGED],
        "dest": P.HAND_SHUFFLE,
        "conditions": VOIDED,
    },
    {
        "trigger": "approve_override",
        "source": P.DEALING,
        "dest": P.PLAYERS_ARRANGING,
        "conditions": ["deal_complete", "no_banker"],
    },
    {
        "trigger": "approve_override",
        "source": P.DEALING,
        "dest": P.BANKER_ARRANGING,
        "conditions": "deal_complete",
    },
    {"trigger": "approve_override", "source": P.DEALING, "dest": P.DEALING},
    {"trigger": "correct_misdeal", "source": P.DEALING, "dest": P.DEALING},
    {"trigger": "correct_misdeal", "source": P.BANKER_ARRANGING, "dest": P.BANKER_ARRANGING},
    # Art. 4's void of the deal: a supervisor's proposal (the phase stays), then a second
    # supervisor's approval (tabled H5), back to the hand shuffle.
    *(
        {"trigger": "void_deal", "source": phase, "dest": phase}
        for phase in (P.DEALING, P.BANKER_ARRANGING, P.BANKER_ARRANGED)
    ),
    *(
        {"trigger": "reject_override", "source": phase, "dest": phase}
        for phase in (P.BANKER_ARRANGING, P.BANKER_ARRANGED)
    ),
    {"trigger": "arrange_banker", "source": P.BANKER_ARRANGING, "dest": P.BANKER_ARRANGED},
    {"trigger": "arrange_banker", "source": P.BANKER_ARRANGED, "dest": P.BANKER_ARRANGED},
    {"trigger": "open_banker", "source": P.BANKER_ARRANGED, "dest": P.PLAYERS_ARRANGING},
    {
        "trigger": "player_arranged",
        "source": P.PLAYERS_ARRANGING,
        "dest": P.SETTLING,
        "conditions": "all_arranged",
    },
    {"trigger": "player_arranged", "source": P.PLAYERS_ARRANGING, "dest": P.PLAYERS_ARRANGING},
    {"trigger": "timer_expired", "source": P.PLAYERS_ARRANGING, "dest": P.SETTLING},
    # The banker's open hand is placed while the players arrange, or at the settlement; each
    # player's once opened there (Art. 8: hand against hand).
    {"trigger": "enter_arrangement", "source": P.PLAYERS_ARRANGING, "dest": P.PLAYERS_ARRANGING},
    {"trigger": "open_hand", "source": P.SETTLING, "dest": P.SETTLING},
    {"trigger": "enter_arrangement", "source": P.SETTLING, "dest": P.SETTLING},
    # A placed hand is final (Art. 2(d), 8): corrected only by two supervisors, where it lies.
    *(
        {"trigger": trigger, "source": phase, "dest": phase}
        for trigger in ("correct_arrangement", "approve_override", "reject_override")
        for phase in (P.PLAYERS_ARRANGING, P.SETTLING)
    ),
    # Art. 5: advice is given once the players may look at their cards (Art. 2(d)).
    {"trigger": "advise_holder", "source": P.PLAYERS_ARRANGING, "dest": P.PLAYERS_ARRANGING},
    # Art. 3: from the deal to the settlement, the dealer records cards taken away.
    *(
        {"trigger": "cards_away", "source": phase, "dest": phase}
        for phase in (
            P.DEALING,
            P.BANKER_ARRANGING,
            P.BANKER_ARRANGED,
            P.PLAYERS_ARRANGING,
            P.SETTLING,
        )
    ),
    {"trigger": "settle_round", "source": P.SETTLING, "dest": P.ROUND_OVER},
    {"trigger": "start_round", "source": P.ROUND_OVER, "dest": P.HAND_SHUFFLE},
    *fault_transitions(
        Phase,
        P.HOLD,
        P.TILT,
        restart=[(P.EQUIPMENT_CHECK, "before_opening"), (P.HAND_SHUFFLE, "table_open")],
    ),
]

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
