"""`tabled run --http` serves its API from a process of its own (daemon.api.process): the table
goes on when that process dies (the death journaled, a new one started on the same socket),
SIGTERM to the daemon ends both, and the channel between them refuses what it may not carry."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import time
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from api_support import TOKENS, auth, write_tokens
from websockets.sync.client import connect

from daemon.api.acts import PER_PERSON, Answered
from daemon.api.errors import ApiError
from daemon.api.gate import BUDGET_WINDOW, FACTS_OVER_BUDGET, FACTS_PER_WINDOW
from daemon.api.process import ApiProcess
from daemon.api.requests import MAX_IN_FLIGHT
from daemon.api.tokens import token_entry
from daemon.api.worker import RemoteTable
from daemon.config import load_config
from daemon.contract.channel import (
    MAX_ACT_BODY,
    MAX_FROM_API,
    MAX_TO_API,
    ChannelError,
    FrameRefused,
    frame,
    json_body,
    json_frame,
    read_frame,
)
from daemon.table import Table
from daemon.table.publish import served
from drivers.clock import MonotonicClock
from tests.daemon.cli_support import serving
from tests.table.scenario_support import journal_lines, table_config, toml


def _config(tmp_path: Path) -> Path:
    data = table_config(tmp_path / "journal")
    data["api"] = {"tokens_file": str(write_tokens(tmp_path / "tokens.toml"))}
    path = tmp_path / "table.toml"
    path.write_text(toml(data))
    return path


def _api_pids(daemon: int) -> list[int]:
    """The daemon's API processes now (its children running `daemon.api.worker`)."""
    children = Path(f"/proc/{daemon}/task/{daemon}/children").read_text().split()
    found = []
    for child in children:
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"daemon.api.worker" in command:
            found.append(int(child))
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _deaths(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The API processes' deaths on record, but for one killed at the daemon's stop for not
    ending within its second (`stop_timeout`: on a loaded machine it can take longer)."""
    return [
        line
        for line in lines
        if line["event"] == "api.process_died" and line["payload"]["reason"] != "stop_timeout"
    ]


def _state(url: str) -> dict[str, object]:
    # A connection made while the API process (re)starts waits in the listening socket's
    # backlog (the daemon holds the socket) and is answered once it serves.
    answer = httpx.get(f"{url}/api/state", headers=auth("surveillance"), timeout=60)
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


def _events(url: str, count: int) -> list[dict[str, object]]:
    """The next `count` journal events the push feed sends (the table must be playing)."""
    ws_url = url.replace("http://", "ws://") + "/api/events"
    got: list[dict[str, object]] = []
    with connect(ws_url, open_timeout=60) as ws:
        ws.send(json.dumps({"token": TOKENS["surveillance"][1], "after": None}))
        while len(got) < count:
            message = json.loads(ws.recv(timeout=60))
            if message.get("type") == "event":
                got.append(message["event"])
    return got


def test_the_table_goes_on_when_its_api_process_dies_and_a_new_one_serves(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    args = ("--config", str(config), "--http", "127.0.0.1:0", "--autoplay", "100000")
    with serving(*args, cwd=tmp_path) as (url, daemon):
        assert _state(url)["role"] == "surveillance"
        [first] = _api_pids(daemon.pid)
        os.kill(first, signal.SIGKILL)
        # The same URL answers again, from another API process; the table played on meanwhile.
        assert _state(url)["role"] == "surveillance"
        [second] = _api_pids(daemon.pid)
        assert second != first
        live = _events(url, 5)
        assert daemon.poll() is None
    lines = journal_lines(tmp_path / "journal")
    [died] = _deaths(lines)
    assert died["actor"] == "api"
    assert died["payload"]["returncode"] == -signal.SIGKILL
    assert died["payload"]["reason"] == "exited"  # it died; the table did not end it
    assert all(int(str(event["seq"])) > died["seq"] for event in live)
    assert any(
        line["seq"] > died["seq"] and not str(line["event"]).startswith("api.") for line in lines
    )


def test_an_api_process_that_stops_answering_is_killed_and_replaced(tmp_path: Path) -> None:
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        _state(url)
        [hung] = _api_pids(daemon.pid)
        os.kill(hung, signal.SIGSTOP)  # alive, its loop answering nothing
        assert _state(url)["role"] == "surveillance"  # answered by the next one
        assert _api_pids(daemon.pid) != [hung]
    [died] = _deaths(journal_lines(tmp_path / "journal"))
    assert died["payload"]["returncode"] == -signal.SIGKILL
    assert died["payload"]["reason"] == "unresponsive"


def test_sigterm_to_the_daemon_ends_its_api_process_too(tmp_path: Path) -> None:
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        _state(url)
        [api] = _api_pids(daemon.pid)
        # The API process leaves the signals to the table's process (a Ctrl-C reaches both):
        # SIGTERM sent to it alone is ignored, and the same process answers.
        os.kill(api, signal.SIGTERM)
        _state(url)
        assert _api_pids(daemon.pid) == [api]
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
    assert not _alive(api)
    assert _deaths(journal_lines(tmp_path / "journal")) == []


def test_sigterm_while_the_api_process_is_being_replaced_stops_cleanly(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        _state(url)
        [api] = _api_pids(daemon.pid)
        os.kill(api, signal.SIGKILL)
        # At once: the daemon is noticing the death, or waiting to start the next one.
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
    assert not _alive(api)


DEEP: dict[str, object] = {}
_level = DEEP
for _ in range(7):
    _level["x"] = _level = {}
FORGED_FAULT = (
    "act",
    {"action": "fault_reported", "actor": "shuffler", "role": "device",
     "payload": {"device": "shuffler", "fault": "jam"}},
    "a person acts as dealer or supervisor",
)  # fmt: skip


DEALER = TOKENS["dealer"][1]
# A dealer's refused step as the API process journals it, with the token its caller presented.
FORBIDDEN = {
    "event": "api.forbidden",
    "payload": {"actor": "lei.dealer", "role": "dealer", "action": "void_round"},
    "token": DEALER,
}
FLOOD = 9_700  # forged api.forbidden lines one API process had journaled in 10 s
OPEN_TABLE = {"action": "open_table", "actor": "lei.dealer", "role": "dealer", "payload": {}}


@pytest.mark.parametrize(
    ("op", "args", "refused"),
    [
        ("shutdown", {}, "no such request"),
        ("journal_security", {"event": "round.voided", "payload": {}}, "the API's api.* events"),
        # The table's own record of an API process's death is not the API process's to write.
        ("journal_security", {"event": "api.process_died", "payload": {}}, "api.* events"),
        ("journal_security", {"event": "api.forbidden", "payload": []}, "payload is an object"),
        ("journal_security", {"event": "api.forbidden", "payload": DEEP}, "levels"),
        ("journal_security", {"event": "api.forbidden", "payload": {"x": "a" * 70000}}, "bytes"),
        # A fact that names a person is that person's token's: not a name of the API process's.
        ("journal_security", {**FORBIDDEN, "token": None}, "journal_security: no token"),
        (
            "journal_security",
            {
                **FORBIDDEN,
                "payload": {
                    **FORBIDDEN["payload"],
                    "actor": "wong.supervisor",
                    "role": "supervisor",
                },
            },
            "the token is lei.dealer's (dealer), not wong.supervisor's (supervisor)",
        ),
        ("journal_security", {**FORBIDDEN, "payload": {"action": "x"}}, "an actor and a role"),
        ("act", {"action": "cut", "actor": "x", "role": "dealer", "payload": [1]}, "an object"),
        ("act", {"action": 1, "actor": "x", "role": "dealer", "payload": {}}, "strings"),
        # A device's or the system's input, which no token can make: a fault, a card, the bell.
        FORGED_FAULT,
        ("act", {"action": "link_lost", "actor": "x", "role": "system", "payload": {}}, "person"),
        (
            "act",
            {"action": "open_table", "actor": "device:x", "role": "dealer", "payload": {}},
            "actor's name",
        ),
        # Who acts is whom the token names, in the table's own reading of the tokens file: not
        # the dealer's token as a supervisor, not one supervisor's token as a second one (the
        # two-person void and override, H5), not a token the file does not hold, not none.
        (
            "act",
            {**OPEN_TABLE, "actor": "wong.supervisor", "role": "supervisor", "token": DEALER},
            "act: the token is lei.dealer's (dealer), not wong.supervisor's (supervisor)",
        ),
        (
            "act",
            {
                **OPEN_TABLE,
                "action": "approve_override",
                "actor": "chan.second",
                "role": "supervisor",
                "token": TOKENS["supervisor"][1],
            },
            "the token is wong.supervisor's (supervisor), not chan.second's",
        ),
        ("act", {**OPEN_TABLE, "token": "made-up-" + "x" * 40}, "tokens file does not hold"),
        ("act", OPEN_TABLE, "act: no token"),
        # Hashed, a lone surrogate raised UnicodeEncodeError: neither refused nor journaled.
        ("act", {**OPEN_TABLE, "token": "\ud800" + "x" * 40}, "a token of other than"),
        ("act", {**OPEN_TABLE, "token": "t" * 513}, "a token of other than"),
        ("act", {**OPEN_TABLE, "token": DEALER, "request_id": "a b"}, "a request_id"),
        ("training", {"name": "describe", "args": [], "token": DEALER}, "a dealer: not for"),
        (
            "training",
            {"name": "control", "args": [{"op": "ring"}, "it.admin", "admin"], "token": DEALER},
            "the token is lei.dealer's",
        ),
        ("training", {"name": "__init__", "args": []}, "no control"),
        ("training", {"name": "control", "args": [1, 2, 3]}, "no control"),
        ("training", {"name": "control", "args": [{}, "D1", "dealer"]}, "no control"),
        ("metrics", [], "args are an object"),
    ],
)
def test_the_table_takes_from_its_api_process_only_the_requests_it_may_make(
    tmp_path: Path, op: str, args: object, refused: str
) -> None:
    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            before = table.journal.durable_seq if table.journal else 0
            phase = table.procedure.phase
            with pytest.raises(ValueError, match=re.escape(refused)):
                await api._call(op, args)
            assert table.procedure.phase == phase  # nothing of it reached the procedure
            await api._call("journal_security", FORBIDDEN)
            assert table.journal is not None
            by_api = [r for r in table.journal.replay(before + 1) if r.actor == "api"]
            # The refusal is on record (the table's process journals it, and replaces an API
            # process that asks what it may not), then the fact the API process may journal.
            assert [r.event for r in by_api] == ["api.channel_refused", "api.forbidden"]
            assert by_api[0].payload["op"] == op
            assert refused in by_api[0].payload["problem"]
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


async def _pair() -> tuple[asyncio.StreamReader, socket.socket]:
    """A stream reader on one end of a socket pair, and the other end."""
    ours, theirs = socket.socketpair()
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_accepted_socket(lambda: asyncio.StreamReaderProtocol(reader), sock=ours)
    return reader, theirs


@pytest.mark.parametrize(
    "body",
    # What the journal could not write, and numbers with a fraction or an exponent, which
    # nothing the API process sends has (the slowest JSON to parse).
    [b'{"x": NaN}', b'{"x": [Infinity]}', b'{"x": -1e999}', b'{"x": 1.5}', b'{"x": [1e3]}'],
)
def test_the_channel_refuses_json_the_journal_could_not_write(body: bytes) -> None:
    with pytest.raises(FrameRefused, match="not JSON"):
        json_body(body)


@pytest.mark.parametrize(
    ("sent", "problem"),
    [
        (b"\x00\x00\x00\x00", "a frame of 0 bytes"),
        ((MAX_FROM_API + 1).to_bytes(4, "big") + b"J", f"a frame of {MAX_FROM_API + 1} bytes"),
        (b"\x00\x00", "inside a frame's header"),
        (b"\x00\x00\x00\x09J{}", "inside a frame"),
    ],
)
def test_the_channel_refuses_a_broken_frame(sent: bytes, problem: str) -> None:
    async def main() -> None:
        reader, theirs = await _pair()
        theirs.sendall(sent)
        theirs.close()
        with pytest.raises(ChannelError, match=problem):
            await read_frame(reader, MAX_FROM_API)

    asyncio.run(main())


def test_the_channel_carries_frames_in_order_and_ends_cleanly() -> None:
    async def main() -> None:
        reader, theirs = await _pair()
        theirs.sendall(json_frame({"t": "call", "id": 1}) + frame(b"L", b"line\n"))
        theirs.close()
        assert await read_frame(reader, MAX_FROM_API) == (b"J", b'{"t":"call","id":1}')
        assert await read_frame(reader, MAX_FROM_API) == (b"L", b"line\n")
        assert await read_frame(reader, MAX_FROM_API) is None

    asyncio.run(main())


@pytest.mark.parametrize("body", [b"[1]", b"not json", b"[" * 100_000])
def test_a_request_that_is_not_a_json_object_is_refused(body: bytes) -> None:
    with pytest.raises(ChannelError):
        json_body(body)


def test_an_api_process_that_piles_up_requests_is_refused_on_record(tmp_path: Path) -> None:
    """Requests not yet answered hold the table's memory: past `MAX_IN_FLIGHT` the channel is
    broken, the refusal journaled, and the API process would be replaced."""

    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            before = table.journal.durable_seq if table.journal else 0
            reader, theirs = await _pair()
            calls = [
                json_frame({"t": "call", "id": n, "op": "metrics", "args": {}})
                for n in range(MAX_IN_FLIGHT + 1)
            ]
            theirs.sendall(b"".join(calls))
            theirs.close()
            with pytest.raises(ChannelError, match=f"more than {MAX_IN_FLIGHT} requests"):
                await api._serve(reader, None)  # type: ignore[arg-type]  # answers go nowhere
            assert table.journal is not None
            [refused] = [r for r in table.journal.replay(before + 1) if r.actor == "api"]
            assert refused.event == "api.channel_refused"
            assert refused.payload["problem"] == (
                f"more than {MAX_IN_FLIGHT} requests waiting for an answer"
            )
            for task in list(api._answering):
                await task
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_the_table_acts_as_the_person_the_token_names_once_per_request_id(tmp_path: Path) -> None:
    """The table's process takes an action as whom the token names, and answers a repeat of a
    request_id with the first answer instead of acting again (or says the id was used for
    another request)."""

    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            asked = {**OPEN_TABLE, "token": DEALER, "request_id": "r-1"}
            first = await api._call("act", asked)
            assert first["accepted"] is True
            again = await asyncio.gather(*(api._call("act", asked) for _ in range(3)))
            assert again == [{**first, "replayed": True}] * 3
            other = await api._call("act", {**asked, "payload": {"x": 1}})
            assert other == {"accepted": False, "request_id_reused": True, "action": "open_table"}
            # Without a request_id, the same request is a new one: the table refuses it.
            fresh = await api._call("act", {**asked, "request_id": None})
            assert fresh["accepted"] is False
            assert table.journal is not None
            events = [r.event for r in table.journal.replay(1)]
            assert events.count("table.opened") == 1, events
            assert events.count("table.violation") == 1
            assert "api.channel_refused" not in events
            # A person given a token since the table's process read the file acts at once (the
            # file is read again when a token is not found): no refusal, no process replaced.
            tokens = config.api.tokens_file
            assert tokens is not None
            with tokens.open("a", encoding="utf-8") as out:
                out.write("\n" + token_entry("ng.new", "supervisor", "new-" + "n" * 40))
            held = await api._call(
                "act",
                {**OPEN_TABLE, "action": "hold_table", "actor": "ng.new", "role": "supervisor",
                 "payload": {"reason": "a new supervisor"}, "token": "new-" + "n" * 40},
            )  # fmt: skip
            assert "violation" in held or held["accepted"] is True
            assert api._why is None
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_request_id_retried_after_the_api_process_restarts_acts_once(tmp_path: Path) -> None:
    """A console retries with the same request_id after its API process died: the new API
    process has no record of it, the table's process has, and answers with the first answer."""
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        body = {"payload": {}, "request_id": "console-42"}

        def post() -> dict[str, object]:
            answer = httpx.post(
                f"{url}/api/actions/open_table", json=body, headers=auth("dealer"), timeout=60
            )
            assert answer.status_code == 200, answer.text
            reply: dict[str, object] = answer.json()
            return reply

        first = post()
        [api] = _api_pids(daemon.pid)
        os.kill(api, signal.SIGKILL)
        again = post()  # waits in the socket's backlog for the next API process
        assert _api_pids(daemon.pid) != [api]
        assert again == {**first, "replayed": True}
    lines = journal_lines(tmp_path / "journal")
    events = [line["event"] for line in lines]
    assert "api.process_died" in events
    assert events.count("table.opened") == 1
    assert "table.violation" not in events


@pytest.mark.parametrize(
    ("sent", "problem"),
    [
        # Refused by its header: its body is never read, nor parsed.
        ((MAX_FROM_API + 1).to_bytes(4, "big") + b"J", f"a frame of {MAX_FROM_API + 1} bytes"),
        (frame(b"P", b"\x80\x05N."), "JSON only"),  # a pickle, which only the table sends
        (frame(b"J", b'{"t": "call", "id": 1, "op": "metrics", "args": {"x": 0.5}}'), "not JSON"),
        (frame(b"J", b'{"t": "pong", "pad": "' + b"x" * 1000 + b'"}'), "more than its word"),
    ],
)
def test_a_frame_the_api_process_may_not_send_is_refused_on_record(
    tmp_path: Path, sent: bytes, problem: str
) -> None:
    """Through the table's reading of the channel (`_serve`): the frame is refused, the
    refusal journaled, and the API process would be replaced."""

    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            before = table.journal.durable_seq if table.journal else 0
            reader, theirs = await _pair()
            theirs.sendall(json_frame({"t": "pong"}) + sent)
            theirs.close()
            with pytest.raises(ChannelError):
                await api._serve(reader, None)  # type: ignore[arg-type]  # answers go nowhere
            assert api._why == "refused_request"
            assert table.journal is not None
            [refused] = [r for r in table.journal.replay(before + 1) if r.actor == "api"]
            assert refused.event == "api.channel_refused"
            assert problem in refused.payload["problem"]
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_the_largest_action_a_person_may_send_fits_a_frame() -> None:
    """An action's body at its limit, of the characters that grow most when encoded again,
    still fits the channel's frame with its envelope (the bound is sized from it)."""
    # Written as the shortest body can write them (UTF-8, not \u escapes): the frame can only
    # be as long.
    unit = '\U0001f600\u00e9\u0000"/\\'  # an emoji, an accent, a control character, escapes

    def raw(note: str) -> bytes:
        return json.dumps({"payload": {"note": note}, "reason": "r"}, ensure_ascii=False).encode()

    note = unit * 4000
    while len(raw(note)) > MAX_ACT_BODY:
        note = note[: -len(unit)]
    assert len(raw(note)) > MAX_ACT_BODY - 100
    body = json.loads(raw(note))
    request = {
        "t": "call",
        "id": 2**31,
        "op": "act",
        "args": {
            "action": "a" * 64,
            "actor": "b" * 64,
            "role": "supervisor",
            "payload": {**body["payload"], "reason": body["reason"]},
            "token": "t" * 512,
            "request_id": "r" * 64,
        },
    }
    assert len(json_frame(request)) <= MAX_FROM_API
    assert json_body(json_frame(request)[5:]) == request


def test_refusals_at_the_doors_reach_the_journal_though_the_api_process_is_killed(
    tmp_path: Path,
) -> None:
    """The API process sends each refusal to the table's process as it happens: one stopped,
    then killed when the daemon stops, takes none of them with it; its killing is on record."""
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        for _ in range(3):
            guess = httpx.get(
                f"{url}/api/state", headers={"Authorization": "Bearer a-guess"}, timeout=60
            )
            assert guess.status_code == 401
        [api] = _api_pids(daemon.pid)
        os.kill(api, signal.SIGSTOP)  # hung: it will say nothing more, and is killed at stop
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
    assert not _alive(api)
    lines = journal_lines(tmp_path / "journal")
    refused = [line["payload"] for line in lines if line["event"] == "api.auth_refused"]
    assert sum(int(summary["refused"]) for summary in refused) == 3, refused
    assert all(summary["by_reason"] == {"bad_token": summary["refused"]} for summary in refused)
    [died] = [line for line in lines if line["event"] == "api.process_died"]
    assert died["payload"]["reason"] == "stop_timeout"


def test_a_body_not_in_utf8_is_refused_and_the_api_process_serves_on(tmp_path: Path) -> None:
    """`json.loads` reads UTF-16 and UTF-32 bytes too; the frame to the table is UTF-8, half as
    long again for Chinese: a body under its bound made a frame over the channel's, and the
    table's process replaced its API process (every console lost it). Bodies are UTF-8 only."""
    config = _config(tmp_path)
    name = "\u4e2d" * 8100  # 中
    text = json.dumps(
        {"payload": {"player": name, "seat": 0, "units": 1, "seated": True}}, ensure_ascii=False
    )
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, daemon):
        _state(url)  # its API process serves
        [api] = _api_pids(daemon.pid)
        for encoding in ("utf-16-le", "utf-16", "utf-32"):
            body = text.encode(encoding)
            if encoding == "utf-16-le":
                assert len(body) <= MAX_ACT_BODY < len(text.encode()) + 100
            answer = httpx.post(
                f"{url}/api/actions/place_bet",
                content=body,
                headers={**auth("dealer"), "content-type": "application/json"},
                timeout=60,
            )
            if len(body) > MAX_ACT_BODY:
                assert answer.status_code == 413, answer.text
                continue
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"] == "malformed_json"
            if encoding == "utf-16":  # its byte-order mark is no UTF-8 (without, NULs are)
                assert "not UTF-8" in answer.json()["message"]
        assert _state(url)["role"] == "surveillance"
        assert _api_pids(daemon.pid) == [api]
    events = [line["event"] for line in journal_lines(tmp_path / "journal")]
    assert "api.channel_refused" not in events
    assert "api.process_died" not in events


