"""The broker lets each table write only as itself: a real nats-server on loopback, run on the
config `tabled floor broker-config` writes (daemon/floor/brokerconf.py), with TLS from a CA made
here (tests/shipper/pki.py) and an nkey per table and for the floor.

Proven: a table ships its own lines; it is refused on another table's subject and cannot read
the lines as they pass; the floor reads through its consumer and cannot publish a line; plain
TCP, no credentials, an unknown key and (when required) a missing client certificate are refused;
a table configured with another table's key is refused and says so in its journal."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest
from nats.js import api as js_api

from daemon.floor.brokerconf import Identity, ServerTls, TableAccess, broker_config
from daemon.floor.config import FloorSection
from daemon.journal import Journal
from daemon.shipper.broker import (
    FeedError,
    auth_options,
    connect,
    floor_inbox_prefix,
    own_messages,
    reader_name,
)
from daemon.shipper.config import FeedConfig
from daemon.shipper.engine import Shipper
from daemon.shipper.nkey import make_seed
from tests.shipper.pki import Pair, Pki
from tests.shipper.support import (
    NatsServer,
    add_events,
    feed_config,
    journal_lines,
    make_journal,
)
from tests.shipper.test_failures import Acked, wait_event

TABLES = ("T41", "T42")


@dataclass
class Broker:
    """A nats-server with TLS and the generated accounts, and everyone's files."""

    server: NatsServer
    pki: Pki
    seeds: dict[str, Path]  # table id (and "floor") -> nkey seed file
    client_certs: dict[str, Pair] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"tls://127.0.0.1:{self.server.port}"

    def feed(self, table: str, seed: str | None = None, **overrides: Any) -> FeedConfig:
        values: dict[str, Any] = {"creds": self.seeds[seed or table], "tls_ca": self.pki.ca}
        if table in self.client_certs:
            pair = self.client_certs[table]
            values.update(tls_cert=pair.cert, tls_key=pair.key)
        values.update(overrides)
        return feed_config(self.server, servers=(self.url,), **values)

    def floor(self) -> FloorSection:
        pair = self.client_certs.get("floor")
        return FloorSection(
            servers=(self.url,), creds=self.seeds["floor"], tls_ca=self.pki.ca,
            tls_cert=pair.cert if pair else None, tls_key=pair.key if pair else None,
        )  # fmt: skip


def start_broker(tmp_path: Path, *, verify: bool = False) -> Broker:
    pki = Pki(tmp_path / "pki")
    seeds: dict[str, Path] = {}
    keys: dict[str, str] = {}
    for name in (*TABLES, "floor"):
        seeds[name] = tmp_path / "keys" / f"{name}.nk"
        keys[name], _ = make_seed(seeds[name], f"{name}.creds")
    cert = pki.server()
    text = broker_config(
        [TableAccess(t, Identity(nkey=keys[t])) for t in TABLES],
        Identity(nkey=keys["floor"]),
        tls=ServerTls(cert.cert, cert.key, pki.ca, verify=verify),
    )
    conf = tmp_path / "nats.conf"
    conf.write_text(text)
    server = NatsServer(tmp_path / "nats", args=("-c", str(conf)))
    server.start()
    broker = Broker(server, pki, seeds)
    if verify:
        broker.client_certs = {name: pki.client(name) for name in (*TABLES, "floor")}
    # The stream is the floor's to create (a table may not).
    asyncio.run(_create_stream(broker))
    return broker


async def _floor_connection(broker: Broker, errors: list[str] | None = None) -> Any:
    section = broker.floor()

    async def on_error(exc: Exception) -> None:
        if errors is not None:
            errors.append(str(exc))

    return await nats.connect(
        servers=[broker.url], allow_reconnect=False, error_cb=on_error,
        inbox_prefix=floor_inbox_prefix("floor"), **auth_options(section, "floor"),
    )  # fmt: skip


async def _create_stream(broker: Broker) -> None:
    nc = await _floor_connection(broker)
    try:
        await nc.jetstream().add_stream(name="TABLED", subjects=["tabled.>"])
    finally:
        await nc.close()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    secured = start_broker(tmp_path)
    try:
        yield secured
    finally:
        secured.server.stop()


def ship(broker: Broker, journal: Journal, table: str | None = None) -> Shipper:
    acked = Acked()
    shipper = Shipper(
        broker.feed(table or journal.table_id), journal.table_id, journal.dir, journal=journal,
        on_acked=acked,
    )  # fmt: skip
    shipper.start()
    acked.wait_for(journal.durable_seq)
    return shipper


