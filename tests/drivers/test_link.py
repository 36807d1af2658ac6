"""The host end of the link rules (drivers.link.HostLink), against a device codec's real bytes."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.base import driver_class
from drivers.clock import ManualClock
from drivers.events import LinkDegraded, LinkDown, LinkUp
from drivers.framing import Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.link import (
    Degraded,
    HostLink,
    LinkTiming,
    Missed,
    Received,
    Refused,
    Replied,
    TimedOut,
    TooNoisy,
)
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
from tests.drivers.conftest import SimTable
from tests.drivers.noise_patterns import noise

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


# --- noise hygiene --------------------------------------------------------------------------


def naks_in(device: Device, data: bytes) -> int:
    return sum(
        isinstance(item, Frame) and item.message == Nak(NakReason.BAD_FRAME)
        for item in device.hear(data)
    )


@given(st.integers(1, 500), st.lists(st.integers(1, 64), max_size=10))
def test_k_stray_stx_produce_at_most_one_nak_per_resynchronisation(
    k: int, splits: list[int]
) -> None:
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    (command,) = device.hear(link.request(GetStatus(), now=0.0))
    assert isinstance(command, Frame)
    for burst in range(2):
        stray, naks = b"\x02" * k, 0
        for size in [*splits, len(stray)]:
            out, _ = link.receive_data(stray[:size], now=0.001)
            naks += naks_in(device, out)
            stray = stray[size:]
        assert naks <= 1, f"burst {burst}: {naks} NAKs"
        # the device's answer resynchronises the link: the next burst may be NAKed once
        link.receive_data(device.say(Status(0, 0, 0, 0, 0), command.seq), now=0.002)
        (command,) = device.hear(link.request(GetStatus(), now=0.003))
        assert isinstance(command, Frame)


def test_a_damaged_frame_between_good_ones_is_naked_each_time() -> None:
    # sporadic damage (a quiet spell between) keeps the protocol's rule: every damaged frame
    # NAKed, every NAK resent
    link, device = HostLink(MESSAGES, timing=TIMING), Device()
    for n in range(30):
        at = n * (TIMING.quiet_time + 0.01)
        (command,) = device.hear(link.request(GetStatus(), now=at))
        assert isinstance(command, Frame)
        reply = device.say(Status(0, 0, 0, 0, 0), command.seq)
        spoiled = reply[:1] + b"\x55" + reply[1:]  # one byte too many: one bad frame
        out, _ = link.receive_data(spoiled, now=at + 0.001)
        assert naks_in(device, out) == 1
        out, _ = link.receive_data(device.say(Nak(NakReason.BAD_FRAME), 0), at + 0.002)
        assert device.hear(out) == [command]  # our own NAK'd frame, resent at once
        _, results = link.receive_data(reply, now=at + 0.003)
        assert results == [Replied(command.seq, Status(0, 0, 0, 0, 0))]
    assert link.counters.naks_withheld == 0 and not link.degraded


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(noise, st.sampled_from(["answer", "event", "nak"])),
            st.floats(0.0, 0.05),
        ),
        min_size=1,
        max_size=60,
    )
)
def test_noise_of_any_pattern_costs_one_nak_per_resync_and_spaced_naks_once_degraded(
    stream: list[tuple[bytes | str, float]],
) -> None:
    timing = LinkTiming(degraded_errors=5, noisy_down_after=None)
    link, device = HostLink(MESSAGES, timing=timing), Device()
    now, number = 0.0, 0
    naks_since_good = 0
    last_nak = last_resend = float("-inf")
    (command,) = device.hear(link.request(GetStatus(), now=now))
    assert isinstance(command, Frame)
    for part, step in stream:
        now += step
        good = part in ("answer", "event")
        if part == "answer":
            data = device.say(Status(0, 0, 0, number, 0), command.seq)
        elif part == "event":
            number += 1
            data = device.say(FaultRaised(number, 4), number % 255 + 1)
        elif part == "nak":
            data = device.say(Nak(NakReason.BAD_FRAME), 0)
        else:
            assert isinstance(part, bytes)
            data = part
        degraded = link.degraded
        out, _ = link.receive_data(data, now=now)
        for item in device.hear(out):
            assert isinstance(item, Frame)
            if item.message == Nak(NakReason.BAD_FRAME):
                naks_since_good += 1
                assert naks_since_good <= 1, "two NAKs without a good frame between"
                if degraded:
                    assert now - last_nak >= timing.nak_interval - 1e-9  # type: ignore[operator]
                last_nak = now
            elif item.message == GetStatus():
                if degraded and link.degraded:
                    assert now - last_resend >= timing.nak_interval - 1e-9  # type: ignore[operator]
                last_resend = now
        if good or part == "nak":
            naks_since_good = 0
        if not link.busy:
            (command,) = device.hear(link.request(GetStatus(), now=now))
            assert isinstance(command, Frame)


NOISE_SAMPLE = {
    "framing": bytes([0x02, 0x41, 0x10, 0x03, 0x02, 0x02, 0x10, 0x10, 0x03, 0x99] * 30),
    "stx_flood": b"\x02" * 300,
    "dle_flood": b"\x02" + b"\x10" * 300,
    "etx_flood": b"\x03" * 300,
    "truncated": b"".join(
        encode_frame(1, n, 0x81, b"abc", True)[: 3 + n % 5] for n in range(1, 30)
    ),
    "bad_crc": b"".join(
        encode_frame(1, n, 0x81, b"abc", True)[:-2] + b"\x00\x03" for n in range(1, 30)
    ),
    "random": bytes((n * 151 + 7) % 256 for n in range(300)),
}


@pytest.mark.parametrize("pattern", sorted(NOISE_SAMPLE))
def test_a_link_that_stays_noisy_reports_degraded_then_goes_down_and_stays_silent(
    pattern: str,
) -> None:
    timing = LinkTiming(degraded_errors=20, noisy_down_after=3.0, quiet_time=0.25)
    link, device = HostLink(MESSAGES, timing=timing), Device()
    reported: list[tuple[float, object]] = []
    sent = b""
    now = 0.0
    while now < 4.0:
        if not link.busy and not link.noisy:
            sent += link.request(GetStatus(), now=now)
        out, results = link.receive_data(NOISE_SAMPLE[pattern], now=now)
        sent += out
        out, timeouts = link.check_timeout(now)
        sent += out
        reported += [(now, r) for r in results + timeouts if isinstance(r, Degraded | TooNoisy)]
        now += 0.02
    kinds = [type(r) for _, r in reported]
    assert kinds == [Degraded, TooNoisy], reported
    assert reported[1][0] <= timing.noisy_down_after + 0.05
    naks = naks_in(device, sent)
    assert naks < 30, f"{naks} NAKs in 4 s of {pattern} noise"
    # down for noise: not even an event is answered, nothing goes out
    out, _ = link.receive_data(device.say(FaultRaised(1, 4), 3), now=now)
    assert out == b"" and link.noisy


def test_a_command_the_noise_spoils_on_a_degraded_link_takes_it_down_for_noise() -> None:
    timing = LinkTiming(degraded_errors=5, reply_timeout=0.2, tries=2)
    link = HostLink(MESSAGES, timing=timing)
    link.request(GetStatus(), now=0.0)
    results: list[object] = []
    now = 0.0
    while link.busy:
        now += 0.01
        _, found = link.receive_data(b"\x02\x01\x03", now=now)
        _, timed = link.check_timeout(now)
        results += found + timed
    assert any(isinstance(r, Degraded) for r in results)
    assert isinstance(results[-1], TooNoisy) and link.noisy
    assert not any(isinstance(r, TimedOut) for r in results)


def test_a_device_that_stops_answering_on_a_clean_line_still_times_out() -> None:
    link = HostLink(MESSAGES, timing=TIMING)
    link.request(GetStatus(), now=0.0)
    results: list[object] = []
    while link.busy:
        assert link.deadline is not None
        results += link.check_timeout(link.deadline)[1]
    assert results == [TimedOut(1, GetStatus())] and not link.noisy


def test_a_link_down_for_noise_comes_back_after_a_quiet_spell() -> None:
    timing = LinkTiming(degraded_errors=5, noisy_down_after=1.0, quiet_time=0.25)
    link, device = HostLink(MESSAGES, timing=timing), Device()
    now = 0.0
    while not link.noisy:
        link.receive_data(b"\x02" + b"\x10" * 5 + b"\x03", now=now)
        now += 0.01
    link.reset(now=now + 1.0)  # the driver reopens the port a second later
    assert not link.quiet(now + 1.2)  # nothing heard yet for a quiet spell since it opened
    link.receive_data(b"\x02\x02\x41\x03", now=now + 1.2)  # the noise goes on
    assert not link.quiet(now + 1.4)
    assert link.quiet(now + 1.45) and not link.noisy and not link.degraded
    (command,) = device.hear(link.request(Identify(), now=now + 1.5))
    assert isinstance(command, Frame)
    # a fresh start: the first damaged frame is NAKed at once, the answer taken
    out, _ = link.receive_data(b"\x55", now=now + 1.501)
    assert naks_in(device, out) == 1
    _, results = link.receive_data(device.say(Ack(), command.seq), now=now + 1.502)
    assert results == [Replied(command.seq, Ack())]


def test_the_bare_protocol_rule_is_kept_when_hygiene_is_off() -> None:
    # the benchmark's peer: every error NAKed, never degraded into silence
    timing = LinkTiming(nak_interval=None, noisy_down_after=None)
    link, device = HostLink(MESSAGES, timing=timing), Device()
    out, _ = link.receive_data(b"\x55\x02\x41\x02\x42\x02\x43\x03", now=0.0)
    assert naks_in(device, out) == 4  # the garbage and three frames cut short
    assert link.counters.naks_withheld == 0


def test_a_driver_on_a_noisy_line_reports_degraded_then_down_and_is_back_soon_after(
    table: SimTable,
) -> None:
    """Through pyserial to a simulated shoe: the noise reaches the driver as bytes from its
    port; the table sees LinkDegraded, then LinkDown("noisy") (it HOLDs), then LinkUp a quiet
    spell after the noise ends, with no reconnect backoff to wait out."""
    timing = LinkTiming(poll_interval=3600.0, reconnect_initial=0.5, noisy_down_after=3.0)

    async def body() -> tuple[list[object], float, float]:
        clock = ManualClock()
        driver = driver_class("shoe_reader")(table.url("shoe_reader"), clock=clock, timing=timing)
        assert await driver.start()
        assert [type(e) for e in driver.pending_events()] == [LinkUp]
        events: list[object] = []
        while clock.now() < 4.0:
            driver._on_data(NOISE_SAMPLE["framing"])
            await clock.advance(0.02)
            events += driver.pending_events()
        noise_ended = clock.now()
        assert not driver.link_up
        while not driver.link_up and clock.now() < noise_ended + 5.0:
            await clock.advance(0.01)
        events += driver.pending_events()
        await driver.status()  # it answers again
        await driver.close()
        return events, noise_ended, clock.now()

    events, noise_ended, up_at = asyncio.run(body())
    # (a sim:// port closed is a device switched off: it reports a restart after LinkUp)
    assert [type(e) for e in events][:3] == [LinkDegraded, LinkDown, LinkUp]
    down = events[1]
    assert isinstance(down, LinkDown) and down.reason == "noisy"
    assert up_at - noise_ended <= timing.quiet_time + timing.quiet_time / 5 + 0.02


def test_a_line_noisy_in_bursts_is_reported_degraded_once_not_once_a_burst() -> None:
    timing = LinkTiming(degraded_errors=20, quiet_time=0.25, noisy_down_after=3.0)
    link = HostLink(MESSAGES, timing=timing)
    reported = []
    for burst in range(40):  # 40 bursts, 0.5 s apart: 20 s
        _, results = link.receive_data(NOISE_SAMPLE["framing"], now=burst * 0.5)
        reported += [r for r in results if isinstance(r, Degraded | TooNoisy)]
    assert [type(r) for r in reported] == [Degraded, Degraded]  # at 0 s and at 10 s
    assert not link.noisy  # each burst ends in a quiet spell: never down
