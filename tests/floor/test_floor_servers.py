"""The floor against real servers: several tables, crashes and restarts, forks and gaps."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import nats
import websockets

from daemon.floor.synthetic import SyntheticTable, interleave, journal_file_lines
from tests.floor.floor_support import REPO, FloorEnv


def autoplay_journal(tmp: Path, table: str, game: str, rounds: int, seed: int) -> list[bytes]:
    """A real table's journal: `tabled run --autoplay` with its own id and folder."""
    text = (REPO / "config" / "table.toml").read_text()
    text = text.replace('id = "T01"', f'id = "{table}"')
    if game == "paigow":
        text = text.replace('game = "thirteen"', 'game = "paigow"').replace(
            'ruleset = "macau-1989"', 'ruleset = "macau-1990"'
        )
    config = tmp / f"{table}.toml"
    config.write_text(text)
    journal = tmp / f"journal-{table}"
    subprocess.run(
        [sys.executable, "-m", "daemon", "run", "--config", str(config), "--journal",
         str(journal), "--autoplay", str(rounds), "--seed", str(seed), "--fault-share", "0.3",
         "--violation-share", "0.5"],
        check=True, cwd=REPO, capture_output=True,
    )  # fmt: skip
    return list(journal_file_lines(journal))


def stored(env: FloorEnv, table: str) -> list[bytes]:
    rows = env.psql("SELECT line FROM journal_lines WHERE table_id = %s ORDER BY seq", table)
    return [bytes(r[0]) for r in rows]


def test_three_real_tables_ship_to_one_floor(env: FloorEnv) -> None:
    journals = {
        "T01": autoplay_journal(env.root, "T01", "thirteen", 4, 1),
        "T02": autoplay_journal(env.root, "T02", "thirteen", 3, 2),
        "T03": autoplay_journal(env.root, "T03", "paigow", 3, 3),
    }
    floor = env.start_floor()
    asyncio.run(env.publish(interleave(list(journals.values()))))
    asyncio.run(env.wait_committed(floor, {t: len(j) for t, j in journals.items()}))
    for table, lines in journals.items():
        assert stored(env, table) == lines  # byte for byte, in order, once
    tables = {t["table"]: t for t in env.get(floor, "/api/tables", "pit")}
    assert set(tables) == {"T01", "T02", "T03"}
    assert tables["T03"]["game"] == "paigow" and tables["T01"]["game"] == "thirteen"
    assert all(t["chain"] == "ok" for t in tables.values())
    assert tables["T03"]["pit"] == "Pit B" and tables["T01"]["state"] == "stopped"
    assert env.get(floor, "/api/alerts") == []

    # Derived tables: every violation, fault and settlement in the journals is a row.
    def count(event: str) -> int:
        return sum(json.loads(x)["event"] == event for j in journals.values() for x in j)

    violations = env.get(floor, "/api/violations", since="2000-01-01T00:00:00Z")
    assert len(violations) == count("table.violation") > 0
    faults = env.get(floor, "/api/faults", since="2000-01-01T00:00:00Z")
    assert len(faults) == count("table.tilted") + count("table.held")
    assert all(f["serial"] for f in faults if f["device"] != "table")
    rounds = env.get(floor, "/api/tables/T01/rounds")
    assert [r["status"] for r in rounds] == ["settled"] * 4
    by_article = env.get(
        floor, "/api/violations", article=violations[0]["article"], since="2000-01-01"
    )
    assert by_article and all(v["article"] == violations[0]["article"] for v in by_article)


