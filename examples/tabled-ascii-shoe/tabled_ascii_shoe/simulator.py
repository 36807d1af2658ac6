"""The CS-100 simulated: tabled's simulated shoe reader (`simulators.shoe_reader`: the cards it
deals from the table world, its faults and its door) behind the CS-100's own wire, so
`sim://ascii_shoe` and `tabled sim` serve it as they serve tabled's own devices.

It answers each command line with one line and sends each event as a line at once: nothing
is acknowledged or sent again (the host notices a line it lost from STATUS's count). The
common `bad_crc` condition garbles every second line it sends.
"""

from __future__ import annotations

from typing import ClassVar

from drivers.messages import Nak, NakReason
from simulators.shoe_reader import ShoeReaderModel
from tabled_ascii_shoe.wire import MAX_LINE, answer_line, event_line, read_command


class AsciiShoeModel(ShoeReaderModel):
    MODEL: ClassVar[str] = "CS-100"
    FIRMWARE: ClassVar[str] = "3.1.4"
    # DEVICE stays the shoe reader's: in the table world it is the shoe.

    def _reset_link(self) -> None:
        super()._reset_link()
        self._line = bytearray()
        self._garble = False

    def receive_data(self, data: bytes) -> None:
        with self.lock:
            if not self.answering:
                return
            self._line += data
            while (end := self._line.find(b"\n")) >= 0:
                raw = bytes(self._line[:end]).rstrip(b"\r")
                del self._line[: end + 1]
                if raw:
                    self._on_line(raw)
            if len(self._line) > MAX_LINE:
                self.counters["error_oversized"] = self.counters.get("error_oversized", 0) + 1
                self._line.clear()
            self._drain()

    def _on_line(self, raw: bytes) -> None:
        self.counters["frames_received"] += 1
        text = raw.decode("ascii", errors="replace")
        command = read_command(text) if len(raw) <= MAX_LINE else None
        if command is None:
            self.counters["naks_sent"] += 1
            self._send_line(answer_line(Nak(NakReason.UNKNOWN_COMMAND), self.shoe_armed))
            return
        self._send_line(answer_line(self._dispatch(command), self.shoe_armed))

    def _send_next_event(self) -> None:
        while self._events and self.answering:
            self._send_line(event_line(self._events.popleft()))

    def _send_line(self, line: str) -> None:
        data = line.encode("ascii") + b"\r\n"
        if "bad_crc" in self.conditions:
            self._garble = not self._garble
            if self._garble:
                data = b"#" + data[1:]
        self.output(data)
