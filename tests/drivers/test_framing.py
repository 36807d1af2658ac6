"""The frame codec against the golden vectors of docs/protocol.md, and fuzzed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.crc import CHECK_INPUT, CHECK_VALUE, crc16, crc16_reference
from drivers.dice_shaker.messages import DICE_MESSAGES, DiceResult, InvalidThrow, Shake
from drivers.framing import (
    BUFFER_LIMIT,
    MAX_PAYLOAD,
    MAX_WIRE_FRAME,
    ErrorKind,
    Frame,
    FrameCodec,
    ProtocolError,
    Role,
    encode_frame,
    escape,
    unescape,
)
from drivers.messages import (
    COMMON_MESSAGES,
    Ack,
    ClearFaults,
    DoorReport,
    FaultGone,
    FaultRaised,
    GetStatus,
    Identify,
    Identity,
    Message,
    Nak,
    NakReason,
    Status,
    message_set,
)
from drivers.shuffler.messages import SHUFFLER_MESSAGES, ShuffleDone, StartShuffle
from tests.drivers.noise_patterns import noise

MESSAGES = message_set(COMMON_MESSAGES, SHUFFLER_MESSAGES, DICE_MESSAGES)
HASH = bytes(range(32))

# (role that sends it, address, seq, message, wire bytes) -- the table in docs/protocol.md.
GOLDEN: list[tuple[Role, int, int, Message, str]] = [
    (Role.HOST, 1, 1, Identify(), "02 01 01 00 11 43 94 03"),
    (Role.HOST, 1, 2, GetStatus(), "02 01 10 22 00 12 2a a7 03"),
    (Role.HOST, 1, 3, ClearFaults(), "02 01 10 23 00 13 0d b6 03"),
    (Role.HOST, 1, 4, StartShuffle(52), "02 01 04 01 20 34 27 a1 03"),
    (Role.HOST, 1, 1, Ack(), "02 01 01 00 06 21 42 03"),
    (Role.HOST, 1, 0, Nak(NakReason.BAD_FRAME), "02 01 00 01 15 01 71 c6 03"),
    (
        Role.DEVICE,
        1,
        1,
        Identity("ACME", "SHUF-52", "SN123", "2.3.1", HASH),
        "02 81 01 39 91 04 41 43 4d 45 07 53 48 55 46 2d 35 32 05 53 4e 31 32 33 05 32 2e 33 2e"
        " 31 00 01 10 22 10 23 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 30 11 12 13 14 15 16 17 18"
        " 19 1a 1b 1c 1d 1e 1f 21 e2 03",
    ),
    (Role.DEVICE, 1, 2, Status(0, 0, 1, 7, 0), "02 81 10 22 07 92 00 00 00 01 00 07 00 9e 72 03"),
    (Role.DEVICE, 1, 3, Ack(), "02 81 10 23 00 06 92 1a 03"),
    (Role.DEVICE, 1, 4, Nak(NakReason.BUSY), "02 81 04 01 15 04 c9 42 03"),
    (Role.DEVICE, 1, 1, ShuffleDone(8, 52, 0, 0, 0), "02 81 01 06 c0 00 08 34 00 00 00 72 b9 03"),
    (
        Role.DEVICE,
        1,
        2,
        ShuffleDone(9, 51, 1, 0, 0),
        "02 81 10 22 06 c0 00 09 33 01 00 00 93 b1 03",
    ),
    (Role.DEVICE, 1, 3, FaultRaised(2, 4), "02 81 10 23 10 23 e0 00 10 22 04 91 a6 03"),
    (Role.DEVICE, 1, 4, FaultGone(3, 4), "02 81 04 10 23 e1 00 10 23 04 1c 62 03"),
    (Role.DEVICE, 2, 16, DoorReport(16, 0, 1), "02 82 10 30 04 e2 00 10 30 00 01 6f 30 03"),
]
IDS = [f"{type(m).__name__}-{role.value}-{seq}" for role, _, seq, m, _ in GOLDEN]


def receiver_of(role: Role) -> FrameCodec:
    return FrameCodec(Role.DEVICE if role is Role.HOST else Role.HOST, MESSAGES)


def drain(codec: FrameCodec) -> list[Frame | ProtocolError]:
    out = []
    while (item := codec.next_event()) is not None:
        out.append(item)
    return out


def test_crc_is_xmodem_with_its_check_value() -> None:
    assert crc16(CHECK_INPUT) == CHECK_VALUE == 0x31C3
    assert crc16_reference(CHECK_INPUT) == CHECK_VALUE


@given(st.binary(max_size=300))
def test_reference_crc_agrees_with_the_fast_one(data: bytes) -> None:
    assert crc16_reference(data) == crc16(data)


@pytest.mark.parametrize(("role", "address", "seq", "message", "wire"), GOLDEN, ids=IDS)
def test_sender_encodes_the_golden_bytes(
    role: Role, address: int, seq: int, message: Message, wire: str
) -> None:
    assert FrameCodec(role, MESSAGES).send(message, seq, address) == bytes.fromhex(wire)


@pytest.mark.parametrize("vector", GOLDEN, ids=IDS)
@pytest.mark.parametrize("feed", ["whole", "byte_by_byte", "garbage_around"])
def test_receiver_decodes_the_golden_bytes(
    vector: tuple[Role, int, int, Message, str], feed: str
) -> None:
    role, address, seq, message, wire = vector
    codec = receiver_of(role)
    data = bytes.fromhex(wire)
    items: list[Frame | ProtocolError] = []
    if feed == "whole":
        codec.receive_data(data)
        items = drain(codec)
    elif feed == "byte_by_byte":
        for byte in data:
            codec.receive_data(bytes((byte,)))
            items += drain(codec)
    else:
        codec.receive_data(b"\x00\xff\x02\x41\x99" + data + b"\x55\x03\xaa")
        items = drain(codec)
    frames = [item for item in items if isinstance(item, Frame)]
    assert frames == [Frame(address, seq, message)]
    if feed == "garbage_around":
        kinds = [item.kind for item in items if isinstance(item, ProtocolError)]
        assert kinds == [ErrorKind.GARBAGE, ErrorKind.TRUNCATED, ErrorKind.GARBAGE]
    assert codec.buffered == 0


def test_each_kind_of_bad_frame_is_one_protocol_error() -> None:
    good = bytes.fromhex("02 01 01 00 11 43 94 03")
    codec = FrameCodec(Role.DEVICE, MESSAGES)
    bad_crc = good[:-2] + b"\x95\x03"
    bad_len = encode_frame(1, 1, 0x11, b"", False).replace(b"\x00\x11", b"\x05\x11")
    unknown = encode_frame(1, 5, 0x7E, b"", False)
    bad_payload = encode_frame(1, 6, StartShuffle.CMD, b"\x34\x00", False)
    echo = encode_frame(1, 7, Identify.CMD, b"", True)
    bad_escape = b"\x02\x01\x10\x41\x03"
    cases = [
        (bad_crc, ErrorKind.CRC),
        (bad_len, ErrorKind.LENGTH),
        (unknown, ErrorKind.UNKNOWN_COMMAND),
        (bad_payload, ErrorKind.BAD_PAYLOAD),
        (echo, ErrorKind.DIRECTION),
        (bad_escape, ErrorKind.ESCAPE),
        (b"\x02\x01\x03", ErrorKind.TRUNCATED),
    ]
    for data, kind in cases:
        codec.receive_data(data + good)
        first, second = drain(codec)
        assert isinstance(first, ProtocolError) and first.kind is kind, (data.hex(), first)
        assert second == Frame(1, 1, Identify())
    errors = {ErrorKind.UNKNOWN_COMMAND: 5, ErrorKind.BAD_PAYLOAD: 6}
    for data, kind in cases[2:4]:
        codec.receive_data(data)
        (error,) = drain(codec)
        assert isinstance(error, ProtocolError) and error.seq == errors[kind]


def test_length_byte_disagreeing_with_a_valid_crc_is_a_length_error() -> None:
    body = bytes((1, 1, 3, 0x11))  # LEN says 3, no payload follows
    wire = b"\x02" + escape(body + crc16(body).to_bytes(2, "big")) + b"\x03"
    codec = FrameCodec(Role.DEVICE, MESSAGES)
    codec.receive_data(wire)
    (error,) = drain(codec)
    assert isinstance(error, ProtocolError) and error.kind is ErrorKind.LENGTH


def test_an_oversized_frame_is_dropped_and_the_next_frame_read() -> None:
    codec = FrameCodec(Role.DEVICE, MESSAGES)
    good = bytes.fromhex("02 01 01 00 11 43 94 03")
    codec.receive_data(b"\x02" + b"\x41" * (MAX_WIRE_FRAME + 10))
    items = drain(codec)
    assert [i.kind for i in items if isinstance(i, ProtocolError)] == [ErrorKind.OVERSIZED]
    codec.receive_data(b"\x41" * 20 + good)
    assert drain(codec)[-1] == Frame(1, 1, Identify())


def test_payload_over_the_limit_is_refused_when_sending() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        encode_frame(1, 1, 0x20, bytes(MAX_PAYLOAD + 1), False)


# --- fuzzing ----------------------------------------------------------------------------------

texts = st.text(max_size=8).filter(lambda s: len(s.encode()) <= 32)
u16 = st.integers(0, 0xFFFF)
u8 = st.integers(0, 0xFF)
host_messages = st.one_of(
    st.just(Identify()),
    st.just(GetStatus()),
    st.just(ClearFaults()),
    st.builds(StartShuffle, st.integers(1, 255)),
    st.just(Shake()),
    st.just(Ack()),
    st.builds(Nak, u8),
)
device_messages = st.one_of(
    st.builds(Identity, texts, texts, texts, texts, st.binary(min_size=32, max_size=32)),
    st.builds(Status, u8, u16, u8, u16, u8),
    st.builds(ShuffleDone, u16, u8, u8, u8, u8),
    st.builds(FaultRaised, u16, st.integers(1, 15)),
    st.builds(FaultGone, u16, st.integers(1, 15)),
    st.builds(DoorReport, u16, st.integers(0, 7), st.integers(0, 1)),
    st.builds(DiceResult, u16, st.tuples(*[st.integers(1, 6)] * 4)),
    st.builds(InvalidThrow, u16, u8, st.integers(0, 4)),
    st.just(Ack()),
    st.builds(Nak, u8),
)


@given(device_messages, st.integers(0, 255), st.integers(1, 127))
def test_every_device_message_round_trips(message: Message, seq: int, address: int) -> None:
    wire = FrameCodec(Role.DEVICE, MESSAGES).send(message, seq, address)
    host = FrameCodec(Role.HOST, MESSAGES)
    host.receive_data(wire)
    assert drain(host) == [Frame(address, seq, message)]


@given(host_messages, st.integers(0, 255))
def test_every_host_message_round_trips(message: Message, seq: int) -> None:
    wire = FrameCodec(Role.HOST, MESSAGES).send(message, seq, 1)
    device = FrameCodec(Role.DEVICE, MESSAGES)
    device.receive_data(wire)
    assert drain(device) == [Frame(1, seq, message)]


@given(st.lists(st.binary(max_size=400), max_size=8))
def test_random_bytes_only_ever_give_frames_or_protocol_errors(chunks: list[bytes]) -> None:
    codec = FrameCodec(Role.HOST, MESSAGES)
    for chunk in chunks:
        codec.receive_data(chunk)
        for item in drain(codec):
            assert isinstance(item, Frame | ProtocolError)
        assert codec.buffered <= min(BUFFER_LIMIT, MAX_WIRE_FRAME + 1)


@given(
    device_messages,
    st.binary(max_size=64),
    st.data(),
)
def test_a_good_frame_after_a_mutated_one_is_never_lost(
    message: Message, junk: bytes, data: st.DataObject
) -> None:
    wire = FrameCodec(Role.DEVICE, MESSAGES).send(message, 9, 1)
    mutated = bytearray(wire)
    action = data.draw(st.sampled_from(["flip", "insert", "delete", "cut"]))
    at = data.draw(st.integers(0, len(mutated) - 1))
    if action == "flip":
        mutated[at] ^= data.draw(st.integers(1, 255))
    elif action == "insert":
        mutated[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    elif action == "delete":
        del mutated[at]
    else:
        del mutated[at:]
    good = FrameCodec(Role.DEVICE, MESSAGES).send(Status(1, 2, 3, 4, 5), 10, 1)
    codec = FrameCodec(Role.HOST, MESSAGES)
    stream = junk + bytes(mutated) + good
    split = data.draw(st.integers(0, len(stream)))
    items: list[Frame | ProtocolError] = []
    for part in (stream[:split], stream[split:]):
        codec.receive_data(part)
        items += drain(codec)
    assert items[-1] == Frame(1, 10, Status(1, 2, 3, 4, 5))
    assert all(isinstance(item, Frame | ProtocolError) for item in items)


@given(st.binary(max_size=200))
def test_escaping_round_trips_and_hides_the_framing_bytes(body: bytes) -> None:
    escaped = escape(body)
    assert b"\x02" not in escaped and b"\x03" not in escaped
    assert unescape(escaped) == body


@given(st.integers(2, 2000), st.integers(0, 2000))
def test_a_run_of_stx_is_one_error_and_the_frame_after_it_is_read(run: int, split: int) -> None:
    good = FrameCodec(Role.DEVICE, MESSAGES).send(Status(1, 2, 3, 4, 5), 10, 1)
    stream = b"\x02" * run + good
    split = min(split, len(stream))
    codec = FrameCodec(Role.HOST, MESSAGES)
    items: list[Frame | ProtocolError] = []
    for part in (stream[:split], stream[split:]):
        codec.receive_data(part)
        items += drain(codec)
    assert items[-1] == Frame(1, 10, Status(1, 2, 3, 4, 5))
    errors = items[:-1]
    # one error for the run (two when the feed split it and a frame seemed to start)
    assert 1 <= len(errors) <= 2
    assert all(isinstance(e, ProtocolError) and e.kind is ErrorKind.TRUNCATED for e in errors)


def test_one_feed_longer_than_the_buffer_limit_loses_no_frame() -> None:
    # One read of a port can bring more than BUFFER_LIMIT bytes: frames queued while the loop
    # was busy. Every one of them is decoded; the limit is for a caller that stops draining.
    device = FrameCodec(Role.DEVICE, MESSAGES)
    frames = [device.send(Status(0, 0, 0, n, 0), n % 255 + 1, 1) for n in range(200)]
    stream = b"".join(frames)
    assert len(stream) > 2 * BUFFER_LIMIT
    codec = FrameCodec(Role.HOST, MESSAGES)
    codec.receive_data(stream)
    assert [item.message.events for item in drain(codec) if isinstance(item, Frame)] == list(
        range(200)
    )


@given(st.lists(noise, min_size=1, max_size=6), device_messages)
def test_no_noise_pattern_swallows_the_good_frame_after_it(
    chunks: list[bytes], message: Message
) -> None:
    good = FrameCodec(Role.DEVICE, MESSAGES).send(message, 9, 1)
    codec = FrameCodec(Role.HOST, MESSAGES)
    items: list[Frame | ProtocolError] = []
    for chunk in chunks:
        codec.receive_data(chunk)
        items += drain(codec)
        assert codec.buffered < MAX_WIRE_FRAME
    # noise may leave a frame open; the next frame's STX closes it
    codec.receive_data(good)
    items += drain(codec)
    assert items[-1] == Frame(1, 9, message)
