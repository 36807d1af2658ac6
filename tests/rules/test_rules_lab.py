"""The game-approval lab's checks of issue 2: the texts' examples, the rule sets side by side,
Art. 11's money, and the lab CLI's answers to odd lines (000, 002, 003)."""

from __future__ import annotations

import io
import json
import re
from dataclasses import fields
from decimal import Decimal
from pathlib import Path

import pytest

from daemon.rules import paigow, thirteen
from daemon.rules.cards import Card, parse_cards
from daemon.rules.paigow import cli as paigow_cli
from daemon.rules.thirteen import RulesError, cli, settle

DOCS = Path(__file__).resolve().parents[2] / "docs"

Rows = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]


def hand(head: str, middle: str, tail: str) -> Rows:
    return parse_cards(head), parse_cards(middle), parse_cards(tail)


# --- 003 third way: "被衝三打槍，支付3+1分" ------------------------------------------------------

SHOOTER = hand("9c 9d 9h", "3c 4d 5c 6d 7d", "2s 5s 6s 9s Qs")  # 冲三, a straight, a flush
VICTIM = hand("Ks Qd 7c", "Ah Ad 3s 8s Tc", "Kh Kd Jc Js 4c")


@pytest.mark.article("003", "way 3 shoot", "way 3 bonus")
def test_shot_with_a_head_three_of_a_kind_pays_three_plus_one() -> None:
    result = settle(VICTIM, SHOOTER, "hk-points")
    assert [row.winner for row in result.rows] == ["player", "player", "player"]
    assert result.shot == "player"
    assert (result.player_units, result.banker_units) == (3 + 1, 0)
    doubled = settle(VICTIM, SHOOTER, thirteen.ruleset("hk-points", shoot_multiplier=2))
    assert doubled.player_units == 8


# --- the four rule sets side by side, on the same hands ----------------------------------------

# 三顺 with a Q-K-A head: Macau and 003's first way count it; the second and third ways
# exclude "QKA" from the head run.
RUNS_QKA = hand("Qc Kd Ah", "3c 4d 5h 6s 7c", "8d 9h Ts Jc Qd")
PLAIN = hand("2s 5d 9c", "Kc Ks 4s 6d 8c", "Ac As 3h 3s Th")
SIX_PAIRS = hand("Kc 2c 2d", "3d 3h 4c 4h 5c", "5d 6c 6d 7d 7h")  # 六对半


@pytest.mark.parametrize(
    ("name", "special", "outcome", "units", "net"),
    [
        # Art. 9 I: a fixed combination wins 3; the money is half the bet less 2 % (Art. 11).
        ("macau-1989", "三顺", "player", (3, 0), Decimal("0.49")),
        ("hk-common", "三顺", "player", (3, 0), Decimal(3)),
        # QKA excluded: the rows are compared, and the player takes all three.
        ("hk-extended", None, "player", (3, 0), Decimal(3)),
        ("hk-points", None, "player", (3, 0), Decimal(3)),
    ],
)
@pytest.mark.article("51/89/M", "9 I")
@pytest.mark.article("003", "way 1 specials", "way 2 specials")
def test_side_by_side_a_q_k_a_head_run_against_a_plain_hand(
    name: str, special: str | None, outcome: str, units: tuple[int, int], net: Decimal
) -> None:
    result = settle(PLAIN, RUNS_QKA, name)
    assert result.special == result.player_special == special
    assert result.outcome == outcome
    assert (result.player_units, result.banker_units) == units
    assert result.player_net == net
    assert result.shot == ("player" if name == "hk-points" else None)


