"""`tabled floor broker-config`, as a casino runs it: the floor's nkey and each table's made by
their commands, a table's broker key recorded by a floor admin, the broker's accounts written
from the registry, nats-server started on that file with TLS, then a table's backlog shipped
with `tabled feed ship` and read by the floor process through its consumer, each as itself.

Processes and files only: real PostgreSQL, real nats-server, `tabled` as a process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nats
import nats.js.errors
import pytest

from daemon.floor.brokerconf import BrokerConfigError, Identity, TableAccess, accounts_config
from daemon.floor.config import load_floor_config
from daemon.floor.localservers import PostgresCluster
from daemon.journal.provenance import TableKey
from daemon.shipper.broker import auth_options, floor_inbox_prefix
from tests.floor.floor_support import REPO, FloorProcess, write_tokens
from tests.shipper.pki import Pki
from tests.shipper.support import NatsServer, journal_lines, make_journal, write_table_config


def tabled(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"TABLED_TOKEN": token} if token else {})}
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args], check=False, capture_output=True, text=True,
        cwd=REPO, timeout=120, env=env,
    )  # fmt: skip


@pytest.fixture
def database(pg: PostgresCluster, tmp_path: Path) -> Iterator[str]:
    yield pg.create_database(f"broker_{tmp_path.name[-24:].replace('-', '_').lower()}")


def test_the_broker_config_from_the_registry_lets_each_one_do_its_part_only(
    database: str, tmp_path: Path
) -> None:
    pki = Pki(tmp_path / "pki")
    server_cert = pki.server()
    tokens = write_tokens(tmp_path / "tokens.toml")
    nats_server = NatsServer(tmp_path / "nats")  # its port, before its config exists
    url = f"tls://127.0.0.1:{nats_server.port}"
    floor_toml = tmp_path / "floor.toml"
    floor_toml.write_text(
        f'[floor]\nservers = ["{url}"]\ndatabase = "{database}"\ncreds = "floor.nk"\n'
        f'tls_ca = "pki/ca.pem"\n[api]\ntokens_file = "tokens.toml"\n'
    )

    # The floor's own key; two enrolled tables, one of which has given its broker key.
    made = tabled("floor", "nkey", "--config", str(floor_toml))
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "floor.nk").stat().st_mode & 0o777 == 0o600
    for table in ("T41", "T42"):
        key = TableKey.generate().public
        done = tabled("floor", "enrol", table, "--key", key, "--config", str(floor_toml),
                      token=tokens["admin"])  # fmt: skip
        assert done.returncode == 0, done.stderr
    journal_dir = tmp_path / "T41" / "journal"
    journal_dir.parent.mkdir()
    table_toml = write_table_config(
        tmp_path / "T41" / "table.toml", journal_dir, table="T41",
        feed={"servers": [url], "creds": str(tmp_path / "T41" / "feed.nk"),
              "tls_ca": str(pki.ca), "ack_timeout_seconds": 2.0},
    )  # fmt: skip
    shown = tabled("feed", "nkey", "--config", str(table_toml))
    assert shown.returncode == 0, shown.stderr
    nkey = shown.stdout.strip().splitlines()[-1]
    assert nkey.startswith("U") and len(nkey) == 56

    # Only a floor admin records it; the attempt by the pit is refused and audited.
    refused = tabled("floor", "broker-key", "T41", "--nkey", nkey, "--config", str(floor_toml),
                     token=tokens["pit"])  # fmt: skip
    assert refused.returncode == 3 and "takes a floor admin" in refused.stderr
    recorded = tabled("floor", "broker-key", "T41", "--nkey", nkey, "--config", str(floor_toml),
                      token=tokens["admin"])  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr

    out = tmp_path / "tabled-accounts.conf"
    written = tabled(
        "floor", "broker-config", "--config", str(floor_toml), "--out", str(out),
        "--tls-cert", str(server_cert.cert), "--tls-key", str(server_cert.key),
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert "1 table(s) and the floor" in written.stderr and "T42" in written.stderr
    assert out.stat().st_mode & 0o777 == 0o600
    text = out.read_text()
    assert nkey in text and '"tabled.T41.>"' in text and "tabled.T42" not in text

    nats_server.args = ("-c", str(out))
    nats_server.start()
    try:
        # The floor creates the stream and its consumer, as itself.
        floor = FloorProcess(floor_toml).start()
        try:
            make_journal(journal_dir, "T41", 30).close()
            asyncio.run(_consumer_acked(floor_toml, 0))  # the floor has made the stream
            shipped = tabled("feed", "ship", "--config", str(table_toml))
            assert shipped.returncode == 0, shipped.stdout + shipped.stderr
            lines = len(journal_lines(journal_dir))
            # Its lines and its signed heads (docs/floor.md, "Signed heads").
            assert asyncio.run(_consumer_acked(floor_toml, lines)) >= lines
        finally:
            floor.stop()
    finally:
        nats_server.stop()
    audit = json.dumps(_audit(database))
    assert "broker-key" in audit and "refused: role pit" in audit


async def _consumer_acked(floor_toml: Path, want: int) -> int:
    """The floor consumer's ack floor once it reaches `want` (read with the floor's identity)."""
    section = load_floor_config(floor_toml).floor
    nc = await nats.connect(
        servers=list(section.servers), allow_reconnect=False,
        inbox_prefix=floor_inbox_prefix(section.durable), **auth_options(section, "floor"),
    )  # fmt: skip
    try:
        js = nc.jetstream()
        for _ in range(600):
            try:
                info = await js.consumer_info(section.stream, section.durable)
            except nats.js.errors.NotFoundError:
                await asyncio.sleep(0.1)
                continue
            if info.ack_floor is not None and (info.ack_floor.stream_seq or 0) >= want:
                return int(info.ack_floor.stream_seq or 0)
            await asyncio.sleep(0.1)
        raise AssertionError(f"the floor's consumer did not reach {want}")
    finally:
        await nc.close()


def _audit(dsn: str) -> list[list[str]]:
    import psycopg  # noqa: PLC0415

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(b"SELECT action, target, outcome FROM floor_actions ORDER BY id")
        return [list(map(str, row)) for row in rows.fetchall()]


KEY_A = "U" + "A" * 55
KEY_B = "U" + "B" * 55


@pytest.mark.parametrize(
    ("tables", "floor", "words"),
    [
        ([("X';DROP", KEY_A)], Identity(nkey=KEY_B), 'table "X\';DROP": letters, digits'),
        ([("T1", KEY_A), ("T2", KEY_A)], Identity(nkey=KEY_B), "the same identity as table T1"),
        ([("T1", KEY_A)], Identity(nkey=KEY_A), "table T1: the same identity as the floor"),
        ([("T1", "SUAAAA")], Identity(nkey=KEY_B), "is not an nkey user's public key"),
        ([("T1", KEY_A), ("T1", KEY_B)], Identity(nkey="U" + "C" * 55), "listed twice"),
        ([], Identity(), "the floor: an nkey or a user and password"),
        ([], Identity(user="floor"), "user 'floor' without a password"),
    ],
)
def test_the_generator_refuses_what_would_let_one_act_as_another(
    tables: list[tuple[str, str]], floor: Identity, words: str
) -> None:
    entries = [TableAccess(t, Identity(nkey=k)) for t, k in tables]
    with pytest.raises(BrokerConfigError) as refused:
        accounts_config(entries, floor)
    assert words in str(refused.value)


def test_the_floor_durable_may_not_take_a_tables_reader_name() -> None:
    with pytest.raises(BrokerConfigError, match=r"tabled-\.\.\. names are the tables' readers"):
        accounts_config([], Identity(nkey=KEY_A), durable="tabled-cli-T41")