def test_sigkill_mid_batch_loses_nothing_and_writes_nothing_twice(env: FloorEnv) -> None:
    tables = [SyntheticTable(f"K{i}", seed=i) for i in range(4)]
    lines = interleave([t.lines(3000) for t in tables])
    floor = env.start_floor()
    asyncio.run(env.publish(lines[:2000]))
    asyncio.run(env.wait_committed(floor, {"K0": 400}))
    asyncio.run(env.publish(lines[2000:]))
    floor.kill()  # in the middle of its batches: it had 2,000 of 12,000 at most
    after_kill = env.psql("SELECT count(*) FROM journal_lines")[0][0]
    assert after_kill < len(lines)
    floor = env.start_floor()
    asyncio.run(env.wait_committed(floor, {t.table: 3000 for t in tables}))
    rows = env.psql(
        "SELECT table_id, count(*), count(DISTINCT seq), min(seq), max(seq) FROM journal_lines "
        "GROUP BY table_id ORDER BY table_id"
    )
    assert rows == [(t.table, 3000, 3000, 1, 3000) for t in tables]
    for t in tables:
        got = stored(env, t.table)
        assert [hashlib.sha256(x).hexdigest() for x in got] == [
            hashlib.sha256(x).hexdigest() for x in lines if json.loads(x)["table"] == t.table
        ]
    assert env.get(floor, "/api/alerts") == []


def test_backlog_in_catchup_batches_survives_sigkill(env: FloorEnv) -> None:
    """A backlog is taken `catchup_batch` lines a transaction (not `batch`); a floor killed in
    the middle of one resumes from its cursor: nothing lost, nothing twice, no false alert."""
    env.config.write_text(
        env.config.read_text().replace("batch = 500\n", "batch = 100\ncatchup_batch = 2000\n")
    )
    tables = [SyntheticTable(f"C{i}", seed=10 + i) for i in range(4)]
    lines = interleave([t.lines(3000) for t in tables])
    asyncio.run(env.publish(lines[:2000]))
    floor = env.start_floor()
    asyncio.run(env.wait_committed(floor, {"C0": 100}))
    asyncio.run(env.publish(lines[2000:]))
    floor.kill()
    assert env.psql("SELECT count(*) FROM journal_lines")[0][0] < len(lines)
    floor = env.start_floor()
    asyncio.run(env.wait_committed(floor, {t.table: 3000 for t in tables}))
    health = env.get(floor, "/api/health")
    # The ~10,000 lines left: a handful of 2,000-line batches while 2,000 or more wait, then the
    # last ones in `batch`-size transactions (at most 20): far fewer than the ~100 of `batch`.
    assert 0 < health["batches"] < 40, health
    rows = env.psql(
        "SELECT table_id, count(*), count(DISTINCT seq), min(seq), max(seq) FROM journal_lines "
        "GROUP BY table_id ORDER BY table_id"
    )
    assert rows == [(t.table, 3000, 3000, 1, 3000) for t in tables]
    for t in tables:
        assert stored(env, t.table) == [x for x in lines if json.loads(x)["table"] == t.table]
    assert env.psql("SELECT sum(lines) FROM floor_tables")[0][0] == len(lines)
    assert env.get(floor, "/api/alerts") == []
    # Live again: the tail goes in `batch`-size transactions and is committed.
    tail = tables[0].lines(30)
    asyncio.run(env.publish(tail))
    asyncio.run(env.wait_committed(floor, {"C0": 3030}))


def test_postgres_and_broker_restarts(env: FloorEnv) -> None:
    table = SyntheticTable("R1", seed=5)
    floor = env.start_floor()
    asyncio.run(env.publish(table.lines(300)))
    asyncio.run(env.wait_committed(floor, {"R1": 300}))
    env.pg.stop()
    asyncio.run(env.publish(table.lines(300)))  # the floor cannot commit these yet
    env.pg.start()
    asyncio.run(env.wait_committed(floor, {"R1": 600}))
    env.broker.stop()
    env.broker.start()  # same port, same store: the stream and the consumer survive
    asyncio.run(env.publish(table.lines(300)))
    asyncio.run(env.wait_committed(floor, {"R1": 900}))
    assert env.psql("SELECT count(*), count(DISTINCT seq) FROM journal_lines") == [(900, 900)]
    assert env.get(floor, "/api/alerts") == []
    health = env.get(floor, "/api/health")
    assert health["broker_connected"] is True


