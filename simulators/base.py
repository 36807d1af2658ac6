"""The simulated device base: the device end of the link rules, faults, doors and events.

A `DeviceModel` is sans-I/O like the codec: bytes from the host go in through `receive_data`,
bytes for the host leave through the `output` callable it was given, and time comes from a
`Clock`. The same model therefore runs behind an in-process `sim://` port, behind a
pseudo-terminal (`tabled sim`) and in unit tests with manual time.

Device end of the link (docs/protocol.md, "Link"): it answers every command with one frame
carrying the command's SEQ; a command with the SEQ it answered last is a retransmission, so
it resends the cached answer and does not act again. Events are numbered from 1 at power-up,
sent one at a time with the device's own SEQ, and resent every EVENT_TIMEOUT seconds until
ACKed (at most EVENT_TRIES times; the event counter in STATUS then tells the host one was lost).
A NAK with SEQ 0 makes it resend its last frame at once.

Faults are injected by name. One-shot faults (`ONE_SHOT`) spoil the next operation (the next
shuffle jams, the next throw has a tilted die); conditions (`CONDITIONS`) hold until cleared
(a lid left open, a reader lost, the device not answering). Every model knows the common
conditions `no_response`, `bad_crc` (every second frame it sends has a corrupted CRC),
`unapproved_firmware` (it identifies with a build no config approves) and `replaced` (another
unit of the same build is on the line: the same make, model and firmware, another serial).

Mechanical delays are multiplied by the model's speed factor; at speed 0 a model answers at
once, with no timer, so a whole simulated round costs no waiting.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import structlog

from drivers.clock import Clock, TimerHandle
from drivers.framing import ErrorKind, Frame, FrameCodec, ProtocolError, Role
from drivers.messages import (
    Ack,
    ClearFaults,
    CommonFault,
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
from simulators.world import TableWorld

Output = Callable[[bytes], None]
COMMON_CONDITIONS = frozenset({"no_response", "bad_crc", "unapproved_firmware", "replaced"})
CURED_BY_POWER_CYCLE = frozenset({"no_response"})
SIM_MAKE = "tabled-sim"


class UnknownFault(ValueError):
    pass


def firmware_digest(model: str, firmware: str) -> bytes:
    """The simulated firmware image's SHA-256 (a stand-in for hashing the real image)."""
    return hashlib.sha256(f"{SIM_MAKE} {model} firmware {firmware}".encode()).digest()


