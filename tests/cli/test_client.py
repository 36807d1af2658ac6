"""`tabled status | act | journal` run as processes against a real HTTP server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.api_support import TOKENS, auth, write_tokens
from tests.api.server_process import fake_server
from tests.loopback_http import http


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with fake_server(write_tokens(tmp_path / "tokens.toml")) as url:
        yield url


def tabled(
    url: str, *args: str, role: str | None = "dealer", **kw: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLED_")}
    env["TABLED_URL"] = url
    if role is not None:
        env["TABLED_TOKEN"] = TOKENS[role][1]
    env.update(kw)
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=False,
    )


def test_act_takes_steps_as_the_token_holder_and_status_shows_them(server: str) -> None:
    assert tabled(server, "act", "open_round").returncode == 0
    r = tabled(server, "act", "place_bet", "seat=2", "amount=500", "bettor=陳大文")
    assert r.returncode == 0, r.stderr
    assert "accepted: place_bet by lei.dealer" in r.stdout
    assert tabled(server, "act", "shake_dice").returncode == 0

    r = tabled(server, "status")
    assert r.returncode == 0, r.stderr
    assert "phase dealing" in r.stdout
    assert "Seat 2  holder 陳大文  bets 陳大文 500" in r.stdout
    assert "dice: " in r.stdout
    assert "legal now for lei.dealer (dealer): deal" in r.stdout
    assert "device shuffler: link up" in r.stdout

    r = tabled(server, "status", "--json")
    state = json.loads(r.stdout)
    assert state["state"]["phase"] == "dealing"
    assert state["legal"] == ["deal"]
    assert len(state["devices"]) == 4


def test_a_refused_step_exits_1_with_the_article(server: str) -> None:
    r = tabled(server, "act", "deal")
    assert r.returncode == 1
    assert "refused" in r.stderr
    assert "Art. 2(c)" in r.stderr
    r = tabled(server, "act", "deal", "--json")
    assert json.loads(r.stdout)["violation"]["article"] == "Art. 2(c)"


def test_bad_input_and_missing_rights_have_their_own_exit_codes(
    server: str, tmp_path: Path
) -> None:
    tabled(server, "act", "open_round")
    r = tabled(server, "act", "place_bet", "seat=two", "amount=5", "bettor=P")
    assert r.returncode == 2
    # Said in the command line's terms: the parameter as typed, not the API's `payload.seat`.
    assert "seat: expected an integer" in r.stderr and "payload" not in r.stderr
    r = tabled(server, "act", "open_round", role=None)
    assert r.returncode == 3
    assert "no token: set TABLED_TOKEN or use --token-file" in r.stderr
    assert "Authorization" not in r.stderr
    r = tabled(server, "act", "shake_dice", role="surveillance")
    assert r.returncode == 3
    assert "read-only" in r.stderr
    r = tabled(server, "act", "void_round")
    assert r.returncode == 3
    assert "supervisor" in r.stderr
    r = tabled(server, "act", "void_round", role="supervisor")
    assert r.returncode == 2
    assert "needs a reason" in r.stderr

    token_file = tmp_path / "token"
    token_file.write_text(TOKENS["supervisor"][1] + "\n")
    r = tabled(
        server,
        "act",
        "void_round",
        "--reason",
        "dice left the cup twice",
        "--token-file",
        str(token_file),
        role=None,
    )
    assert r.returncode == 0, r.stderr
    assert "by wong.supervisor" in r.stdout

    r = tabled("http://127.0.0.1:9", "status")
    assert r.returncode == 4
    assert "cannot reach" in r.stderr


def test_journal_lists_filters_and_follows_new_events(server: str) -> None:
    tabled(server, "act", "open_round")
    tabled(server, "act", "place_bet", "seat=1", "amount=100", "bettor=P1")

    r = tabled(server, "journal", role="surveillance")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("#2 ")
    assert "lei.dealer table.place_bet seat=1 amount=100 bettor=P1" in lines[1]

    r = tabled(server, "journal", "--event", "table.place_bet", "--json", role="surveillance")
    [event] = [json.loads(line) for line in r.stdout.splitlines()]
    assert event["payload"]["bettor"] == "P1"
    r = tabled(server, "journal", "--since", "2030-01-01T00:00", role="surveillance")
    assert r.returncode == 0
    assert r.stdout == ""

    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLED_")}
    env.update(TABLED_URL=server, TABLED_TOKEN=TOKENS["surveillance"][1])
    follow = subprocess.Popen(
        [sys.executable, "-m", "daemon", "journal", "--follow", "--event", "table."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    # A follower that never prints would block readline() forever: kill it after a while.
    guard = threading.Timer(20, follow.kill)
    guard.start()
    try:
        assert follow.stdout is not None
        assert follow.stdout.readline().startswith("#1 ")
        assert follow.stdout.readline().startswith("#2 ")
        # The follower is connected once the server has a subscriber; acting before that would
        # still be caught up (it resumes after seq 2), so no waiting is needed here.
        http.post(server + "/api/actions/shake_dice", headers=auth("dealer"))
        http.post(server + "/_fake/fault", params={"device": "shuffler"})
        http.post(
            server + "/api/actions/clear_hold",
            json={"reason": "lid closed"},
            headers=auth("supervisor"),
        )
        assert "lei.dealer table.shake_dice" in follow.stdout.readline()
        # device.fault is filtered out by --event table.
        line = follow.stdout.readline()
        assert "wong.supervisor table.clear_hold reason=lid closed" in line
        assert line.startswith("#5 ")
    finally:
        guard.cancel()
        follow.terminate()
        follow.wait(timeout=10)


def test_status_names_the_seats_and_the_device_held_as_the_table_does() -> None:
    from daemon.cli.status import format_status  # noqa: PLC0415

    seats = [
        {"seat": 0, "name": "Banker", "name_zh": "莊家", "bets": [], "cards": []},
        {
            "seat": 1,
            "name": "Seat 1",
            "name_zh": "第1門",
            "holder": "P1",
            "bets": [{"bettor": "P1", "amount": 500}],
            "cards": [],
        },
    ]
    state = {
        "table": "T01",
        "game": "thirteen",
        "round": 3,
        "phase": "TILT",
        "next": "a supervisor clears the tilt",
        "hold": {"kind": "tilt", "reason": "jam", "device": "shuffler"},
        "seats": seats,
    }
    text = format_status(state, [], {"actor": "lei.dealer", "role": "dealer"})
    assert "\nBanker\n" in text
    assert "\nSeat 1  holder P1  bets P1 500\n" in text
    assert "TILT: shuffler: jam" in text


def test_the_act_example_is_one_the_real_table_accepts() -> None:
    import re  # noqa: PLC0415

    from daemon.api.models import check_payload  # noqa: PLC0415
    from daemon.cli.act import parse_assignment  # noqa: PLC0415
    from daemon.procedures import thirteen  # noqa: PLC0415
    from daemon.table.publish.views import action_specs  # noqa: PLC0415

    specs = {s.name: s for s in action_specs(thirteen.ACTIONS, "thirteen")}
    help_text = subprocess.run(
        [sys.executable, "-m", "daemon", "act", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    ).stdout
    examples = re.findall(r"tabled act ([a-z_]+)((?: \w+=[^\s;]+)*)", " ".join(help_text.split()))
    assert examples
    for action, args in examples:
        payload = dict(parse_assignment(a) for a in args.split())
        assert check_payload(specs[action], payload) is None, f"tabled act {action}{args}"


def test_a_refused_follow_exits_as_not_allowed_whatever_the_refusal() -> None:
    from daemon.cli.client import EXIT_AUTH, exit_code  # noqa: PLC0415
    from daemon.cli.journal import WS_ERROR_STATUS  # noqa: PLC0415

    for error in ("unauthorized", "rate_limited", "forbidden_origin"):
        assert exit_code(WS_ERROR_STATUS[error]) == EXIT_AUTH, error


def test_status_shows_a_proposal_awaiting_a_supervisor() -> None:
    from daemon.cli.status import format_status  # noqa: PLC0415

    state = {
        "phase": "DEALING",
        "override": {
            "kind": "enter_card",
            "proposed_by": "dealer:lei.dealer",
            "label": {"en": "Enter card by hand 3d (card #2, seat 3)", "zh": "人手輸入牌 3d"},
        },
    }
    text = format_status(state, ["approve_override", "reject_override"], {"actor": "wong"})
    assert (
        "AWAITING A SUPERVISOR: Enter card by hand 3d (card #2, seat 3), proposed by "
        "dealer:lei.dealer" in text
    )


def test_act_help_lists_every_operator_action_of_each_game_with_its_parameters() -> None:
    from daemon.procedures.games import GAMES  # noqa: PLC0415

    help_text = subprocess.run(
        [sys.executable, "-m", "daemon", "act", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    headings = [f"{game.name} ({game.regulation}):" for game in GAMES.values()]
    for game, heading in zip(GAMES.values(), headings, strict=True):
        assert heading in help_text
        # Each game's own section: two games may declare an action of the same name.
        section = help_text.split(heading, 1)[1]
        for other in headings:
            section = section.split(other, 1)[0]
        for name, action in game.actions.items():
            if action.operator:
                assert action.params is not None
                line = next(x for x in section.splitlines() if x.startswith(f"  {name} "))
                assert all(f"{key}=<" in line for key in action.params), line
                assert ("--reason" in line) == action.requires_reason, line


# What a person could type, or a forged line hold, to act on a terminal: clear the screen, retitle
# the window, the 8-bit CSI, a right-to-left override, a carriage return over the line.
HOSTILE = "P\x1b[2J\x1b]0;owned\x07\x9b31m\u202eX\rY"
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_text_from_the_table_is_shown_with_its_controls_escaped(server: str) -> None:
    assert tabled(server, "act", "open_round").returncode == 0
    placed = tabled(server, "act", "place_bet", "seat=2", "amount=5", f"bettor={HOSTILE}")
    assert placed.returncode == 0, placed.stderr
    shown = HOSTILE.encode("unicode_escape").decode()  # Python's notation, as shown
    for args in (("status",), ("journal", "--event", "table.place_bet")):
        out = tabled(server, *args, role="surveillance")
        assert out.returncode == 0, out.stderr
        assert not UNSAFE.search(out.stdout), repr(out.stdout)
        assert shown in out.stdout, (shown, out.stdout)
    # --json: the same value, exactly, once parsed; nothing raw in the text itself.
    out = tabled(server, "journal", "--event", "table.place_bet", "--json", role="surveillance")
    assert not UNSAFE.search(out.stdout), repr(out.stdout)
    [event] = [json.loads(line) for line in out.stdout.splitlines()]
    assert event["payload"]["bettor"] == HOSTILE