def test_fork_and_gap_are_alerts_with_both_hashes(env: FloorEnv) -> None:
    forked, gapped = SyntheticTable("F1", seed=1), SyntheticTable("G1", seed=2)
    # F1's first round (150 lines) is closed: its alerts' hashes are served to surveillance.
    f_lines, g_lines = forked.lines(200), gapped.lines(100)
    withheld = g_lines[49]  # seq 50
    # Two sends, as a shipper's heads come a second apart: a head proves G1 up to 49. The first
    # creates the stream with a 1 s de-duplication window, before the floor would create it with
    # its own 120 s (the re-ship below waits the window out).
    asyncio.run(env.publish(f_lines + g_lines[:49], duplicate_window=1.0))
    floor = env.start_floor()
    asyncio.run(env.publish(g_lines[50:]))
    asyncio.run(env.wait_committed(floor, {"F1": 200, "G1": 100}))
    # The gap: seqs 50..50 missing, the next line's prev given.
    tables = {t["table"]: t for t in env.get(floor, "/api/tables")}
    gap = tables["G1"]["chain"]
    assert gap["kind"] == "gap" and gap["seq"] == 50 and gap["gap_to"] == 50
    # Its hash (the next line's prev: the missing line's SHA-256, whose round is in play) is
    # withheld from every role (redact.visible_alert); the details keep the seqs.
    assert gap["actual_hash"] is None and gap["details"]["digests"] == "withheld"
    assert gap["details"]["missing"] == [50, 50]
    assert tables["F1"]["chain"] == "ok"

    # A line altered on the table's disk (or by anyone on the network) and shipped again under
    # the same seq: once the broker's de-duplication window has passed, the floor sees other
    # bytes for seq 17, which no head of the table proves: forged, kept as evidence.
    original = f_lines[16]
    altered = original.replace(b'"seq":17', b'"seq":17 ').replace(b" ", b"", 1)
    obj = json.loads(original)
    obj["payload"]["seat"] = 99 if "seat" in obj["payload"] else 1
    obj["payload"]["altered"] = True
    altered = (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    assert altered != original

    async def reship_until_accepted() -> None:
        nc = await nats.connect(env.broker.url)
        js = nc.jetstream()
        assert (await js.stream_info("TABLED")).config.duplicate_window == 1.0
        subject = f"tabled.F1.{obj['event']}"
        ack = await js.publish(subject, altered, headers={"Nats-Msg-Id": "F1:17"})
        while ack.duplicate:  # inside the window JetStream drops it, as it should
            await asyncio.sleep(0.2)
            ack = await js.publish(subject, altered, headers={"Nats-Msg-Id": "F1:17"})
        await nc.close()

    asyncio.run(reship_until_accepted())
    asyncio.run(env.publish([withheld]))  # the withheld line, resent: fills the gap
    asyncio.run(env.wait_committed(floor, {"F1": 200, "G1": 100}))

    async def wait_alerts() -> list[dict[str, object]]:
        ws_url = floor.url.replace("http://", "ws://") + "/api/feed"

        async with websockets.connect(ws_url) as ws:
            await ws.send(json.dumps({"token": env.tokens["surveillance"]}))
            await ws.recv()
            alerts = env.get(floor, "/api/alerts", "surveillance")
            while not (
                any(a["kind"] == "forged" for a in alerts)
                and all(a["resolved_at"] for a in alerts if a["kind"] == "gap")
            ):
                await asyncio.wait_for(ws.recv(), 30)
                alerts = env.get(floor, "/api/alerts", "surveillance")
            return alerts

    alerts = asyncio.run(wait_alerts())
    fork = next(a for a in alerts if a["kind"] == "forged")
    assert fork["table"] == "F1" and fork["seq"] == 17
    assert fork["expected_hash"] == hashlib.sha256(original).hexdigest()
    assert fork["actual_hash"] == hashlib.sha256(altered).hexdigest()
    assert stored(env, "F1")[16] == original  # the first bytes stay; the other are evidence
    gap_alert = next(a for a in alerts if a["kind"] == "gap")
    assert gap_alert["resolved_at"] is not None
    tables = {t["table"]: t for t in env.get(floor, "/api/tables")}
    assert tables["G1"]["chain"] == "ok" and tables["G1"]["contiguous_seq"] == 100
    assert tables["F1"]["chain"]["kind"] == "forged"
    (evidence,) = env.psql("SELECT body FROM quarantine WHERE table_id = 'F1' AND seq = 17")
    assert bytes(evidence[0]) == altered
    assert stored(env, "G1") == g_lines
