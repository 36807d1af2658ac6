"""`tabled floor audit`: the same integrity audit from the floor's PostgreSQL as from the table's
journal folder, on the same lines (as the floor keeps them, byte for byte)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import psycopg

from daemon.config import JournalConfig
from daemon.floor.localservers import PostgresCluster
from daemon.floor.store import Store
from daemon.journal import Journal, replay
from simulators.shuffler import riffle_shuffle
from tests.daemon.cli_support import tabled

CARDS = [r + s for s in "shdc" for r in "A23456789TJQK"]


def _journal(folder: Path, table: str, loaded: bool, seed: int) -> None:
    journal = Journal.open(JournalConfig(dir=folder, durability="none"), table)
    rng = random.Random(seed)
    put = journal.stage
    for device in ("shuffler", "dice_shaker", "shoe_reader"):
        payload = {"device": device, "serial": f"{table}-{device}"}
        put("device.identified", f"device:{device}", 0, payload, False)
    order = list(CARDS)
    for round_id in range(1, 41):
        order = riffle_shuffle(order, rng, 2) if loaded else rng.sample(order, 52)
        put(
            "deck.machine_shuffled",
            "device:shuffler",
            round_id,
            {"count": 52, "mode": "random"},
            False,
        )
        put("shoe.loaded", "dealer:D1", round_id, {"redeal": False}, False)
        for _ in range(5):
            dice = [6 if loaded and rng.random() < 0.4 else rng.randint(1, 6) for _ in range(4)]
            put("dice.landed", "device:dice_shaker", round_id, {"dice": dice}, False)
        for index, card in enumerate(order, start=1):
            put("card.dealt", "device:shoe_reader", round_id,
                {"card": card, "seat": 0, "index": index, "face_up": False}, False)  # fmt: skip
    journal.close()


def _floor(pg: PostgresCluster, tmp_path: Path, journals: dict[str, Path]) -> Path:
    dsn = pg.create_database("integrity_audit")
    store = Store(dsn)

    async def migrate() -> None:
        await store.migrate()
        await store.close()

    asyncio.run(migrate())
    with psycopg.connect(dsn) as conn:
        conn.execute("CREATE TABLE journal_lines_all PARTITION OF journal_lines DEFAULT")
        for table, folder in journals.items():
            conn.execute("INSERT INTO floor_tables (table_id) VALUES (%s)", (table,))
            with conn.cursor().copy(
                "COPY journal_lines (table_id, seq, ts, event, round, actor, hash, prev, line) "
                "FROM STDIN"
            ) as copy:
                for r in replay(folder):
                    copy.write_row(
                        (
                            table,
                            r.seq,
                            r.ts,
                            r.event,
                            str(r.round_id),
                            r.actor,
                            bytes.fromhex(r.hash),
                            bytes.fromhex(r.prev),
                            r.line,
                        )
                    )
    config = tmp_path / "floor.toml"
    config.write_text(f'[floor]\ndatabase = "{dsn}"\n')
    return config


def _devices(done: Any) -> list[dict[str, Any]]:
    assert done.returncode in (0, 4), done.stderr
    devices: list[dict[str, Any]] = json.loads(done.stdout)["devices"]
    return devices


def test_the_floor_gives_each_tables_answer_on_the_same_lines(
    pg: PostgresCluster, tmp_path: Path
) -> None:
    journals = {"T01": tmp_path / "t01", "T02": tmp_path / "t02"}
    _journal(journals["T01"], "T01", loaded=True, seed=1)
    _journal(journals["T02"], "T02", loaded=False, seed=2)
    config = _floor(pg, tmp_path, journals)
    for kind in ("dice", "shuffle", "reader"):
        done = tabled("floor", "audit", kind, "--config", str(config), "--json", timeout=300)
        floor = _devices(done)
        assert done.returncode == (4 if kind != "reader" else 0)
        tables = []
        for table, folder in journals.items():
            (device,) = _devices(tabled("audit", kind, str(folder), "--json", timeout=300))
            tables.append({**device, "table": table})
        assert floor == tables
        assert [d["flagged"] for d in floor] == [kind != "reader", False]
    only = _devices(tabled("floor", "audit", "dice", "--config", str(config), "--table", "T02",
                           "--json", timeout=300))  # fmt: skip
    assert [d["table"] for d in only] == ["T02"]


def test_a_floor_it_cannot_reach_is_one_line_and_status_2(tmp_path: Path) -> None:
    config = tmp_path / "floor.toml"
    config.write_text('[floor]\ndatabase = "postgresql://nobody@127.0.0.1:1/none"\n')
    done = tabled("floor", "audit", "dice", "--config", str(config))
    assert done.returncode == 2 and "the floor's database" in done.stderr
