"""Journal lines for the floor's tests and benchmark, and the publisher that ships them.

(`tabled floor demo` runs real tables instead: `tabled run --autoplay` with a `[feed]`.)

`SyntheticTable` writes valid chained lines (the journal's own encoder, so the bytes are what a
table writes) for a table that plays rounds of about 150 lines: cards dealt, a violation now and
then, a tilt now and then, a settlement. `publish` ships lines to JetStream exactly as issue 11's
shipper does: subject `<prefix>.<table>.<event>`, header `Nats-Msg-Id: <table>:<seq>`, body the
line's bytes, and (given the tables' keys) signed heads on `<prefix>.<table>.head`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from daemon.journal.format import (
    GENESIS,
    MAX_LINE_BYTES,
    encode_line,
    iso_utc,
    journal_files,
    line_hash,
)
from daemon.journal.provenance import TableKey

CARDS = [r + s for r in "23456789TJQKA" for s in "shdc"]
ARTICLES = ("Portaria 51/89/M Art. 2(a)", "Portaria 51/89/M Art. 2(c)", "Portaria 51/89/M Art. 3")


class SyntheticTable:
    """A table's journal, line by line: `next_line()` is the next line's bytes."""

    def __init__(
        self,
        table: str,
        *,
        seed: int = 0,
        lines_per_round: int = 150,
        wall: float | None = None,
        step: float = 0.0,
        violation_share: float = 0.2,
        tilt_share: float = 0.1,
        reason: str = "synthetic",
        fault: str = "misread",
    ) -> None:
        self.table = table
        self.rng = random.Random(f"{table}:{seed}")
        self.seq = 0
        self.prev = GENESIS
        self.round = 0
        self.lines_per_round = lines_per_round
        self.wall = time.time() if wall is None else wall
        self.step = step
        self.violation_share, self.tilt_share = violation_share, tilt_share
        # A violation's reason and a tilt's fault; `{card}` in them names a card of the round.
        self.reason, self.fault = reason, fault
        self._pending: list[tuple[str, str, dict[str, Any]]] = []
        self._start()

    def _start(self) -> None:
        self._pending = [
            ("journal", "journal.opened", {"resumed_after_seq": 0, "files": 0}),
            ("system", "table.started", {"game": "thirteen", "phase": "EQUIPMENT_CHECK"}),
        ]
        for device, model in (("shoe_reader", "SHOE-R8"), ("dice_shaker", "DICE-4")):
            ident = {"device": device, "make": "tabled-sim", "model": model}
            ident |= {"serial": f"SIM-{model}-{self.table}", "firmware": "1.0"}
            self._pending.append((f"device:{device}", "device.identified", ident))

    def _text(self, template: str) -> str:
        """A reason or fault from its template; the draw only when it names a card, so a
        table's lines stay what its seed made them."""
        return template.format(card=self.rng.choice(CARDS)) if "{card}" in template else template

    def _plan_round(self) -> None:
        self.round += 1
        rng = self.rng
        plan: list[tuple[str, str, dict[str, Any]]] = [
            ("dealer:D1", "round.started", {"round": self.round}),
        ]
        if rng.random() < self.violation_share:
            plan.append(
                ("dealer:D1", "table.violation",
                 {"action": "close_bets", "phase": "BETTING", "article": rng.choice(ARTICLES),
                  "reason": self._text(self.reason)})
            )  # fmt: skip
        plan.append(("dealer:D1", "bets.closed", {"round": self.round}))
        plan.append(("device:dice_shaker", "dice.landed", {"dice": [3, 4]}))
        deals = max(1, self.lines_per_round - len(plan) - 2)
        tilt_at = rng.randrange(deals) if rng.random() < self.tilt_share else -1
        for i in range(deals):
            if i == tilt_at:
                fault = {
                    "device": "shoe_reader",
                    "fault": self._text(self.fault),
                }
                plan.append(("device:shoe_reader", "table.tilted", fault))
                plan.append(("supervisor:S1", "table.resumed", {"phase": "DEALING", "exact": True}))
                continue
            plan.append(
                ("device:shoe_reader", "card.dealt",
                 {"card": rng.choice(CARDS), "seat": i % 4 + 1, "index": i + 1, "face_up": False})
            )  # fmt: skip
        plan.append(
            ("dealer:D1", "round.settled",
             {"settlement": [{"seat": 2, "player": "P1", "amount": 100, "outcome": "player",
                              "net": "95.00"}]})
        )  # fmt: skip
        self._pending = plan

    def next_line(self) -> bytes:
        if not self._pending:
            self._plan_round()
        actor, event, payload = self._pending.pop(0)
        self.seq += 1
        self.wall += self.step
        line = encode_line(
            seq=self.seq,
            ts=iso_utc(self.wall if self.step else time.time()),
            mono=float(self.seq),
            table=self.table,
            round_id=self.round if self.round else None,
            actor=actor,
            event=event,
            payload=payload,
            prev=self.prev,
        )
        self.prev = line_hash(line)
        return line

    def lines(self, n: int) -> list[bytes]:
        return [self.next_line() for _ in range(n)]


