"""The host end of the link rules, sans-I/O: sequence numbers, acknowledgement, retransmission,
duplicate and missed-event detection. Time comes in as `now` arguments; bytes go out as return
values, so the same object runs under asyncio, in a benchmark loop or in a replay harness.

The rules (docs/protocol.md, "Link"):

1. The host has at most one command outstanding. Its SEQ runs 1..255 and wraps to 1.
2. The device answers a command with one frame carrying the same SEQ: its reply, ACK or NAK.
3. No answer within `reply_timeout` (plus the frames' wire time at the baud rate): the host
   sends the same bytes again (same SEQ). After `tries` transmissions the command has failed
   and the link is down. A device that sees a command with the SEQ it last answered resends its
   cached answer and does not act again. IDENTIFY is exempt and clears that memory: it opens a
   session, so a restarted host whose first SEQ happens to equal the device's last one is
   never mistaken for a retransmission.
4. A frame that cannot be read is answered with NAK, SEQ 0, reason BAD_FRAME; the peer then
   resends its last frame at once (a try, for the host). An unknown CMD or bad payload gets
   NAK with the frame's SEQ and reason UNKNOWN_COMMAND or BAD_PAYLOAD. Hygiene on a noisy
   line (below): at most one BAD_FRAME NAK per resynchronisation, and on a degraded link NAKs
   and NAK-asked resends are rate-limited with backoff.
5. Device events are ACKed with their SEQ. An event identical to the last one (same SEQ, same
   event number and content) is a retransmission: ACKed again, not reported again. This memory
   survives a reconnect, so an event whose ACK was lost with the link is not reported twice.
6. Event numbers count 1, 2, ... from the device's power-up; a gap means events were lost
   (`Missed`). GET_STATUS reports the counter too, so a loss is noticed even when no later
   event arrives.

Noise. Line noise must never make the link spin: K stray STX bytes would otherwise be K NAKs
and K resent frames, each of which the noise can spoil again. So:

- After a BAD_FRAME NAK the host NAKs nothing more until a good frame has been read (a
  resynchronisation): a burst of noise costs one NAK. The peer's resend, or the host's own
  reply timeout, recovers what the noise spoiled.
- Errors closer together than `quiet_time` are one noise episode. An episode of
  `degraded_errors` errors makes the link degraded (`Degraded`, reported once an episode and
  at most once every DEGRADED_REPORT_INTERVAL); from then on NAKs and the resends a peer's NAK
  asks for are spaced by at least `nak_interval`, doubling with each up to `nak_backoff_max`.
  Sporadic damage (a quiet spell between) keeps the bare rule: every bad frame NAKed.
- A degraded episode lasting `noisy_down_after` seconds, or a command whose every try the
  noise spoiled on a degraded link, takes the link down (`TooNoisy`, in place of TimedOut):
  it sends nothing more and `noisy` stays set until `quiet(now)` sees `quiet_time` without
  an error, so the driver holds the device instead of spinning, and brings it back as soon
  as the line is clean (no reconnect backoff to wait out).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from drivers.framing import MAX_WIRE_FRAME, ErrorKind, FrameCodec, ProtocolError, Role
from drivers.messages import Ack, DeviceEvent, Message, Nak, NakReason, Status, StatusFlag

BITS_PER_BYTE = 10  # start + 8 data + stop
DEGRADED_REPORT_INTERVAL = 10.0  # seconds: a line noisy in bursts is reported degraded once


@dataclass(frozen=True)
class LinkTiming:
    reply_timeout: float = 0.2  # seconds after the frames' own wire time
    tries: int = 3  # transmissions of one command before the link is down
    poll_interval: float = 1.0  # GET_STATUS when the link has been idle this long
    reconnect_initial: float = 0.5  # first reconnect attempt after a link loss
    reconnect_max: float = 30.0  # backoff doubles up to this
    # Noise hygiene (see the module's docstring).
    quiet_time: float = 0.25  # no protocol error for this long ends a noise episode
    degraded_errors: int = 20  # errors in one episode that make the link degraded
    nak_interval: float | None = 0.05  # first spacing of NAKs and resends when degraded;
    # None: the bare protocol rule, every error NAKed and every NAK resent (a benchmark's peer)
    nak_backoff_max: float = 1.0  # the spacing doubles up to this
    noisy_down_after: float | None = 3.0  # a degraded episode this long takes the link down


@dataclass
class LinkCounters:
    """Error and traffic counters of one link (what `tabled devices` prints)."""

    frames_sent: int = 0
    frames_received: int = 0
    retransmits: int = 0
    timeouts: int = 0
    naks_sent: int = 0
    naks_received: int = 0
    naks_withheld: int = 0  # BAD_FRAME NAKs not sent (one per resynchronisation, rate limit)
    resends_withheld: int = 0  # resends a peer's NAK asked for, not made (rate limit)
    duplicates: int = 0
    missed_events: int = 0
    protocol_errors: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        # The withheld counters appear once they count something, as error kinds do.
        out = {
            k: v
            for k, v in vars(self).items()
            if isinstance(v, int) and (v or k not in _LISTED_WHEN_COUNTED)
        }
        out["protocol_errors"] = sum(self.protocol_errors.values())
        for kind, count in sorted(self.protocol_errors.items()):
            out[f"error_{kind}"] = count
        return out


_LISTED_WHEN_COUNTED = frozenset({"naks_withheld", "resends_withheld"})


@dataclass(frozen=True, slots=True)
class Replied:
    seq: int
    message: Message  # the reply, or Ack


@dataclass(frozen=True, slots=True)
class Refused:
    seq: int
    reason: int


@dataclass(frozen=True, slots=True)
class Received:
    event: DeviceEvent


@dataclass(frozen=True, slots=True)
class Missed:
    count: int


@dataclass(frozen=True, slots=True)
class TimedOut:
    seq: int
    message: Message


@dataclass(frozen=True, slots=True)
class Degraded:
    """The link is noisy: `errors` protocol errors in an episode of `seconds` so far."""

    errors: int
    seconds: float


@dataclass(frozen=True, slots=True)
class TooNoisy:
    """The link is down for noise (its degraded episode lasted `noisy_down_after`, or the
    noise spoiled every try of a command) until the line is quiet (`HostLink.quiet`)."""

    errors: int
    seconds: float


LinkResult = Replied | Refused | Received | Missed | TimedOut | ProtocolError | Degraded | TooNoisy

_NAK_FOR = {
    ErrorKind.UNKNOWN_COMMAND: NakReason.UNKNOWN_COMMAND,
    ErrorKind.BAD_PAYLOAD: NakReason.BAD_PAYLOAD,
}


# Enum members read per frame, bound once (a class attribute lookup on an Enum is slow).
_DIRECTION = ErrorKind.DIRECTION
_BAD_FRAME = NakReason.BAD_FRAME
_POWERED_UP = int(StatusFlag.POWERED_UP)
_ACK = Ack()  # messages are immutable: every event's ACK is this one


class Link(Protocol):
    """The host end of one device's link as `drivers.base.DeviceDriver` runs it, sans-I/O:
    messages go out as the bytes `request` returns, bytes come in through `receive_data`, and
    what they meant comes back as `LinkResult`s. `HostLink` is the tabled protocol's; a device
    of another protocol brings its own (its driver's `make_link`, docs/devices.md)."""

    counters: LinkCounters
    deadline: float | None  # when `check_timeout` must be called; None: nothing outstanding
    last_round_trip: float | None
    on_round_trip: Callable[[float], None] | None  # called with every round trip (metrics)
    noisy: bool  # down for noise until `quiet(now)`

    @property
    def busy(self) -> bool:
        """A command is outstanding: the next waits."""
        ...

    def reset(self, now: float | None = None) -> None: ...
    def quiet(self, now: float) -> bool: ...
    def request(self, message: Message, now: float) -> bytes: ...
    def check_timeout(self, now: float) -> tuple[bytes, list[LinkResult]]: ...
    def receive_data(self, data: bytes, now: float) -> tuple[bytes, list[LinkResult]]: ...
    def note_status(self, status: Status) -> Missed | None: ...


def wire_time(size: int, baudrate: int) -> float:
    return size * BITS_PER_BYTE / baudrate


class HostLink:
    """One device's link state at the host."""

    def __init__(
        self,
        messages: Mapping[int, type[Message]],
        address: int = 1,
        baudrate: int = 115200,
        timing: LinkTiming | None = None,
    ) -> None:
        self._messages = messages
        self.codec = FrameCodec(Role.HOST, messages)
        self.address = address
        self.baudrate = baudrate
        self.timing = timing or LinkTiming()
        self.counters = LinkCounters()
        self._next_seq = 1
        self._out_seq = 0
        self._out_message: Message | None = None
        self._out_bytes = b""
        self._out_sent_at = 0.0
        self._tries = 0
        self.deadline: float | None = None
        self.last_round_trip: float | None = None
        # Called with every round trip (a command's or a status poll's), for metrics.
        self.on_round_trip: Callable[[float], None] | None = None
        self._event_seq = -1
        self._last_event: DeviceEvent | None = None
        self._event_number: int | None = None
        self._received_since_status = False
        self._wait = self.timing.reply_timeout
        # noise hygiene
        self._nak_armed = True  # a BAD_FRAME NAK may go out (reset by every good frame)
        self._last_error_at = float("-inf")
        self._episode_start = 0.0
        self._episode_errors = 0
        self.degraded = False  # this noise episode made the link degraded
        self._degraded_reported_at = float("-inf")
        self.noisy = False  # taken down for noise, until quiet() sees a quiet spell
        self._spacing = self.timing.nak_interval or 0.0
        self._last_nak_at = float("-inf")
        self._last_resend_at = float("-inf")

    @property
    def busy(self) -> bool:
        return self._out_message is not None

    def reset(self, now: float | None = None) -> None:
        """Forget the outstanding command and the receive buffer (after a reconnect). `now`:
        the port opens now; a link down for noise counts its quiet spell from here, since
        nothing was heard while the port was closed."""
        self._out_message = None
        self.deadline = None
        self.codec = FrameCodec(Role.HOST, self._messages)
        self._nak_armed = True
        if now is not None and self.noisy:
            self._last_error_at = max(self._last_error_at, now)

    def quiet(self, now: float) -> bool:
        """True once no protocol error has come for `quiet_time`: the noise episode is over,
        and a link taken down for noise (`noisy`) may come up again."""
        if now - self._last_error_at < self.timing.quiet_time:
            return False
        self._end_episode()
        return True

    def _end_episode(self) -> None:
        self.noisy = self.degraded = False
        self._episode_errors = 0
        self._spacing = self.timing.nak_interval or 0.0

    def _note_noise(self, now: float, results: list[LinkResult]) -> None:
        timing = self.timing
        if now - self._last_error_at >= timing.quiet_time:
            self._end_episode()
            self._episode_start = now
        self._last_error_at = now
        self._episode_errors += 1
        if not self.degraded:
            if self._episode_errors >= timing.degraded_errors:
                self.degraded = True
                if now - self._degraded_reported_at >= DEGRADED_REPORT_INTERVAL:
                    self._degraded_reported_at = now
                    results.append(Degraded(self._episode_errors, now - self._episode_start))
        elif (
            not self.noisy
            and timing.noisy_down_after is not None
            and now - self._episode_start >= timing.noisy_down_after
        ):
            self.noisy = True
            self._out_message = None
            self.deadline = None
            results.append(TooNoisy(self._episode_errors, now - self._episode_start))

    def _spaced(self, now: float, last_at: float) -> bool:
        """May a NAK (or a resend) go out `now`, the last one having gone at `last_at`? Always
        while the link is not degraded; once it is, only `_spacing` after the last one, and
        the spacing doubles with each."""
        if not self.degraded or self.timing.nak_interval is None:
            return True
        if now - last_at < self._spacing:
            return False
        self._spacing = min(self._spacing * 2, self.timing.nak_backoff_max)
        return True

    def request(self, message: Message, now: float) -> bytes:
        if self._out_message is not None:
            raise RuntimeError("a command is already outstanding")
        seq = self._next_seq
        self._next_seq = 1 if seq == 255 else seq + 1
        data = self.codec.send(message, seq, self.address)
        self._out_seq, self._out_message, self._out_bytes = seq, message, data
        self._tries = 1
        self._out_sent_at = now
        # Both frames' wire time (the answer is assumed no longer than the largest frame).
        self._wait = (
            self.timing.reply_timeout
            + (len(data) + MAX_WIRE_FRAME) * BITS_PER_BYTE / self.baudrate  # wire_time()
        )
        self.deadline = now + self._wait
        self.counters.frames_sent += 1
        return data

    def check_timeout(self, now: float) -> tuple[bytes, list[LinkResult]]:
        if self._out_message is None or self.deadline is None or now < self.deadline:
            return b"", []
        self.counters.timeouts += 1
        if self._tries >= self.timing.tries:
            failed: LinkResult = TimedOut(self._out_seq, self._out_message)
            if (
                self.degraded
                and self._last_error_at >= self._out_sent_at
                and self.timing.noisy_down_after is not None
            ):
                # the noise spoiled every try: down for noise, up when the line is quiet
                self.noisy = True
                failed = TooNoisy(self._episode_errors, now - self._episode_start)
            self._out_message = None
            self.deadline = None
            return b"", [failed]
        return self._retransmit(now), []

    def _retransmit(self, now: float) -> bytes:
        self._tries += 1
        self.counters.retransmits += 1
        self.counters.frames_sent += 1
        self.deadline = now + self._wait
        return self._out_bytes

    def receive_data(self, data: bytes, now: float) -> tuple[bytes, list[LinkResult]]:
        out = b""
        results: list[LinkResult] = []
        for item in self.codec.decode(data):
            if type(item) is tuple:
                out += self._on_frame(*item, now, results)
            else:
                out += self._on_error(item, now, results)  # type: ignore[arg-type]
        return out, results

    def _on_error(self, error: ProtocolError, now: float, results: list[LinkResult]) -> bytes:
        kinds = self.counters.protocol_errors
        kinds[error.kind] = kinds.get(error.kind, 0) + 1
        results.append(error)
        if error.kind is _DIRECTION:
            return b""  # our own frame echoed back: nothing to answer
        self._note_noise(now, results)
        reason = _NAK_FOR.get(error.kind, _BAD_FRAME)
        if reason is _BAD_FRAME or error.seq is None:
            if self.timing.nak_interval is not None:
                # one NAK per resynchronisation, spaced when degraded, none when down
                if self.noisy or not (self._nak_armed and self._spaced(now, self._last_nak_at)):
                    self.counters.naks_withheld += 1
                    return b""
                self._nak_armed = False
                self._last_nak_at = now
            reason, seq = _BAD_FRAME, 0
        else:
            # an intact frame (its CRC holds) with an unknown CMD or a bad payload: itself a
            # resynchronisation, answered with its SEQ so the peer does not retry it
            self._nak_armed = True
            if self.noisy:
                return b""
            seq = error.seq
        self.counters.naks_sent += 1
        self.counters.frames_sent += 1
        return self.codec.send(Nak(reason), seq, self.address)

    def _on_frame(
        self, address: int, seq: int, message: Message, now: float, results: list[LinkResult]
    ) -> bytes:
        self.counters.frames_received += 1
        self._nak_armed = True  # resynchronised
        if self.noisy:
            return b""  # down for noise: nothing is answered until the driver reconnects
        if address != self.address:
            return b""
        kind = message.KIND
        if isinstance(message, DeviceEvent):
            self.counters.frames_sent += 1
            ack = self.codec.send(_ACK, seq, address)
            if seq == self._event_seq and message == self._last_event:
                self.counters.duplicates += 1
                return ack
            self._event_seq = seq
            self._last_event = message
            self._note_event_number(message.number, results)
            results.append(Received(message))
            return ack
        if kind == "command":
            self.counters.naks_sent += 1
            self.counters.frames_sent += 1
            return self.codec.send(Nak(NakReason.NOT_ALLOWED), seq, address)
        if isinstance(message, Nak):
            self.counters.naks_received += 1
            if seq == 0 and message.reason == _BAD_FRAME:
                if self._out_message is not None and self._tries < self.timing.tries:
                    if not self._spaced(now, self._last_resend_at):
                        self.counters.resends_withheld += 1  # the reply timeout resends
                        return b""
                    self._last_resend_at = now
                    return self._retransmit(now)
                return b""
        if self._out_message is None or seq != self._out_seq:
            self.counters.duplicates += 1  # a late answer to a command already settled
            return b""
        self._out_message = None
        self.deadline = None
        self.last_round_trip = now - self._out_sent_at
        if self.on_round_trip is not None:
            self.on_round_trip(self.last_round_trip)
        if isinstance(message, Nak):
            results.append(Refused(seq, message.reason))
        else:
            results.append(Replied(seq, message))
        return b""

    def _note_event_number(self, number: int, results: list[LinkResult]) -> None:
        self._received_since_status = True
        last = self._event_number
        self._event_number = number
        if last is None:
            return
        gap = (number - last - 1) & 0xFFFF
        if 0 < gap < 0x8000:  # a larger "gap" is a counter that restarted at power-up
            self.counters.missed_events += gap
            results.append(Missed(gap))

    def note_status(self, status: Status) -> Missed | None:
        """Compare the device's event counter with the events received."""
        delivered = (status.events - status.pending) & 0xFFFF
        last = self._event_number
        received, self._received_since_status = self._received_since_status, False
        if last is None:
            self._event_number = delivered
            return None
        if status.flags & _POWERED_UP and not received:
            # It restarted since the last STATUS and no event came since: every event it
            # delivered since the power-up (its counter began again at 0) was lost, however
            # its new count compares with the old one.
            self._event_number = delivered
            if delivered:
                self.counters.missed_events += delivered
                return Missed(delivered)
            return None
        gap = (delivered - last) & 0xFFFF
        if 0 < gap < 0x8000:
            self._event_number = delivered
            self.counters.missed_events += gap
            return Missed(gap)
        if gap >= 0x8000 and (status.events - last) & 0xFFFF >= 0x8000:
            # Even its whole counter, queued events included, is behind ours: it restarted and
            # its counter began again.
            self._event_number = delivered
        # Otherwise only `delivered` is behind: the STATUS was built while our ACK of an event
        # was on the wire (it counts an event delivered once it has the ACK). Keep our count.
        return None
