"""Every Thirteen rule set played whole at the real table and settled through the API: the
example config of each rule set (config/examples/thirteen-<ruleset>.toml) with its devices
simulated, served by `serve_table.py`, and driven by the dealer's HTTP requests. The cards are
read from what the simulated shoe dealt, in the deal order the dice name, not from the API."""

from __future__ import annotations

import re
import tomllib
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import auth, write_tokens
from server_process import table_server

from daemon.procedures.thirteen import settle_thirteen
from daemon.rules import thirteen as rules13
from daemon.rules.cards import parse_cards
from drivers.shoe_reader.messages import card_name

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"
RULESETS = ("macau-1989", "hk-common", "hk-extended", "hk-four", "hk-points")
ROWS = ("head", "middle", "tail")


def simulated(ruleset: str, tmp: Path) -> Path:
    """The rule set's example config, its simulated devices in a world of their own, its
    journal in the test's folder."""
    text = (EXAMPLES / f"thirteen-{ruleset}.toml").read_text(encoding="utf-8")
    for name in ("shuffler", "dice_shaker", "shoe_reader", "timer_bell"):
        text = re.sub(
            rf'(\[devices\.{name}\]\nport = )"[^"]*"',
            rf'\1"sim://{name}?world={ruleset}&seed=5&speed=0"',
            text,
        )
    text = re.sub(r'dir = "[^"]*"', f'dir = "{tmp / "journal"}"', text, count=1)
    path = tmp / f"{ruleset}.toml"
    path.write_text(text.replace('durability = "fsync"', 'durability = "none"'), encoding="utf-8")
    return path


class Dealer:
    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, timeout=10)

    def act(self, action: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        r = self.http.post(
            f"/api/actions/{action}", headers=auth("dealer"), json={"payload": payload or {}}
        )
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        assert body["accepted"] is True, body
        return body

    def refused(self, action: str, payload: dict[str, Any]) -> str:
        r = self.http.post(
            f"/api/actions/{action}", headers=auth("dealer"), json={"payload": payload}
        )
        assert r.status_code == 409, r.text
        return r.text

    def state(self) -> dict[str, Any]:
        body: dict[str, Any] = self.http.get("/api/state", headers=auth("dealer")).json()
        return body["state"]

    def until(self, phase: str) -> dict[str, Any]:
        for _ in range(3000):
            state = self.state()
            if state["phase"] == phase:
                return state
        raise AssertionError(f"the table never reached {phase}: {state['phase']}")

    def draw(self) -> str:
        reply = self.http.post("/_sim/control", json={"op": "draw"}).json()
        assert reply["ok"] and reply["reader"] == "read", reply
        return card_name(int(reply["drawn"]["rank"]), int(reply["drawn"]["suit"]))


def house(cards: list[str], rules: rules13.RuleSet) -> dict[str, list[str]]:
    rows = rules13.house_way(parse_cards(" ".join(cards)), rules)
    return {row: [str(c) for c in cards] for row, cards in zip(ROWS, rows, strict=True)}


@pytest.mark.article("51/89/M", "2(b)", "2(d)", "7", "8", "11")
@pytest.mark.article("003", "way 1 foul", "way 2 four against each other", "way 3 scoring",
                     "way 3 stakes")  # fmt: skip
@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_whole_round_of_each_rule_set_at_the_table_settled_through_the_api(
    ruleset: str, tmp_path: Path
) -> None:
    config = simulated(ruleset, tmp_path)
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    rules = rules13.ruleset(ruleset, **data.get("rules", {}))
    unit = data["table"]["unit"]
    banker = rules.scoring == "banker"
    with table_server(write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal", config) as url:
        dealer = Dealer(url)
        dealer.act("open_table")
        dealer.act("confirm_hand_shuffle")
        dealer.until("CUT")
        dealer.act("confirm_cut", {"by": "player", "player": "P1", "cards": 21, "one_hand": True})
        dealer.act("load_shoe")
        if banker:
            bets = {"P1": (1, 3), "P2": (1, 1), "P3": (3, 2)}  # player: (seat, units)
        else:
            bets = {"A": (0, 1), "B": (1, 1), "C": (2, 1), "D": (3, 1)}
        # A bet whose money is not its units' is refused and journaled (Art. 11).
        wrong = {"player": "X", "seat": 2, "units": 1, "amount": unit + 1, "seated": False}
        assert "Art. 11" in dealer.refused("place_bet", wrong)
        for player, (seat, units) in bets.items():
            dealer.act("place_bet", {"player": player, "seat": seat, "units": units,
                                     "seated": True})  # fmt: skip
        first = next(iter(bets))
        dealer.act("shake_dice", {"player": first})
        state = dealer.until("DEALING")
        order = rules13.deal_order(rules13.first_seat_from_dice(state["dice_total"]))
        hands: dict[int, list[str]] = {seat: [] for seat in range(4)}
        for index in range(52):
            hands[order[index]].append(dealer.draw())
        state = dealer.until("BANKER_ARRANGING" if banker else "PLAYERS_ARRANGING")
        if banker:
            dealer.act("arrange_banker")
            dealer.act("open_banker")
            dealer.act("enter_arrangement", {"seat": 0, **house(hands[0], rules)})
        seats = sorted({seat for seat, _ in bets.values()})
        arranged = {seat: house(hands[seat], rules) for seat in seats}
        if banker:
            arranged[0] = house(hands[0], rules)
        for seat in seats:
            dealer.act("player_arranged", {"seat": seat})
        for seat in seats:
            dealer.act("open_hand", {"seat": seat})
            dealer.act("enter_arrangement", {"seat": seat, **arranged[seat]})
        dealer.act("settle_round")
        view = dealer.until("ROUND_OVER")
        events = dealer.http.get(
            "/api/journal", headers=auth("dealer"), params={"event": "round.settled"}
        ).json()["events"]
        settled = events[-1]["payload"]["settlement"]
        assert {s["seat"] for s in view["settlements"]} == {e["seat"] for e in settled}

    if banker:
        placed = [
            {"seq": n, "player": p, "seat": s, "amount": u * unit, "units": u, "seated": True}
            for n, (p, (s, u)) in enumerate(bets.items(), 1)
        ]
        assert settled == settle_thirteen(arranged, placed, [], rules)
        for entry in settled:
            assert entry["amount"] == bets[entry["player"]][1] * unit
    else:
        hands_rows = [tuple(" ".join(arranged[s][row]) for row in ROWS) for s in seats]
        points = rules13.table_points(hands_rows, rules).points  # type: ignore[arg-type]
        assert [Fraction(e["points"]) for e in settled] == list(points)
        assert sum(Decimal(e["net"]) for e in settled) == 0
        for entry, point in zip(settled, points, strict=True):
            exact = Decimal(point.numerator * unit) / point.denominator
            assert abs(Decimal(entry["net"]) - exact) < 1  # to the cent, pair by pair
