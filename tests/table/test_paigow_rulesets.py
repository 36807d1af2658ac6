"""Each Taiwan Pai Gow rule set played through the table: `tabled run` with the rule set in its
config, as a process. The shipped examples (config/examples/paigow-<ruleset>.toml) play whole
rounds by autoplay; and a dealer plays a whole round of each rule set through the operator API
(co-banker, head tiles, the deal in turn, hands set face down and opened one by one, the
croupier's re-sets the rule set asks for), settles it there, and the journal holds the result.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from daemon.autoplay import bad_setting, good_setting
from daemon.rules import paigow
from tests.api.api_support import auth, write_tokens
from tests.table.scenario_support import REPO, journal_lines, table_config, toml
from tests.table.test_run_process import ENV, TABLED, tabled

RULESETS = ("macau-1990", "macau-1990-banker-corrected", "macau-1990-free-setting")
ART_6_2 = "Portaria 15/90/M Art. 6(2)"
# The doors the croupier must re-set when the banker's hand and door 1's are both set wrongly.
RESET = {
    "macau-1990": [1],
    "macau-1990-banker-corrected": [0, 1],
    "macau-1990-free-setting": [],
}


def example(ruleset: str) -> Path:
    return REPO / "config" / "examples" / f"paigow-{ruleset}.toml"


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.article("15/90/M", "6(2)")
def test_each_rule_set_example_plays_whole_rounds(ruleset: str, tmp_path: Path) -> None:
    journal = tmp_path / "j"
    run = tabled(
        "run", "--config", str(example(ruleset)), "--journal", str(journal),
        "--autoplay", "6", "--seed", "11", "--json", timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["game"], summary["rounds"]) == ("paigow", 6)
    lines = journal_lines(journal)
    started = next(r for r in lines if r["event"] == "table.started")
    assert started["payload"]["ruleset"] == ruleset
    assert sum(r["event"] == "round.settled" for r in lines) >= 6
    assert tabled("verify-log", str(journal)).returncode == 0


def groups_both_wrong() -> list[list[str]]:
    """A shuffle whose banker hand (seat 0) and door 1 hand can both be set wrongly."""
    for seed in range(1000):
        tiles = [str(t) for t in paigow.TILE_SET]
        random.Random(seed).shuffle(tiles)
        groups = [tiles[i : i + 4] for i in range(0, 32, 4)]
        if bad_setting(groups[0]) is not None and bad_setting(groups[1]) is not None:
            return groups
    raise AssertionError("no shuffle found")


class Dealer:
    """A dealer at the console, through the operator API."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def state(self) -> dict[str, Any]:
        body: dict[str, Any] = self.client.get("/api/state", headers=auth("dealer")).json()
        return body

    def post(self, action: str, **payload: Any) -> httpx.Response:
        return self.client.post(
            f"/api/actions/{action}", headers=auth("dealer"), json={"payload": payload}
        )

    def ok(self, action: str, **payload: Any) -> dict[str, Any]:
        reply = self.post(action, **payload)
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        assert body["accepted"] is True
        return body

    def refused(self, action: str, **payload: Any) -> dict[str, Any]:
        reply = self.post(action, **payload)
        assert reply.status_code == 409, reply.text
        violation: dict[str, Any] = reply.json()["violation"]
        return violation

    def until(self, phase: str) -> dict[str, Any]:
        for _ in range(2000):
            state = self.state()["state"]
            if state["phase"] == phase:
                return state
        raise AssertionError(f"never reached {phase}: {state['phase']}")


