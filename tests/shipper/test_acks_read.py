"""Acknowledgements read off the wire while lines flow move the cursor there and then, without
a turn of the pump; once the flow pauses, the last line's wakes the pump as before."""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path

from daemon.shipper.config import FeedConfig
from daemon.shipper.engine import Shipper
from daemon.shipper.tail import Line

SID = b"5"


def acks(*seqs: int, duplicate: bool = False) -> bytes:
    out = b""
    for seq in seqs:
        body = b'{"stream":"TABLED","seq":%d%s}' % (seq, b',"duplicate":true' if duplicate else b"")
        out += b"MSG _INBOX.x.%d %s %d\r\n%s\r\n" % (seq, SID, len(body), body)
    return out


def shipper_in_flight(tmp_path: Path, lines: int) -> Shipper:
    feed = FeedConfig(servers=("nats://127.0.0.1:1",), stream="TABLED", subject_prefix="tabled")
    shipper = Shipper(feed, "T01", tmp_path)
    window = shipper._window
    window.resend = deque(Line(seq, "shoe.card_read", b"{}\n") for seq in range(1, lines + 1))
    sent = window.take(lines, 0.0)
    shipper._probing = False
    if sent:
        shipper._answers.last_subject = b".%d" % sent[-1].seq
    return shipper


def test_flowing_acks_move_the_cursor_without_waking_the_pump(tmp_path: Path) -> None:
    shipper = shipper_in_flight(tmp_path, 4)
    shipper._linger.flowing = True
    wake = asyncio.Event()
    data = acks(2, 1, 3, 4)
    assert shipper._answers._read_acks(data, SID, wake) == len(data)
    assert not wake.is_set()
    assert shipper._window.acked == 4 and shipper.status().cursor == 4
    assert not shipper._window.inflight and not shipper._window.batches


def test_a_paused_flow_wakes_the_pump_on_the_last_line(tmp_path: Path) -> None:
    shipper = shipper_in_flight(tmp_path, 3)
    shipper._linger.flowing = False
    wake = asyncio.Event()
    shipper._answers._read_acks(acks(1, 2), SID, wake)
    assert not wake.is_set() and shipper._window.acked == 0
    shipper._answers._read_acks(acks(3), SID, wake)
    assert wake.is_set() and shipper._window.acked == 0  # the pump moves it


def test_a_duplicate_wakes_the_pump_even_while_flowing(tmp_path: Path) -> None:
    shipper = shipper_in_flight(tmp_path, 3)
    shipper._linger.flowing = True
    wake = asyncio.Event()
    shipper._answers._read_acks(acks(1) + acks(2, duplicate=True), SID, wake)
    assert wake.is_set()
    assert shipper._window.acked == 0 and shipper._answers.waiting


def test_a_window_half_full_wakes_the_pump_while_flowing(tmp_path: Path) -> None:
    shipper = shipper_in_flight(tmp_path, 400)
    shipper._linger.flowing = True
    wake = asyncio.Event()
    shipper._answers._read_acks(acks(*range(1, 100)), SID, wake)
    assert shipper._window.acked == 99
    assert wake.is_set()  # 301 of 512 still in flight: the pump may send before the tick


class FakeTransport:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def writelines(self, frames: list[bytes]) -> None:
        self.written += frames


class FakeClient:
    """What `Shipper._send` uses of nats-py's client."""

    is_closed, is_connected, max_payload = False, True, 1 << 20

    def __init__(self, pending: list[bytes]) -> None:
        self._pending = pending
        self._transport = FakeTransport()
        self.flushed: list[bytes] = []

    async def _send_command(self, cmd: bytes) -> None:
        self._pending.append(cmd)

    async def _flush_pending(self) -> None:
        self.flushed += self._pending
        self._pending = []


def test_a_batch_goes_behind_what_the_client_has_pending(tmp_path: Path) -> None:
    shipper = shipper_in_flight(tmp_path, 0)
    window = shipper._window
    window.resend = deque(Line(seq, "shoe.card_read", b"{}\n") for seq in (1, 2))
    nc = FakeClient([b"SUB _INBOX.x.* 5\r\n"])
    assert asyncio.run(shipper._send(nc, "_INBOX.x", 8)) == 2  # type: ignore[arg-type]
    assert not nc._transport.written
    assert nc.flushed[0] == b"SUB _INBOX.x.* 5\r\n"
    assert nc.flushed[1].startswith(b"HPUB tabled.T01.shoe.card_read _INBOX.x.1 ")
    # Nothing pending: the next batch is written to the socket at once.
    window.resend = deque([Line(3, "shoe.card_read", b"{}\n")])
    assert asyncio.run(shipper._send(nc, "_INBOX.x", 8)) == 1  # type: ignore[arg-type]
    assert len(nc._transport.written) == 1
    assert nc._transport.written[0].startswith(b"HPUB tabled.T01.shoe.card_read _INBOX.x.3 ")