@pytest.mark.parametrize(
    ("name", "player_special", "outcome", "units", "net"),
    [
        # "如庄家与闲家各持固定组合，无论各自组合为何，均视为和局"
        ("macau-1989", "三顺", "push", (0, 0), Decimal(0)),
        # "倘若莊家及閒家同時報到，由莊家賠閒家"
        ("hk-common", "三顺", "player", (3, 0), Decimal(3)),
        # The player holds no special hand there: the banker's 六对半 wins 6.
        ("hk-extended", None, "banker", (0, 6), Decimal(-6)),
        ("hk-points", None, "banker", (0, 6), Decimal(-6)),
    ],
)
@pytest.mark.article("51/89/M", "9 I")
@pytest.mark.article("003", "way 1 both special")
def test_side_by_side_both_sides_special(
    name: str, player_special: str | None, outcome: str, units: tuple[int, int], net: Decimal
) -> None:
    result = settle(SIX_PAIRS, RUNS_QKA, name)
    assert result.banker_special == "六对半"
    assert result.player_special == player_special
    assert result.outcome == outcome
    assert (result.player_units, result.banker_units) == units
    assert result.player_net == net
    assert result.rows == ()


# --- Art. 11: the money, exact, with a written rounding rule -----------------------------------

WINNER = hand("Ac Kh 2s", "Kc Ks 8d Jd Qs", "9s 9d 9c 3h 3s")
BANKER = hand("2c 3d 5h", "7c 7d 9h Jc Qd", "Tc Td 4s 4h 8c")


@pytest.mark.article("51/89/M", "11")
def test_the_third_reading_of_art_11_half_a_bet_for_each_unit_won() -> None:
    rules = thirteen.ruleset("macau-1989", prize="half-units")
    result = settle(BANKER, WINNER, rules, bet=3)
    assert result.player_units - result.banker_units == 3
    assert result.prize == Decimal("4.5")
    assert result.commission == Decimal("0.09")
    assert result.player_net == Decimal("4.41")
    lost = settle(WINNER, BANKER, rules, bet=3)
    assert lost.outcome == "banker" and lost.player_net == Decimal("-4.5")


@pytest.mark.article("51/89/M", "11")
def test_commission_is_rounded_down_to_a_hundredth_of_a_unit() -> None:
    rules = thirteen.ruleset("macau-1989", commission="0.025")
    result = settle(BANKER, WINNER, rules, bet=1)
    assert result.prize == Decimal("0.5")
    assert result.commission == Decimal("0.01")  # 0.0125, in the player's favour
    assert result.player_net == Decimal("0.49")


def test_money_is_printed_without_trailing_zeros() -> None:
    data = settle(BANKER, WINNER, bet=1).to_json()
    assert (data["prize"], data["commission"], data["player_net"]) == ("0.5", "0.01", "0.49")
    data = settle(BANKER, WINNER, "hk-common", bet=10).to_json()
    assert (data["prize"], data["commission"], data["player_net"]) == ("30", "0", "30")


def test_an_unknown_prize_reading_is_refused() -> None:
    with pytest.raises(RulesError):
        thirteen.ruleset("macau-1989", prize="double")


# --- the lab CLI: every odd line gets an error line naming it, and the stream goes on ---------


def thirteen_stream(command: str, *lines: bytes) -> tuple[int, list[dict[str, object]]]:
    out = io.BytesIO()
    status = cli.stream(cli.HANDLERS[command], list(lines), out, thirteen.ruleset())
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_line_nested_too_deep_is_an_error_line_and_the_stream_goes_on() -> None:
    status, out = thirteen_stream("rank", b"[" * 100_000 + b"]" * 100_000, b'"As Kd Qh"')
    assert status == 1 and len(out) == 2
    assert out[0]["line"] == 1 and "JSON" in str(out[0]["error"])
    assert out[1]["category"] == "high_card"


