"""The API cannot slow the table (issue 10 item 2), as behaviours: a console that stops reading
is dropped with its close code while the others keep receiving in order, with the memory held
for it bounded; the state is made once per publication however many read it; actions through
the API's own thread are still taken one at a time, in order, with the procedure's answer; and
the daemon still stops cleanly on SIGTERM with consoles connected. Speed is bench_api_load's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import websockets
from api_support import TOKENS, auth, write_tokens
from fake_table import FakeTable
from in_process import InProcess
from websockets.asyncio.client import connect

from daemon.api.app import create_app
from daemon.api.context import AppContext
from daemon.api.fanout import CLOSE_TOO_SLOW, PushHub
from daemon.api.server import ApiServer
from daemon.autoplay import SimulationClock
from daemon.config import ApiConfig, JournalConfig, TableConfig, load_config
from daemon.contract.journal_feed import JournalSubscription
from daemon.journal import Journal
from daemon.procedures.visibility import audience
from daemon.table import Table
from drivers.clock import MonotonicClock

ROOT = Path(__file__).resolve().parents[2]
FILLER = "x" * 4000  # a big event fills the sockets' buffers in few events
LIMIT = 32


def _hello(role: str, after: int | None = None) -> str:
    return json.dumps({"token": TOKENS[role][1], "after": after})


async def _raw_console(port: int) -> socket.socket:
    """A console that sends its hello and then never reads (a small receive buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(
        sock,
        (
            f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode(),
    )
    answer = b""
    while b"\r\n\r\n" not in answer:  # the handshake's answer, before any frame
        answer += await loop.sock_recv(sock, 1)
    hello = _hello("surveillance").encode()
    await loop.sock_sendall(sock, bytes([0x81, 0x80 | len(hello)]) + b"\0\0\0\0" + hello)
    return sock


async def _read_to_close(sock: socket.socket) -> bytes:
    loop = asyncio.get_running_loop()
    data = b""
    while chunk := await loop.sock_recv(sock, 1 << 20):
        data += chunk
    sock.close()
    return data


def _close_code(data: bytes) -> int | None:
    """The code of the close frame among the server's frames."""
    at = 0
    while at + 2 <= len(data):
        opcode, size = data[at] & 0x0F, data[at + 1] & 0x7F
        at += 2
        if size == 126:
            size, at = int.from_bytes(data[at : at + 2], "big"), at + 2
        elif size == 127:
            size, at = int.from_bytes(data[at : at + 8], "big"), at + 8
        if opcode == 8:
            return int.from_bytes(data[at : at + 2], "big")
        at += size
    return None


def test_a_console_that_stops_reading_is_dropped_and_the_others_keep_up(
    tokens_file: Path,
) -> None:
    table = FakeTable()
    app = create_app(table, ApiConfig(tokens_file=tokens_file))
    context: AppContext = app.state.context
    hub = context.hub = PushHub(table, limit=LIMIT, on_flush=context.states.refresh)
    server = ApiServer(app, "127.0.0.1:0")
    _host, port = server.bind()

    async def run() -> tuple[list[int], bytes, int]:
        serving = asyncio.ensure_future(server.serve())
        received: list[int] = []
        caught_up = asyncio.Condition()
        pending_seen = 0

        async def good_console() -> None:
            async with connect(f"ws://127.0.0.1:{port}/api/events", max_size=None) as ws:
                await ws.send(_hello("supervisor"))
                async for raw in ws:
                    message = json.loads(raw)
                    if message["type"] == "event":
                        received.append(message["event"]["seq"])
                        async with caught_up:
                            caught_up.notify_all()

        good = asyncio.ensure_future(good_console())
        slow = await _raw_console(port)
        while len(hub.clients) < 2:  # both consoles said hello
            await asyncio.sleep(0)
        for _ in range(2000):
            if hub.dropped_total:
                break
            for _ in range(8):
                table._append("test.filler", "system", {"filler": FILLER})
            last = table.journal[-1]["seq"]
            async with caught_up:
                await asyncio.wait_for(
                    caught_up.wait_for(lambda last=last: received[-1:] == [last]), 30
                )
            # What is held for any console never exceeds its limit.
            pending_seen = max([pending_seen, *(c.pending for c in hub.clients)])
        assert hub.dropped_total == 1, "the console that never reads was not dropped"
        data = await asyncio.wait_for(_read_to_close(slow), 30)
        # The good console goes on after the drop.
        for _ in range(5):
            table._append("test.after_the_drop", "system", {})
        last = table.journal[-1]["seq"]
        async with caught_up:
            await asyncio.wait_for(
                caught_up.wait_for(lambda last=last: received[-1:] == [last]), 30
            )
        server.stop()
        await serving
        good.cancel()
        with contextlib.suppress(asyncio.CancelledError, websockets.ConnectionClosed):
            await good
        return received, data, pending_seen

    received, data, pending_seen = asyncio.run(run())
    assert _close_code(data) == CLOSE_TOO_SLOW
    # Every event, once, in order, to the console that kept reading.
    assert received == list(range(received[0], received[-1] + 1))
    assert received[-1] == len(received) + received[0] - 1
    assert pending_seen <= LIMIT


def test_a_dropped_console_reconnects_with_after_and_misses_nothing(
    tokens_file: Path,
) -> None:
    table = FakeTable()
    app = create_app(table, ApiConfig(tokens_file=tokens_file))
    server = ApiServer(app, "127.0.0.1:0")
    _host, port = server.bind()

    async def run() -> list[int]:
        serving = asyncio.ensure_future(server.serve())
        for _ in range(20):
            table._append("test.before", "system", {})
        seen: list[int] = []
        async with connect(f"ws://127.0.0.1:{port}/api/events") as ws:
            await ws.send(_hello("surveillance", after=7))
            while len(seen) < 13:
                message = json.loads(await ws.recv())
                if message["type"] == "event":
                    seen.append(message["event"]["seq"])
            table._append("test.live", "system", {})
            while len(seen) < 14:
                message = json.loads(await ws.recv())
                if message["type"] == "event":
                    seen.append(message["event"]["seq"])
        server.stop()
        await serving
        return seen

    assert asyncio.run(run()) == list(range(8, 22))


def _config(tokens_file: Path) -> TableConfig:
    config = load_config(None)
    return replace(config, api=replace(config.api, tokens_file=tokens_file))


async def _started_table(journal: Path) -> Table:
    table = Table(
        load_config(None),
        journal_dir=journal,
        clock=SimulationClock(),
        driver_clock=MonotonicClock(),
    )
    await table.start()
    assert await table.wait_for(lambda: "open_table" in table.facade.legal_actions("dealer"), 30)
    return table


def test_the_state_is_made_once_per_change_however_many_read_it(
    tmp_path: Path, tokens_file: Path
) -> None:
    async def run() -> dict[str, Any]:
        table = await _started_table(tmp_path / "j")
        api = InProcess.build(table, _config(tokens_file), "127.0.0.1:0")
        url = api.url()
        api.start()
        cache = api.context.states
        try:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                before = api.publisher.latest
                made = cache.made
                reads = [
                    (await client.get("/api/state", headers=auth(role))).json()
                    for role in ("dealer", "supervisor", "surveillance", "admin") * 10
                ]
                consoles = []
                for role in ("dealer", "surveillance") * 3:
                    async with connect(url.replace("http", "ws") + "/api/events") as ws:
                        await ws.send(_hello(role))
                        await ws.recv()  # hello
                        consoles.append(json.loads(await ws.recv()))
                still = api.publisher.latest
                made_for_reads = cache.made - made
                opened = await client.post(
                    "/api/actions/open_table", headers=auth("dealer"), json={}
                )
                after = (await client.get("/api/state", headers=auth("dealer"))).json()
        finally:
            await api.stop()
            await table.stop()
        return {
            "publications": still.version - before.version,
            "made": made_for_reads,
            "phases": {r["state"]["phase"] for r in reads}
            | {c["state"]["phase"] for c in consoles},
            "legal": {r["role"]: r["legal"] for r in reads},
            "opened": opened.json(),
            "after": after,
            "seq": still.seq,
        }

    seen = asyncio.run(run())
    # 40 reads and 6 consoles: one state text per publication and audience (the table
    # republishes a quiet table at most once a second, when its devices' link counters moved),
    # not one per reader. Two audiences read here: the table's (dealer) and review's.
    audiences = len({audience(r) for r in ("dealer", "supervisor", "surveillance", "admin")})
    assert audiences == 2
    assert seen["made"] <= audiences * (seen["publications"] + 1)
    assert seen["publications"] <= 10
    assert seen["phases"] == {"EQUIPMENT_CHECK"}
    assert "open_table" in seen["legal"]["dealer"]
    assert seen["legal"]["surveillance"] == []
    # An action is answered once its state is published: the caller reads its own write.
    assert seen["opened"]["accepted"] is True
    assert seen["after"]["state"]["phase"] == seen["opened"]["phase"]


def test_actions_through_the_api_are_taken_in_order(tmp_path: Path, tokens_file: Path) -> None:
    async def run() -> tuple[list[httpx.Response], list[dict[str, Any]]]:
        table = await _started_table(tmp_path / "j")
        api = InProcess.build(table, _config(tokens_file), "127.0.0.1:0")
        url = api.url()
        api.start()
        try:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                answers = await asyncio.gather(
                    *(
                        client.post("/api/actions/open_table", headers=auth("dealer"), json={})
                        for _ in range(12)
                    )
                )
            assert table.journal is not None
            lines = [
                {"seq": r.seq, "event": r.event, "payload": dict(r.payload)}
                for r in table.journal.replay(1)
            ]
        finally:
            await api.stop()
            await table.stop()
        return list(answers), lines

    answers, lines = asyncio.run(run())
    accepted = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code == 409]
    # One table, one procedure: the first open_table is taken, the eleven after it are refused
    # (journaled violations), each answered with its own seq.
    assert len(accepted) == 1 and len(refused) == 11, [a.text for a in answers]
    seqs = [
        a.json()["seq"] if a.status_code == 200 else a.json()["violation"]["seq"] for a in answers
    ]
    assert len(set(seqs)) == 12
    assert min(seqs) == accepted[0].json()["seq"]
    by_seq = {line["seq"]: line for line in lines}
    for answer in refused:
        assert by_seq[answer.json()["violation"]["seq"]]["event"] == "table.violation"


def test_sigterm_stops_the_daemon_with_consoles_connected(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "tokens.toml")
    text = (ROOT / "config" / "table.toml").read_text(encoding="utf-8")
    config = tmp_path / "t.toml"
    config.write_text(text.replace('tokens_file = "var/tokens.toml"', f'tokens_file = "{tokens}"'))
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "run", "--config", str(config), "--journal",
         str(tmp_path / "j"), "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )  # fmt: skip

    async def watch(url: str) -> list[int | None]:
        codes: list[int | None] = []

        async def console(role: str) -> None:
            async with connect(url.replace("http", "ws") + "/api/events") as ws:
                await ws.send(_hello(role))
                await ws.recv()
                await ws.recv()
                connected.release()
                with contextlib.suppress(websockets.ConnectionClosed):
                    async for _ in ws:
                        pass
                codes.append(ws.close_code)

        connected = asyncio.Semaphore(0)
        watching = [asyncio.ensure_future(console(r)) for r in ("dealer", "surveillance") * 2]
        for _ in watching:
            await connected.acquire()
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(asyncio.gather(*watching), 30)
        return codes

    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["http"]
        codes = asyncio.run(watch(url))
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert len(codes) == 4
    journal = b"".join(p.read_bytes() for p in sorted((tmp_path / "j").glob("journal-*.jsonl")))
    assert json.loads(journal.splitlines()[-1])["event"] == "table.stopped"


def test_the_hubs_feed_catches_up_after_falling_behind_the_journal(tmp_path: Path) -> None:
    # The journal never waits for a reader: one that falls behind is dropped by it. The push
    # hub's feed then subscribes again and reads what it missed from the files, in order.
    journal = Journal.open(JournalConfig(dir=tmp_path, durability="none"), "T01")

    async def run() -> list[int]:
        feed = JournalSubscription(journal, None, maxsize=4)
        events = aiter(feed)
        journal.append("test.first", actor="system", round_id=None, payload={}, commit=True)
        seen = [(await anext(events))["seq"]]
        for n in range(20):  # five times what the subscription holds, unread
            journal.append(
                "test.more", actor="system", round_id=None, payload={"n": n}, commit=True
            )
        while len(seen) < 21:
            seen.append((await anext(events))["seq"])
        await feed.aclose()
        return seen

    try:
        seen = asyncio.run(run())
    finally:
        journal.close()
    assert seen == list(range(seen[0], seen[0] + 21))


def test_the_push_feed_is_not_compressed_per_console(tokens_file: Path) -> None:
    """A console offering per-message compression (browsers do, and so does this client) is
    answered without it: each console's copy of a shared message would be compressed for it
    alone."""
    app = create_app(FakeTable(), ApiConfig(tokens_file=tokens_file))
    server = ApiServer(app, "127.0.0.1:0")
    _host, port = server.bind()

    async def run() -> tuple[str | None, str | None, dict[str, Any]]:
        serving = asyncio.ensure_future(server.serve())
        try:
            async with connect(f"ws://127.0.0.1:{port}/api/events", compression="deflate") as ws:
                offered = ws.request.headers.get("Sec-WebSocket-Extensions") if ws.request else None
                agreed = (
                    ws.response.headers.get("Sec-WebSocket-Extensions") if ws.response else None
                )
                await ws.send(_hello("dealer"))
                hello = json.loads(await ws.recv())
        finally:
            server.stop()
            await serving
        return offered, agreed, hello

    offered, agreed, hello = asyncio.run(run())
    assert offered is not None and "permessage-deflate" in offered
    assert agreed is None
    assert hello["type"] == "hello"