async def _read_back(broker: Broker, table: str) -> list[tuple[str, bytes]]:
    """A table's messages in the stream, read with its own identity (its own consumer)."""
    nc = await connect(broker.feed(table), table)
    try:
        found = await own_messages(nc.jetstream(), broker.feed(table), table, start=1, limit=10**6)
        return [(msg.subject, msg.data) for msg in found]
    finally:
        await nc.close()


async def _stream_count(broker: Broker) -> int:
    nc = await _floor_connection(broker)
    try:
        info = await nc.jetstream().stream_info("TABLED")
        return int(info.state.messages)
    finally:
        await nc.close()


async def _publish_as(broker: Broker, feed: FeedConfig, table: str, subject: str) -> list[str]:
    """Publish one message on `subject` with a table's identity; the server's errors."""
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    nc = await connect(feed, table, error_cb=on_error)
    try:
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await nc.jetstream(timeout=1.0).publish(subject, b"forged", headers={"X": "1"})
        await nc.flush()
    finally:
        await nc.close()
    return errors


def test_each_table_ships_its_own_lines_and_cannot_write_another_tables(
    broker: Broker, tmp_path: Path
) -> None:
    journals = [make_journal(tmp_path / t, t, 40) for t in TABLES]
    shippers = [ship(broker, journal) for journal in journals]
    for shipper, journal in zip(shippers, journals, strict=True):
        shipper.stop()
        journal.close()
    total = sum(len(journal_lines(tmp_path / t)) for t in TABLES)
    assert asyncio.run(_stream_count(broker)) == total
    for table in TABLES:
        stored = asyncio.run(_read_back(broker, table))
        assert all(subject.startswith(f"tabled.{table}.") for subject, _ in stored)
        assert [data for _, data in stored] == journal_lines(tmp_path / table)

    # T41's identity on T42's subject: refused by the broker, nothing stored.
    errors = asyncio.run(_publish_as(broker, broker.feed("T41"), "T41", "tabled.T42.round.voided"))
    assert any("permissions violation for publish to" in e and "tabled.t42" in e for e in errors)
    assert asyncio.run(_stream_count(broker)) == total

    # Nor may it watch the lines pass, its own or another's.
    async def subscribe() -> list[str]:
        errors: list[str] = []

        async def on_error(exc: Exception) -> None:
            errors.append(str(exc))

        nc = await connect(broker.feed("T41"), "T41", error_cb=on_error)
        try:
            await nc.subscribe("tabled.>")
            await nc.flush()
            await asyncio.sleep(0.2)
        finally:
            await nc.close()
        return errors

    refused = asyncio.run(subscribe())
    assert any("permissions violation for subscription to" in e for e in refused), refused

    # Nor read another table's stored lines: no message get, and its own reader is bound to
    # its own subjects by the broker.
    async def read_other() -> tuple[list[str], str]:
        errors: list[str] = []

        async def on_error(exc: Exception) -> None:
            errors.append(str(exc))

        nc = await connect(broker.feed("T41"), "T41", error_cb=on_error)
        try:
            js = nc.jetstream(timeout=1.0)
            with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
                await js.get_msg("TABLED", seq=1)
            name = reader_name("T41", "cli")
            request = {"stream_name": "TABLED",
                       "config": {"name": name, "filter_subject": "tabled.T42.>"}}  # fmt: skip
            answer = await nc.request(
                f"$JS.API.CONSUMER.CREATE.TABLED.{name}.tabled.T41.>",
                json.dumps(request).encode(), timeout=2,
            )  # fmt: skip
            await nc.flush()
        finally:
            await nc.close()
        return errors, answer.data.decode()

    errors, answer = asyncio.run(read_other())
    assert any("permissions violation for publish to" in e and "msg.get" in e for e in errors)
    assert "did not match filtered subject" in answer


def test_a_table_with_another_tables_key_is_refused_and_journals_why(
    broker: Broker, tmp_path: Path
) -> None:
    journal = make_journal(tmp_path / "T42", "T42", 10)
    feed = journal.subscribe(maxsize=100_000)
    shipper = Shipper(broker.feed("T42", seed="T41"), "T42", journal.dir, journal=journal)
    shipper.start()
    try:
        degraded = wait_event(journal, feed, "feed.degraded")
        assert "permissions violation" in degraded.payload["reason"].lower()
        assert ".t42." in degraded.payload["reason"].lower()  # its inbox or its subject
    finally:
        shipper.stop(0)
        journal.close()
    assert shipper.status().cursor == 0
    assert asyncio.run(_stream_count(broker)) == 0


