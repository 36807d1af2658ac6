"""The CS-100's driver: tabled's shoe reader driver (the card facts, duplicates, arm and
disarm, the faults and the shoe's door: `drivers.shoe_reader.driver`) over the CS-100's own
link, `LineLink`: its commands and answers are text lines (`tabled_ascii_shoe.wire`).

Everything else is the driver base's, unchanged: opening the port through pyserial, IDENTIFY
and STATUS when the link comes up, the check of the build against the approved list (a device
command is refused, NotApproved, while the build is not on it), status polling, reconnection
with backoff, and every fact as a `DriverEvent`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self

from drivers.framing import ErrorKind, ProtocolError
from drivers.link import (
    BITS_PER_BYTE,
    LinkCounters,
    LinkResult,
    LinkTiming,
    Missed,
    Received,
    Refused,
    Replied,
    TimedOut,
)
from drivers.messages import Message, Nak, Status, StatusFlag
from drivers.settings import DeviceSettings
from drivers.shoe_reader.driver import ShoeReaderDriver
from tabled_ascii_shoe.wire import (
    ANSWERS,
    EVENTS,
    MAX_LINE,
    LineError,
    command_line,
    read_answer,
    read_event,
)

LINE_ENDS = {"crlf": b"\r\n", "lf": b"\n"}  # the `line_end` option: the shoe's DIP switch 3


class LineLink:
    """The host end of the CS-100's link (a `drivers.link.Link`), sans-I/O: one command
    outstanding, its answer the next answer line, sent again after `reply_timeout` up to
    `tries` times (every CS-100 command may be repeated); event lines numbered as they come,
    and a line lost noticed by STATUS's count of the lines the shoe sent."""

    def __init__(self, baudrate: int, timing: LinkTiming, line_end: bytes = b"\r\n") -> None:
        self.baudrate = baudrate
        self.timing = timing
        self.line_end = line_end
        self.counters = LinkCounters()
        self.deadline: float | None = None
        self.last_round_trip: float | None = None
        self.on_round_trip: Callable[[float], None] | None = None
        self.noisy = False  # a line protocol resynchronises at every line end: never down for noise
        self._buffer = bytearray()
        self._out: Message | None = None
        self._out_bytes = b""
        self._sent_at = 0.0
        self._tries = 0
        self._wait = timing.reply_timeout
        self._event_number: int | None = None  # event lines the shoe has sent, as we count them
        self._received_since_status = False

    @property
    def busy(self) -> bool:
        return self._out is not None

    def reset(self, now: float | None = None) -> None:
        self._buffer.clear()
        self._out = None
        self.deadline = None

    def quiet(self, now: float) -> bool:
        return True

    def request(self, message: Message, now: float) -> bytes:
        if self._out is not None:
            raise RuntimeError("a command is already outstanding")
        data = command_line(message).encode("ascii") + self.line_end
        self._out, self._out_bytes, self._sent_at, self._tries = message, data, now, 1
        # the command's wire time and the longest answer's
        wire = (len(data) + MAX_LINE + 2) * BITS_PER_BYTE / self.baudrate
        self._wait = self.timing.reply_timeout + wire
        self.deadline = now + self._wait
        self.counters.frames_sent += 1
        return data

    def check_timeout(self, now: float) -> tuple[bytes, list[LinkResult]]:
        if self._out is None or self.deadline is None or now < self.deadline:
            return b"", []
        self.counters.timeouts += 1
        if self._tries >= self.timing.tries:
            failed = TimedOut(0, self._out)
            self._out = self.deadline = None
            return b"", [failed]
        self._tries += 1
        self.counters.retransmits += 1
        self.counters.frames_sent += 1
        self.deadline = now + self._wait
        return self._out_bytes, []

    def receive_data(self, data: bytes, now: float) -> tuple[bytes, list[LinkResult]]:
        results: list[LinkResult] = []
        buffer = self._buffer
        buffer += data
        while (end := buffer.find(b"\n")) >= 0:
            raw = bytes(buffer[:end]).rstrip(b"\r")
            del buffer[: end + 1]
            if raw:
                self._on_line(raw, now, results)
        if len(buffer) > MAX_LINE:  # no line end in sight: noise
            self._error(ErrorKind.OVERSIZED, bytes(buffer), "no line end", results)
            buffer.clear()
        return b"", results

    def _error(self, kind: ErrorKind, raw: bytes, detail: str, results: list[LinkResult]) -> None:
        errors = self.counters.protocol_errors
        errors[kind] = errors.get(kind, 0) + 1
        results.append(ProtocolError(kind, raw, detail=detail))

    def _on_line(self, raw: bytes, now: float, results: list[LinkResult]) -> None:
        if len(raw) > MAX_LINE or not raw.isascii() or not raw.decode("ascii").isprintable():
            self._error(ErrorKind.GARBAGE, raw, "not a line of printable ASCII", results)
            return
        words = raw.decode("ascii").split()
        head = words[0] if words else ""
        try:
            if head in EVENTS:
                number = ((self._event_number or 0) + 1) & 0xFFFF
                event = read_event(words, number)
                self._event_number, self._received_since_status = number, True
                self.counters.frames_received += 1
                results.append(Received(event))
            elif head in ANSWERS:
                answer = read_answer(words)
                self.counters.frames_received += 1
                self._answered(answer, now, results)
            else:
                self._error(ErrorKind.UNKNOWN_COMMAND, raw, f"no line starts {head!r}", results)
        except LineError as exc:
            self._error(ErrorKind.BAD_PAYLOAD, raw, str(exc), results)

    def _answered(self, answer: Message, now: float, results: list[LinkResult]) -> None:
        if self._out is None:
            self.counters.duplicates += 1  # a late answer to a command already settled
            return
        self._out = self.deadline = None
        self.last_round_trip = now - self._sent_at
        if self.on_round_trip is not None:
            self.on_round_trip(self.last_round_trip)
        if isinstance(answer, Nak):
            self.counters.naks_received += 1
            results.append(Refused(0, answer.reason))
        else:
            results.append(Replied(0, answer))

    def note_status(self, status: Status) -> Missed | None:
        """Compare the shoe's count of the event lines it sent with ours."""
        last, self._event_number = self._event_number, status.events
        received, self._received_since_status = self._received_since_status, False
        if last is None:
            return None
        if status.flags & StatusFlag.POWERED_UP and not received:
            # it restarted and no line came since: every line it sent since then was lost
            gap = status.events
        else:
            gap = (status.events - last) & 0xFFFF
        if 0 < gap < 0x8000:
            self.counters.missed_events += gap
            return Missed(gap)
        return None


class AsciiShoeDriver(ShoeReaderDriver):
    """The ACME CS-100 at the table's shoe reader's place."""

    def __init__(self, port: str, *, line_end: str = "crlf", **kwargs: Any) -> None:
        if line_end not in LINE_ENDS:
            raise ValueError(f"line_end {line_end!r}: one of {', '.join(LINE_ENDS)}")
        self.line_end = LINE_ENDS[line_end]  # before the base makes the link
        super().__init__(port, **kwargs)

    def make_link(self, address: int) -> LineLink:
        return LineLink(self.baudrate, self.timing, self.line_end)

    @classmethod
    def from_config(cls, config: DeviceSettings, **kwargs: Any) -> Self:
        return super().from_config(
            config, line_end=config.options.get("line_end", "crlf"), **kwargs
        )