class DeviceModel:
    DEVICE: ClassVar[str] = "device"
    MESSAGES: ClassVar[Mapping[int, type[Message]]]
    MODEL: ClassVar[str] = "SIM"
    FIRMWARE: ClassVar[str] = "1.0.0"
    FAULT_NAMES: ClassVar[Mapping[int, str]] = {}
    DOOR_NAMES: ClassVar[Mapping[int, str]] = {}
    ONE_SHOT: ClassVar[frozenset[str]] = frozenset()
    CONDITIONS: ClassVar[frozenset[str]] = frozenset()
    EVENT_TIMEOUT: ClassVar[float] = 0.25  # link timing: real seconds, not scaled by speed
    EVENT_TRIES: ClassVar[int] = 3
    # The `sim://` URL options this model understands (its honest faults of randomness).
    OPTIONS: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self,
        *,
        world: TableWorld,
        scheduler: Clock,
        output: Output,
        seed: int | None = None,
        faults: Iterable[str] = (),
        speed: float = 0.0,
        address: int = 1,
        options: Mapping[str, str] | None = None,
    ) -> None:
        self.world = world
        self.lock = world.lock  # one lock per table: models and the world change together
        self.scheduler = scheduler
        self.output = output
        self.seed = seed
        self.rng: random.Random = (
            random.Random(seed) if seed is not None else secrets.SystemRandom()
        )
        self.speed = speed
        self.address = address
        self.serial = f"SIM-{self.MODEL}-{seed if seed is not None else 0:04d}"
        self.configure(self.parse_options(dict(options or {})))
        self.armed: list[str] = []
        self.conditions: set[str] = set()
        self.latched = 0
        self.doors = 0
        self.busy = False
        self.counters: dict[str, int] = {"frames_received": 0, "duplicates": 0, "naks_sent": 0}
        self._deferred: deque[Callable[[], None]] = deque()
        self._epoch = 0
        self._log = structlog.get_logger("tabled.simulators").bind(device=self.DEVICE)
        self._reset_link()
        self.flags: int = StatusFlag.POWERED_UP
        for fault in faults:
            self.check_fault(fault)
            if fault in self.ONE_SHOT:
                self.armed.append(fault)
            else:
                self.conditions.add(fault)
        kept_conditions, self.latched = world.kept(self.DEVICE)
        self.conditions |= kept_conditions
        world.attach(self.DEVICE, self)
        with self.lock:
            for fault in sorted(self.conditions):
                self.on_condition(fault, True)
            self._drain()

    @classmethod
    def parse_options(cls, options: Mapping[str, str]) -> Any:
        """The model's options, checked (ValueError naming the bad one); a model with
        `OPTIONS` overrides this and `configure`."""
        unknown = set(options) - cls.OPTIONS
        if unknown:
            raise ValueError(f"{cls.DEVICE} has no option(s) {', '.join(sorted(unknown))}")
        return None

    def configure(self, options: Any) -> None:
        """Take the options `parse_options` checked."""

    def _reset_link(self) -> None:
        self.codec = FrameCodec(Role.DEVICE, self.MESSAGES)
        self._last_seq: int | None = None
        self._last_answer = b""
        self._last_sent = b""
        self._events: deque[DeviceEvent] = deque()
        self._event_counter = 0
        self._next_event_seq = 1
        self._pending: tuple[int, bytes] | None = None
        self._pending_tries = 0
        self._retry: TimerHandle | None = None
        self._corrupt_next = False

    # --- host side ------------------------------------------------------------------------

    @property
    def answering(self) -> bool:
        """The device hears and speaks now: powered, and its firmware not hung."""
        return "no_response" not in self.conditions and not self.flags & _DARK

    def receive_data(self, data: bytes) -> None:
        with self.lock:
            if not self.answering:
                return
            self.codec.receive_data(data)
            while (item := self.codec.next_event()) is not None:
                if isinstance(item, Frame):
                    self._on_frame(item)
                else:
                    self._on_error(item)
            self._drain()

    def close(self) -> None:
        """The port is closed: the device is switched off. What it would still have when it
        comes back is kept in the world for the next model of it: its latched faults
        (non-volatile, DOMAIN R5) and its physical conditions (a lid left open, a reader lost,
        a build not approved); a hung firmware (`no_response`) is cured by the power cycle."""
        with self.lock:
            self._epoch += 1
            if self._retry is not None:
                self._retry.cancel()
            self.world.keep(self.DEVICE, self.conditions - CURED_BY_POWER_CYCLE, self.latched)
            self.world.detach(self.DEVICE, self)

    def _on_error(self, error: ProtocolError) -> None:
        key = f"error_{error.kind}"
        self.counters[key] = self.counters.get(key, 0) + 1
        if error.kind is ErrorKind.DIRECTION:
            return
        if error.kind is ErrorKind.UNKNOWN_COMMAND and error.seq is not None:
            self._nak(error.seq, NakReason.UNKNOWN_COMMAND)
        elif error.kind is ErrorKind.BAD_PAYLOAD and error.seq is not None:
            self._nak(error.seq, NakReason.BAD_PAYLOAD)
        else:
            self._nak(0, NakReason.BAD_FRAME)

    def _nak(self, seq: int, reason: NakReason) -> None:
        self.counters["naks_sent"] += 1
        self._send(self.codec.send(Nak(reason), seq, self.address))

    def _on_frame(self, frame: Frame) -> None:
        if frame.address != self.address:
            return
        self.counters["frames_received"] += 1
        message = frame.message
        if isinstance(message, Ack):
            if self._pending is not None and frame.seq == self._pending[0]:
                self._event_done()
            return
        if isinstance(message, Nak):
            if frame.seq == 0:
                if self._last_sent:
                    self._send(self._last_sent)
            elif self._pending is not None and frame.seq == self._pending[0]:
                self._event_done()  # the host cannot use this event; the counter records it
            return
        if message.KIND != "command":
            self._nak(frame.seq, NakReason.NOT_ALLOWED)
            return
        if isinstance(message, Identify):
            # A session starts: forget the last SEQ so a restarted host's first command is
            # never taken for a retransmission (IDENTIFY itself is harmless to repeat).
            self._last_seq = None
            self._send(self.codec.send(self.identity(), frame.seq, self.address))
            return
        if frame.seq == self._last_seq:
            self.counters["duplicates"] += 1
            self._send(self._last_answer)
            return
        answer = self.codec.send(self._dispatch(message), frame.seq, self.address)
        self._last_seq, self._last_answer = frame.seq, answer
        self._send(answer)

    def _dispatch(self, message: Message) -> Message:
        if isinstance(message, Identify):
            return self.identity()
        if isinstance(message, GetStatus):
            pending = len(self._events) + (self._pending is not None)
            status = Status(
                self.flags | (StatusFlag.BUSY if self.busy else 0),
                self.latched,
                self.doors,
                self._event_counter,
                pending,
            )
            self.flags &= ~StatusFlag.POWERED_UP
            return status
        if isinstance(message, ClearFaults):
            causes = self.active_causes()
            for code in range(16):
                if self.latched & (1 << code) and code not in causes:
                    self.latched &= ~(1 << code)
                    self.emit(_fault_gone(code))
            return Ack()
        return self.handle(message)

    def identity(self) -> Identity:
        firmware = self.FIRMWARE
        if "unapproved_firmware" in self.conditions:
            firmware += "-unsigned"
        serial = self.serial + ("-R" if "replaced" in self.conditions else "")
        return Identity(
            SIM_MAKE, self.MODEL, serial, firmware, firmware_digest(self.MODEL, firmware)
        )

    def _send(self, frame: bytes) -> None:
        self._last_sent = frame
        if "bad_crc" in self.conditions:
            self._corrupt_next = not self._corrupt_next
            if self._corrupt_next:
                frame = frame[:-2] + bytes((frame[-2] ^ 0x40,)) + frame[-1:]
        self.output(frame)

    # --- events ---------------------------------------------------------------------------

    def emit(self, make: Callable[[int], DeviceEvent]) -> None:
        """Queue an event; `make` receives the event's number."""
        self._event_counter = (self._event_counter + 1) & 0xFFFF
        self._events.append(make(self._event_counter))
        self._deferred.append(self._send_next_event)

    def _send_next_event(self) -> None:
        if self._pending is not None or not self._events:
            return
        if not self.answering:
            return
        event = self._events.popleft()
        seq = self._next_event_seq
        self._next_event_seq = 1 if seq == 255 else seq + 1
        frame = self.codec.send(event, seq, self.address)
        self._pending = (seq, frame)
        self._pending_tries = 1
        self._send(frame)
        self._arm_retry()

    def _arm_retry(self) -> None:
        epoch = self._epoch
        self._retry = self.scheduler.call_later(
            self.EVENT_TIMEOUT, lambda: self._locked(self._retry_event, epoch)
        )

    def _retry_event(self) -> None:
        if self._pending is None:
            return
        if "no_response" in self.conditions:
            self._arm_retry()  # a hung device resumes its retries when it recovers
            return
        if self._pending_tries >= self.EVENT_TRIES:
            self._log.warning("simulator.event_dropped", seq=self._pending[0])
            self._event_done()
            return
        self._pending_tries += 1
        self._send(self._pending[1])
        self._arm_retry()

    def _event_done(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._pending = None
        self._deferred.append(self._send_next_event)

    # --- faults, doors, time ---------------------------------------------------------------

    @classmethod
    def fault_names(cls) -> frozenset[str]:
        """Every fault this model can be given (by URL, `tabled sim --fault`, control)."""
        return cls.ONE_SHOT | cls.CONDITIONS | COMMON_CONDITIONS

    @classmethod
    def check_fault(cls, fault: str) -> None:
        if fault not in cls.fault_names():
            known = ", ".join(sorted(cls.fault_names()))
            raise UnknownFault(f"{cls.DEVICE} has no fault {fault!r} (known: {known})")

    def inject(self, fault: str) -> None:
        self.check_fault(fault)
        with self.lock:
            self._log.info("simulator.fault_injected", fault=fault)
            if fault in self.ONE_SHOT:
                self.armed.append(fault)
            elif fault not in self.conditions:
                self.conditions.add(fault)
                self.on_condition(fault, True)
            self._drain()

    def clear(self, fault: str) -> None:
        self.check_fault(fault)
        with self.lock:
            self._log.info("simulator.fault_cleared", fault=fault)
            while fault in self.armed:
                self.armed.remove(fault)
            if fault in self.conditions:
                self.conditions.discard(fault)
                self.on_condition(fault, False)
                if fault == "no_response":
                    self._deferred.append(self._send_next_event)
            self._drain()

    def take(self, fault: str) -> bool:
        """Consume one armed one-shot fault."""
        if fault in self.armed:
            self.armed.remove(fault)
            return True
        return False

    def raise_fault(self, code: int, report: bool = True) -> None:
        """Latch a fault; `report` sends FAULT_RAISED (some faults are reported by the
        operation's own result message instead)."""
        if not self.latched & (1 << code):
            self.latched |= 1 << code
            if report:
                self.emit(lambda n: FaultRaised(n, code))

    def set_door(self, door: int, is_open: bool) -> None:
        if bool(self.doors & (1 << door)) != is_open:
            self.doors ^= 1 << door
            self.emit(lambda n: DoorReport(n, door, int(is_open)))

    def after(self, seconds: float, action: Callable[[], None]) -> None:
        """Run `action` after a mechanical delay (scaled by speed). A power cycle cancels it."""
        epoch = self._epoch
        delay = seconds * self.speed
        if delay <= 0:
            self._deferred.append(lambda: self._if_epoch(action, epoch))
        else:
            self.scheduler.call_later(delay, lambda: self._locked(action, epoch))

    def by_hand(self, finish: Callable[[], None]) -> bool:
        """In a world operated by hand, hold `finish` (the end of a mechanical operation) for a
        person to release, and say so; else False (the caller times it with `after`)."""
        if not self.world.by_hand:
            return False
        epoch = self._epoch
        self.world.hold(self.DEVICE, lambda: self._locked(finish, epoch))
        return True

    def _if_epoch(self, action: Callable[[], None], epoch: int) -> None:
        if epoch == self._epoch:
            action()

    def _locked(self, action: Callable[[], None], epoch: int) -> None:
        with self.lock:
            if epoch == self._epoch:
                action()
            self._drain()

    def _drain(self) -> None:
        while self._deferred:
            self._deferred.popleft()()

    def power_off(self, outage: float) -> None:
        """Lose power now; come back after `outage` seconds (scaled) with POWER_LOST latched."""
        self._log.info("simulator.power_lost")
        self._epoch += 1
        if self._retry is not None:
            self._retry.cancel()
        self.busy = False
        self.flags |= _DARK
        self._deferred.clear()
        self.after(outage, self._boot)

    def _boot(self) -> None:
        self._reset_link()
        self.flags = int(StatusFlag.POWERED_UP)
        self.raise_fault(CommonFault.POWER_LOST)

    # --- for subclasses -------------------------------------------------------------------

    def handle(self, message: Message) -> Message:
        """The answer to a device-specific command."""
        return Nak(NakReason.UNKNOWN_COMMAND)

    def on_condition(self, fault: str, active: bool) -> None:
        """A condition fault began or ended (raise faults, open doors)."""

    def active_causes(self) -> set[int]:
        """Fault codes whose cause is still present (CLEAR_FAULTS leaves them latched)."""
        return set()

    def refusal(self) -> NakReason | None:
        """Why a device command must be refused now, or None."""
        if self.busy:
            return NakReason.BUSY
        if self.doors:
            return NakReason.DOOR_OPEN
        if self.latched:
            return NakReason.FAULT_ACTIVE
        return None

    def describe(self) -> dict[str, Any]:
        with self.lock:
            return {
                "armed": list(self.armed),
                "conditions": sorted(self.conditions),
                "latched": [
                    self.FAULT_NAMES.get(c, f"fault_{c}")
                    for c in range(16)
                    if self.latched & (1 << c)
                ],
                "doors_open": [
                    self.DOOR_NAMES.get(d, f"door_{d}") for d in range(8) if self.doors & (1 << d)
                ],
                "busy": self.busy,
                "events": self._event_counter,
                **self.counters,
            }


_DARK = 0x80  # a model-private flag bit: powered off (never sent in STATUS)


def _fault_gone(code: int) -> Callable[[int], DeviceEvent]:
    return lambda number: FaultGone(number, code)
