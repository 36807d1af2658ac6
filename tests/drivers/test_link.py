"""The host end of the link rules (drivers.link.HostLink), against a device codec's real bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drivers.framing import Frame, FrameCodec, ProtocolError, Role
from drivers.link import HostLink, LinkTiming, Missed, Received, Refused, Replied, TimedOut
from drivers.messages import (
    COMMON_MESSAGES,
    Ack,
    FaultGone,
    FaultRaised,
    GetStatus,
    Identify,
    Nak,
    NakReason,
    Status,
    message_set,
)

MESSAGES = message_set(COMMON_MESSAGES)
TIMING = LinkTiming(reply_timeout=0.2, tries=3)


class Device:
    """The device end, written with the codec only (the tests script what it answers)."""

    def __init__(self) -> None:
        self.codec = FrameCodec(Role.DEVICE, MESSAGES)

    def hear(self, data: bytes) -> list[Frame | ProtocolError]:
        self.codec.receive_data(data)
        out = []
        while (item := self.codec.next_event()) is not None:
            out.append(item)
        return out

    def say(self, message: object, seq: int) -> bytes:
        return self.codec.send(message, seq, 1)  # type: ignore[arg-type]


def test_a_command_is_answered_and_its_round_trip_measured() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    wire = link.request(GetStatus(), now=10.0)
    (frame,) = device.hear(wire)
    assert isinstance(frame, Frame) and frame.seq == 1 and frame.message == GetStatus()
    out, results = link.receive_data(device.say(Status(0, 0, 0, 0, 0), 1), now=10.004)
    assert out == b"" and results == [Replied(1, Status(0, 0, 0, 0, 0))]
    assert not link.busy and link.last_round_trip is not None
    assert abs(link.last_round_trip - 0.004) < 1e-9


def test_every_answered_request_reports_its_round_trip_not_a_late_or_an_event() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    trips: list[float] = []
    link.on_round_trip = trips.append
    (frame,) = device.hear(link.request(GetStatus(), now=1.0))
    assert isinstance(frame, Frame)
    link.receive_data(device.say(Status(0, 0, 0, 0, 0), frame.seq), now=1.003)
    (frame,) = device.hear(link.request(Identify(), now=2.0))
    assert isinstance(frame, Frame)
    link.receive_data(device.say(Nak(NakReason.BUSY), frame.seq), now=2.002)
    # A late answer to a settled command, and a device event: no round trip.
    link.receive_data(device.say(Ack(), frame.seq), now=2.5)
    link.receive_data(device.say(FaultRaised(1, 2), 1), now=2.6)
    assert [round(t, 9) for t in trips] == [0.003, 0.002]
    assert link.last_round_trip is not None and abs(link.last_round_trip - 0.002) < 1e-9


def test_no_answer_is_retransmitted_with_the_same_seq_then_the_command_fails() -> None:
    link = HostLink(MESSAGES, timing=TIMING)
    first = link.request(Identify(), now=0.0)
    assert link.deadline is not None
    assert link.check_timeout(link.deadline - 0.001) == (b"", [])
    again, results = link.check_timeout(link.deadline)
    assert again == first and results == []
    assert link.deadline is not None
    third, _ = link.check_timeout(link.deadline)
    assert third == first
    out, results = link.check_timeout(link.deadline)
    assert out == b"" and results == [TimedOut(1, Identify())]
    assert link.counters.retransmits == 2 and link.counters.timeouts == 3


def test_seq_runs_from_1_to_255_and_wraps_to_1() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    seqs = []
    for _ in range(256):
        (frame,) = device.hear(link.request(GetStatus(), now=0.0))
        assert isinstance(frame, Frame)
        seqs.append(frame.seq)
        link.receive_data(device.say(Ack(), frame.seq), now=0.0)
    assert seqs[:3] == [1, 2, 3] and seqs[254] == 255 and seqs[255] == 1


def test_a_late_answer_to_a_settled_command_is_ignored() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    link.request(GetStatus(), now=0.0)
    link.receive_data(device.say(Ack(), 1), now=0.0)
    out, results = link.receive_data(device.say(Ack(), 1), now=0.0)
    assert (out, results) == (b"", []) and link.counters.duplicates == 1


def test_a_refusal_carries_its_reason() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    link.request(GetStatus(), now=0.0)
    _, results = link.receive_data(device.say(Nak(NakReason.BUSY), 1), now=0.0)
    assert results == [Refused(1, NakReason.BUSY)]


def test_a_nak_of_a_damaged_frame_makes_the_host_resend_at_once() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    sent = link.request(Identify(), now=0.0)
    out, results = link.receive_data(device.say(Nak(NakReason.BAD_FRAME), 0), now=0.01)
    assert out == sent and results == []
    assert link.counters.retransmits == 1


def test_events_are_acked_and_a_retransmitted_event_is_not_reported_twice() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    event = device.say(FaultRaised(1, 4), 7)
    out, results = link.receive_data(event, now=0.0)
    assert results == [Received(FaultRaised(1, 4))]
    (ack,) = device.hear(out)
    assert ack == Frame(1, 7, Ack())
    out, results = link.receive_data(event, now=0.3)  # our ACK was lost; the device resends
    assert results == [] and device.hear(out) == [Frame(1, 7, Ack())]
    assert link.counters.duplicates == 1


def test_a_gap_in_event_numbers_is_reported_as_missed() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    link.receive_data(device.say(FaultRaised(1, 4), 1), now=0.0)
    _, results = link.receive_data(device.say(FaultRaised(4, 5), 2), now=0.0)
    assert results == [Missed(2), Received(FaultRaised(4, 5))]
    # a counter that restarts (power-up) is not a loss
    _, results = link.receive_data(device.say(FaultRaised(1, 1), 3), now=0.0)
    assert results == [Received(FaultRaised(1, 1))]


def test_status_reveals_an_event_that_never_arrived() -> None:
    link = HostLink(MESSAGES, timing=TIMING)
    assert link.note_status(Status(0, 0, 0, 3, 0)) is None  # the baseline at connect
    assert link.note_status(Status(0, 0, 0, 4, 1)) is None  # one still queued: not missed
    assert link.note_status(Status(0, 0, 0, 5, 0)) == Missed(2)


def test_a_status_built_before_our_ack_of_an_event_arrived_is_not_a_restart() -> None:
    # The device counts an event delivered once it has our ACK; a STATUS it built while that
    # ACK was on the wire shows one event fewer than we already hold. That is not a power-up
    # (no POWERED_UP flag), and the next event must not be reported as missed.
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    assert link.note_status(Status(0, 0, 0, 3, 0)) is None
    link.receive_data(device.say(FaultRaised(4, 4), 1), now=0.0)
    assert link.note_status(Status(0, 0, 0, 4, 1)) is None
    _, results = link.receive_data(device.say(FaultGone(5, 4), 2), now=0.0)
    assert results == [Received(FaultGone(5, 4))]
    assert link.note_status(Status(0, 0, 0, 5, 0)) is None
    assert link.counters.missed_events == 0


def test_a_counter_wholly_behind_ours_is_a_restart_even_when_its_power_up_was_seen_at_connect() -> (
    None
):
    # The POWERED_UP flag went to the connect's own STATUS; the next poll shows a counter,
    # queued events included, below the last event we hold: the count restarts from there.
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    assert link.note_status(Status(0, 0, 0, 56, 0)) is None
    link.receive_data(device.say(FaultRaised(57, 4), 1), now=0.0)
    assert link.note_status(Status(0, 0, 0, 2, 0)) is None
    _, results = link.receive_data(device.say(FaultGone(3, 4), 2), now=0.0)
    assert results == [Received(FaultGone(3, 4))]
    assert link.note_status(Status(0, 0, 0, 4, 0)) == Missed(1)


def test_a_restart_that_lost_every_event_since_is_missed_whatever_the_new_count() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    assert link.note_status(Status(0, 0, 0, 8, 0)) is None
    link.receive_data(device.say(FaultRaised(9, 4), 1), now=0.0)
    link.receive_data(device.say(FaultGone(10, 4), 2), now=0.0)
    assert link.note_status(Status(0, 0, 0, 10, 0)) is None
    # it restarted; its new counter (5) is below the last number seen (10): not "no loss"
    assert link.note_status(Status(2, 0, 0, 5, 0)) == Missed(5)
    assert link.counters.missed_events == 5
    # restarted again, three events: one received, then a STATUS that shows all three
    link.receive_data(device.say(FaultRaised(1, 4), 3), now=0.0)
    assert link.note_status(Status(2, 0, 0, 3, 0)) == Missed(2)
    assert link.note_status(Status(2, 0, 0, 0, 0)) is None  # restarted, nothing sent since


def test_garbage_is_naked_with_seq_0_and_counted() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    out, results = link.receive_data(b"\x55\xaa", now=0.0)
    assert [type(r) for r in results] == [ProtocolError]
    assert device.hear(out) == [Frame(1, 0, Nak(NakReason.BAD_FRAME))]
    assert link.counters.protocol_errors == {"garbage": 1} and link.counters.naks_sent == 1


@given(
    st.lists(st.one_of(st.binary(max_size=40), st.sampled_from(["status", "event"])), max_size=12)
)
def test_any_byte_stream_gives_only_link_results_and_answers(parts: list[object]) -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    link.request(GetStatus(), now=0.0)
    number = 0
    for part in parts:
        if part == "status":
            data = device.say(Status(0, 0, 0, number, 0), 1)
        elif part == "event":
            number += 1
            data = device.say(FaultRaised(number, 4), number % 255 + 1)
        else:
            assert isinstance(part, bytes)
            data = part
        out, results = link.receive_data(data, now=0.0)
        for result in results:
            assert isinstance(result, Replied | Refused | Received | Missed | ProtocolError)
        for answer in device.hear(out):
            assert isinstance(answer, Frame) and isinstance(answer.message, Ack | Nak | GetStatus)


def test_an_event_resent_after_a_reconnect_is_not_reported_twice() -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    event = device.say(FaultRaised(3, 4), 9)
    link.receive_data(event, now=0.0)
    link.reset()  # the link dropped before our ACK reached the device
    out, results = link.receive_data(event, now=5.0)
    assert results == [] and device.hear(out) == [Frame(1, 9, Ack())]
    # a rebooted device's new event may reuse SEQ and number, but not the content
    _, results = link.receive_data(device.say(FaultRaised(3, 1), 9), now=6.0)
    assert results == [Received(FaultRaised(3, 1))]