@pytest.mark.parametrize(
    ("command", "request_", "field"),
    [
        ("rank", {"cards": "As Kd Qh", "setings": {"tie_break": "top-card"}}, "setings"),
        ("settle", {"banker": [], "player": [], "bets": 2}, "bets"),
        ("house-way", {"cards": "As", "rules": "hk-common"}, "rules"),
    ],
)
def test_a_field_the_command_does_not_know_is_named(
    command: str, request_: dict[str, object], field: str
) -> None:
    status, out = thirteen_stream(command, json.dumps(request_).encode())
    assert status == 1
    assert field in str(out[0]["error"]) and "unknown field" in str(out[0]["error"])


def test_paigow_outcome_shows_the_hands_as_opened_with_the_bankers_swap() -> None:
    out = io.BytesIO()
    line = '{"banker": ["地 地", "长三 长三"], "player": ["人 人", "天 天"]}'
    paigow_cli.stream(paigow_cli.HANDLERS["outcome"], paigow.MACAU_1990, [line.encode()], out)
    reply = json.loads(out.getvalue())
    assert reply["outcome"] == "player" and reply["front"] == reply["back"] == "player"
    assert reply["banker"]["front"]["class"] == "长衫宝"  # opened smaller pair first
    assert reply["banker"]["back"]["class"] == "地牌宝"
    assert reply["banker"]["correction"] == "pairs_swapped"


# --- docs/rules.md carries the Table II omissions (issue 2) ------------------------------------


def test_docs_rules_md_lists_every_class_table_ii_omits() -> None:
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    section = text.split("## Taiwan Pai Gow", 1)[1]
    listed = set(re.findall(r"^\| (\S+) \| [^|]+ \| [^|]+ \| between", section, re.MULTILINE))
    omitted = {c.name for c in paigow.CLASSES if c.table_row is None}
    assert len(omitted) == 7
    assert listed == omitted


# --- Art. 7 against Art. 9 I: a fouled arrangement of a special hand ---------------------------

# 六对半 set with the middle (kings and queens) above the tail (tens and nines): a foul.
SIX_PAIRS_FOULED = hand("Ah Ad 7c", "Kh Kd Qs Qd Jc", "Jd Ts Tc 9s 9h")


@pytest.mark.article("51/89/M", "7", "9 I")
def test_a_house_may_let_a_foul_void_a_special_hand() -> None:
    assert thirteen.is_foul(*SIX_PAIRS_FOULED)
    assert thirteen.special_hand(*SIX_PAIRS_FOULED) == "六对半"
    default = settle(PLAIN, SIX_PAIRS_FOULED)  # Art. 9 I "必胜": the special hand wins
    assert default.outcome == "player" and default.special == "六对半"
    strict = settle(PLAIN, SIX_PAIRS_FOULED, thirteen.ruleset(foul_voids_special=True))
    assert strict.outcome == "banker" and strict.foul == "player" and strict.special is None
    assert strict.player_special is None and strict.player_net == -1
    with pytest.raises(RulesError):
        thirteen.ruleset(foul_voids_special="yes")


# --- 003 third way: no banker, so a tie is 平手 0 whatever the comparison ---------------------

TIE_A = hand("2c 3d 5h", "6c 7d 8h 9c Td", "Js Jd Jh Qs Qh")
TIE_B = hand("Ac 4c 5s", "6s 7s 8d 9h Th", "2d 4d 9d Qd Kd")  # middles equal


@pytest.mark.parametrize("tie_break", ["all-cards", "top-card"])
@pytest.mark.article("003", "way 3 scoring")
def test_points_scoring_ties_are_zero_and_seat_order_does_not_matter(tie_break: str) -> None:
    rules = thirteen.ruleset("hk-points", tie_break=tie_break)
    one, other = settle(TIE_A, TIE_B, rules), settle(TIE_B, TIE_A, rules)
    assert one.rows[1].winner == other.rows[1].winner == "push"
    assert one.player_units - one.banker_units == other.banker_units - other.player_units
    assert list(thirteen.table_points([TIE_A, TIE_B], rules).points) == [0, 0]


