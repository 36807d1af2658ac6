"""The CS-100's line protocol, both ends, pure (no I/O, no asyncio): text lines to and from the
message objects tabled's drivers and simulators already speak (`drivers.messages`, and the shoe
reader's own in `drivers.shoe_reader.messages`), so the shoe's driver and model are tabled's
shoe reader with another wire.

ASCII, one message a line, each line ended by CR LF (the shoe takes LF alone too); no framing,
no sequence numbers, no checksum, no acknowledgement. The host sends one command and waits for
its one answer line:

    ID               ->  ID <make>|<model>|<serial>|<firmware>|<sha-256 of the firmware, hex>
    STATUS           ->  STATUS <ARMED|IDLE>[ POWERUP][ BUSY] EVENTS=<n> FAULTS=<names|NONE>
                         DOORS=<names|NONE>      (one line)
    ARM, ARM NEW     ->  OK, or ERR <reason>     (NEW: a freshly loaded shoe, count from 1)
    DISARM, CLEAR    ->  OK
    anything else    ->  ERR UNKNOWN_COMMAND

Every command may be sent twice (a lost answer is asked again): each is a state, not an
action. The shoe sends its events unasked, one a line, between answers:

    CARD <n> <card>[ UP][ LATE][ DUP]   draw n since the shoe was loaded; card: rank A 2-9 T J
                                        Q K then suit S H C D ("QH", "TS"); face up, out of
                                        phase (not armed), a second copy of a card already read
    MISREAD <n>                         draw n went past the reader unread
    CUT <n>                             the cut card came out after n cards
    FAULT <name>, CLEARED <name>        a fault latched, a fault gone (the shoe's fault names)
    DOOR <name> OPEN|CLOSED             the shoe taken out of its base, put back

Event lines carry no number: `EVENTS=` counts the event lines the shoe has sent since it
powered up, so the host notices one it lost at the next STATUS.
"""

from __future__ import annotations

from collections.abc import Mapping

from drivers.messages import (
    Ack,
    ClearFaults,
    DeviceEvent,
    DoorReport,
    FaultGone,
    FaultRaised,
    GetStatus,
    Identify,
    Identity,
    Message,
    Nak,
    NakReason,
    Status,
    StatusFlag,
)
from drivers.shoe_reader.messages import (
    DOOR_NAMES,
    FAULT_NAMES,
    Arm,
    CardDrawnEvent,
    CutCardEvent,
    Disarm,
    DrawFlag,
    MisreadEvent,
    ShoeMode,
)

MAX_LINE = 120  # characters; a longer line is noise
ANSWERS = frozenset({"ID", "STATUS", "OK", "ERR"})
EVENTS = frozenset({"CARD", "MISREAD", "CUT", "FAULT", "CLEARED", "DOOR"})
RANKS = "A23456789TJQK"  # rank 1 (ace) .. 13 (king)
SUITS = "SHCD"  # suit 0 spades, 1 hearts, 2 clubs, 3 diamonds (drivers.shoe_reader)
_FLAG_WORDS = {"UP": DrawFlag.FACE_UP, "LATE": DrawFlag.OUT_OF_PHASE, "DUP": DrawFlag.DUPLICATE}
_FAULT_CODES = {name.upper(): code for code, name in FAULT_NAMES.items()}
_DOOR_CODES = {name.upper(): door for door, name in DOOR_NAMES.items()}


class LineError(ValueError):
    """A line that is not a message of this protocol."""


def _names(bits: int, names: Mapping[int, str], size: int) -> str:
    said = [names.get(code, f"f{code}").upper() for code in range(size) if bits & (1 << code)]
    return ",".join(said) or "NONE"


def _bits(text: str, codes: Mapping[str, int], what: str) -> int:
    if text == "NONE":
        return 0
    bits = 0
    for name in text.split(","):
        if name not in codes:
            raise LineError(f"unknown {what} {name!r}")
        bits |= 1 << codes[name]
    return bits


def _number(text: str) -> int:
    if not text.isdigit() or len(text) > 5 or int(text) > 0xFFFF:
        raise LineError(f"{text!r} is not a count")
    return int(text)


# --- the host's end ---------------------------------------------------------------------------


def command_line(message: Message) -> str:
    """The line that sends `message`; ValueError for what the CS-100 cannot be asked."""
    if isinstance(message, Identify):
        return "ID"
    if isinstance(message, GetStatus):
        return "STATUS"
    if isinstance(message, ClearFaults):
        return "CLEAR"
    if isinstance(message, Arm):
        if message.mode != ShoeMode.CARDS:
            raise ValueError("the CS-100 reads cards, not tiles")
        return "ARM NEW" if message.new_shoe else "ARM"
    if isinstance(message, Disarm):
        return "DISARM"
    raise ValueError(f"the CS-100 has no command for {type(message).__name__}")


