"""The broker's answers to the lines in flight, each line's own acknowledgement (docs/floor.md).

The answers come on the connection's inbox, one subject a line (``<inbox>.<seq>``). They are
taken off the client's protocol parser as they come (`listen`) and read in batches by the pump
(`take`): a PubAck marks its line done; a `duplicate` is kept for the stream's message to be
checked against the line (`daemon.shipper.stored`); an error JetStream will never get past is
the line refused for good; anything else is a failure of the connection, after which every
unacknowledged line is sent again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from nats.protocol.parser import AWAITING_CONTROL_LINE

from daemon.shipper.broker import FeedError
from daemon.shipper.tail import Line
from daemon.shipper.window import Window

if TYPE_CHECKING:
    import asyncio

    from nats.aio.client import Client

# JetStream error codes that will never succeed on a resend of the same line.
REFUSED_FOR_GOOD = {
    10054: "message size exceeds the stream's maximum",
}
# The pump is woken by this many acknowledgements waiting even before the last line's comes.
ACKS_WAKE = 64
MSG = b"MSG "
CRLF = b"\r\n"


class Ack(NamedTuple):
    """A JetStream acknowledgement as `Answers.take_one` reads it (the fields of nats-py's
    `Msg` it uses)."""

    subject: str
    data: bytes
    headers: dict[str, str] | None


class Answers:
    """Reads the answers to the lines in flight in `window`, marking each line done
    (acknowledged, or refused for good: `on_refused(line, reason)`) or its answer a duplicate to
    check (`duplicates`: seq -> the stream seq of the message holding its id);
    `on_failure(error)` for an answer after which the connection must start again."""

    def __init__(
        self,
        window: Window,
        *,
        table_id: str,
        stream: str,
        subject_prefix: str,
        on_refused: Callable[[Line, str], None],
        on_failure: Callable[[FeedError], None],
    ) -> None:
        self._inflight = window.inflight
        self._done = window.done
        self._table_id = table_id
        self._stream = stream
        self._prefix = subject_prefix
        self._on_refused = on_refused
        self._on_failure = on_failure
        # Acknowledgements as they came off the wire (subject, body, raw headers), unread.
        self.waiting: list[tuple[bytes, bytes, bytes | None]] = []
        self.last_subject = b"."  # the end of the last line's ack subject: `.SEQ`
        self.duplicates: dict[int, int] = {}
        # Called once a read has marked plain PubAcks done (`last`: the last line sent is among
        # them): may move the cursor there and then; True if the pump must wake all the same.
        self.on_acks: Callable[[bool], bool] = lambda last: last

    def listen(self, nc: Client, sid: int, wake: asyncio.Event) -> None:
        """The acknowledgements (on this connection's inbox subscription `sid`) are taken from
        the client's protocol parser as they come, into a list the pump reads in one go: the
        client's own path (headers parsed, a `Msg` built, a queue and a task, a callback) cost
        more CPU than everything else the shipper does per line."""
        process_msg = nc._process_msg
        acks = self.waiting

        async def take(
            msg_sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes
        ) -> None:
            # `headers` is None for a message without (nats-py's own annotation says bytes).
            if msg_sid != sid:
                await process_msg(msg_sid, subject, reply, data, headers)
                return
            acks.append((subject, data, headers))
            # The pump is woken once the last line sent is answered (acknowledgements come in
            # order), or many are waiting, or an answer is not a plain PubAck: one turn of the
            # loop a batch, not one an answer.
            if (
                subject.endswith(self.last_subject)
                or len(acks) >= ACKS_WAKE
                or headers is not None
                or b'"duplicate"' in data
            ):
                wake.set()

        nc._process_msg = take  # type: ignore[method-assign,assignment]
        # And before the parser: a read that begins with acknowledgements to this inbox is read
        # here, each plain PubAck marking its line done at once; from the first frame that is
        # anything else (or cut short), the client's parser takes the rest as it always did.
        parser = nc._ps
        parse = parser.parse
        sid_text = b"%d" % sid

        async def parse_acks(data: bytes = b"") -> None:
            if parser.buf or parser.state != AWAITING_CONTROL_LINE or not data.startswith(MSG):
                await parse(data)
                return
            used = self._read_acks(data, sid_text, wake)
            if used < len(data):
                await parse(data[used:])

        parser.parse = parse_acks  # type: ignore[method-assign]

    def _read_acks(self, data: bytes, sid: bytes, wake: asyncio.Event) -> int:
        """Read the whole ``MSG <inbox>.<seq> <sid> <size>`` frames at the start of `data`
        (this subscription's, no reply subject); how many bytes they took. A plain PubAck
        marks its line done; any other answer waits in `waiting` for `take`, as the client's
        path leaves it."""
        inflight, done, acks = self._inflight, self._done, self.waiting
        last, last_answered, other, marked = self.last_subject, False, False, False
        pos, end_of_data = 0, len(data)
        while data.startswith(MSG, pos):
            eol = data.find(CRLF, pos)
            if eol < 0:
                break
            parts = data[pos + 4 : eol].split()
            if len(parts) != 3 or parts[1] != sid or not parts[2].isdigit():
                break
            start = eol + 2
            end = start + int(parts[2])
            if end + 2 > end_of_data or data[end : end + 2] != CRLF:
                break
            pos = end + 2
            subject, body = parts[0], data[start:end]
            if subject.endswith(last):
                last_answered = True
            if (
                body.startswith(b'{"stream"')
                and b'"error"' not in body
                and b'"duplicate"' not in body
            ):
                try:
                    seq = int(subject[subject.rindex(b".") + 1 :])
                except ValueError:
                    continue
                if seq in inflight:
                    done.add(seq)  # a PubAck: {"stream":"TABLED","seq":N}
                    marked = True
            else:
                acks.append((subject, body, None))
                other = True
        if other:
            wake.set()  # an answer only the pump reads
        elif marked:
            if self.on_acks(last_answered) or len(done) >= ACKS_WAKE:
                wake.set()
        elif last_answered:
            wake.set()  # answered, though not in flight: as before, the pump looks
        return pos

    async def take(self, nc: Client) -> None:
        """Read every acknowledgement waiting."""
        acks = self.waiting[:]
        self.waiting.clear()
        inflight, done = self._inflight, self._done
        for subject, data, headers in acks:
            try:
                seq = int(subject[subject.rindex(b".") + 1 :])
            except ValueError:
                continue
            if (
                headers is None
                and data.startswith(b'{"stream"')
                and b'"error"' not in data
                and b'"duplicate"' not in data
            ):
                if seq in inflight:
                    done.add(seq)  # a PubAck: {"stream":"TABLED","seq":N}
                continue
            # Anything else (a duplicate, an error, a status), rarely: read as the client would.
            ack = Ack(subject.decode(), data, await nc._process_headers(headers))
            try:
                self.take_one(ack)
            except Exception as exc:
                raise FeedError(f"handling an acknowledgement: {exc!r}") from exc

    def take_one(self, msg: Ack) -> None:
        try:
            seq = int(msg.subject.rpartition(".")[2])
        except ValueError:
            return
        line = self._inflight.get(seq)
        if line is None:
            return
        data = msg.data
        if msg.headers is None and data.startswith(b'{"stream"') and b'"error"' not in data:
            if b'"duplicate"' in data:  # {"stream":"TABLED","seq":N,"duplicate":true}
                self._duplicate(line, data)
            else:
                self._done.add(seq)  # a PubAck: {"stream":"TABLED", "seq":N}
            return
        status = (msg.headers or {}).get("Status")
        if status == "503":
            self._on_failure(
                FeedError(
                    f"no JetStream stream takes {self._prefix}{line.event} (is stream "
                    f"{self._stream} there?)"
                )
            )
        else:
            try:
                body = json.loads(msg.data)
            except ValueError:
                body = {}
            error = body.get("error") if isinstance(body, dict) else {"description": data}
            if error is None and "seq" in body:
                if body.get("duplicate"):
                    self._duplicate(line, data)
                else:
                    self._done.add(seq)
            elif not isinstance(error, dict):
                self._on_failure(FeedError(f"an answer that is not a JetStream ack: {data[:80]!r}"))
            else:
                code = error.get("err_code")
                text = str(error.get("description", error))
                if code in REFUSED_FOR_GOOD:
                    self._on_refused(line, text)
                else:
                    self._on_failure(FeedError(f"JetStream refused {self._table_id}:{seq}: {text}"))

    def _duplicate(self, line: Line, ack: bytes) -> None:
        """JetStream dropped this line as a duplicate of the message it stored under the same
        id: it is acknowledged only once that message is read and found to be this line (a
        resend after a reconnection); otherwise it is a conflict (`daemon.shipper.stored`)."""
        try:
            stored = int(json.loads(ack)["seq"])
        except (ValueError, KeyError, TypeError):
            stored = 0  # no seq to read: the line goes out as a conflict all the same
        self.duplicates[line.seq] = stored