def play_a_round(dealer: Dealer, ruleset: str, groups: list[list[str]]) -> None:
    dealer.until("EQUIPMENT_CHECK")
    for _ in range(2000):
        if "open_table" in dealer.state()["legal"]:
            break
    dealer.ok("open_table")
    dealer.ok("take_bank", player="B", seat=0)
    dealer.ok("confirm_tile_shuffle", new_set=False)
    dealer.ok("move_stacks", by="player", player="P1", one_hand=True)
    dealer.ok("move_stacks", by="banker", player="B", one_hand=True)
    dealer.ok("place_bet", player="P1", seat=1, amount=100)
    dealer.ok("place_bet", player="P2", seat=2, amount=200)  # whole units of 100
    dealer.ok("place_stake", amount=1000)
    dealer.ok("co_bank", player="P9", amount=500)
    assert dealer.refused("shake_dice", player="B")["article"] == "Portaria 15/90/M Art. 5(3)"
    dealer.ok("head_tiles_out")
    dealer.ok("shake_dice", player="B")
    state = dealer.until("DEALING")
    first = (state["dice_total"] - 1) % 8  # counted from the banker's door 0 as one
    order = [(first + turn) % 8 for turn in range(8)]
    out_of_turn = dealer.refused("deal_hand", seat=order[1])
    assert out_of_turn["article"] == "Portaria 15/90/M Art. 2(3)"
    for seat in order:
        dealer.ok("deal_hand", seat=seat)
    dealer.ok("set_hand", seat=1)
    dealer.ok("set_hand", seat=2)
    dealer.ok("set_banker")
    # The banker's hand first, then the doors from 头门 (door 1 unless the banker took the first).
    dealer.ok("open_hand", seat=0, **(bad_setting(groups[0]) or {}))
    dealer.ok("open_hand", seat=1, **(bad_setting(groups[1]) or {}))
    dealer.ok("open_hand", seat=2, **good_setting(groups[2]))
    assert dealer.state()["state"]["phase"] == "OPENED"
    if RESET[ruleset]:
        assert dealer.refused("settle_round")["article"] == ART_6_2
    else:
        assert dealer.refused("reset_hand", seat=1, **good_setting(groups[1]))["article"] == ART_6_2
    for seat in RESET[ruleset]:
        dealer.ok("reset_hand", seat=seat, **good_setting(groups[seat]))
    dealer.ok("settle_round")
    state = dealer.state()["state"]
    assert state["phase"] == "ROUND_OVER"
    assert {s["seat"] for s in state["settlements"]} == {1, 2}
    dealer.ok("next_round")


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.article("15/90/M", "2(3)", "5(3)", "5(5)", "6(1)", "6(2)")
def test_a_round_of_each_rule_set_is_played_and_settled_through_the_api(
    ruleset: str, tmp_path: Path
) -> None:
    journal = tmp_path / "j"
    data = table_config(journal, game="paigow", world=f"api-{ruleset}", seed=3)
    data["table"]["ruleset"] = ruleset
    data["api"] = {"tokens_file": str(write_tokens(tmp_path / "tokens.toml"))}
    config = tmp_path / "t.toml"
    config.write_text(toml(data))
    groups = groups_both_wrong()
    process = subprocess.Popen(
        [*TABLED, "run", "--config", str(config), "--http", "127.0.0.1:0"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["http"]
        with httpx.Client(base_url=url, timeout=10) as client:
            play_a_round(Dealer(client), ruleset, groups)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lines = journal_lines(journal)
    assert tabled("verify-log", str(journal)).returncode == 0

    def events(name: str) -> list[dict[str, Any]]:
        return [r["payload"] for r in lines if r["event"] == name]

    assert events("table.started")[0]["ruleset"] == ruleset
    # Set face down: the journal's hand.set carries no tile; the tiles come with hand.opened.
    assert all("front" not in e and "back" not in e for e in events("hand.set"))
    assert [e["seat"] for e in events("hand.opened")] == [0, 1, 2]
    assert [e["seat"] for e in events("hand.reset")] == RESET[ruleset]
    settlement = events("round.settled")[0]["settlement"]
    assert [d["seat"] for d in settlement["doors"]] == settlement["order"]
    assert settlement["bank_stake"] == 1500
    assert [c["player"] for c in settlement["co_bankers"]] == ["P9"]
    banker = settlement["banker_hand"]
    if ruleset == "macau-1990-banker-corrected":
        assert banker == {k: v.split() for k, v in good_setting(groups[0]).items()}
    else:  # the banker's hand stands as set, opened smaller pair first
        wrong = bad_setting(groups[0]) or {}
        assert sorted([banker["front"], banker["back"]]) == sorted(
            [wrong["front"].split(), wrong["back"].split()]
        )
    door1 = next(d for d in settlement["doors"] if d["seat"] == 1)
    if ruleset == "macau-1990-free-setting":
        wrong1 = bad_setting(groups[1]) or {}
        assert sorted([door1["front"], door1["back"]]) == sorted(
            [wrong1["front"].split(), wrong1["back"].split()]
        )
    else:
        assert {"front": door1["front"], "back": door1["back"]} == {
            k: v.split() for k, v in good_setting(groups[1]).items()
        }
