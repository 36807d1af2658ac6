"""The push feed's live events are redacted once per event and audience, by the hub
(daemon.api.fanout), and what each console is sent is what its role may see then: consoles of
both audiences, one message an event or batched, watch a real Thirteen round live (every device
simulated, `serve_table.py`) and what reached each of them is searched, phase by phase, for
every card still face down (the journal on disk holds them). test_visibility_api.py reads the
same round through `/api/state`, `/api/journal` and a console's catch-up."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import TOKENS, auth, write_tokens
from fake_table import FakeTable
from server_process import table_server
from test_visibility import shown
from test_visibility_api import Served, seats_on_disk
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from daemon.api.app import create_app
from daemon.api.context import AppContext
from daemon.api.server import ApiServer
from daemon.config import ApiConfig
from daemon.procedures import visibility

# (role, batch): two audiences (table: dealer; review: supervisor, surveillance), both forms.
CONSOLES = (
    ("dealer", False),
    ("dealer", True),
    ("supervisor", False),
    ("surveillance", True),
)


class Console:
    """A console connected before the round, reading on a thread of its own."""

    def __init__(self, url: str, role: str, batch: bool) -> None:
        self.role, self.batch = role, batch
        self.messages: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.last = 0
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.ws: ClientConnection | None = None
        self.thread = threading.Thread(target=self._read, args=(url,), daemon=True)
        self.thread.start()
        assert self.ready.wait(30) and self.ws is not None, f"{role}'s console did not connect"

    def _read(self, url: str) -> None:
        with connect(url.replace("http://", "ws://") + "/api/events") as ws:
            ws.send(json.dumps({"token": TOKENS[self.role][1], "after": None, "batch": self.batch}))
            assert json.loads(ws.recv(timeout=30))["type"] == "hello"
            self.ws = ws
            self.ready.set()
            with contextlib.suppress(ConnectionClosed):
                for raw in ws:
                    assert isinstance(raw, str)
                    message = json.loads(raw)
                    events = {"event": [message.get("event")], "events": message.get("events")}
                    got = events.get(message["type"]) or []
                    # One form only: a console that asked for batches is sent no single event.
                    assert message["type"] != ("event" if self.batch else "events"), message
                    with self.lock:
                        self.messages.append(raw)
                        self.events.extend(got)
                        if got:
                            self.last = got[-1]["seq"]

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        self.thread.join(10)

    def since(self, mark: int) -> str:
        with self.lock:
            return "\n".join(self.messages[mark:])

    def mark(self) -> int:
        with self.lock:
            return len(self.messages)


ROWS = ((0, 3), (3, 8), (8, 13))


def _records(journal: Path) -> dict[int, dict[str, Any]]:
    """The journal on disk by seq."""
    return {
        record["seq"]: record
        for path in sorted(journal.glob("journal-*.jsonl"))
        for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    }


def _last_seq(url: str) -> int:
    journal = httpx.get(url + "/api/journal", params={"limit": 1000}, headers=auth("admin"))
    seq: int = journal.json()["events"][-1]["seq"]
    return seq


def _caught_up(consoles: list[Console], url: str) -> None:
    """Wait until every console has been sent every event journaled so far."""
    target = _last_seq(url)
    deadline = time.monotonic() + 30
    while any(c.last < target for c in consoles):
        assert time.monotonic() < deadline, [(c.role, c.last, target) for c in consoles]
        threading.Event().wait(0.05)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Served, list[Console]]]:
    with table_server(write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal") as url:
        consoles = [Console(url, role, batch) for role, batch in CONSOLES]
        try:
            yield Served(url, tmp_path / "journal"), consoles
        finally:
            for console in consoles:
                console.close()


@pytest.mark.article("51/89/M", "2(b)")
@pytest.mark.article("51/89/M", "2(d)")
def test_live_consoles_are_sent_only_what_their_audience_may_see(
    live: tuple[Served, list[Console]],
) -> None:
    t, consoles = live
    marks = {id(c): 0 for c in consoles}

    def check(hidden: set[str], opened: set[str], *, review_closed: bool = False) -> None:
        """What each console was sent since the last check: no card in `hidden`, and every
        card in `opened` that the events named (the check can fail both ways)."""
        _caught_up(consoles, t.url)
        for console in consoles:
            text = console.since(marks[id(console)])
            marks[id(console)] = console.mark()
            if review_closed and console.role != "dealer":
                continue
            assert shown(text, hidden) == set(), (console.role, console.batch)
            assert shown(text, opened) == opened, (console.role, console.batch)

    t.deal_thirteen(seats=(1, 2), face_up_at=4)
    hands = seats_on_disk(t.journal, range(4))
    every = set().union(*hands.values())
    assert len(every) == 52
    face_up = next(
        r["payload"]["card"] for r in _records(t.journal).values() if r["payload"].get("face_up")
    )

    def rows(seat: int) -> dict[str, list[str]]:
        """`seat`'s cards in the rows the hand is arranged in (3, 5, 5)."""
        return dict(
            zip(("head", "middle", "tail"), (hands[seat][a:b] for a, b in ROWS), strict=True)
        )

    # Dealt face down, live: every console (both audiences: the round is in play) is sent
    # the card that came out face up, and no other.
    check(every - {face_up}, {face_up})
    t.act("arrange_banker")  # face down: no card named
    check(every - {face_up}, set())
    t.act("open_banker")  # the banker's hand is opened: sent to everyone from here on
    check(every - set(hands[0]) - {face_up}, set(hands[0]))
    t.act("enter_arrangement", seat=0, **rows(0))
    t.act("player_arranged", seat=1)
    check(every - set(hands[0]) - {face_up}, set(hands[0]))
    httpx.post(t.url + "/_sim/jump", params={"seconds": 301})  # seat 2 late at the bell
    t.phase("SETTLING")
    t.act("open_hand", seat=1)  # Art. 8: seat 1's hand is opened against the banker's
    check(every - set(hands[0]) - set(hands[1]) - {face_up}, set(hands[1]))
    t.act("enter_arrangement", seat=1, **rows(1))
    t.act("settle_round")
    # Closed: the late seat and the seat nobody bet on stay face down for the table's
    # audience; review's may see the round whole.
    check(set(hands[2] + hands[3]) - {face_up}, set(), review_closed=True)

    # The two forms of one audience were sent the same events, in the same order.
    by_form = {(c.role, c.batch): c.events for c in consoles}
    assert by_form[("dealer", False)] == by_form[("dealer", True)]
    seqs = [e["seq"] for e in by_form[("dealer", True)]]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    assert by_form[("supervisor", False)] == by_form[("surveillance", True)]
    # And what a console of each audience would have made of the records itself, learning
    # what the game opened from each record in turn (daemon.procedures.visibility.Seen).
    records = _records(t.journal)
    for role in ("dealer", "supervisor"):
        seen = visibility.Seen(game="thirteen")
        expected = [seen.redact(records[seq], role) for seq in seqs]
        # (A line on disk carries no hash of its own: the next line's `prev` is it.)
        sent = [{k: v for k, v in e.items() if k != "hash"} for e in by_form[(role, False)]]
        assert sent == expected, role


