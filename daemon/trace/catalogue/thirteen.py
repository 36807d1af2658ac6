"""Portaria 51/89/M (seed 000), the rules of Thirteen cards, article by article."""

from __future__ import annotations

from daemon.trace.catalogue.article import Article, _m
from daemon.trace.cites import THIRTEEN

THIRTEEN_ARTICLES = (
    Article(
        f"{THIRTEEN} preamble",
        "一、核准本训令附件的《“十三张”博彩规则》…二、废止八月一日第125/88/M号训令。",
        "The portaria approves the annexed rules and revokes Portaria 125/88/M.",
        "outside",
        reason="The legal act that makes the rules binding: a matter of licensing, not of a table.",
    ),
    Article(
        _m("1(a)"),
        "一副纸牌，共五十二张",
        "One deck of 52 cards.",
        "enforced",
        reason="The shuffler must count 52 (else the deck is out of play, Art. 2(a)); a card "
        "read twice in a deal tilts the shoe; the rules engine refuses a card given twice.",
    ),
    Article(
        _m("1(b)"),
        "装载纸牌的金属盒及一张白牌",
        "A metal shoe holding the cards, and a white card.",
        "enforced",
        reason="The shoe is the shoe reader, identified and approved before the table opens. "
        "The white card is not a device: the cut made with it is recorded (Art. 2(a)).",
        also=(_m("1"),),
    ),
    Article(
        _m("1(c)"),
        "四粒骰子及一个骰宝",
        "Four dice and a dice shaker.",
        "enforced",
        reason="The dice shaker is identified and approved before the table opens; a result "
        "is four dice of 1 to 6 or it is refused.",
        also=(_m("1"),),
    ),
    Article(
        _m("1(d)"),
        "洗牌机",
        "A shuffling machine.",
        "enforced",
        reason="The shuffler is identified and approved before the table opens.",
        also=(_m("1"),),
    ),
    Article(
        _m("2(a)"),
        "首先由庄荷以手洗牌，接着用洗牌机洗牌，然後由任一名闲家以白牌割牌，如无闲家愿意割牌，"
        "则由荷官割牌；闲家可任意割牌，但只能用一只手，且每次应割不少於十张牌，"
        "割好的牌牌面向下放入金属盒中",
        "The dealer shuffles by hand, then the machine shuffles, then a player (or the dealer "
        "when none will) cuts with the white card, one hand, at least ten cards; the cut cards "
        "go face down into the shoe.",
        "enforced",
        reason="The order is the procedure's phases. The hand shuffle and loading the shoe are "
        "dealer steps the table records; the machine's count, who cuts, the one hand and the "
        "ten cards are checked. Decision: both packets of the cut hold at least ten (a cut "
        "leaving fewer than ten is the same short cut from the other end).",
    ),
    Article(
        _m("2(b)"),
        "由在赌桌上投注额最高的闲家摇骰宝，根据骰子的总点数，由庄家起计，按逆时针方向算出派发"
        "第一张牌的门；派牌时牌面向下，按逆时针方向逐张派给每一门，直至每一门都收到十三张牌为止",
        "The player with the highest bet shakes; the total, counted counter-clockwise from the "
        "banker, names the first seat; cards go face down, one at a time counter-clockwise, "
        "until each seat has 13.",
        "enforced",
        reason="Decision: 「投注额最高的闲家」 has no 'seated' condition; by default the table "
        "prefers the highest bettor who holds a seat (as Art. 5 does), the highest of all when "
        'none is seated; a house setting (`[table] shaker = "highest"`) takes the highest '
        "bettor seated or standing. Ties go to the earlier bet. The shoe reader's order is the "
        "deal's order.",
    ),
    Article(
        _m("2(c)"),
        "任何人均不得在摇骰子的结果中加减点数；无论有多少人参与赌局，均只派牌给四门；"
        "摇完骰子後不再接受投注，已作的投注亦不得收回或转换门；…庄家按投注的各门收回投注或"
        "支付彩金，即使在投注时出现错误亦然",
        "Nobody alters the dice; four seats are dealt whatever the players; no bet, withdrawal "
        "or change of seat after the shake; bets are settled by seat as placed, errors included.",
        "enforced",
        reason="The dice are read from the shaker and no action edits them; every bet action "
        "after the shake is refused in every phase. 「闲家应记住本身的投注额」 is the players' own "
        "duty (outside a table system); the table journals each bet anyway.",
    ),
    Article(
        _m("2(d)"),
        "在庄家未排好牌及未开牌之前，闲家不得接触自己的牌及看牌；庄家有权在闲家取牌之前重新排牌；"
        "庄家开牌後，闲家须在五分钟内排好自己的牌，五分钟到便有铃声或电子信号提醒时间到，"
        "信号发出时未能排完牌者，视为输了此局",
        "Players do not touch or look at their cards until the banker has arranged and opened; "
        "the banker may rearrange until then; players then have five minutes, a bell ends them, "
        "and a player not done loses.",
        "enforced",
        reason='The banker says "arranged" without naming a card and may say so again '
        "until the opening; no player says so before the banker opens; the table's clock is "
        "the authority for the five minutes and the bell rings at its end. A hand's cards are "
        "placed into rows only once it lies open (the banker's at the opening, each player's "
        "against it, Art. 8), so no refusal ever compares cards a person names with a hand "
        "nobody has seen. Once the banker's open hand is placed it is final: the dealer does not "
        "place it again (the players have taken their cards), and a correction is two "
        "supervisors' (Art. 8). Touching the cards "
        "is seen by the dealer, not the table. Decision: the five minutes pause while the table "
        "is held (HOLD), since players cannot act then; a house setting "
        '(`[table] timer_in_hold = "running"`) lets them run on, the bell counting, and a seat '
        "not done when the table resumes after them is late.",
    ),
    Article(
        _m("3"),
        "每一赌桌均设有包括庄荷在内的四个门，闲家可在任何门上投注，但在每局博彩期间，"
        "闲家不能转换门，亦不得持牌离开赌桌或持其他门的牌",
        "Four seats including the banker's; players bet on any seat, never change seat during "
        "a round, never leave the table with cards or hold another seat's cards.",
        "enforced",
        reason="Bets go on seats 1-3 (seat 0 is the banker's); a move after the shake is "
        "refused (Art. 2(c)); an arrangement is taken only for a seat with a bet. "
        "「不得持牌离开赌桌或持其他门的牌」: the table cannot see a hand leave, so the dealer "
        "records it (`cards_away`: who, which seat's cards, left the table or held another "
        "seat's), from the deal to the settlement; a supervisor may then void the round. "
        "Decision: the text sets no consequence, so the table records and does not settle "
        "differently.",
    ),
    Article(
        _m("4"),
        "若派出的牌牌面向上，该牌仍视作有效，应继续进行该赌局；…如发现在并非故意的情况下派错一张"
        "或多张牌时，应将之纠正，根据正常的派牌顺序将派错的牌重新正确地派给闲家，如无法纠正错误，"
        "应将已派出的牌作废，庄家应重新洗牌，接着用洗牌机洗牌并用白牌割牌，然後重新放入金属盒内",
        "A card dealt face up stays valid; wrongly dealt cards are put right in the normal "
        "order; when that cannot be done the dealt cards are void and the deck is shuffled by "
        "hand, by machine, cut and loaded again.",
        "enforced",
        reason="Face-up cards are journaled and stay; corrections keep the reader's order; a "
        "misread card is entered by the dealer and approved by a supervisor; a void deal "
        "(supervisor) returns to the hand shuffle with the bets and dice standing.",
    ),
    Article(
        _m("5"),
        "当两名或多名闲家在同一门下注时，由下注额最高且在赌桌上占有一门的人持牌，"
        "其他闲家如投注於同一门，可向持牌者建议如何排牌",
        "When several players bet on one seat, the highest bettor who holds a place at the "
        "table holds the cards; the others may advise the holder.",
        "enforced",
        reason="The holder is computed from the bets and journaled when the bets close. "
        "Decision: when no bettor of the seat is seated, the highest bettor holds; ties go to "
        "the earlier bet. Advising the holder (「可向持牌者建议如何排牌」) is recorded by the "
        "dealer (`advise_holder`) once the players may look at their cards (after the banker "
        "opens, Art. 2(d)), and refused unless the adviser bets on that seat and does not "
        "hold it.",
    ),
    Article(
        _m("6"),
        "牌的点数从大至小的顺序为：A、K、Q、J、10、9、8、7、6、5、4、3、2",
        "Ranks from high to low: A K Q J 10 9 8 7 6 5 4 3 2 (suits do not rank).",
        "enforced",
    ),
    Article(
        _m("7"),
        "每一门的十三张牌须分为三“道”，“头道”为三张牌，“二道”为五张牌，“尾道”（较大）亦为五张牌；"
        "三“道”应从小至大排列，否则即为“摆乌龙”，该门的投注自动输给庄家",
        "Thirteen cards in three rows: head 3, middle 5, tail 5, from small to large; "
        "otherwise the arrangement is fouled (摆乌龙) and the seat's bet is lost to the banker.",
        "enforced",
        reason="Row sizes are refused at the table; fouls are found by the rules engine. "
        "Decision: 「从小至大」 lets two equal rows stand (setting `equal_rows_foul`); a fouled "
        "special hand keeps its special by default (setting `foul_voids_special`).",
    ),
    Article(
        _m("8"),
        "闲家的三“道”牌是针对庄家的三“道”牌决定胜负的，通常闲家三“道”合计的注数高於庄家者为胜，"
        "反之为负；如庄家与闲家的注数相同，则为和局",
        "Each row against the banker's; the side with more units over the three rows wins; "
        "equal units are a push.",
        "enforced",
        reason="Each hand is opened against the banker's (`open_hand`) and judged as opened. "
        "Decision: an opened hand is final, so the dealer places its cards into rows once "
        "(placing it again is refused, the banker's under Art. 2(d)); a wrong placement is "
        "corrected only by one supervisor's proposal (`correct_arrangement`) that a second, "
        "named supervisor approves, journaled with both (`arrangement.corrected`), and the "
        "round is not settled while it waits.",
    ),
    Article(
        _m("9 I"),
        "持固定组合牌型的门必胜持非固定组合牌型的门；如庄家与闲家各持固定组合，无论各自组合为何，"
        "均视为和局；持固定组合胜出者，赢三注",
        "Fixed combinations (一条龙, 六对半, 三花, 三顺) beat every other hand and win 3 units; "
        "two fixed combinations push.",
        "enforced",
        also=(_m("9"),),
    ),
    Article(
        _m("9 II"),
        "大牌型胜小牌型…“黄袍麒”…“同花顺”…“四条”…“夫卢”…“同花”…“顺”…“三条”…“两对”…“一对”…“大牌”",
        "The other combinations, their order, how equal categories compare, and the units a "
        "winning row earns in the middle and the tail.",
        "enforced",
        also=(_m("9"),),
    ),
    Article(
        _m("10"),
        "当在同一“道”中庄家与闲家的牌的大小或注数相同时，庄家胜出",
        "A row of equal hands goes to the banker (夹棍).",
        "enforced",
    ),
    Article(
        _m("11"),
        "闲家得以一注、二注或三注下注，胜出的闲家所获奖金为其所下的注的半数，且须“抽水”2%",
        "A player bets 1, 2 or 3 units; a winner's prize is half the bet, less 2 % commission.",
        "enforced",
        reason="A bet is 1, 2 or 3 units of the table's unit value (`[table] unit`, "
        "`currency`); its money follows from them, an amount that is not theirs is refused, "
        "and so is a bet outside the table's `min_bet` and `max_bet` (the house's). Decision: "
        "the prize's reading is a rule setting (`prize`: half the bet by default; "
        "docs/rules.md), the commission is rounded down to the money step in the player's "
        "favour.",
    ),
)
