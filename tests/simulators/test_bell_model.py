"""The simulated timer bell with manual time: countdown, warning, expiry, cancel, faults."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.clock import ManualClock
from drivers.framing import Frame, FrameCodec, ProtocolError, Role
from drivers.messages import Ack, FaultRaised, GetStatus, Message, Nak, NakReason, Status
from drivers.timer_bell.messages import (
    BellRangEvent,
    CancelTimer,
    GetRemaining,
    Remaining,
    Ring,
    StartTimer,
    TimerExpiredEvent,
    TimerWarningEvent,
)
from simulators.timer_bell import POWER_OUTAGE_SECONDS, TimerBellModel


class Host:
    """The host end written with the codec only; it ACKs every event it hears."""

    def __init__(self, table: Any, speed: float = 1.0, **kwargs: Any) -> None:
        self.scheduler = ManualClock()
        self.codec = FrameCodec(Role.HOST, TimerBellModel.MESSAGES)
        self.heard: list[Frame | ProtocolError] = []
        self.model = TimerBellModel(
            world=table.world, scheduler=self.scheduler, output=self._hear, speed=speed, **kwargs
        )

    def _hear(self, data: bytes) -> None:
        self.codec.receive_data(data)
        while (item := self.codec.next_event()) is not None:
            self.heard.append(item)
            model = getattr(self, "model", None)  # None while the model is being built
            if model and isinstance(item, Frame) and item.message.KIND == "event":
                model.receive_data(self.codec.send(Ack(), item.seq, 1))

    def send(self, message: Message, seq: int) -> list[Message]:
        self.heard = []
        self.model.receive_data(self.codec.send(message, seq, 1))
        return self.messages()

    def messages(self) -> list[Message]:
        return [f.message for f in self.heard if isinstance(f, Frame)]

    def advance(self, seconds: float) -> list[Message]:
        self.heard = []
        self.scheduler.tick(seconds)
        return self.messages()


def test_a_countdown_warns_then_expires_and_rings_on_time(table: Any) -> None:
    host = Host(table)
    assert host.send(StartTimer(300, 30), 1) == [Ack()]
    assert host.advance(269.9) == []
    assert host.advance(0.1) == [TimerWarningEvent(1, 30)]
    assert host.send(GetRemaining(), 2) == [Remaining(1, 30000)]
    assert host.advance(29.9) == []
    assert host.advance(0.1) == [TimerExpiredEvent(2), BellRangEvent(3, 1)]
    assert host.send(GetRemaining(), 3) == [Remaining(0, 0)]


def test_remaining_is_in_the_bells_seconds_at_any_speed(table: Any) -> None:
    host = Host(table, speed=0.5)
    host.send(StartTimer(300), 1)
    host.advance(75.0)  # 150 of the bell's seconds
    assert host.send(GetRemaining(), 2) == [Remaining(1, 150000)]
    assert host.advance(75.0) == [TimerExpiredEvent(1), BellRangEvent(2, 1)]


def test_a_retransmitted_start_does_not_restart_the_countdown(table: Any) -> None:
    host = Host(table)
    host.send(StartTimer(300), 7)
    host.advance(100.0)
    assert host.send(StartTimer(300), 7) == [Ack()]  # our ACK was lost: resent, not acted on
    assert host.send(GetRemaining(), 8) == [Remaining(1, 200000)]
    assert host.send(StartTimer(300), 9) == [Nak(NakReason.BUSY)]  # a real double start
    assert host.advance(200.0) == [TimerExpiredEvent(1), BellRangEvent(2, 1)]


def test_a_cancelled_countdown_never_rings(table: Any) -> None:
    host = Host(table)
    host.send(StartTimer(300, 60), 1)
    host.advance(10.0)
    assert host.send(CancelTimer(), 2) == [Ack()]
    assert host.send(CancelTimer(), 3) == [Ack()]  # harmless when none runs
    assert host.advance(1000.0) == []
    host.send(StartTimer(60), 4)  # a new countdown is not confused with the cancelled one
    assert host.advance(59.0) == []
    assert host.advance(1.0) == [TimerExpiredEvent(1), BellRangEvent(2, 1)]


def test_a_ring_on_command_and_a_dead_sounder(table: Any) -> None:
    host = Host(table)
    assert host.send(Ring(), 1) == [Ack(), BellRangEvent(1, 2)]
    host.model.inject("bell_failed")
    assert host.send(Ring(), 2) == [Ack(), FaultRaised(2, 4)]
    assert host.send(StartTimer(5), 3) == [Nak(NakReason.FAULT_ACTIVE)]  # latched until cleared


def test_power_lost_halfway_loses_the_countdown_and_latches(table: Any) -> None:
    host = Host(table, faults=["power_lost"])
    host.send(StartTimer(300), 1)
    assert host.advance(150.0) == []
    assert host.send(GetStatus(), 2) == []  # dark
    assert host.advance(POWER_OUTAGE_SECONDS) == [FaultRaised(1, 1)]
    (status,) = host.send(GetStatus(), 3)
    assert isinstance(status, Status) and status.faults == 1 << 1 and status.flags & 0x02
    assert host.send(GetRemaining(), 4) == [Remaining(0, 0)]
    assert host.advance(1000.0) == []  # no expiry from the lost countdown
    assert host.send(StartTimer(60), 5) == [Nak(NakReason.FAULT_ACTIVE)]


def test_a_stuck_running_flag_refuses_one_start(table: Any) -> None:
    host = Host(table, faults=["double_start"])
    assert host.send(StartTimer(60), 1) == [Nak(NakReason.BUSY)]
    assert host.send(StartTimer(60), 2) == [Ack()]


_host_frames = st.sampled_from(
    [
        bytes.fromhex("02 01 1e 04 50 01 2c 00 1e 27 5f 03"),  # START_TIMER 300, warn 30
        bytes.fromhex("02 01 1f 00 51 53 32 03"),  # CANCEL_TIMER
        bytes.fromhex("02 01 20 00 52 8a c5 03"),  # GET_REMAINING
        bytes.fromhex("02 01 21 00 53 ad d4 03"),  # RING
    ]
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.one_of(st.binary(max_size=40), _host_frames), max_size=12),
    st.floats(0, 400),
)
def test_any_input_gives_only_good_frames_and_it_keeps_answering(
    table: Any, parts: list[bytes], wait: float
) -> None:
    heard = FrameCodec(Role.HOST, TimerBellModel.MESSAGES)
    frames: list[Frame] = []

    def output(data: bytes) -> None:
        heard.receive_data(data)
        while (item := heard.next_event()) is not None:
            assert not isinstance(item, ProtocolError), item
            frames.append(item)

    scheduler = ManualClock()
    model = TimerBellModel(world=table.world, scheduler=scheduler, output=output, speed=1.0)
    for part in parts:
        model.receive_data(part)
    scheduler.tick(wait)
    model.receive_data(FrameCodec(Role.HOST, TimerBellModel.MESSAGES).send(GetStatus(), 200, 1))
    assert any(f.seq == 200 and isinstance(f.message, Status) for f in frames)