def test_each_event_is_redacted_once_per_audience_however_many_consoles(
    tokens_file: Path,
) -> None:
    """Six consoles of two audiences: each event is encoded once and redacted once for each
    audience, not once per console."""
    table = FakeTable()
    app = create_app(table, ApiConfig(tokens_file=tokens_file))
    context: AppContext = app.state.context
    server = ApiServer(app, "127.0.0.1:0")
    _host, port = server.bind()
    url = f"http://127.0.0.1:{port}"
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        consoles = [
            Console(url, role, batch)
            for role in ("dealer", "surveillance", "supervisor")
            for batch in (False, True)
        ]
        hub = context.push_hub()
        deadline = time.monotonic() + 30
        while len(hub.clients) < len(consoles):
            assert time.monotonic() < deadline
            threading.Event().wait(0.01)
        before = hub.encoded_total, hub.redacted_total
        for step in ("open_round", "shake_dice", "deal"):
            r = httpx.post(f"{url}/api/actions/{step}", headers=auth("dealer"))
            assert r.status_code == 200
        _caught_up(consoles, url)
        encoded, redacted = hub.encoded_total - before[0], hub.redacted_total - before[1]
        for console in consoles:
            console.close()
    finally:
        server.stop()
        thread.join(30)
    assert encoded == 3
    assert redacted == 2 * encoded
    assert all(len(c.events) == 3 for c in consoles)