def journal_file_lines(directory: Path) -> Iterator[bytes]:
    """Every complete line of a table's journal folder, in chain order."""
    for path in journal_files(directory):
        with path.open("rb") as fh:
            for line in fh:
                if line.endswith(b"\n"):
                    yield line


def subject_of(prefix: str, line: bytes) -> tuple[str, str]:
    """(subject, Nats-Msg-Id) of a journal line, as the shipper names them."""
    obj = json.loads(line)
    return f"{prefix}.{obj['table']}.{obj['event']}", f"{obj['table']}:{obj['seq']}"


def table_key(table: str, seed: int | str = 0) -> TableKey:
    """A reproducible signing key for a synthetic table (tests, benchmarks, the demo)."""
    secret = hashlib.sha256(f"tabled synthetic key {table}:{seed}".encode()).digest()
    return TableKey.of(Ed25519PrivateKey.from_private_bytes(secret))


# How long a publish waits for the stream's ack: nats.py's 5 s default is short for a window
# of 256 on a machine at load 9 (CI's floor test timed out there), and a late ack is no loss.
ACK_SECONDS = 30.0


async def publish(
    js: Any,
    lines: Iterable[bytes],
    prefix: str = "tabled",
    window: int = 256,
    keys: Mapping[str, TableKey] | None = None,
) -> list[float]:
    """Publish lines with JetStream acks, `window` in flight; the publish times (monotonic).

    With `keys` (table -> its signing key), after each window a signed head for each table's
    last line in it, as the shipper publishes them (`daemon.shipper.engine`)."""
    sent: list[float] = []
    in_flight: list[asyncio.Future[Any]] = []
    last: dict[str, tuple[int, bytes]] = {}

    async def settle() -> None:
        await asyncio.gather(*in_flight)
        in_flight.clear()
        if keys:
            for table, (seq, line) in last.items():
                if table in keys:
                    await js.publish(
                        f"{prefix}.{table}.head",
                        keys[table].head(table, seq, line_hash(line)),
                        headers={"Nats-Msg-Id": f"{table}:head:{seq}"},
                        timeout=ACK_SECONDS,
                    )
            last.clear()

    for line in lines:
        subject, msg_id = subject_of(prefix, line)
        sent.append(time.monotonic())
        in_flight.append(
            asyncio.ensure_future(
                js.publish(subject, line, headers={"Nats-Msg-Id": msg_id}, timeout=ACK_SECONDS)
            )
        )
        table, _, seq = msg_id.rpartition(":")
        last[table] = (int(seq), line)
        if len(in_flight) >= window:
            await settle()
    await settle()
    return sent


async def ensure_stream(
    js: Any, stream: str = "TABLED", prefix: str = "tabled", **opts: Any
) -> None:
    """Create the stream as the shipper would (if it is missing)."""
    from nats.js import api as js_api  # noqa: PLC0415 - nats is only needed when publishing
    from nats.js.errors import NotFoundError  # noqa: PLC0415

    try:
        await js.stream_info(stream)
    except NotFoundError:
        await js.add_stream(
            name=stream,
            subjects=[f"{prefix}.>"],
            storage=js_api.StorageType.FILE,
            duplicate_window=opts.pop("duplicate_window", 120.0),
            max_msg_size=opts.pop("max_msg_size", MAX_LINE_BYTES),
            **opts,
        )


def interleave(tables: Sequence[Sequence[bytes]]) -> list[bytes]:
    """Round-robin the tables' lines, as tables playing side by side publish them."""
    out: list[bytes] = []
    longest = max((len(t) for t in tables), default=0)
    for i in range(longest):
        out.extend(t[i] for t in tables if i < len(t))
    return out
