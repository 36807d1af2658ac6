"""The Hong Kong ways of playing Thirteen (seed 003), clause by clause, as the rule sets implement
them."""

from __future__ import annotations

from daemon.trace.catalogue.article import Article, _hk, _m

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
