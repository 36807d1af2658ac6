from __future__ import annotations

import io
import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rules.paigow import MACAU_1990, TABLE_II
from daemon.rules.paigow.cli import HANDLERS, stream

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules-paigow.md"


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon.rules.paigow.cli", *args],
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


def replies(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_classify_stream_survives_malformed_lines() -> None:
    lines = [
        '{"id": "a", "tiles": "天牌 杂九"}',
        "{not json",
        '{"tiles": "天 天 天"}',
        '{"tiles": "天 王"}',
        '{"tiles": "天 地 人"}',
        "[1, 2]",
        '{"id": 7}',
        "",
        '"6-6 4-5"',
        '{"tiles": ["2-4", "1-2"]}',
        '{"tiles": "天 细鸡"}',
    ]
    result = run("classify", stdin="\n".join(lines) + "\n")
    assert result.returncode == 1, result.stderr
    out = replies(result)
    assert out[0] == {
        "id": "a",
        "tiles": ["6-6", "4-5"],
        "names": ["天牌", "杂九"],
        "class": "天九皇",
        "table_row": 17,
        "strength": out[0]["strength"],
        "kind": "king",
        "points": None,
    }
    assert out[1]["line"] == 2 and out[1]["error"].startswith("not JSON")
    assert out[2] == {"error": "one set holds only 2 天牌; more were named", "line": 3}
    assert "cannot read a tile at '王'" in out[3]["error"]
    assert out[4]["error"] == "classify takes two tiles, got 3"
    assert "expected tiles as a string or a list of strings" in out[5]["error"]
    assert out[6] == {"id": 7, "error": "missing field 'tiles'", "line": 7}
    assert out[7]["class"] == "天九皇"  # the blank line 8 gets no reply
    assert (out[8]["class"], out[8]["table_row"]) == ("至尊宝", 1)
    assert (out[9]["class"], out[9]["table_row"], out[9]["points"]) == ("天牌五", None, 5)
    assert len(out) == 10


def test_set_and_outcome_streams() -> None:
    result = run("set", stdin='{"tiles": "天 杂九 地 人"}\n{"tiles": "天"}\n')
    first, second = replies(result)
    assert (first["front"]["class"], first["back"]["class"]) == ("地杠", "天九皇")
    assert second["error"] == "set takes four tiles, got 1"
    lines = [
        '{"banker": ["人 人", "天 天"], "player": [["梅 梅"], ["地 地"]]}',
        '{"banker": "天 杂九 地 人", "player": [["杂九", "天"], ["人", "地"]]}',
        '{"banker": ["人 人", "天 天"], "player": [["天 人"], ["人 天"]]}',
        '{"banker": ["人 人", "天 天"]}',
        '{"banker": "天 天 地 地", "player": "天 地 人 人"}',
    ]
    result = run("outcome", stdin="\n".join(lines))
    out = replies(result)
    assert [o.get("outcome") for o in out] == ["banker", "push", None, None, None]
    assert out[1]["player"]["correction"] == "pairs_swapped"
    assert (out[1]["front"], out[1]["back"]) == ("tie", "tie")
    assert "one set holds only 2" in out[2]["error"]
    assert out[3]["error"] == "missing field 'player'"
    assert "only 2 天牌" in out[4]["error"]


def test_outcome_reports_the_croupiers_correction() -> None:
    line = '{"banker": "梅 梅 长三 长三", "player": [["天", "人"], ["天", "人"]]}'
    (out,) = replies(run("outcome", stdin=line))
    assert out["player"]["correction"] == "back_not_largest"
    assert out["player"]["back"]["class"] == "天牌宝"
    assert out["outcome"] == "player"


def test_settle_stream() -> None:
    request = {
        "id": "r1",
        "banker": ["长三 长三", "梅 梅"],
        "banker_stake": 150,
        "doors": [
            {"hand": [["地 地"], ["天 天"]], "bet": 100},
            {"hand": "杂七 杂五 娥 板凳", "bet": 300},
        ],
        "co_bankers": [{"name": "house", "stake": 50, "is_house": True}],
    }
    bad = {"banker": "长三 长三 梅 梅", "banker_stake": 0, "doors": []}
    result = run("settle", stdin=json.dumps(request) + "\n" + json.dumps(bad) + "\n")
    good, error = replies(result)
    assert good["id"] == "r1"
    assert [(d["outcome"], d["won"], d["lost"], d["net"]) for d in good["doors"]] == [
        ("player", 100, 0, 95),
        ("banker", 0, 300, -300),
    ]
    assert good["bank_result"] == 200
    assert [(s["name"], s["result"], s["net"]) for s in good["shares"]] == [
        ("banker", 150, 143),
        ("house", 50, 50),
    ]
    assert good["banker_new_stake"] == 293
    assert "banker_stake: expected a whole number >= 1, got 0" in error["error"]


def test_table_prints_every_class_in_order_with_its_row() -> None:
    result = run("table")
    assert result.returncode == 0
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) == 118
    assert [int(r[0]) for r in rows] == list(range(1, 119))
    listed = [r for r in rows if r[1] != "-"]
    assert [int(r[1]) for r in listed] == list(range(1, 112))
    assert [r[2] for r in listed] == list(TABLE_II)
    assert [r[2] for r in rows if r[1] == "-"] == [
        "天牌五", "地牌五", "斧头四", "梅牌三", "红头三", "人牌一", "杂七密",
    ]  # fmt: skip
    as_json = [json.loads(line) for line in run("table", "--json").stdout.splitlines()]
    assert sum(entry["combinations"] for entry in as_json) == 496


def test_docs_list_every_class_as_the_engine_does() -> None:
    markdown = run("table", "--markdown").stdout
    assert markdown.count("\n") == 120
    assert markdown in DOCS.read_text(encoding="utf-8")


def test_unknown_command_is_a_usage_error() -> None:
    result = run("rank")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


@pytest.mark.skipif(find_spec("daemon.rules.cli") is None, reason="tabled rules not wired yet")
def test_tabled_rules_paigow_hands_over_to_this_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "rules", "paigow", "table"],
        check=False,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == run("table").stdout


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5000)
    | st.sampled_from(
        ["天 杂九", "6-6 4-5", "天 天 人 人", "梅 梅 长三 长三", "杂九", "x", "", "2-4 1-2"]
    ),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.sampled_from(
                [
                    "tiles",
                    "banker",
                    "player",
                    "doors",
                    "hand",
                    "bet",
                    "banker_stake",
                    "co_bankers",
                    "name",
                    "stake",
                    "bettors",
                    "id",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)
lines = st.one_of(
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False).encode()),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b),
)


@pytest.mark.parametrize("command", ["classify", "set", "outcome", "settle"])
@given(batch=st.lists(lines, min_size=1, max_size=6))
def test_every_line_gets_exactly_one_reply(command: str, batch: list[bytes]) -> None:
    out = io.BytesIO()
    status = stream(HANDLERS[command], MACAU_1990, batch, out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == len([raw for raw in batch if _answered(raw)])
    assert all("cannot handle" not in str(a.get("error")) for a in answers), answers
    assert status == (1 if any("error" in a for a in answers) else 0)


def _answered(raw: bytes) -> bool:
    return bool(raw.strip())  # a blank line is JSON whitespace only, as for every game