def test_a_request_over_the_channels_bound_is_refused_in_the_api_process_unsent() -> None:
    """What the table's process would refuse by its frame's header (and replace the API
    process for) is refused before it is sent: 413, nothing written to the channel."""

    async def main() -> None:
        ours, theirs = socket.socketpair()
        _reader, writer = await asyncio.open_connection(sock=ours)
        init = {
            "config": None,
            "actions": [],
            "published": None,
            "wall_offset": 0.0,
            "journal_dir": None,
            "durable_seq": 0,
        }
        table = RemoteTable(init, writer)
        args = {**OPEN_TABLE, "payload": {"note": "x" * MAX_FROM_API}, "token": DEALER}
        with pytest.raises(ApiError) as refused:
            await asyncio.wait_for(table.act_as(**args, request_id=None), 10)
        assert refused.value.status == 413
        assert refused.value.error == "body_too_large"
        await writer.drain()
        theirs.setblocking(False)
        with pytest.raises(BlockingIOError):
            theirs.recv(1)  # nothing was sent
        writer.close()
        theirs.close()

    asyncio.run(main())


def test_one_persons_request_ids_do_not_push_out_anothers_answer() -> None:
    """The answers are kept per person: another person's many request_ids (one token is
    enough) do not make a supervisor's retry act again."""

    async def main() -> None:
        answered = Answered()
        acted: list[str] = []

        async def act(who: str) -> dict[str, Any]:
            acted.append(who)
            return {"accepted": True}

        asked = ("approve_override", {"reason": "a dispute"})
        first = await answered.once("wong.supervisor", "void-1", *asked, lambda: act("wong"))
        for n in range(4 * PER_PERSON):
            await answered.once("lei.dealer", f"r{n}", "hold_table", {}, lambda: act("lei"))
        again = await answered.once("wong.supervisor", "void-1", *asked, lambda: act("wong"))
        assert again == {**first, "replayed": True}
        assert acted.count("wong") == 1
        assert len(answered) == PER_PERSON + 1  # the dealer's last ones, and the supervisor's

    asyncio.run(main())


