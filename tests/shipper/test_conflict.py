"""The real line is never lost: a message published first under a table's next id (forged by
whoever reached the broker) makes JetStream answer the table's own line `duplicate`; the shipper
reads the stored message, finds other bytes, journals `feed.conflict` and publishes its line on
``tabled.<table>.conflict`` with ``Nats-Msg-Id: <table>:<seq>:conflict:<16 hex of its SHA-256>``.
A real broker, forged first, shipped second."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import nats

from daemon.shipper.engine import Shipper
from daemon.shipper.runtime import metrics_text, summary
from daemon.shipper.tail import line_event, line_seq
from tests.shipper.support import (
    NatsServer,
    add_events,
    feed_config,
    journal_lines,
    make_journal,
    stream_messages,
)
from tests.shipper.test_failures import Acked, wait_event


async def _forge(url: str, table: str, seq: int, prev_line: bytes) -> int:
    """What an attacker on the broker does: the next seq, the right `prev`, a forged void."""
    forged = {
        "seq": seq, "ts": "2026-12-02T00:00:00+00:00", "event": "round.voided",
        "actor": "supervisor:lee", "payload": {"reason": "forged"},
        "prev": hashlib.sha256(prev_line).hexdigest(),
    }  # fmt: skip
    body = json.dumps(forged).encode() + b"\n"
    nc = await nats.connect(url)
    try:
        ack = await nc.jetstream().publish(
            f"tabled.{table}.round.voided", body, headers={"Nats-Msg-Id": f"{table}:{seq}"}
        )
        return int(ack.seq)
    finally:
        await nc.close()


def test_a_line_forged_first_is_kept_and_the_real_one_ships_on_the_conflict_subject(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    journal = make_journal(tmp_path / "j", "T41", 10)
    acked = Acked()
    shipper = Shipper(feed_config(nats_server), "T41", journal.dir, journal=journal, on_acked=acked)
    shipper.start()
    acked.wait_for(journal.durable_seq)
    head = journal.durable_seq
    forged_at = asyncio.run(
        _forge(nats_server.url, "T41", head + 1, journal_lines(journal.dir)[-1])
    )

    watch = journal.subscribe(maxsize=100_000)
    add_events(journal, 5)  # the table plays on: its line head+1 is the real one
    conflict = wait_event(journal, watch, "feed.conflict")
    acked.wait_for(journal.durable_seq)  # the conflict's own line ships too
    status = shipper.status()
    shipper.stop()
    journal.close()

    lines = journal_lines(tmp_path / "j")
    real = lines[head]  # the line of seq head+1
    digest = hashlib.sha256(real).hexdigest()
    assert line_seq(real) == head + 1
    assert conflict.payload == {
        "seq": head + 1, "event": line_event(real), "stream_seq": forged_at,
        "stored_on_own_subjects": True, "stored_subject": "tabled.T41.round.voided",
        "stored_msg_id": f"T41:{head + 1}", "published_on": "tabled.T41.conflict",
    }  # fmt: skip
    # No digest of the line in the journal (it may hold a hidden card): not its hash, not the
    # 16 hex of the conflict id.
    assert digest[:16] not in json.dumps(dict(conflict.payload))
    assert status.conflicts_total == 1 and status.last_conflict == head + 1
    # What /metrics and `tabled status` show of it.
    assert 'tabled_feed_conflicts_total{table="T41"} 1' in metrics_text(status, "T41")
    assert f"1 CONFLICT(S), last at seq {head + 1}" in summary(status.as_dict())

    messages = stream_messages(nats_server.url)
    on_conflict = [(h, d) for s, h, d in messages if s == "tabled.T41.conflict"]
    assert on_conflict == [
        ({"Nats-Msg-Id": f"T41:{head + 1}:conflict:{digest[:16]}",
          "Nats-Expected-Stream": "TABLED"}, real)
    ]  # fmt: skip
    # Every other line is on its own subject, once, byte for byte; the forgery stays as evidence.
    normal = [d for s, h, d in messages if s != "tabled.T41.conflict"]
    forged = [d for d in normal if line_seq(d) == head + 1]
    assert len(forged) == 1 and forged[0] != real
    assert [d for d in normal if d not in forged] == [x for x in lines if x != real]
    for subject, headers, data in messages:
        if subject != "tabled.T41.conflict" and data not in forged:
            assert subject == f"tabled.T41.{line_event(data)}"
            assert headers["Nats-Msg-Id"] == f"T41:{line_seq(data)}"


def test_a_resend_the_stream_holds_is_not_a_conflict(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    """A line answered `duplicate` because the stream holds that very line (sent again after a
    reconnection, here after its cursor was lost) is acknowledged, not reported."""
    journal = make_journal(tmp_path / "j", "T41", 30)
    acked = Acked()
    shipper = Shipper(feed_config(nats_server), "T41", journal.dir, journal=journal, on_acked=acked)
    shipper.start()
    acked.wait_for(journal.durable_seq)
    shipper.stop()
    (tmp_path / "j" / "feed.cursor").unlink()
    acked = Acked()
    again = Shipper(feed_config(nats_server), "T41", journal.dir, journal=journal, on_acked=acked)
    again._reconcile = _no_reconcile  # type: ignore[method-assign]  # send everything again
    again.start()
    acked.wait_for(journal.durable_seq)
    status = again.status()
    again.stop()
    journal.close()
    assert status.conflicts_total == 0
    assert status.sent_total >= 30
    subjects = [s for s, _, _ in stream_messages(nats_server.url)]
    assert "tabled.T41.conflict" not in subjects
    assert len(subjects) == len(journal_lines(tmp_path / "j"))


async def _no_reconcile(js: object) -> None:
    return None
