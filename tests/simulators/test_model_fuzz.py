"""The device end never breaks on bad bytes: whatever arrives, a model answers only with
well-formed frames and goes on answering good ones."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.clock import ManualClock
from drivers.framing import Frame, FrameCodec, ProtocolError, Role
from drivers.messages import GetStatus, Identify, Status
from simulators.base import DeviceModel
from simulators.dice_shaker import DiceShakerModel
from simulators.shuffler import ShufflerModel
from simulators.world import TableWorld

host_frames = st.sampled_from(
    [
        bytes.fromhex("02 01 01 00 11 43 94 03"),  # IDENTIFY
        bytes.fromhex("02 01 10 22 00 12 2a a7 03"),  # GET_STATUS
        bytes.fromhex("02 01 04 01 20 34 27 a1 03"),  # START_SHUFFLE
        bytes.fromhex("02 01 05 00 30 ab 17 03"),  # SHAKE
    ]
)
chunks = st.lists(st.one_of(st.binary(max_size=60), host_frames), max_size=10)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks, st.sampled_from([ShufflerModel, DiceShakerModel]))
def test_any_input_gives_only_good_frames_and_a_good_frame_after_it_is_answered(
    table: Any, parts: list[bytes], cls: type[DeviceModel]
) -> None:
    world = TableWorld(table.key)
    heard = FrameCodec(Role.HOST, cls.MESSAGES)
    frames: list[Frame] = []

    def output(data: bytes) -> None:
        heard.receive_data(data)
        while (item := heard.next_event()) is not None:
            assert not isinstance(item, ProtocolError), item
            frames.append(item)

    model = cls(world=world, scheduler=ManualClock(), output=output, seed=1)
    for part in parts:
        model.receive_data(part)
    host = FrameCodec(Role.HOST, cls.MESSAGES)
    model.receive_data(host.send(GetStatus(), 200, 1))
    assert any(f.seq == 200 and isinstance(f.message, Status) for f in frames)
    model.receive_data(host.send(Identify(), 201, 1))
    assert frames[-1].seq == 201