# --- the engine's tables against the regulation text itself, when the seeds are at hand -------

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def _seed(prefix: str) -> str:
    found = sorted(SEEDS.glob(f"{prefix}_*.txt")) if SEEDS.is_dir() else []
    if not found:
        pytest.skip(f"the regulation text {prefix}_*.txt is not next to the repository")
    return found[0].read_text(encoding="utf-8")


def _numbered(text: str, start: str, end: str | None) -> list[str]:
    section = text.split(start, 1)[1]
    if end is not None:
        section = section.split(end, 1)[0]
    return [
        "".join(m.group(1).split()) for m in re.finditer(r"^\d+\.\s*(.+)$", section, re.MULTILINE)
    ]


@pytest.mark.article("15/90/M", "Table I", "Table II")
def test_table_i_and_table_ii_are_the_regulations_own() -> None:
    text = _seed("002")
    assert _numbered(text, "表I", "表II") == [name for name, _ in paigow.TABLE_I]
    assert tuple(_numbered(text, "表II", None)) == paigow.TABLE_II


@pytest.mark.parametrize(
    ("command", "line", "field"),
    [
        ("classify", '{"tiles": "天 杂九", "rules": "x"}', "rules"),
        ("set", '{"tiles": "天 杂九 地 人", "tile": "x"}', "tile"),
        ("outcome", '{"banker": "人 人 天 天", "player": "梅 梅 地 地", "bet": 5}', "bet"),
        (
            "settle",
            '{"banker": "人 人 天 天", "banker_stake": 100,'
            ' "doors": [{"hand": "梅 梅 地 地", "bet": 10, "bettor": ["a"]}]}',
            "bettor",
        ),
        (
            "settle",
            '{"banker": "人 人 天 天", "banker_stake": 100, "doors": [],'
            ' "co_banker": [{"name": "house", "stake": 10}]}',
            "co_banker",
        ),
    ],
)
def test_paigow_a_field_the_command_does_not_know_is_named(
    command: str, line: str, field: str
) -> None:
    out = io.BytesIO()
    status = paigow_cli.stream(
        paigow_cli.HANDLERS[command], paigow.MACAU_1990, [line.encode()], out
    )
    reply = json.loads(out.getvalue())
    assert status == 1
    assert "unknown field" in reply["error"] and repr(field) in reply["error"]


@pytest.mark.article("003", "way 1 compare", "way 1 top card")
def test_top_card_only_reads_the_first_compared_rank() -> None:
    rules = thirteen.ruleset("hk-common", tie_break="top-card")
    # Middles: a pair of kings with an ace kicker against kings with a queen: only the kings
    # count, so the row ties and goes to the banker (食夾棍); by every card the player wins it.
    banker = hand("2c 3d 5h", "Kh Kd Qc 5s 4d", "Js Jd Jh Qs Qh")
    player = hand("2d 3c 6s", "Ks Kc Ac 6c 4h", "7d 8d 9d Td Ad")
    assert settle(banker, player, rules).rows[1].winner == "banker"
    assert settle(banker, player, "hk-common").rows[1].winner == "player"
    # A-2-3-4-5 and A-K-Q-J-10 both have the ace on top.
    banker = hand("2c 3d 6h", "As 2d 3c 4h 5s", "Js Jd Jh Qs Qh")
    player = hand("2h 3h 7s", "Ah Kd Qc Jc Ts", "7d 8d 9d Td Ad")
    assert settle(banker, player, rules).rows[1].winner == "banker"
    assert settle(banker, player, "hk-common").rows[1].winner == "player"


def test_rulesets_lists_every_setting_a_request_may_change() -> None:
    settings = {f.name for f in fields(thirteen.RuleSet)}
    for listed in cli._rulesets_json():
        assert set(listed) == settings
    hk = {r["name"]: r for r in cli._rulesets_json()}["hk-extended"]
    assert hk["excluded_head_runs"] == [[2, 13, 14], [12, 13, 14]]  # K-A-2, Q-K-A
