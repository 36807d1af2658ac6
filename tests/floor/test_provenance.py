"""The floor takes a line into a table's history only once the table's signed head proves it.

Real nats-server, real PostgreSQL, `tabled floor` as a process; the attacker publishes on the
broker like anyone who reaches it. The table's side follows the shipper's contract: lines on
``tabled.<table>.<event>`` under ``Nats-Msg-Id: <table>:<seq>``, signed heads on
``tabled.<table>.head``, and, when its publish of a seq comes back `duplicate` with other bytes
stored, its own line on ``tabled.<table>.conflict`` under ``<table>:<seq>:conflict:<sha16>``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import nats
import nats.js.errors
import pytest

from daemon.floor.synthetic import SyntheticTable, ensure_stream
from daemon.journal.format import encode_line, journal_files, line_hash
from daemon.journal.provenance import TableKey
from tests.floor.floor_support import FloorEnv
from tests.shipper.support import ENV, TABLED, tabled, write_table_config


def forged_next(line: bytes, event: str, payload: dict[str, Any]) -> bytes:
    """The line an attacker makes after `line`: its seq + 1, chained to it, their own payload."""
    obj = json.loads(line)
    return encode_line(
        seq=obj["seq"] + 1, ts=obj["ts"], mono=obj["mono"] + 1, table=obj["table"],
        round_id=obj["round"], actor="supervisor:S9", event=event, payload=payload,
        prev=line_hash(line),
    )  # fmt: skip


async def send(js: Any, subject: str, body: bytes, msg_id: str) -> Any:
    return await js.publish(subject, body, headers={"Nats-Msg-Id": msg_id})


def test_forged_first_then_the_table_ships_the_real_line_is_kept(env: FloorEnv) -> None:
    table = SyntheticTable("T41", seed=3)
    lines = table.lines(120)
    floor = env.start_floor()
    asyncio.run(env.publish(lines[:100]))  # enrolled, shipped, proven
    env_key = env.keys["T41"]
    forged = forged_next(lines[99], "round.voided", {"reason": "forged", "approved_by": "S9"})
    real = lines[100]
    assert json.loads(forged)["seq"] == json.loads(real)["seq"] == 101
    wrong = TableKey.generate()

    async def attack_then_ship() -> None:
        nc = await nats.connect(env.broker.url)
        js = nc.jetstream()
        await ensure_stream(js)
        # The attacker reads the last line and publishes the next seq first, under its id.
        ack = await send(js, "tabled.T41.round.voided", forged, "T41:101")
        assert not ack.duplicate
        # A head for the forgery, signed with a key that is not the table's.
        await send(js, "tabled.T41.head", wrong.head("T41", 101, line_hash(forged)), "T41:head:x")
        # The table ships seq 101: the broker drops it as a duplicate of the forgery ...
        ack = await send(js, "tabled.T41.card.dealt", real, "T41:101")
        assert ack.duplicate
        # ... so the shipper sends its own line on the conflict subject, and its head.
        sha16 = hashlib.sha256(real).hexdigest()[:16]
        await send(js, "tabled.T41.conflict", real, f"T41:101:conflict:{sha16}")
        for n, line in enumerate(lines[101:], start=102):
            await send(js, f"tabled.T41.{json.loads(line)['event']}", line, f"T41:{n}")
        await send(js, "tabled.T41.head", env_key.head("T41", 120, line_hash(lines[119])),
                   "T41:head:120")  # fmt: skip
        await nc.close()

    asyncio.run(attack_then_ship())
    asyncio.run(env.wait_committed(floor, {"T41": 120}))

    stored = env.psql("SELECT seq, line FROM journal_lines WHERE table_id = 'T41' ORDER BY seq")
    assert [bytes(line) for _, line in stored] == lines, "the table's history is its own lines"
    quarantined = env.psql(
        "SELECT q.seq, q.kind, q.body, a.kind, a.seq FROM quarantine q "
        "JOIN chain_alerts a ON a.id = q.alert_id WHERE q.table_id = 'T41' ORDER BY q.id"
    )
    bodies = {bytes(row[2]): row for row in quarantined}
    assert bodies[forged][1] == "forged" and bodies[forged][3:] == ("forged", 101)
    wrong_head = [row for row in quarantined if b'"sig"' in bytes(row[2])]
    assert len(wrong_head) == 1 and wrong_head[0][1] == "forged"
    assert len(quarantined) == 2, quarantined
    assert env.psql("SELECT count(*) FROM pending_lines") == [(0,)]

    alerts = env.get(floor, "/api/alerts", role="admin", kind="forged")
    assert {a["seq"] for a in alerts} == {101}
    assert len(alerts) == 2 and all(a["kind"] == "forged" for a in alerts)
    tables = {t["table"]: t for t in env.get(floor, "/api/tables", role="admin")}
    assert tables["T41"]["last_seq"] == 120 and tables["T41"]["state"] == "playing"


def test_unknown_tables_bad_ids_and_oversized_lines_are_quarantined(env: FloorEnv) -> None:
    floor = env.start_floor()
    asyncio.run(env.publish(SyntheticTable("T01", seed=1).lines(20)))
    rogue = SyntheticTable("T62", seed=2).lines(5)
    injected = SyntheticTable("X';DROP", seed=2).lines(1)
    big = SyntheticTable("T01", seed=9)
    big.seq, big.prev = 20, "0" * 64

    async def attack() -> None:
        nc = await nats.connect(env.broker.url)
        js = nc.jetstream()
        for n, line in enumerate(rogue, start=1):
            await send(js, "tabled.T62.card.dealt", line, f"T62:{n}")
        await send(js, "tabled.X';DROP.card.dealt", injected[0], "x:1")
        oversized = b"{" + b" " * 900_000 + b"}\n"
        # The stream the floor made refuses it (max_msg_size, tests/floor/test_stream_bound.py);
        # on a stream without that bound (one the floor could not update) the floor quarantines it.
        with pytest.raises(nats.js.errors.BadRequestError, match="10054"):
            await send(js, "tabled.T01.card.dealt", oversized, "T01:21")
        info = await js.stream_info("TABLED")
        info.config.max_msg_size = -1
        await js.update_stream(info.config)
        await send(js, "tabled.T01.card.dealt", oversized, "T01:21")
        await nc.close()

    asyncio.run(attack())
    asyncio.run(env.publish(SyntheticTable("T02", seed=1).lines(3)))  # a later batch
    asyncio.run(env.wait_committed(floor, {"T02": 3}))

    kinds = env.psql("SELECT table_id, kind, bytes FROM quarantine ORDER BY table_id, id")
    assert [k[:2] for k in kinds] == [("T01", "malformed")] + [("T62", "unknown_table")] * 5 + [
        ("X';DROP", "malformed")
    ]
    assert kinds[0][2] > 900_000
    assert env.psql("SELECT max(length(body)) FROM quarantine")[0][0] <= 65536
    alerts = env.get(floor, "/api/alerts", role="admin")
    unknown = [a for a in alerts if a["kind"] == "unknown_table"]
    assert len(unknown) == 1 and unknown[0]["table"] == "T62"
    assert unknown[0]["details"]["count"] == 5
    names = {t["table"] for t in env.get(floor, "/api/tables", role="admin")}
    assert names == {"T01", "T02"}, "an unknown table is never a floor table"
    assert env.psql("SELECT count(*) FROM journal_lines WHERE table_id = 'T62'") == [(0,)]
    r = env.get(floor, "/api/tables/T01", role="admin")
    assert r["table"]["last_seq"] == 20


def test_a_real_table_signs_its_chain_and_rotates_its_key(env: FloorEnv, tmp_path: Path) -> None:
    """`tabled run --autoplay` with a [feed] and its key, enrolled with `tabled floor enrol`:
    the floor holds every line of its journal, proven; after `tabled keys rotate` the new key
    (announced by the old one) proves the lines that follow, with no admin."""
    cfg = write_table_config(
        tmp_path / "t.toml", tmp_path / "j", table="T55", feed={"servers": [env.broker.url]}
    )
    public = tabled("keys", "show", "--config", str(cfg)).stdout.strip().splitlines()[-1]
    enrolled = subprocess.run(
        [*TABLED, "floor", "enrol", "T55", "--key", public, "--config", str(env.config)],
        check=False, capture_output=True, text=True, timeout=60,
        env={**ENV, "TABLED_TOKEN": env.tokens["admin"]},
    )  # fmt: skip
    assert enrolled.returncode == 0, enrolled.stderr
    floor = env.start_floor()

    def journal() -> list[bytes]:
        return [
            line for f in journal_files(tmp_path / "j") for line in f.read_bytes().splitlines(True)
        ]

    played = tabled("run", "--config", str(cfg), "--autoplay", "2", "--seed", "5")
    assert played.returncode == 0, played.stderr
    asyncio.run(env.wait_committed(floor, {"T55": len(journal())}))
    rotated = tabled("keys", "rotate", "--config", str(cfg))
    assert rotated.returncode == 0, rotated.stderr
    played = tabled("run", "--config", str(cfg), "--autoplay", "1", "--seed", "6")
    assert played.returncode == 0, played.stderr
    lines = journal()
    asyncio.run(env.wait_committed(floor, {"T55": len(lines)}))

    stored = env.psql("SELECT line FROM journal_lines WHERE table_id = 'T55' ORDER BY seq")
    assert [bytes(row[0]) for row in stored] == lines
    keys = env.psql("SELECT status, via, until_seq FROM table_keys ORDER BY id")
    rotation_seq = next(
        json.loads(line)["seq"] for line in lines if b'"event":"table.key_rotated"' in line
    )
    assert keys == [("retired", "enrol", rotation_seq), ("active", "rotation", None)]
    assert env.psql("SELECT count(*) FROM quarantine") == [(0,)]
    assert env.psql("SELECT count(*) FROM pending_lines") == [(0,)]
    assert env.psql("SELECT count(*) FROM chain_alerts") == [(0,)]


def test_a_forgery_first_then_the_real_shipper_the_real_line_is_kept(
    env: FloorEnv, tmp_path: Path
) -> None:
    """The real table (its shipper, its key): it plays a round; an attacker publishes its next
    seq first; it plays again. Its shipper gets `duplicate`, sends its line on the conflict
    subject; the floor holds the table's line at that seq and the forgery as evidence."""
    cfg = write_table_config(
        tmp_path / "t.toml", tmp_path / "j", table="T56", feed={"servers": [env.broker.url]}
    )
    public = tabled("keys", "show", "--config", str(cfg)).stdout.strip().splitlines()[-1]
    asyncio.run(env.enrol([]))  # the schema
    enrolled = subprocess.run(
        [*TABLED, "floor", "enrol", "T56", "--key", public, "--config", str(env.config)],
        check=False, capture_output=True, text=True, timeout=60,
        env={**ENV, "TABLED_TOKEN": env.tokens["admin"]},
    )  # fmt: skip
    assert enrolled.returncode == 0, enrolled.stderr
    floor = env.start_floor()

    def journal() -> list[bytes]:
        return [x for f in journal_files(tmp_path / "j") for x in f.read_bytes().splitlines(True)]

    assert tabled("run", "--config", str(cfg), "--autoplay", "1", "--seed", "2").returncode == 0
    first = journal()
    asyncio.run(env.wait_committed(floor, {"T56": len(first)}))
    forged = forged_next(first[-1], "round.voided", {"reason": "forged", "approved_by": "S9"})
    seq = len(first) + 1

    async def forge() -> None:
        nc = await nats.connect(env.broker.url)
        await send(nc.jetstream(), "tabled.T56.round.voided", forged, f"T56:{seq}")
        await nc.close()

    asyncio.run(forge())
    played = tabled("run", "--config", str(cfg), "--autoplay", "1", "--seed", "3")
    assert played.returncode == 0, played.stderr
    lines = journal()
    asyncio.run(env.wait_committed(floor, {"T56": len(lines)}))
    stored = env.psql("SELECT line FROM journal_lines WHERE table_id = 'T56' ORDER BY seq")
    assert [bytes(row[0]) for row in stored] == lines, "the table's own line at every seq"
    evidence = env.psql(
        "SELECT q.seq, q.kind, q.body, a.kind FROM quarantine q "
        "JOIN chain_alerts a ON a.id = q.alert_id WHERE q.table_id = 'T56'"
    )
    assert [(s, k, bytes(b), a) for s, k, b, a in evidence] == [(seq, "forged", forged, "forged")]
    # The table journaled the conflict (a fault its supervisor sees).
    assert any(b'"event":"feed.conflict"' in line for line in lines)
