"""The audited fields written at ingest (daemon/floor/facts.py): a floor that ingests a table's
lines as its shipper sends them (in pieces, a piece late) keeps facts from which the integrity
pass gives `tabled audit`'s verdicts on the table's own journal folder; and migration 0022's
backfill, writing the facts of lines stored before it from the lines themselves, gives the
pass the same findings."""

from __future__ import annotations

import asyncio
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import psycopg
import pytest

from daemon.floor.facts import card_id
from daemon.floor.integrity import run_pass
from daemon.floor.synthetic import journal_file_lines
from tests.analytics.test_hold import played_paigow
from tests.daemon.cli_support import tabled
from tests.floor.floor_support import FloorEnv
from tests.floor.test_integrity_audit import _journal
from tests.floor.test_integrity_floor import _close

KINDS = ("dice", "shuffle", "reader")


def _stored(config: Path) -> dict[str, list[dict[str, Any]]]:
    """`tabled floor audit KIND --stored --json`'s devices of T01 and T02, each kind."""
    found = {}
    for kind in KINDS:
        done = tabled("floor", "audit", kind, "--stored", "--json", "--config", str(config))
        assert done.returncode in (0, 4), done.stderr
        devices = json.loads(done.stdout)["devices"]
        found[kind] = [d for d in devices if d["table"] in ("T01", "T02")]
    return found


def _hold(config: Path) -> dict[str, dict[str, Any]]:
    """`tabled floor audit hold --stored --by table --json`'s groups, by subject."""
    done = tabled("floor", "audit", "hold", "--stored", "--by", "table", "--json", "--config",
                  str(config))  # fmt: skip
    assert done.returncode in (0, 4), done.stderr
    return {group["group"]: group for group in json.loads(done.stdout)["groups"]}


def _pass_again(dsn: str) -> None:
    with psycopg.connect(dsn) as conn:
        run_pass(conn)
        conn.commit()


def test_the_facts_give_each_tables_audit_and_the_backfill_the_same(
    env: FloorEnv, tmp_path: Path
) -> None:
    journals = {"T01": tmp_path / "t01", "T02": tmp_path / "t02"}
    _journal(journals["T01"], "T01", loaded=True, seed=1)
    _journal(journals["T02"], "T02", loaded=False, seed=2)
    paigow = played_paigow(tmp_path / "t03")  # a Pai Gow table: the hold is the commission
    lines = {table: list(journal_file_lines(folder)) for table, folder in journals.items()}
    lines["T03"] = list(journal_file_lines(paigow))
    # Each table's lines in pieces, one piece of T01's (a deck's shuffle and cards) sent last.
    late = lines["T01"][700:900]
    first = lines["T01"][:700] + lines["T02"][:1000] + lines["T03"][:200]
    then = lines["T01"][900:] + lines["T02"][1000:] + lines["T03"][200:]
    floor = env.start_floor()
    asyncio.run(env.publish(first))
    asyncio.run(env.publish(then))
    asyncio.run(env.publish(late))
    last = {t: json.loads(ls[-1])["seq"] for t, ls in lines.items()}
    asyncio.run(env.wait_committed(floor, last))
    assert floor.stop() == 0
    runs = env.psql("SELECT count(*), sum(length(cards)) FROM integrity_facts WHERE kind = 'cards'")
    cards = sum(b'"card.dealt"' in line for ls in lines.values() for line in ls)
    assert runs[0][1] == cards and runs[0][0] < cards / 10  # a run of cards is one row

    _pass_again(env.dsn)
    hold = _hold(env.config)
    done = tabled("audit", "hold", str(paigow), "--by", "table", "--json", timeout=300)
    assert done.returncode in (0, 4), done.stderr
    (table_hold,) = json.loads(done.stdout)["groups"]
    assert table_hold["rulesets"] == ["macau-1990"] and table_hold["commission"] > 0
    assert _close(hold["table T03"], table_hold), (hold["table T03"], table_hold)
    stored = _stored(env.config)
    for kind in KINDS:
        table = []
        for name, folder in journals.items():
            done = tabled("audit", kind, str(folder), "--json", timeout=300)
            assert done.returncode in (0, 4), done.stderr
            (device,) = json.loads(done.stdout)["devices"]
            assert device["serial"] == f"{name}-" + {"dice": "dice_shaker", "shuffle": "shuffler",
                                                     "reader": "shoe_reader"}[kind]  # fmt: skip
            table.append({**device, "table": name})
        assert _close(stored[kind], table), (kind, stored[kind], table)
        assert [d["flagged"] for d in stored[kind]] == [kind != "reader", False]

    # The backfill of a floor whose lines came before the facts: the same findings.
    migration = (files("daemon.floor") / "migrations" / "0022_integrity_facts.sql").read_text()
    backfill = migration[migration.index("INSERT INTO integrity_facts") :]
    with psycopg.connect(env.dsn) as conn:
        conn.execute("DELETE FROM integrity_facts")
        conn.execute("DELETE FROM integrity_rounds")
        conn.execute(backfill.encode())
        conn.commit()
    assert env.psql("SELECT sum(length(cards)) FROM integrity_facts")[0][0] == cards
    _pass_again(env.dsn)
    assert _close(_stored(env.config), stored)
    assert _close(_hold(env.config), hold)


@pytest.mark.parametrize(
    ("name", "expected"), [("As", 51), ("10h", 34), ("T♥", 34), ("2c", 0), ("Zz", None)]
)
def test_a_cards_id_is_the_rules_engines_index(name: str, expected: int | None) -> None:
    assert card_id(name) == expected
