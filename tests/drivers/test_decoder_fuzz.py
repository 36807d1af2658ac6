"""Every decoder of every device, fuzzed: random payloads under every CMD give a message or
PayloadError and nothing else; a payload that decodes is the one encoding of its message; and
each driver fed random and mutated frames and line noise (tests/drivers/noise_patterns.py) from
its device raises nothing, reports only driver events, and still acknowledges the good frame
that follows.

The last holds for every kind the registry knows, whatever its wire (drivers.kinds: the
plug-ins' too, the worked example of docs/devices.md among them): its driver, connected to its
simulator, fed random bytes, line noise and mutations of what its device really sent, raises
nothing, reports only driver events, and its next exchange with the device is answered."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.base import DeviceDriver, driver_class
from drivers.events import DriverEvent
from drivers.framing import Frame, FrameCodec, Role, encode_frame
from drivers.kinds import BUILTIN, kinds
from drivers.link import LinkTiming
from drivers.messages import (
    Ack,
    DoorReport,
    FaultGone,
    FaultRaised,
    GetStatus,
    Identify,
    Identity,
    Message,
    PayloadError,
    Status,
)
from drivers.transport import Transport
from simulators.world import forget_world
from tests.drivers.noise_patterns import noise

CLASSES = {row.name: driver_class(row.name) for row in BUILTIN}
EVERY_MESSAGE = sorted(
    {cls for driver in CLASSES.values() for cls in driver.MESSAGES.values()},
    key=lambda cls: cls.CMD,
)


@pytest.mark.parametrize("cls", EVERY_MESSAGE, ids=[c.__name__ for c in EVERY_MESSAGE])
@settings(max_examples=60, deadline=None)
@given(payload=st.binary(max_size=80))
def test_a_random_payload_decodes_to_its_one_encoding_or_a_payload_error(
    cls: type[Message], payload: bytes
) -> None:
    try:
        message = cls.decode_payload(payload)
    except PayloadError:
        return
    assert type(message) is cls
    assert message.encode_payload() == payload


@pytest.mark.parametrize(
    ("make", "payload"),
    [
        (FaultRaised, b"\x00\x01\x00"),  # fault code 0: there is none
        (FaultRaised, b"\x00\x01\x10"),  # 16: STATUS.faults has bits 0-15 only
        (FaultGone, b"\x00\x01\x40"),
        (DoorReport, b"\x00\x01\x08\x01"),  # door 8: STATUS.doors has bits 0-7 only
    ],
)
def test_fault_codes_and_doors_outside_the_status_bits_are_bad_payloads(
    make: type[Message], payload: bytes
) -> None:
    with pytest.raises(PayloadError):
        make.decode_payload(payload)


class _Device:
    """The far end, just enough to bring a link up: IDENTIFY and GET_STATUS answered, every
    other command ACKed; what the driver writes is kept."""

    def __init__(self, messages: dict[int, type[Message]], on_data: Callable[[bytes], None]):
        self.codec = FrameCodec(Role.DEVICE, messages)
        self.on_data = on_data
        self.written = bytearray()

    def write(self, data: bytes) -> None:
        self.written += data
        self.codec.receive_data(data)
        while (item := self.codec.next_event()) is not None:
            if not isinstance(item, Frame) or item.message.KIND != "command":
                continue
            answer: Message = Ack()
            if isinstance(item.message, Identify):
                answer = Identity("fuzz", "F-1", "1", "1.0", bytes(32))
            elif isinstance(item.message, GetStatus):
                answer = Status(0, 0, 0, 0, 0)
            reply = self.codec.send(answer, item.seq, 1)
            asyncio.get_running_loop().call_soon(self.on_data, reply)

    def close(self) -> None:
        pass


_frames_from_device = st.builds(
    lambda seq, cmd, payload: encode_frame(1, seq, cmd, payload, True),
    st.integers(0, 255),
    st.integers(0, 255),
    st.binary(max_size=40),
)


@pytest.mark.parametrize("device", sorted(CLASSES))
@settings(max_examples=40, deadline=None)
@given(
    stream=st.lists(
        st.one_of(
            _frames_from_device,
            st.binary(max_size=30),
            _frames_from_device.map(lambda f: f[: len(f) // 2]),
            noise,
        ),
        max_size=10,
    ),
    data=st.data(),
)
def test_a_driver_takes_any_bytes_from_its_device(
    device: str, stream: list[bytes], data: st.DataObject
) -> None:
    cls = CLASSES[device]
    # a command or event the device may send, with a payload of the right size or any other
    cmds = sorted(cmd for cmd, m in cls.MESSAGES.items() if m.KIND in ("event", "reply"))
    extra = data.draw(
        st.lists(
            st.builds(
                lambda seq, cmd, payload: encode_frame(1, seq, cmd, payload, True),
                st.integers(1, 255),
                st.sampled_from(cmds),
                st.binary(max_size=12),
            ),
            max_size=6,
        )
    )

    async def body() -> None:
        far: list[_Device] = []

        async def opener(
            url: str, baudrate: int, on_data: Callable[[bytes], None], on_lost: object
        ) -> Transport:
            far.append(_Device(dict(cls.MESSAGES), on_data))
            return far[-1]

        driver: DeviceDriver = cls(
            "fuzz://", timing=LinkTiming(poll_interval=3600.0), opener=opener
        )
        assert await driver.start(keep_trying=False)
        for chunk in stream + extra:
            driver._on_data(chunk)
        for item in driver.pending_events():
            assert isinstance(item, DriverEvent)
        sentinel = encode_frame(1, 77, DoorReport.CMD, b"\xfe\xdc\x07\x01", True)
        far[0].written.clear()
        driver._on_data(b"\x02\x03" + sentinel)
        ack = FrameCodec(Role.HOST, cls.MESSAGES).send(Ack(), 77, 1)
        assert ack in bytes(far[0].written)
        await driver.close()

    asyncio.run(body())


KINDS = sorted(kinds())
FUZZ_TIMING = LinkTiming(poll_interval=3600.0, reply_timeout=0.05, noisy_down_after=None)


def _mutations(sent: list[bytes]) -> st.SearchStrategy[bytes]:
    """What the device really sent, cut, spliced and with bytes flipped."""
    whole = b"".join(sent)
    return st.one_of(
        st.sampled_from(sent),
        st.builds(lambda a, b: whole[a:b], st.integers(0, len(whole)), st.integers(0, len(whole))),
        st.builds(
            lambda at, bit: whole[:at] + bytes([whole[at] ^ (1 << bit)]) + whole[at + 1 :],
            st.integers(0, len(whole) - 1),
            st.integers(0, 7),
        ),
    )


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_driver_of_any_kind_takes_any_bytes_from_its_device(
    kind: str, data: st.DataObject
) -> None:
    key = f"fuzz-{kind}-{os.getpid()}"

    async def body() -> None:
        sent: list[bytes] = []
        driver = driver_class(kind)(
            f"sim://{kind}?world={key}&seed=3",
            timing=FUZZ_TIMING,
            tap=lambda direction, chunk: sent.append(chunk) if direction == "rx" else None,
        )
        assert await driver.start(keep_trying=False)
        identity = driver.identity
        stream = data.draw(
            st.lists(st.one_of(st.binary(max_size=40), noise, _mutations(sent)), max_size=10)
        )
        for chunk in stream:
            driver._on_data(chunk)
        for item in driver.pending_events():
            assert isinstance(item, DriverEvent)
        assert await driver.identify() == identity
        assert driver.link_up
        await driver.close()

    try:
        asyncio.run(body())
    finally:
        forget_world(key)
