"""The cards each role is served by the real API over the real table (every device simulated,
`serve_table.py`), phase by phase: `/api/state`, `/api/journal` and the push feed, searched
whole (the raw response bodies) for every card still face down, which the journal on disk
holds. The rule is daemon/procedures/visibility.py; its table, docs/visibility.md."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import TOKENS, auth, dealt_on_disk, write_tokens
from server_process import table_server
from test_visibility import PAIGOW_TO_SHAKE, shown
from training_support import auth as people_auth
from training_support import tabled_run
from websockets.sync.client import connect

from daemon.rules import paigow
from tests.loopback_http import http

ROLES = ("dealer", "supervisor", "surveillance", "admin")
REVIEW = ("supervisor", "surveillance", "admin")
PAIGOW_CONFIG = Path(__file__).resolve().parents[2] / "config" / "paigow.toml"


class Served:
    """One real table server, driven as its people would, and read as each role."""

    def __init__(self, url: str, journal: Path) -> None:
        self.url, self.journal = url, journal

    def act(
        self, action: str, role: str = "dealer", reason: str | None = None, **payload: Any
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"payload": payload}
        if reason is not None:
            body["reason"] = reason
        r = http.post(f"{self.url}/api/actions/{action}", json=body, headers=auth(role))
        assert r.status_code == 200, (action, r.status_code, r.text)
        return r.json()

    def control(self, **request: Any) -> dict[str, Any]:
        reply: dict[str, Any] = http.post(self.url + "/_sim/control", json=request).json()
        assert reply["ok"], reply
        return reply

    def phase(self, wanted: str) -> None:
        """Wait for the table to reach `wanted` (a device's answer is asynchronous)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = http.get(self.url + "/api/state", headers=auth("dealer")).json()["state"]
            if state["phase"] == wanted:
                return
        raise AssertionError(f"the table did not reach {wanted}; it is in {state['phase']}")

    def deal_thirteen(
        self, seats: Iterable[int], face_up_at: int | None = None, draws: int = 52
    ) -> None:
        """A Thirteen round to the banker's arrangement: a bet on each of `seats`, 52 cards
        drawn from the simulated shoe (the one at `face_up_at`, counted from 0, face up); with
        fewer `draws`, the round is left dealing."""
        self.act("open_table")
        self.act("confirm_hand_shuffle")
        self.phase("CUT")
        self.act("confirm_cut", by="player", player="P1", cards=20, one_hand=True)
        self.act("load_shoe")
        for seat in seats:
            self.act("place_bet", player=f"P{seat}", seat=seat, amount=100, units=1, seated=True)
        self.act("shake_dice", player="P1")
        self.phase("DEALING")
        for n in range(draws):
            if n == face_up_at:  # Art. 4: this card comes out face up
                self.control(op="inject", device="shoe_reader", fault="face_up")
            self.control(op="draw")
        if draws == 52:
            self.phase("BANKER_ARRANGING")

    def bodies(self, role: str) -> str:
        """Every byte `role` is served now: the state, the journal, the push feed from seq 0."""
        state = http.get(self.url + "/api/state", headers=auth(role))
        journal = http.get(self.url + "/api/journal", params={"limit": 1000}, headers=auth(role))
        assert state.status_code == journal.status_code == 200
        last = journal.json()["events"][-1]["seq"]
        pushed: list[str] = []
        ws_url = self.url.replace("http://", "ws://") + "/api/events"
        with connect(ws_url, open_timeout=10) as ws:
            ws.send(json.dumps({"token": TOKENS[role][1], "after": 0}))
            # The feed sends the state on connecting, then the events; the quiet table's next
            # state (the same one) would follow only at its periodic refresh, a second later.
            caught_up = stated = False
            while not (caught_up and stated):
                raw = ws.recv(timeout=30)
                assert isinstance(raw, str)
                pushed.append(raw)
                message = json.loads(raw)
                if message["type"] == "event" and message["event"]["seq"] >= last:
                    caught_up = True
                stated = stated or message["type"] == "state"
        return "\n".join([state.text, journal.text, *pushed])

    def check(self, hidden: set[str], every: set[str], whole_to_review: bool = False) -> None:
        for role in ROLES:
            body = self.bodies(role)
            if whole_to_review and role in REVIEW:
                assert shown(body, every) == every, role
                continue
            assert shown(body, hidden) == set(), role
            assert shown(body, every - hidden) == every - hidden, role


@pytest.fixture
def thirteen(tmp_path: Path) -> Iterator[Served]:
    with table_server(write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal") as url:
        yield Served(url, tmp_path / "journal")


def seats_on_disk(journal: Path, seats: Iterable[int]) -> dict[int, list[str]]:
    return {seat: dealt_on_disk(journal, seat) for seat in seats}


@pytest.mark.article("51/89/M", "2(b)")
@pytest.mark.article("51/89/M", "2(d)")
def test_thirteen_through_the_api_and_the_push_feed_by_role_and_phase(thirteen: Served) -> None:
    t = thirteen
    t.deal_thirteen(seats=(1, 2), face_up_at=4)
    hands = seats_on_disk(t.journal, range(4))
    every = {c for cards in hands.values() for c in cards}
    assert len(every) == 52
    [face_up] = [
        json.loads(line)["payload"]["card"]
        for path in t.journal.glob("journal-*.jsonl")
        for line in path.read_text().splitlines()
        if '"card.dealt"' in line and json.loads(line)["payload"].get("face_up")
    ]

    def rows(seat: int) -> dict[str, list[str]]:
        cards = hands[seat]
        return {"head": cards[:3], "middle": cards[3:8], "tail": cards[8:]}

    # Dealt face down: the dealer's console, surveillance, admin: nobody sees a card, but the
    # one that came out face up.
    t.check(every - {face_up}, every)
    t.act("arrange_banker")
    t.check(every - {face_up}, every)
    t.act("open_banker")
    t.check(every - set(hands[0]) - {face_up}, every)
    t.act("enter_arrangement", seat=0, **rows(0))
    t.act("player_arranged", seat=1)
    t.check(every - set(hands[0]) - {face_up}, every)
    http.post(t.url + "/_sim/jump", params={"seconds": 301})  # seat 2 late at the bell
    t.phase("SETTLING")
    t.act("open_hand", seat=1)
    t.check(every - set(hands[0]) - set(hands[1]) - {face_up}, every)
    t.act("enter_arrangement", seat=1, **rows(1))
    t.act("settle_round")
    # Closed: the seat compared is opened; the late seat and the seat nobody bet on are not,
    # but to supervisors, surveillance and admin, for disputes.
    t.check(set(hands[2] + hands[3]) - {face_up}, every, whole_to_review=True)


@pytest.mark.article("15/90/M", "4")
@pytest.mark.article("15/90/M", "6(1)")
@pytest.mark.article("15/90/M", "6(2)")
def test_pai_gow_through_the_api_by_role_and_phase(tmp_path: Path) -> None:
    """Set face down, no hand's tiles are served (the table does not know them); the croupier
    opens the banker's hand, then the doors from 头门: each is served to every role from its
    own opening; a tile dealt face up is served at once."""
    tiles = [str(x) for x in paigow.TILE_SET]
    random.Random(11).shuffle(tiles)
    # Twelve tiles in play, no name twice among them (a text search could not tell a pair's
    # open tile from its face-down twin).
    group: list[str] = []
    for tile in tiles:
        if tile not in group and len(group) < 12:
            group.append(tile)
    hands = {0: group[:4], 1: group[4:8], 2: group[8:]}
    face_up = hands[1][0]

    def setting(four: list[str]) -> dict[str, str]:
        front, back = paigow.set_hand(paigow.parse_tiles(" ".join(four)))
        return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}

    with table_server(
        write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal", PAIGOW_CONFIG
    ) as url:
        t = Served(url, tmp_path / "journal")
        for action, payload in PAIGOW_TO_SHAKE:
            t.act(action, **payload)
        t.phase("DEALING")
        state = http.get(url + "/api/state", headers=auth("dealer")).json()["state"]
        total = state["dice_total"]
        for seat in paigow.deal_order(total):  # offsets from the banker's door 0: its seats
            if seat == 1:
                t.act("tile_face_up", seat=1, tile=face_up)  # Art. 4: open at once
            t.act("deal_hand", seat=seat)
        t.act("set_hand", seat=1)
        t.act("set_hand", seat=2)
        t.act("set_banker")
        every = set(group)
        t.check(every - {face_up}, every)
        doors = [s for s in paigow.door_order(total) if s in (1, 2)]
        hidden = set(every - {face_up})
        for seat in (0, *doors):  # Art. 6(2): the banker's first, then from 头门
            t.act("open_hand", seat=seat, **setting(hands[seat]))
            hidden -= set(hands[seat])
            t.check(hidden, every)
        t.act("settle_round")
        t.check(set(), every, whole_to_review=True)


def test_a_card_drawn_from_the_training_panel_is_served_face_down(tmp_path: Path) -> None:
    """A trainer draws from the simulated shoe (`/api/training`, `tabled run` on the shipped
    config): the reply names the card drawn as the table's state does, face down."""
    with tabled_run(tmp_path) as url:
        t = Served(url, tmp_path / "var" / "journal")
        t.deal_thirteen(seats=(1,), draws=0)

        def train(op: str, **body: Any) -> httpx.Response:
            reply = http.post(f"{url}/api/training/{op}", json=body, headers=people_auth("trainer"))
            assert reply.status_code == 200, reply.text
            return reply

        drawn, dealt = train("draw"), train("deal", count=3)
        assert drawn.json()["drawn"] == "hidden" and drawn.json()["reader"] == "read"
        assert dealt.json()["dealt"] == 3 and dealt.json()["last"]["drawn"] == "hidden"
        deadline = time.monotonic() + 30
        every: set[str] = set()
        while len(every) < 4 and time.monotonic() < deadline:  # the reader's reports arrive
            every = {c for s in range(4) for c in dealt_on_disk(t.journal, s)}
        assert len(every) == 4
        assert shown(drawn.text + dealt.text, every) == set()


def test_the_cli_and_metrics_name_no_face_down_card(thirteen: Served) -> None:
    """`tabled status` and `tabled journal`, run as a person runs them, and `/metrics`."""
    t = thirteen
    t.deal_thirteen(seats=(1,))
    every = {c for cards in seats_on_disk(t.journal, range(4)).values() for c in cards}
    for role in ("dealer", "surveillance"):
        env = {**os.environ, "TABLED_URL": t.url, "TABLED_TOKEN": TOKENS[role][1]}
        for command in (["status"], ["journal", "--limit", "1000"]):
            done = subprocess.run(
                [sys.executable, "-m", "daemon", *command],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            assert "card.dealt" in done.stdout or "(13 face down)" in done.stdout, command
            assert shown(done.stdout, every) == set(), (role, command)
    metrics = http.get(t.url + "/metrics", headers=auth("admin"))
    assert metrics.status_code == 200 and "tabled_" in metrics.text
    assert shown(metrics.text, every) == set()
