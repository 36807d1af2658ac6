"""The protocol documents agree with the code: every golden vector printed in docs/protocol.md
and docs/protocol-shoe-bell.md is one the codec produces for the message its row names, every
vector the tests check is printed, and the CRC's check value and the worked example hold.

The golden lists live beside the tests that check them both ways (host and device codecs, whole,
byte by byte, with garbage); this test reads the documents' hex and compares, so an edit to a
document or to a codec that leaves the other behind fails here."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from drivers.crc import CHECK_INPUT, crc16, crc16_reference
from drivers.dice_shaker.messages import DICE_MESSAGES
from drivers.framing import Frame, FrameCodec, Role
from drivers.messages import COMMON_MESSAGES, Message, message_set
from drivers.shoe_reader.messages import SHOE_MESSAGES
from drivers.shuffler.messages import SHUFFLER_MESSAGES
from drivers.timer_bell.messages import BELL_MESSAGES

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "docs" / "protocol.md", ROOT / "docs" / "protocol-shoe-bell.md"]
HERE = Path(__file__).resolve().parent
ALL_MESSAGES = message_set(
    COMMON_MESSAGES, SHUFFLER_MESSAGES, DICE_MESSAGES, SHOE_MESSAGES, BELL_MESSAGES
)
# A whole frame in backticks: STX, bytes, ETX.
FRAME_HEX = re.compile(r"`(02(?: [0-9a-f]{2})+ 03)`")


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_golden_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Vector = tuple[Role, int, int, Message, str]  # sender, address, seq, message, wire hex


def code_vectors() -> list[Vector]:
    out: list[Vector] = list(_load("test_framing").GOLDEN)
    for name in ("test_dice_shaker", "test_shoe_reader", "test_timer_bell"):
        out += [(role, 1, seq, message, wire) for role, seq, message, wire in _load(name).GOLDEN]
    return out


def doc_rows() -> list[tuple[str, str, str]]:
    """(document, the row's SEQ cell, wire hex) for each golden-vector table row."""
    rows = []
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            if not line.startswith("|"):
                continue
            match = FRAME_HEX.search(line)
            if match is None:
                continue
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows.append((doc.name, cells[-2], match.group(1)))
    return rows


VECTORS = code_vectors()
ROWS = doc_rows()


def test_the_documents_print_every_vector_the_tests_check_and_no_other() -> None:
    printed = sorted(wire for _, _, wire in ROWS)
    checked = sorted(wire for *_, wire in VECTORS)
    assert len(printed) >= 40
    assert printed == checked


@pytest.mark.parametrize("row", ROWS, ids=[f"{doc}-{seq}-{wire[:17]}" for doc, seq, wire in ROWS])
def test_each_printed_vector_is_what_the_codec_sends_for_its_message(
    row: tuple[str, str, str],
) -> None:
    _, seq_cell, wire = row
    (role, address, seq, message, _) = next(v for v in VECTORS if v[4] == wire)
    data = bytes.fromhex(wire)
    assert int(seq_cell) == seq
    assert FrameCodec(role, ALL_MESSAGES).send(message, seq, address) == data
    expected = Frame(address, seq, message)
    peer = FrameCodec(Role.DEVICE if role is Role.HOST else Role.HOST, ALL_MESSAGES)
    peer.receive_data(data)  # whole
    assert peer.next_event() == expected
    assert peer.next_event() is None
    frames = []
    for byte in data:  # one byte at a time
        peer.receive_data(bytes((byte,)))
        while (item := peer.next_event()) is not None:
            frames.append(item)
    assert frames == [expected]
    peer.receive_data(b"\x55\x02\x81" + data + b"\x03\xaa\x02")  # garbage before and after
    items = []
    while (item := peer.next_event()) is not None:
        items.append(item)
    assert [i for i in items if isinstance(i, Frame)] == [expected]


def test_every_message_of_every_device_has_a_printed_vector() -> None:
    printed = {type(message) for *_, message, wire in VECTORS}
    assert set(ALL_MESSAGES.values()) <= printed, set(ALL_MESSAGES.values()) - printed


def _text() -> str:
    return "\n".join(doc.read_text() for doc in DOCS)


def test_the_crc_check_value_and_the_worked_example() -> None:
    text = _text()
    match = re.search(r'CRC\("123456789"\) = 0x([0-9A-F]{4})', text)
    assert match is not None
    assert int(match.group(1), 16) == crc16(CHECK_INPUT) == crc16_reference(CHECK_INPUT)
    example = re.search(
        r"ADDR\.\.CMD = `([0-9a-f ]+)`; CRC-16/XMODEM of those four bytes is\s+0x([0-9A-F]{4})",
        text,
    )
    assert example is not None
    assert crc16(bytes.fromhex(example.group(1))) == int(example.group(2), 16)


def test_the_device_side_examples_in_prose_are_good_frames() -> None:
    """Frames quoted outside the tables (the simulated reader's answers) decode cleanly."""
    in_tables = {wire for _, _, wire in ROWS}
    others = [w for w in FRAME_HEX.findall(_text()) if w not in in_tables]
    assert others
    for wire in others:
        data = bytes.fromhex(wire)
        role = Role.DEVICE if data[1] & 0x80 else Role.HOST
        peer = FrameCodec(Role.HOST if role is Role.DEVICE else Role.DEVICE, ALL_MESSAGES)
        peer.receive_data(data)
        item: Any = peer.next_event()
        assert isinstance(item, Frame), (wire, item)
        assert FrameCodec(role, ALL_MESSAGES).send(item.message, item.seq, item.address) == data
