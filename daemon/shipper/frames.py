"""The lines as NATS HPUB frames, a batch at a time.

A line is published on ``<prefix>.<table>.<event>`` with ``Nats-Msg-Id: <table>:<seq>`` (and the
shipper's other headers: the stream it expects, the site) and the line's exact bytes as the
body; its acknowledgement is asked on ``<inbox>.<seq>``. The frames of a whole batch are built
here and handed to the client at once: the client's per-message publish (header checks, one
buffer append each) cost more CPU than everything else the shipper does per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from daemon.shipper.tail import Line


async def write_frames(nc: Any, frames: list[bytes]) -> None:
    """A batch's frames onto the client's connection (a nats-py Client)."""
    transport = nc._transport
    if nc._pending or transport is None:
        # Something of the client's waits to be written first (a subscription, a head): behind
        # it, by the client's own flusher, in order.
        await nc._send_command(b"".join(frames))
        await nc._flush_pending()
    else:
        # Straight onto the socket: handed to the client's flusher task, a batch cost one more
        # turn of the loop, and the thread one more take of the interpreter lock from the
        # table's. At most `window` lines are ever unacknowledged, so the client's drain (its
        # back-pressure) has nothing to hold back.
        transport.writelines(frames)


class Frames:
    """Builds one table's frames (its subjects, each encoded once)."""

    def __init__(self, table_id: str, subject_prefix: str, headers: dict[str, str]) -> None:
        self._prefix = subject_prefix  # `<prefix>.<table>.`
        self._table = table_id.encode()
        self._header_tail = b"".join(
            b"%s: %s\r\n" % (key.encode(), value.encode()) for key, value in headers.items()
        )
        # The header's length less its seq's digits: NATS/1.0, the id, the other headers.
        self._fixed = (
            len(b"NATS/1.0\r\nNats-Msg-Id: :\r\n\r\n") + len(self._table) + len(self._header_tail)
        )
        self._subjects: dict[str, bytes] = {}  # each event's subject, encoded once

    def build(
        self, lines: Sequence[Line], inbox: str, max_payload: int
    ) -> tuple[list[bytes], list[Line]]:
        """The frames of `lines` in order, and the lines larger than the server takes (no
        frame for them)."""
        frames: list[bytes] = []
        too_large: list[Line] = []
        append = frames.append
        reply = inbox.encode()
        subjects, table, tail, fixed = self._subjects, self._table, self._header_tail, self._fixed
        for line in lines:
            seq, event, data = line
            if len(data) > max_payload:
                too_large.append(line)
                continue
            subject = subjects.get(event)
            if subject is None:
                subject = subjects[event] = (self._prefix + event).encode()
            size = fixed + len(str(seq))
            # One frame, one formatting: HPUB subject reply hdr_len total_len, headers, body.
            append(
                b"HPUB %s %s.%d %d %d\r\nNATS/1.0\r\nNats-Msg-Id: %s:%d\r\n%s\r\n%s\r\n" % (
                    subject, reply, seq, size, size + len(data), table, seq, tail, data,
                )
            )  # fmt: skip
        return frames, too_large
