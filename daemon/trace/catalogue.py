"""The catalogue: each article and paragraph of the two Macau regulations, and each clause of the
Hong Kong ways (seed 003) that a rule set implements, with what it requires and its status.

Status:

- ``enforced``: a guard refuses what breaks it, or the system computes it (the rules engine).
  The suite fails when an enforced article has no guard or no test (tests/trace).
- ``recorded``: the table only records it (a dealer step it cannot observe).
- ``outside``: outside a table system (licensing, the law's own validity, people's conduct).
- ``missing``: a clause of 003 no rule set implements yet (issue 13 item 2).

`gap` says what an enforced article still lacks; `reason` gives the status's reason and the
decision taken where the text is silent or ambiguous. Guards are found in the source by the
article they cite (daemon/trace/guards.py); `also` names other citations whose guards enforce
this article too (their tests prove it too), `marks` the phrases by which the source names a
003 clause (the code cites 003 by its words, not by a number), `guards` guards named by
``module:qualname``.
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.trace.cites import GAME_OF, HK, PAIGOW, THIRTEEN, canonical

STATUSES = ("enforced", "recorded", "outside", "missing")


@dataclass(frozen=True)
class Article:
    citation: str
    text: str
    gloss: str
    status: str
    reason: str = ""
    gap: str = ""
    also: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()

    @property
    def regulation(self) -> str:
        return next(r for r in (THIRTEEN, PAIGOW, HK) if self.citation.startswith(r + " "))

    @property
    def game(self) -> str:
        return GAME_OF[self.regulation]


def _m(paragraph: str) -> str:
    return canonical("51/89/M", paragraph)


def _p(paragraph: str) -> str:
    return canonical("15/90/M", paragraph)


def _hk(clause: str) -> str:
    return canonical("003", clause)


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

PAIGOW_ARTICLES = (
    Article(
        f"{PAIGOW} preamble",
        "第一条——批准本训令附件之 “台湾牌九”临时规例。…第二条——此临时规例由颁布日起暂时有效期为"
        "六个月。…第三条——博彩监察暨协调司认为需要时可由司长以批示随时更改上述规例。",
        "The portaria approves the provisional rules for six months; the inspectorate may "
        "change them by order at any time.",
        "outside",
        reason="The rules' approval, validity and amendment are matters of licensing and of "
        "the regulator, not of a table.",
    ),
    Article(
        _p("1(1)"),
        "场方备天九牌壹副卅二只",
        "The house supplies one set of 32 tiles.",
        "enforced",
        reason="Every tile named at the table must fit one 32-tile set (with the used half of "
        "a four-hand set); there is no tile reader.",
        marks=("one 32-tile set",),
        guards=("daemon.procedures.paigow.procedure:_check_in_set",),
    ),
    Article(
        _p("1(2)"),
        "四粒骰及一个骰盅",
        "Four dice and a dice cup.",
        "enforced",
        reason="The dice shaker is identified and approved before the table opens; a result "
        "is four dice of 1 to 6.",
        also=(_p("1"),),
    ),
    Article(
        _p("2(1)"),
        "庄荷先将天九牌洗匀，牌面向下，场方有权换用新牌",
        "The croupier shuffles the tiles face down; the house may bring a new set.",
        "enforced",
        reason="There is no tile shuffler: the shuffle and a new set are dealer steps the table "
        "records (`confirm_tile_shuffle`, `new_set`). A shuffle, of the old set or a new one, "
        "starts the one-set check of Art. 1(1) again (a four-hand set's used half is forgotten). "
        "Decision: a new set comes only at a shuffle; a four-hand table's kept half is played "
        "out first.",
    ),
    Article(
        _p("2(2)"),
        "庄家用骰盅摇四粒骰，任何人均不得代庄家摇骰。摇出之点数由庄家开始以逆时针方向数，"
        "以决定那一门先取头四只牌…如庄家得头四只牌，则其右边之一门被定为头门",
        "The banker shakes, nobody for him; the total counted counter-clockwise from the banker "
        "names the door taking the first four tiles; if the banker, the door on his right is 头门.",
        "enforced",
    ),
    Article(
        _p("2(3)"),
        "摇骰所得之点数，庄家不得加减。派牌及杀赔均按逆时针方向，由右向左进行",
        "The banker may not alter the total; dealing, collecting and paying run "
        "counter-clockwise, right to left.",
        "enforced",
        reason="The dice are read from the shaker and no action edits them. The croupier "
        "reports each door's four tiles (`deal_hand`) and a door out of counter-clockwise turn "
        "from the door the dice name is refused (there is no tile reader: the order is the "
        "croupier's report, checked). The settlement collects and pays counter-clockwise from "
        "头门; decision: the croupier opens the hands in that order too (Art. 6(2)).",
    ),
    Article(
        _p("2(4)"),
        "无论客人多少，每局可派八门或四门，每门得牌四只。如只派四门，则余下之四门牌将留作下一局使用。"
        "遇此情形，已用过之四门牌将阳开排在台面，至於派四门或八门，由场方决定",
        "Eight or four hands of four tiles, the house decides; with four, the other four wait "
        "for the next round and the used tiles are shown face up.",
        "enforced",
    ),
    Article(
        _p("2(5)"),
        "若遇翘骰或骰跌盅外，则由庄家再摇",
        "A tilted die or one out of the cup: the banker shakes again.",
        "enforced",
        reason="An invalid throw is shaken again; the third in a row tilts the table (house "
        "rule H3).",
    ),
    Article(
        _p("2(6)"),
        "摇骰之前，庄、闲均可将牌随意移动，移动只限单手，闲先庄後，闲家只限两人，"
        "庄移牌後，闲家不得再移牌",
        "Before the dice the stacks may be moved, one hand only, players first (two at most), "
        "then the banker, after whom no player moves them.",
        "enforced",
    ),
    Article(
        _p("2(7)"),
        "摇骰之前，闲家须将注码置於证上，一俟摇殷，再不接受下注，又不能更动所下注码或将注码转移别门，"
        "闲家下注跟眼",
        "Bets are placed before the shake; after it no bet is taken, changed or moved to "
        "another door.",
        "enforced",
        reason="Every bet action after the shake is refused in every phase. 「闲家下注跟眼」 is "
        "read as the players' duty to watch their own bets (outside a table system).",
    ),
    Article(
        _p("2(8)"),
        "纵然买错，荷官亦照杀照赔",
        "Even a bet placed by mistake is collected or paid as placed.",
        "enforced",
        reason="The settlement takes the bets as they stood at the shake; no action corrects a "
        "bet after it (the guard is the bets' closing at the shake, Art. 2(7)).",
        also=(_p("2(7)"),),
    ),
    Article(
        _p("3(1)"),
        "连庄家可有八门或四门",
        "Eight or four doors, the banker's included.",
        "enforced",
        reason="The table is configured with 8 or 4 hands and refuses any other count (the "
        "same guard as Art. 2(4)).",
        also=(_p("2(4)"),),
    ),
    Article(
        _p("3(2)"),
        "客人可投注於多门，而多个客人可下注於同一门，下注最大者，有持牌权",
        "A guest may bet on several doors and several on one door; the largest bettor holds.",
        "enforced",
        reason="Decision: ties go to the earlier bet.",
    ),
    Article(
        _p("3(3)"),
        "闲家持牌及摆牌，只限一人，庄家则不在此限，进行牌九博彩时，所有牌只均不得离开牌九台外",
        "Only one player holds and sets a door's tiles (not so the banker); no tile leaves "
        "the table.",
        "outside",
        reason="Who touches the tiles and that none leaves the table are seen by the croupier "
        "and surveillance, not by a table without a tile reader; the holder of Art. 3(2) is "
        "journaled with each setting.",
    ),
    Article(
        _p("4"),
        "在派牌过程中如有牌阳开，则仍作有效，该局如常进行",
        "A tile turned face up while dealing stays valid and the round goes on.",
        "enforced",
        reason="The croupier reports it (`tile_face_up`) for the door being dealt or one dealt "
        "before; the table journals it and the round goes on. The tile stays valid, so the hand "
        "the croupier later opens at that door must hold it (named by pips: that face; by name: "
        "either face of the name), else the opening is refused (issue 9).",
    ),
    Article(
        _p("5(1)"),
        "各门可轮流做庄，每关庄只限两局，除取得各门客人同意外，不得超逾此数",
        "The doors take the bank in turn, two rounds each, more only with every door's guests' "
        "consent.",
        "enforced",
        reason="A void round does not count toward the two. 「各门客人同意」 is read as every "
        "guest who bet on a door this round: `extend_bank` names the guests agreeing and is "
        "refused while one of them is missing. 「轮流」: the bank goes to the next door in the "
        "rule set's `bank_order` (counter-clockwise, Art. 2(3)'s order, by default) and the "
        "door that held it does not keep it under any name; the table's first bank is any door's.",
    ),
    Article(
        _p("5(2)"),
        "客人亦有权拒绝做庄，而把庄交与下一人，但该人必须在此之前曾经投注",
        "A guest may decline the bank and pass it to the next, who must have bet before.",
        "enforced",
        reason="After a decline the bank goes only to a guest who has bet before; the one who "
        "just held it cannot take or decline it. 「下一人」 is the rule set's "
        '`declined_bank_to`: the next door in order ("next-door", the default) or any door but '
        "the last bank's.",
    ),
    Article(
        _p("5(3)"),
        "摇骰前，庄家须把该局之赌注置於证上，先出头牌，然後摇骰，庄家每局不能赢或输多於其置於证上之赌注",
        "Before the dice the banker puts the round's stake on the layout, puts out the head "
        "tiles, then shakes; the banker cannot win or lose more than that stake.",
        "enforced",
        reason="`place_stake`, then `head_tiles_out`, then `shake_dice`: each out of that order "
        "is refused. Decision: 「头牌」 is read as the head of the stacks the deal starts from; "
        "once out, the stacks are not moved again (Art. 2(6)).",
    ),
    Article(
        _p("5(4)"),
        "庄家第一局赢钱後，所赢之注码须连同第一局之赌注放於证上，作为第二局博彩之新赌注，只许增多，不得减少",
        "After a first round won, the winnings join the stake for the second round, which may "
        "grow, never shrink.",
        "enforced",
    ),
    Article(
        _p("5(5)"),
        "场方可每门帮庄，数额另定，其他客人亦可帮庄，注码照行照做（即正庄先行），"
        "帮庄客人在同一局中不得另投注於其他门",
        "The house and other guests may co-bank, the main banker first; a co-banker bets on no "
        "door that round.",
        "enforced",
        reason="`co_bank` (a guest, or the house with `house`) before the dice; a guest who "
        "bets on a door that round cannot co-bank, nor bet after co-banking; the banker does not "
        "co-bank. The rules engine settles 正庄先行 (the rule set may share pro rata) and the "
        "house's share pays no commission. Decisions: 「数额另定」 is the amount named at the "
        "table; whether the house co-banks at all is the rule set's `house_co_banks`.",
    ),
    Article(
        _p("6(1)"),
        "派给每门之四只牌分为两对，摆牌须左右分对，摆好後须置於证上，闲家摆好牌後，庄家才摆",
        "Each door's four tiles are set as two pairs; the players set first, then the banker.",
        "enforced",
        reason="`set_hand` records that a door has set, face down, with no tiles (a tile named "
        "there is refused); `set_banker` only after every played door. The tiles enter the "
        "system when the croupier opens the hand (Art. 6(2)).",
    ),
    Article(
        _p("6(2)"),
        "牌对由荷官打开，细对为前对，大对为後对，闲家须尽量将後对摆大，如客人未依此例，荷官将代为重摆",
        "The croupier opens the pairs, small in front, large behind; a player must set the back "
        "pair as large as possible, else the croupier re-sets it.",
        "enforced",
        reason="`open_hand` takes each hand's pairs, the banker's first then the doors from 头门 "
        "(a house may open the banker last); the table's rule set says which hands the "
        "croupier must re-set (`reset_hand`, journaled `hand.reset`) before `settle_round`: "
        "`macau-1990` a player's without its largest back pair, `macau-1990-banker-corrected` "
        "the banker's too, `macau-1990-free-setting` none (the smaller pair is opened in front).",
    ),
    Article(
        _p("6(3)"),
        "如庄家之前对赢闲家之前对，後对赢其後对，则庄赢。相反则闲赢，如其中一对等级相同，"
        "则以其余一对之大小定输赢，如一对赢一对输，或庄、闲之两对均等级相同，则作和",
        "Both pairs win: that side wins; one pair tied, the other decides; one each, or both "
        "tied: a push.",
        "enforced",
    ),
    Article(
        _p("7(1)"),
        "牌九牌只及牌对之大细等级，由表格严格规定",
        "The order of tiles and pairs is fixed strictly by the tables.",
        "enforced",
        also=(_p("Table I"), _p("Table II")),
    ),
    Article(
        _p("7(2)"),
        "若牌对不能成[宝]，或不能成[天九王]…、[天杠]…或地杠…，则计牌点，最高点数为九点，"
        "凡十点或廿点均从总数减去。如庄闲点数相同，则以其中最大之一只牌相比定输赢",
        "A pair that is no 宝, 天九王, 天杠 or 地杠 counts points modulo ten, nine the most; equal "
        "points: the larger tile decides.",
        "enforced",
    ),
    Article(
        _p("8"),
        "场方自彩金抽水百分之五",
        "The house takes 5 % of winnings.",
        "enforced",
    ),
    Article(
        _p("9(1)"),
        "庄闲牌之等级相同，庄并不食夹棍",
        "Equal hands: the banker does not take ties.",
        "enforced",
    ),
    Article(
        _p("9(2)"),
        "[大鸡]、[细鸡]无变，拆开时大鸡等於六点，细鸡三点",
        "The two 鸡 tiles do not change; split, 大鸡 counts six and 细鸡 three.",
        "enforced",
    ),
    Article(
        _p("Table I"),
        "每牌点数由大至小之次序…天牌…地牌…人牌…娥牌…梅牌…长衫…板凳…斧头…红头…高脚七…"
        "拧冧六…杂九…杂八…杂七…大鸡六…杂五…细鸡",
        "The single tiles from largest to smallest.",
        "enforced",
    ),
    Article(
        _p("Table II"),
        "牌对由大至小之次序…至尊宝…天牌宝…高脚七密",
        "The 111 pair classes from 至尊宝 down to 高脚七密.",
        "enforced",
    ),
)

HK_ARTICLES = (
    Article(
        _hk("way 1 bets"),
        "開牌前，各閒家向莊家下注",
        "Before the cards are opened, each player bets against the banker.",
        "enforced",
        reason="At the table the bets close at the shake, before any card is dealt (the guard "
        "of Portaria 51/89/M Art. 2(c)). Way 2 repeats this clause.",
        also=(_m("2(c)"),),
    ),
    Article(
        _hk("way 1 rows"),
        "各人把十三張牌排成三段（道），稱頭、二道及尾。頭有三張，二道及尾各五張",
        "Each sets the 13 cards in three rows: head 3, middle and tail 5 each.",
        "enforced",
        reason="The same guards as Art. 7 of Portaria 51/89/M. Ways 2 and 3 repeat it (三墩).",
        also=(_m("7"),),
    ),
    Article(
        _hk("way 1 foul"),
        "頭必須小於二道，二道必須小於尾，否則稱為「擺烏龍」。凡「擺烏龍」者全賠",
        "The head must be smaller than the middle, the middle than the tail; otherwise it is "
        "fouled (擺烏龍), and a foul pays in full.",
        "enforced",
        reason="Fouls are found by the rules engine; two fouled sides push (全賠 each way). "
        "「必須小於」 reads strictly: in every HK rule set two equal rows are a foul (setting "
        "`equal_rows_foul`, true there; Art. 7's 「从小至大」 lets them stand in macau-1989). "
        "Way 2 repeats it; way 3 calls it 相公 (「第一墩＜第二墩＜第三墩」).",
        also=(_m("7"),),
        marks=("必須小於", "全賠"),
    ),
    Article(
        _hk("way 1 head"),
        "頭因為只有三張牌，因此不算順、花。只可能是不成花式（稱無頭）、一對或三條",
        "The head, three cards, has no straights or flushes: only high card, one pair or "
        "three of a kind.",
        "enforced",
        reason="The rules engine ranks a three-card row as high card, one pair or three of a "
        "kind only, as Art. 9 II of Portaria 51/89/M does (II.7, II.9).",
        marks=("if size == 3:",),
        guards=("daemon.rules.thirteen.ranking:_classify",),
    ),
    Article(
        _hk("way 1 compare"),
        "比較時，先比牌型。牌型相同時，比點數。…比點數時由最大點數的牌比起，相同時比第二大的牌，"
        "如此類推。十三張是不計算花色",
        "Compare the category first, then the ranks from the highest card down; suits never count.",
        "enforced",
        reason="The same ranking as Art. 6 and 9 II of Portaria 51/89/M. Way 2 repeats it with "
        "its order 同花顺〉铁支〉葫芦〉同花〉顺子〉三条〉二对〉一对〉乌龙.",
        also=(_m("6"), _m("9 II")),
    ),
    Article(
        _hk("way 1 top card"),
        "部分玩法的規則訂成對莊家稍為有利：只比點數最大的一隻牌。倘若相同，一律由莊家勝。（俗稱食夾棍）",
        "Some houses compare only the highest card, and a tie goes to the banker (食夾棍).",
        "enforced",
        reason='A rule setting (`tie_break = "top-card"`), binding the banker\'s tie with it.',
        marks=("只比點數最大的一隻牌", "倘若相同，一律由莊家勝"),
    ),
    Article(
        _hk("way 1 odds"),
        "三條摆「頭」：勝出得三注。…夫佬（滿堂紅）摆「二道」:勝出得兩注。…四條摆「尾」：勝出得四注。"
        "作「二道」：得八注。…同花順摆「尾」：勝出得五注。作「二道」：得十注",
        "Rows winning with these hands earn 3, 2, 4/8, 5/10 units; every other winning row 1.",
        "enforced",
        marks=("003, first way",),
    ),
    Article(
        _hk("way 1 specials"),
        "任何一方得遇上以下的組合（例牌）通吃，稱為「報到」…「三順」…「三花」…「六對半」…勝三注…"
        "「雜龍」…勝十三注…「青龍」…勝注有争議",
        "Special hands (報到) win outright: 三順, 三花, 六對半 3 units, 雜龍 13; 青龍's units "
        "are disputed.",
        "enforced",
        reason="Decision: 青龍 wins 13 like 雜龍 (the text calls its units disputed); a setting "
        "(`specials`).",
        marks=("报到", "報到"),
    ),
    Article(
        _hk("way 1 both special"),
        "倘若莊家及閒家同時報到，由莊家賠閒家",
        "When banker and player both hold a special hand, the banker pays the player.",
        "enforced",
        reason="Way 2 repeats it.",
        marks=("由莊家賠閒家",),
    ),
    Article(
        _hk("way 2 four against each other"),
        "四人中一人為莊家（也可以四人对比）",
        "One of four is the banker, or the four play each against each.",
        "enforced",
        reason="The rule set `hk-four`: no banker, one player a seat (seat 0 too), each seat "
        "settled against each other with way 2's rows and special hands, in money at the "
        "table's unit per unit of difference (or a pot). Decision: with no banker, equal rows "
        "push and of two special hands the larger wins (as way 3); 由莊家賠閒家 needs a banker.",
        marks=("四人对比",),
    ),
    Article(
        _hk("way 2 odds"),
        "摆「尾」：勝出得三或四注。作「二道」：得四或八注。…同花順摆「尾」：勝出得四或五注。作「二道」：得五或十注",
        "Way 2's row payouts, each with a lower and a higher choice.",
        "enforced",
        reason="Decision: `hk-extended` pays the higher of each choice (as way 1); the lower "
        "ones are a setting (`units`).",
        marks=("三或四注",),
    ),
    Article(
        _hk("way 2 specials"),
        "任何一方得遇上以下的組合（例牌）通吃，稱為「報到，特殊牌型」…（QKA、KA2、JQKA2除外）…"
        "「十二皇族/字一色」…「一條龍」…「至尊清龙/清一色」",
        "Twelve special hands with their units (3 to 108); head runs QKA and KA2 do not count.",
        "enforced",
        reason="Decision: the specials 003 leaves unnamed (「」) carry their usual names; "
        "至尊清龙 wins 108 (the text gives 一百零八 as disputed).",
        marks=("QKA、KA2、JQKA2除外", "十二皇族"),
    ),
    Article(
        _hk("way 3 stakes"),
        "首先制定金額：1分×元，也可以×分1元。另：也可以使用下注玩法，分數最高者贏得底池",
        "The money of a point is agreed first; or the highest score takes a pot.",
        "enforced",
        reason='A rule setting `stakes`: "per-point" (1分×元: a point is the table\'s unit '
        "of money, `points_per_unit` points a unit for ×分1元; a seat is taken with one unit) "
        'or "pot" (each seat\'s bet goes into the pot). Decision: money per point is paid '
        "pair by pair, rounded toward zero to the cent; equal highest scores share the pot, "
        "the odd cents to the first of them counter-clockwise from seat 0.",
        marks=("1分×元", "分數最高者贏得底池"),
    ),
    Article(
        _hk("way 3 scoring"),
        "每墩分開計分，4人分別比牌，贏一個人加1分，輸一個人扣1分，平手0分",
        "Each row is scored apart, each player against each: +1 a win, -1 a loss, 0 a tie.",
        "enforced",
        reason="Played at the table: one player a seat, two to four seats, every seat arranges "
        "after the deal within the five minutes (no banker opens). Decision: a seat late at "
        "the bell loses every row to every other seat as a foul does (Art. 2(d)).",
        marks=("算分 5", "4人分別比牌"),
    ),
    Article(
        _hk("way 3 bonus"),
        "特殊加分:「輸給此玩家者」支付一定分數…衝三…中墩葫蘆…中墩鐵支…中墩同花順…尾墩鐵支…尾墩同花順",
        "Bonus points a loser of the row pays for these hands.",
        "enforced",
        marks=("特殊加分",),
    ),
    Article(
        _hk("way 3 shoot"),
        "打槍：三墩皆勝於另1玩家可打槍此玩家，被打槍的玩家須支付基本三分與特殊加分",
        "Winning all three rows against a player shoots (打槍) that player.",
        "enforced",
        reason="Decision: the shot player pays the three rows and the bonus, as the text's "
        "example (被衝三打槍，支付3+1分); a house that doubles it sets `shoot_multiplier`.",
        marks=("打槍", "打枪"),
    ),
    Article(
        _hk("way 3 home run"),
        "全壘打：一玩家打槍另外三名玩家，則此玩家得分再乘以二，負分由三名玩家平均分攤",
        "Shooting all three others doubles the score, shared equally by the three.",
        "enforced",
        marks=("全壘打", "全垒打"),
    ),
    Article(
        _hk("way 3 specials"),
        "特殊牌型：不參與一般比牌，直接亮牌即可得分。（兩位玩家以上有特殊牌時，較小的牌還是要支付較大的排分數，"
        "但較大的不必支付較小的）",
        "Special hands score without comparing rows; of two specials the smaller pays the larger.",
        "enforced",
        marks=("the smaller pays the larger",),
    ),
)

ARTICLES: tuple[Article, ...] = THIRTEEN_ARTICLES + PAIGOW_ARTICLES + HK_ARTICLES
BY_CITATION = {article.citation: article for article in ARTICLES}