def read_answer(words: list[str]) -> Message:
    """The answer a line of `words` (its first in ANSWERS) carries; LineError if malformed."""
    head, rest = words[0], words[1:]
    if head == "OK" and not rest:
        return Ack()
    if head == "ERR" and len(rest) == 1:
        try:
            return Nak(NakReason[rest[0]])
        except KeyError:
            raise LineError(f"unknown refusal {rest[0]!r}") from None
    if head == "ID" and len(rest) == 1:
        fields = rest[0].split("|")
        if len(fields) != 5 or not all(fields):
            raise LineError("ID needs make|model|serial|firmware|hash")
        try:
            digest = bytes.fromhex(fields[4])
        except ValueError:
            raise LineError("the firmware hash is not hex") from None
        if len(digest) != 32:
            raise LineError("the firmware hash is not a SHA-256")
        make, model, serial, firmware = fields[:4]
        return Identity(make, model, serial, firmware, digest)
    if head == "STATUS" and rest and rest[0] in ("ARMED", "IDLE"):
        flags = 0
        values: dict[str, str] = {}
        for word in rest[1:]:
            key, sep, value = word.partition("=")
            if sep and key in ("EVENTS", "FAULTS", "DOORS") and key not in values:
                values[key] = value
            elif word == "POWERUP":
                flags |= StatusFlag.POWERED_UP
            elif word == "BUSY":
                flags |= StatusFlag.BUSY
            else:
                raise LineError(f"STATUS: {word!r}")
        if len(values) != 3:
            raise LineError("STATUS needs EVENTS=, FAULTS= and DOORS=")
        faults = _bits(values["FAULTS"], _FAULT_CODES, "fault")
        doors = _bits(values["DOORS"], _DOOR_CODES, "door")
        return Status(flags, faults, doors, _number(values["EVENTS"]), 0)
    raise LineError(f"malformed {head} line")


def read_event(words: list[str], number: int) -> DeviceEvent:
    """The event a line of `words` (its first in EVENTS) reports, numbered `number` by the
    host (the lines carry none); LineError if malformed."""
    head, rest = words[0], words[1:]
    if head == "CARD" and len(rest) >= 2 and len(rest[1]) == 2:
        sequence = _number(rest[0])
        rank, suit = RANKS.find(rest[1][0]) + 1, SUITS.find(rest[1][1])
        if rank == 0 or suit < 0:
            raise LineError(f"{rest[1]!r} is not a card")
        flags = 0
        for word in rest[2:]:
            if word not in _FLAG_WORDS or flags & _FLAG_WORDS[word]:
                raise LineError(f"CARD: {word!r}")
            flags |= _FLAG_WORDS[word]
        return CardDrawnEvent(number, sequence, rank, suit, flags)
    if head in ("MISREAD", "CUT") and len(rest) == 1:
        kind = MisreadEvent if head == "MISREAD" else CutCardEvent
        return kind(number, _number(rest[0]))
    if head in ("FAULT", "CLEARED") and len(rest) == 1:
        code = _FAULT_CODES.get(rest[0])
        if code is None:
            raise LineError(f"unknown fault {rest[0]!r}")
        return FaultRaised(number, code) if head == "FAULT" else FaultGone(number, code)
    if head == "DOOR" and len(rest) == 2 and rest[1] in ("OPEN", "CLOSED"):
        door = _DOOR_CODES.get(rest[0])
        if door is None:
            raise LineError(f"unknown door {rest[0]!r}")
        return DoorReport(number, door, int(rest[1] == "OPEN"))
    raise LineError(f"malformed {head} line")


# --- the shoe's end ---------------------------------------------------------------------------


def read_command(line: str) -> Message | None:
    """The command a host's line asks for; None for one the CS-100 does not know."""
    return {
        "ID": Identify(),
        "STATUS": GetStatus(),
        "CLEAR": ClearFaults(),
        "ARM": Arm(ShoeMode.CARDS, 0),
        "ARM NEW": Arm(ShoeMode.CARDS, 1),
        "DISARM": Disarm(),
    }.get(" ".join(line.split()))


def answer_line(answer: Message, armed: bool) -> str:
    """The line that carries the shoe's `answer` (`armed`: whether dealing is allowed)."""
    if isinstance(answer, Ack):
        return "OK"
    if isinstance(answer, Nak):
        return f"ERR {NakReason(answer.reason).name}"
    if isinstance(answer, Identity):
        digest = answer.firmware_hash.hex()
        return f"ID {answer.make}|{answer.model}|{answer.serial}|{answer.firmware}|{digest}"
    if isinstance(answer, Status):
        words = ["STATUS", "ARMED" if armed else "IDLE"]
        if answer.flags & StatusFlag.POWERED_UP:
            words.append("POWERUP")
        if answer.flags & StatusFlag.BUSY:
            words.append("BUSY")
        words += [
            f"EVENTS={(answer.events - answer.pending) & 0xFFFF}",  # the lines already sent
            f"FAULTS={_names(answer.faults, FAULT_NAMES, 16)}",
            f"DOORS={_names(answer.doors, DOOR_NAMES, 8)}",
        ]
        return " ".join(words)
    raise ValueError(f"the CS-100 has no answer line for {type(answer).__name__}")


def event_line(event: DeviceEvent) -> str:
    """The line that reports `event`."""
    if isinstance(event, CardDrawnEvent):
        card = RANKS[event.rank - 1] + SUITS[event.suit]
        flags = [word for word, flag in _FLAG_WORDS.items() if event.flags & flag]
        return " ".join(["CARD", str(event.sequence), card, *flags])
    if isinstance(event, MisreadEvent):
        return f"MISREAD {event.sequence}"
    if isinstance(event, CutCardEvent):
        return f"CUT {event.sequence}"
    if isinstance(event, FaultRaised | FaultGone):
        head = "FAULT" if isinstance(event, FaultRaised) else "CLEARED"
        return f"{head} {FAULT_NAMES.get(event.code, f'f{event.code}').upper()}"
    if isinstance(event, DoorReport):
        name = DOOR_NAMES.get(event.door, f"d{event.door}").upper()
        return f"DOOR {name} {'OPEN' if event.open else 'CLOSED'}"
    raise ValueError(f"the CS-100 has no line for {type(event).__name__}")
