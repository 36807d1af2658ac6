"""A journal line's digests (`hash`, and the next line's `prev`) are SHA-256 of every byte of
the line, cards included: a reader shown the rest of the line finds a face-down card by trying
the 52. `tabled run --http` (the API in its own process) plays Thirteen rounds; a dealer and a
supervisor read them through the push feed (a catch-up from the journal's files, then the
hub's live events) and `/api/journal`; the brute force is then run over everything they were
served, against the lines on disk (daemon/procedures/visibility.py, `without_digests`)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from api_support import TOKENS, auth
from test_api_process import _config
from websockets.sync.client import connect

from tests.daemon.cli_support import serving

CARDS = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
HEX = re.compile(r"\b[0-9a-f]{64}\b")


def _settled(url: str) -> int:
    journal = httpx.get(
        url + "/api/journal",
        params={"event": "round.settled", "limit": 1000},
        headers=auth("admin"),
        timeout=60,
    )
    assert journal.status_code == 200, journal.text
    return len(journal.json()["events"])


def _read(url: str, role: str, rounds: int) -> list[str]:
    """Every message of the push feed `role` is sent from seq 0 until `rounds` rounds more are
    settled: the journal's files first (the catch-up), then the hub's live events."""
    messages: list[str] = []
    settled = 0
    with connect(url.replace("http://", "ws://") + "/api/events", open_timeout=60) as ws:
        ws.send(json.dumps({"token": TOKENS[role][1], "after": 0, "batch": True}))
        while settled < rounds:
            raw = ws.recv(timeout=60)
            assert isinstance(raw, str)
            messages.append(raw)
            message = json.loads(raw)
            events = message.get("events") or [message.get("event") or {}]
            settled += sum(e.get("event") == "round.settled" for e in events)
    return messages


def _served_records(texts: list[str]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for text in texts:
        message = json.loads(text)
        records.extend(message.get("events") or [])
        if message.get("type") == "event":
            records.append(message["event"])
    return records


def _recovered(served: str, lines: list[bytes]) -> list[tuple[int, str]]:
    """The reviewer's brute force, as an attacker who knows every other byte of each line that
    holds a card: the 52 candidates for its card, each line's SHA-256 looked for among the
    digests in what was served. Returns (seq, card) for each card so found."""
    digests = set(HEX.findall(served))
    found = []
    for line in lines:
        record = json.loads(line)
        match = re.search(rb'"card":"([2-9TJQKA][cdhs])"', line)
        if match is None:
            continue
        for card in CARDS:
            candidate = line.replace(match.group(0), b'"card":"%s"' % card.encode(), 1)
            if hashlib.sha256(candidate).hexdigest() in digests:
                found.append((record["seq"], card))
    return found


def test_no_digest_of_a_line_holding_a_card_reaches_a_reader_who_may_not_see_it(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    args = ("--config", str(config), "--http", "127.0.0.1:0", "--autoplay", "100000")
    args += ("--seed", "13")
    with serving(*args, cwd=tmp_path) as (url, _daemon):
        deadline = time.monotonic() + 120
        while _settled(url) < 1:  # a round on disk for the catch-up, then live ones
            assert time.monotonic() < deadline, "no round was settled"
        # Both read at once: each is sent the rounds after the first live, as they are played.
        with ThreadPoolExecutor(2) as pool:
            reading = {role: pool.submit(_read, url, role, 3) for role in ("dealer", "supervisor")}
            served = {role: future.result() for role, future in reading.items()}
        for role, texts in served.items():
            journal = httpx.get(
                url + "/api/journal", params={"limit": 1000}, headers=auth(role), timeout=60
            )
            assert journal.status_code == 200, journal.text
            texts.append(journal.text)
    lines = [
        line
        for path in sorted((tmp_path / "journal").glob("journal-*.jsonl"))
        for line in path.read_bytes().splitlines(keepends=True)
    ]
    on_disk = {json.loads(line)["seq"]: json.loads(line) for line in lines}
    holding = [line for line in lines if b'"card":"' in line]
    assert len(holding) > 100

    dealer = _served_records(served["dealer"])
    assert any(r["event"] == "card.dealt" and r["payload"]["card"] == "hidden" for r in dealer)
    # The dealer's audience sees records only through the redaction: no digest at all, so no
    # card of any line (face down, or of a round it never sees whole) can be tried against one.
    assert _recovered("\n".join(served["dealer"]), holding) == []
    assert all("hash" not in r and "prev" not in r for r in dealer)

    # The supervisor's sees a closed round whole, digests included; while the round is in
    # play, its records come through the redaction, without them.
    supervisor = _served_records(served["supervisor"])
    # (On a loaded machine its whole read can come from closed rounds: then none is hidden.)
    hidden = [r for r in supervisor if '"hidden"' in json.dumps(r)]
    assert all("hash" not in r and "prev" not in r for r in hidden)
    whole = [r for r in supervisor if "prev" in r]
    assert whole
    for record in whole:
        assert {k: v for k, v in record.items() if k != "hash"} == on_disk[record["seq"]]
