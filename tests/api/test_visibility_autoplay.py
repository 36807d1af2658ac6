"""300 autoplay rounds of each game through the daemon (`tabled run --autoplay`, faults and
violations on, seeded), then every route a person is served from, read back from the journal
on disk: the push feed (each record as it was written, per role), the journal query (each round's
page) and the state (the console's view every 20 inputs, replayed). No face-down card or tile
is served (issue 21: before, 6 of 15,812 `card.dealt` of 300 rounds were pushed with their card,
each a card entered by hand after a misread). The oracle is test_visibility_rule.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_visibility import shown
from test_visibility_rule import WALL, Oracle

from daemon.procedures.base import Procedure
from daemon.procedures.games import GAMES
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.procedures.visibility import Seen, redact_records, redact_state
from daemon.table.publish.views import console_snapshot
from tests.daemon.cli_support import REPO, tabled

ROUNDS = 300
ROLES = ("dealer", "supervisor")  # the two audiences


def _journal(folder: Path) -> list[dict[str, Any]]:
    lines = [
        line for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().split("\n")
    ]
    return [json.loads(line) for line in lines if line]


def _procedure(game: str, started: dict[str, Any]) -> Procedure:
    devices = tuple(started["devices"])
    if game == "paigow":
        return PaiGowProcedure(hands=started["hands"], ruleset=started["ruleset"], devices=devices)
    return ThirteenProcedure(ruleset=started["ruleset"], devices=devices)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_no_route_serves_a_face_down_card_over_300_autoplay_rounds(
    game: str, tmp_path: Path
) -> None:
    config = ["--config", str(REPO / "config" / "paigow.toml")] if game == "paigow" else []
    done = tabled(
        "run", *config, "--autoplay", str(ROUNDS), "--seed", "21", "--fault-share", "0.4",
        "--violation-share", "0.3", "--journal", str(tmp_path / "journal"), "--json",
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["rounds"] == ROUNDS
    records = _journal(tmp_path / "journal")
    declared = GAMES[game].events
    assert {r["event"] for r in records} <= set(declared)

    started = next(r for r in records if r["event"] == "table.started")["payload"]
    proc = _procedure(game, started)
    oracle = Oracle()
    feeds = {role: Seen(game) for role in ROLES}
    deal_of: dict[int, tuple[int, int]] = {}
    voided: dict[int, int] = {}
    inputs = entered = 0
    for record in records:
        round_id, event = record["round"], record["event"]
        if event == "table.input":  # what the procedure did with it, as on the day
            given = record["payload"]
            outcome = proc.handle(given["action"], given["actor"], given["payload"], given["now"])
            assert outcome.accepted, outcome.violation
            inputs += 1
        oracle.observe(proc, declared[event].closes_round)
        entered += event == "card.dealt" and "entered" in record["payload"]
        if isinstance(round_id, int):
            deal_of[record["seq"]] = (round_id, voided.get(round_id, 0))
            voided[round_id] = voided.get(round_id, 0) + (event == "deal.voided")
        deal = deal_of.get(record["seq"])
        for role in ROLES:  # the push feed: each record as it is written
            pushed = feeds[role].redact(record, role)
            if deal is not None:
                leaked = shown(json.dumps(pushed), oracle.forbidden(deal, role, False))
                assert not leaked, ("push", role, record["seq"], event, leaked)
        if event == "table.input" and inputs % 20 == 0:  # the state, as the console is served it
            view = console_snapshot(proc.snapshot(), now=given["now"], wall_now=WALL)
            if isinstance(proc, ThirteenProcedure):
                view["shoe"] = [d["card"] for d in proc.dealt]
            now = (proc.round_id, len(getattr(proc, "voided_deals", ())))
            over = proc.phase == "ROUND_OVER"  # settled: whole to the review audience
            for role in ROLES:
                served = json.dumps(redact_state(game, view, role))
                assert not shown(served, oracle.forbidden(now, role, over)), ("state", role)
    # The journal, queried round by round once the session is over (every round but the last
    # closed: to the review audience whole).
    rounds: dict[Any, list[dict[str, Any]]] = {}
    for record in records:
        rounds.setdefault(record["round"], []).append(record)
    for round_id, page in rounds.items():
        if not isinstance(round_id, int):
            continue
        for record in redact_records(game, page, "dealer"):
            forbidden = oracle.forbidden(deal_of[record["seq"]], "dealer", False)
            assert not shown(json.dumps(record), forbidden), ("journal", record["seq"])
    if game == "thirteen":
        assert entered >= 3, entered  # the case: cards entered by hand, on every route