def test_a_retry_while_the_first_is_being_taken_is_told_so_after_a_while() -> None:
    """A retry waits for the first asking's answer a bounded time, then is answered that it is
    in progress (409 `in_progress` at the API); once answered, a retry gets the answer."""

    async def main() -> None:
        answered = Answered(wait=0.05)
        taken = asyncio.Event()

        async def slow() -> dict[str, Any]:
            await taken.wait()
            return {"accepted": True, "seq": 7}

        first = asyncio.ensure_future(answered.once("lei.dealer", "r-1", "open_table", {}, slow))
        await asyncio.sleep(0)
        retry = await answered.once("lei.dealer", "r-1", "open_table", {}, slow)
        assert retry == {"accepted": False, "in_progress": True, "action": "open_table"}
        taken.set()
        assert await first == {"accepted": True, "seq": 7}
        again = await answered.once("lei.dealer", "r-1", "open_table", {}, slow)
        assert again == {"accepted": True, "seq": 7, "replayed": True}

    asyncio.run(main())


def test_a_dead_api_processs_requests_still_waiting_do_not_count_against_the_next(
    tmp_path: Path,
) -> None:
    """`MAX_IN_FLIGHT` is counted per API process: one that died with requests still being
    taken (retries waiting for a first asking) leaves the next one its whole allowance."""

    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            taken = asyncio.Event()

            async def slow() -> dict[str, Any]:  # the first asking, still being taken
                await taken.wait()
                return {"accepted": True}

            asking = {**OPEN_TABLE, "token": DEALER, "request_id": "r-1"}
            first = asyncio.ensure_future(
                api._answered.once("lei.dealer", "r-1", "open_table", {}, slow)
            )
            reader, theirs = await _pair()
            retries = [
                json_frame({"t": "call", "id": n, "op": "act", "args": asking})
                for n in range(MAX_IN_FLIGHT)
            ]
            theirs.sendall(b"".join(retries))
            theirs.close()  # the first API process ends, its retries waiting
            await api._serve(reader, None)  # type: ignore[arg-type]  # answers go nowhere
            assert len(api._answering) == MAX_IN_FLIGHT
            reader, theirs = await _pair()  # the next API process
            theirs.sendall(json_frame({"t": "call", "id": 1, "op": "metrics", "args": {}}))
            theirs.close()
            await api._serve(reader, None)  # type: ignore[arg-type]
            assert api._why is None  # not refused
            taken.set()
            await first
            for task in list(api._answering):
                await task
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_the_table_counts_a_persons_refused_actions_itself(tmp_path: Path) -> None:
    """Act frames with a valid dealer's token, straight on the channel (a taken-over API process
    skips its own budget): past the refusal budget the table's process takes no more of that
    person's actions, so no more violations are journaled; the excess is in the summary."""

    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            before = table.journal.durable_seq if table.journal else 0
            held = {**OPEN_TABLE, "action": "hold_table", "payload": {"reason": "r" * 50}}
            answers = [
                await api._call("act", {**held, "token": DEALER})
                for _ in range(api.budget.limit + 20)
            ]
            assert table.journal is not None
            violations = [
                r for r in table.journal.replay(before + 1) if r.event == "table.violation"
            ]
            assert len(violations) == api.budget.limit
            assert [a.get("refusal_budget") for a in answers[api.budget.limit :]] == [True] * 20
            assert api._why is None  # a person's refusals, not a request the process may not make
            await api.refusals.close()
            summaries = [
                r.payload
                for r in table.journal.replay(before + 1)
                if r.event == "api.input_refused"
            ]
            assert "refusal_budget" in json.dumps(summaries, default=dict)
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_flood_of_forged_security_facts_costs_the_journal_its_budget_and_a_summary(
    tmp_path: Path,
) -> None:
    """A taken-over API process asks, on the real channel, as fast as the table answers, for
    9,700 `api.forbidden` lines (one wrote that many in 10 s before the budget, naming a
    supervisor; now it can name only the person whose token it holds, here the dealer's): the
    table's process journals `FACTS_PER_WINDOW` of them and counts the rest into one summary a
    minute (`api.facts_over_budget`), with the count and the actor they named."""

    async def main() -> None:
        config = load_config(_config(tmp_path))
        table = Table(config, journal_dir=tmp_path / "journal", driver_clock=MonotonicClock())
        await table.start()
        try:
            api = ApiProcess.build(served(table), config, "127.0.0.1:0")  # built, not started
            before = table.journal.durable_seq if table.journal else 0
            ours, theirs = socket.socketpair()
            reader, writer = await asyncio.open_unix_connection(sock=ours)
            api._writer = writer  # the answers go back on the channel, as to an API process
            serving = asyncio.ensure_future(api._serve(reader, writer))
            forger_reader, forger = await asyncio.open_unix_connection(sock=theirs)
            started, sent, batch = time.monotonic(), 0, MAX_IN_FLIGHT // 2
            while sent < FLOOD:
                for n in range(sent, min(sent + batch, FLOOD)):
                    args = FORBIDDEN
                    forger.write(
                        json_frame({"t": "call", "id": n, "op": "journal_security", "args": args})
                    )
                for _ in range(sent, min(sent + batch, FLOOD)):
                    got = await read_frame(forger_reader, MAX_TO_API)
                    assert got is not None and got[0] == b"P"
                sent += batch
            elapsed = time.monotonic() - started
            await api.refusals.close()  # as at the daemon's stop: what is counted, on record
            forger.close()
            await serving
            assert api._why is None  # well-formed requests: the API process is not replaced
            assert table.journal is not None
            by_api = [r for r in table.journal.replay(before + 1) if r.actor == "api"]
            windows = int(elapsed // BUDGET_WINDOW) + 1
            forged = [r for r in by_api if r.event == "api.forbidden"]
            summaries = [r for r in by_api if r.event == FACTS_OVER_BUDGET]
            assert len(forged) <= FACTS_PER_WINDOW * windows
            # The first past the budget at once, then one a minute, and the rest at the stop.
            assert 1 <= len(summaries) <= windows + 1, summaries
            assert len(forged) + len(summaries) == len(by_api)
            assert len(forged) + sum(s.payload["refused"] for s in summaries) == FLOOD
            assert summaries[-1].payload["clients"] == {"lei.dealer": mock.ANY}
            assert set(summaries[0].payload["by_reason"]) == {"api.forbidden"}
            assert summaries[0].payload["actions"] == {"void_round": mock.ANY}
            api.server.listening().close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_role_refused_is_journaled_as_the_person_whose_token_asked(tmp_path: Path) -> None:
    """On `tabled run`: the dealer asks for a supervisor's step; the API process sends the
    `api.forbidden` fact with the token the dealer presented, and the table's process journals
    it once the token names that dealer (nothing refused, no API process replaced)."""
    config = _config(tmp_path)
    with serving("--config", str(config), "--http", "127.0.0.1:0", cwd=tmp_path) as (url, _):
        answer = httpx.post(
            f"{url}/api/actions/hold_table",
            json={"payload": {}, "reason": "the dealer tries"},
            headers=auth("dealer"),
            timeout=60,
        )
        assert answer.status_code == 403, answer.text
    lines = journal_lines(tmp_path / "journal")
    [forbidden] = [line for line in lines if line["event"] == "api.forbidden"]
    assert forbidden["payload"] == {"actor": "lei.dealer", "role": "dealer", "action": "hold_table"}
    assert "token" not in json.dumps(forbidden)
    assert "api.channel_refused" not in {line["event"] for line in lines}
    assert _deaths(lines) == []