def test_the_floor_reads_through_its_consumer_and_cannot_publish_a_line(
    broker: Broker, tmp_path: Path
) -> None:
    journal = make_journal(tmp_path / "T41", "T41", 25)
    ship(broker, journal).stop()
    journal.close()
    lines = journal_lines(tmp_path / "T41")

    async def consume() -> tuple[list[bytes], list[str]]:
        errors: list[str] = []
        nc = await _floor_connection(broker, errors)
        try:
            js = nc.jetstream()
            await js.add_consumer(
                "TABLED",
                js_api.ConsumerConfig(durable_name="floor", ack_policy=js_api.AckPolicy.ALL),
            )
            sub = await js.pull_subscribe_bind("floor", "TABLED")
            msgs = await sub.fetch(len(lines), timeout=5)
            await msgs[-1].ack()
            await nc.jetstream(timeout=1.0).publish("tabled.T41.round.voided", b"forged")
        except nats.errors.TimeoutError:
            pass  # the forged line: no ack, refused (below)
        finally:
            await nc.flush()
            await nc.close()
        return [m.data for m in msgs], errors

    got, errors = asyncio.run(consume())
    assert got == lines
    assert any("permissions violation for publish to" in e for e in errors), errors
    assert asyncio.run(_stream_count(broker)) == len(lines)


def test_the_floor_cannot_change_the_streams_retention_nor_delete_it(
    broker: Broker, tmp_path: Path
) -> None:
    """The stream is the tables' evidence: a floor host taken over may read it, never shorten
    its retention, purge or delete it (no standing STREAM.UPDATE, PURGE or DELETE)."""
    journal = make_journal(tmp_path / "T41", "T41", 5)
    ship(broker, journal).stop()
    journal.close()

    before = asyncio.run(_stream_count(broker))  # the lines and the table's signed heads

    async def tamper() -> tuple[list[str], float, int]:
        errors: list[str] = []
        nc = await _floor_connection(broker, errors)
        try:
            js = nc.jetstream(timeout=1.0)
            config = (await js.stream_info("TABLED")).config
            config.max_age = 3600.0  # an hour: the evidence gone after it
            for attempt in (
                js.update_stream(config),
                js.purge_stream("TABLED"),
                js.delete_stream("TABLED"),
            ):
                with contextlib.suppress(nats.errors.TimeoutError):
                    await attempt
            info = await js.stream_info("TABLED")
            return errors, float(info.config.max_age or 0), int(info.state.messages)
        finally:
            await nc.close()

    errors, max_age, messages = asyncio.run(tamper())
    assert sum("permissions violation for publish to" in e for e in errors) == 3, errors
    assert max_age != 3600.0 and messages == before >= 5


def test_plain_tcp_no_credentials_and_an_unknown_key_are_refused(
    broker: Broker, tmp_path: Path
) -> None:
    # Plain TCP, the protocol spoken in clear after the server's INFO: the server wants TLS.
    with socket.create_connection(("127.0.0.1", broker.server.port), timeout=5) as sock:
        info = json.loads(sock.recv(4096).decode().removeprefix("INFO "))
        assert info["tls_required"] is True
        sock.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
        answer = b""
        with pytest.raises((ConnectionError, TimeoutError, ssl.SSLError)):
            while chunk := sock.recv(4096):
                answer += chunk
            raise ConnectionError("closed")
        assert b"PONG" not in answer
    # TLS, but no credentials; then a key the broker was never told of.
    for feed in (
        feed_config(broker.server, servers=(broker.url,), tls_ca=broker.pki.ca),
        broker.feed("T41", creds=_new_seed(tmp_path / "stranger.nk")),
    ):
        with pytest.raises(FeedError, match="refused the credentials"):
            asyncio.run(connect(feed, "T41"))


def _new_seed(path: Path) -> Path:
    make_seed(path, "stranger")
    return path


def test_client_certificates_when_the_broker_requires_them(tmp_path: Path) -> None:
    secured = start_broker(tmp_path, verify=True)
    try:
        journal = make_journal(tmp_path / "T41", "T41", 5)
        ship(secured, journal).stop()
        journal.close()
        without = secured.feed("T41", tls_cert=None, tls_key=None)
        secured.client_certs.pop("T41")
        with pytest.raises(FeedError):
            asyncio.run(connect(without, "T41"))
    finally:
        secured.server.stop()


