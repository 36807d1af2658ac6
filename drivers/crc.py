"""CRC-16/XMODEM, the frame check of the tabled device protocol.

Parameters (Rocksoft model): width 16, poly 0x1021, init 0x0000, refin false, refout false,
xorout 0x0000; check value CRC("123456789") = 0x31C3. It is sent high byte first.

`crc16` is the fast path: `binascii.crc_hqx` computes exactly this CRC in C, so the daemon pays
no Python loop per byte. `crc16_reference` is an independent table-driven implementation (the
table precomputed once at import) that device firmware authors can port; the tests prove the
two agree on every input.
"""

from __future__ import annotations

from binascii import crc_hqx

CHECK_INPUT = b"123456789"
CHECK_VALUE = 0x31C3
POLY = 0x1021


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ POLY) if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return tuple(table)


TABLE: tuple[int, ...] = _make_table()


def crc16(data: bytes | bytearray | memoryview) -> int:
    """CRC-16/XMODEM of `data`."""
    return crc_hqx(data, 0)


def crc16_reference(data: bytes | bytearray | memoryview) -> int:
    """The same CRC, table-driven in pure Python (a porting reference, not the hot path)."""
    crc = 0
    for byte in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc
