"""`tabled rules thirteen ...` run as a process: JSON lines in, JSON lines out."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules import thirteen
from daemon.rules.thirteen import cli


def run(*args: str, lines: list[Any] | None = None, raw: bytes = b"") -> tuple[int, list[Any]]:
    stdin = raw + b"".join(
        (line if isinstance(line, bytes) else json.dumps(line, ensure_ascii=False).encode()) + b"\n"
        for line in lines or []
    )
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "rules", *args],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )
    out = result.stdout.decode("utf-8")
    return result.returncode, [json.loads(line) for line in out.splitlines() if line.strip()]


BANKER = ["2c 3d 5h", "7c 7d 9h Jc Qd", "Tc Td 4s 4h 8c"]
PLAYER = {"head": "Ac Kh 2s", "middle": "Kc Ks 8d Jd Qs", "tail": "9s 9d 9c 3h 3s"}


def test_rank_answers_each_line_and_survives_malformed_ones() -> None:
    code, out = run(
        "thirteen",
        "rank",
        lines=[
            {"id": "a", "cards": "As Ks Qs Js Ts"},
            "A♥ 2♦ 3♠ 4♣ 5♦",
            b"{not json",
            {"cards": "As As Kd Qh Jc"},
            {"cards": 7},
            {"hand": "As"},
            ["Kh", "Kd", "Kc"],
            b"\xff\xfe",
            {"cards": "Ks Kd 10c 9h 2s"},
        ],
    )
    assert code == 1
    assert out[0] == {
        "id": "a",
        "cards": "As Ks Qs Js Ts",
        "category": "royal_flush",
        "category_zh": "黄袍麒",
        "value": out[0]["value"],
        "ranks": [],
    }
    assert out[1]["category"] == "straight" and out[1]["ranks"] == [14]
    assert out[2]["line"] == 3 and "not JSON" in out[2]["error"]
    assert out[3] == {"line": 4, "error": "As appears twice in one row"}
    assert out[4]["line"] == 5 and "cards are a string" in out[4]["error"]
    assert out[5]["line"] == 6 and "unknown field 'hand'" in out[5]["error"]
    assert out[6]["category"] == "three_of_a_kind"
    assert out[7]["line"] == 8 and "not UTF-8" in out[7]["error"]
    assert out[8]["category"] == "one_pair" and out[8]["cards"] == "Ks Kd Tc 9h 2s"


def test_settle_in_macau_and_with_a_named_rule_set_and_settings() -> None:
    code, out = run(
        "thirteen",
        "settle",
        lines=[
            {"id": 1, "banker": BANKER, "player": PLAYER, "bet": 2},
            {"banker": BANKER, "player": PLAYER, "bet": 2, "ruleset": "hk-common"},
            {"banker": BANKER, "player": PLAYER, "bet": 2, "settings": {"prize": "units"}},
            {"banker": BANKER, "player": PLAYER, "bet": 4},
            {"banker": BANKER, "player": PLAYER, "ruleset": "macau-2000"},
            {"banker": BANKER, "player": PLAYER, "settings": {"tiebreak": "x"}},
            {"banker": BANKER},
            {"banker": BANKER, "player": ["2c 3d"]},
            {"banker": BANKER, "player": PLAYER, "settings": {"bets": "x"}},
            {"banker": BANKER, "player": PLAYER, "settings": {"units": {"tail": {"flsh": 2}}}},
            {"banker": BANKER, "player": PLAYER, "settings": {"commission": "0.05"}, "id": 9},
        ],
    )
    assert code == 1
    macau = out[0]
    assert (macau["id"], macau["outcome"], macau["player_units"], macau["banker_units"]) == (
        1,
        "player",
        3,
        0,
    )
    assert [row["winner"] for row in macau["rows"]] == ["player"] * 3
    assert (macau["prize"], macau["commission"], macau["player_net"]) == ("1", "0.02", "0.98")
    assert out[1]["ruleset"] == "hk-common" and out[1]["player_net"] == "6"
    assert out[2]["player_net"] == "5.88"
    assert "takes bets of 1, 2, 3 units, not 4" in out[3]["error"]
    assert "unknown rule set 'macau-2000'" in out[4]["error"]
    assert "unknown setting 'tiebreak'" in out[5]["error"]
    assert out[6] == {"line": 7, "error": 'missing "player"'}
    assert "a hand is {head, middle, tail}" in out[7]["error"]
    assert out[8] == {"line": 9, "error": "setting bets: 'x' is not a valid value"}
    assert "unknown category 'flsh'" in out[9]["error"]
    assert out[10]["id"] == 9 and out[10]["commission"] == "0.02"  # 5 % of 0.5, rounded down


@pytest.mark.article("003", "way 3 scoring", "way 3 home run")
def test_settle_four_players_each_against_each() -> None:
    players = [
        ["Ac Ad Ah", "Kc Kd Kh Ks 2c", "Qs Js Ts 9s 8s"],
        ["2d 3d 4c", "5c 6c 7c 9c Jc", "Qc Qd Qh 3c 3h"],
        ["2h 3s 4d", "5d 6h 7s 8c 9d", "Jh Th 8h 5h 4h"],
        ["As Jd 9h", "7d 7h 8d 5s 4s", "Tc Td 6d 6s 2s"],
    ]
    code, out = run("thirteen", "settle", "--ruleset", "hk-points", lines=[{"players": players}])
    assert code == 0
    assert out[0]["points"][0] == 60 and sum(out[0]["points"]) == 0
    assert out[0]["home_run"] == 0 and len(out[0]["pairs"]) == 6


def test_house_way_sets_a_special_hand_and_names_it() -> None:
    cards = "2h 7h 9h 3s 5s 8s Ts Qs 2d 4d 6d Jd Kd"
    code, out = run(
        "thirteen",
        "house-way",
        lines=[{"cards": cards}, {"cards": cards, "ruleset": "hk-extended"}, {"cards": "As"}],
    )
    assert code == 1
    assert out[0]["special"] == "三花" and out[0]["ranks"]["middle"] == "flush"
    assert out[1]["special"] == "三同花"
    assert "13 cards, not 1" in out[2]["error"]


def test_rulesets_lists_every_rule_set_with_its_settings() -> None:
    code, out = run("thirteen", "rulesets")
    assert code == 0
    assert [line["name"] for line in out] == [
        "macau-1989",
        "hk-common",
        "hk-extended",
        "hk-points",
        "hk-four",
    ]
    assert out[0]["units"]["middle"]["straight_flush"] == 10 and out[0]["bets"] == [1, 2, 3]


def test_help_and_unknown_game_and_paigow_is_handed_over() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "rules", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0 and "thirteen house-way" in result.stdout
    unknown = subprocess.run(
        [sys.executable, "-m", "daemon", "rules", "mahjong"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert unknown.returncode == 2 and "unknown game 'mahjong'" in unknown.stderr
    paigow = subprocess.run(
        [sys.executable, "-m", "daemon", "rules", "paigow", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert paigow.returncode == 0 and "classify" in paigow.stdout


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["cards", "banker", "player", "players", "bet", "ruleset", "settings", "id", "head"]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(st.lists(json_values | st.binary(max_size=30), min_size=1, max_size=6))
def test_every_line_gets_exactly_one_json_answer(requests: list[Any]) -> None:
    lines = [
        item.replace(b"\n", b" ") if isinstance(item, bytes) else json.dumps(item).encode()
        for item in requests
    ]
    for command in ("rank", "settle", "house-way"):
        out = io.BytesIO()
        cli.stream(cli.HANDLERS[command], lines, out, thirteen.ruleset())
        answers = [json.loads(line) for line in out.getvalue().splitlines()]
        assert len(answers) == sum(1 for line in lines if line.strip())
