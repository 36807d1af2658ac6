"""Portaria 15/90/M (seed 002), the provisional rules of Taiwan Pai Gow, article by article."""

from __future__ import annotations

from daemon.trace.catalogue.article import Article, _p
from daemon.trace.cites import PAIGOW

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