def test_a_secret_file_others_may_read_is_refused_with_the_chmod(broker: Broker) -> None:
    seed = broker.seeds["T41"]
    seed.chmod(0o644)
    with pytest.raises(FeedError, match=f"feed.creds: {seed}: mode 0644 .*chmod 600 {seed}"):
        asyncio.run(connect(broker.feed("T41"), "T41"))
    seed.chmod(0o600)
    assert asyncio.run(_read_back(broker, "T41")) == []


def test_another_table_taking_a_tables_next_id_on_its_own_subject_is_a_conflict(
    broker: Broker, tmp_path: Path
) -> None:
    """With every table on its own subjects, the one forgery left is an id: JetStream
    de-duplicates by id across the stream, so T42 publishing on its own subject with
    `Nats-Msg-Id: T41:<next>` would have T41's real line dropped. The shipper sees the stored
    message is not its line and ships it on its conflict subject."""
    journal = make_journal(tmp_path / "T41", "T41", 10)
    acked = Acked()
    shipper = Shipper(broker.feed("T41"), "T41", journal.dir, journal=journal, on_acked=acked)
    shipper.start()
    acked.wait_for(journal.durable_seq)
    head = journal.durable_seq

    async def forge() -> None:
        nc = await connect(broker.feed("T42"), "T42")
        try:
            await nc.jetstream().publish(
                "tabled.T42.round.voided", b"forged\n", headers={"Nats-Msg-Id": f"T41:{head + 1}"}
            )
        finally:
            await nc.close()

    asyncio.run(forge())
    watch = journal.subscribe(maxsize=100_000)
    add_events(journal, 3)
    conflict = wait_event(journal, watch, "feed.conflict")
    acked.wait_for(journal.durable_seq)
    shipper.stop()
    journal.close()
    real = journal_lines(tmp_path / "T41")[head]
    assert conflict.payload["seq"] == head + 1
    # T41 cannot read T42's message: it knows where it is, and that it is not its own.
    assert conflict.payload["stored_on_own_subjects"] is False
    assert conflict.payload["stream_seq"] is not None
    assert conflict.payload["stored_subject"] is None
    stored = asyncio.run(_read_back(broker, "T41"))
    assert ("tabled.T41.conflict", real) in stored
    assert [d for s, d in stored if s != "tabled.T41.conflict"] == [
        x for x in journal_lines(tmp_path / "T41") if x != real
    ]


def test_a_table_enrolled_later_gets_in_after_the_config_is_written_again_and_reloaded(
    tmp_path: Path,
) -> None:
    """The procedure docs/floor.md gives: write the accounts again, signal the server to reload
    (SIGHUP); the new table is let in, a table no longer in the file is not."""
    pki = Pki(tmp_path / "pki")
    cert = pki.server()
    seeds = {name: tmp_path / f"{name}.nk" for name in (*TABLES, "floor")}
    keys = {name: make_seed(path, name)[0] for name, path in seeds.items()}
    conf = tmp_path / "nats.conf"

    def write(tables: tuple[str, ...]) -> None:
        conf.write_text(
            broker_config(
                [TableAccess(t, Identity(nkey=keys[t])) for t in tables],
                Identity(nkey=keys["floor"]),
                tls=ServerTls(cert.cert, cert.key),
            )
        )

    write(("T41",))
    server = NatsServer(tmp_path / "nats", args=("-c", str(conf)))
    server.start()
    try:
        broker = Broker(server, pki, seeds)
        with pytest.raises(FeedError, match="refused the credentials"):
            asyncio.run(connect(broker.feed("T42"), "T42"))
        write(("T42",))
        assert server.proc is not None
        server.proc.send_signal(signal.SIGHUP)  # nats-server: reload the config

        async def attempt(table: str) -> bool:
            for _ in range(50):
                try:
                    nc = await connect(broker.feed(table), table)
                except FeedError:
                    await asyncio.sleep(0.1)
                    continue
                await nc.close()
                return True
            return False

        assert asyncio.run(attempt("T42"))
        with pytest.raises(FeedError, match="refused the credentials"):
            asyncio.run(connect(broker.feed("T41"), "T41"))
    finally:
        server.stop()
