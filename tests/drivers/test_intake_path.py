"""The input's path from the wire to the procedure, lean (issue 10 item 7), and what it must keep:

- the codec hands the host's link each read's items in one call, the same items `next_event`
  gives one by one, and reuses the frame of a message without fields (an ACK, GET_STATUS) for
  a SEQ it sent before, byte for byte what encoding it again gives;
- a driver's events reach the table through a mailbox that keeps their order, wakes its getter,
  and passes a wake-up on when the woken getter was cancelled;
- in a round, the table logs the device commands it sends and the device facts it has no use
  for at debug (the journal holds the inputs that caused the commands, the drivers log those
  facts themselves), and the commands still go out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from daemon.autoplay import InProcessControl
from daemon.table import Table
from drivers.clock import ManualClock, MonotonicClock, settle
from drivers.framing import Frame, FrameCodec, ProtocolError, Role, encode_frame
from drivers.link import LinkTiming
from drivers.mailbox import Mailbox
from drivers.messages import Ack, ClearFaults, GetStatus, Identify, Message, Nak, NakReason
from drivers.shoe_reader.driver import ShoeReaderDriver
from drivers.shoe_reader.messages import Arm, CardDrawnEvent
from drivers.timer_bell.driver import BellRang, TimerExpired, TimerWarning
from simulators.world import forget_world
from tests.drivers.conftest import LoopRun
from tests.table.scenario_support import make_table, new_world, table_config

MESSAGES = ShoeReaderDriver.MESSAGES
TIMING = LinkTiming(poll_interval=3600.0)

# --- the codec -------------------------------------------------------------------------------


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("message", [Ack(), GetStatus(), Identify(), ClearFaults()])
def test_a_fieldless_messages_frame_is_reused_and_is_what_encoding_gives(
    role: Role, message: Message
) -> None:
    codec = FrameCodec(role, MESSAGES)
    for address in (1, 0x10, 0x7F):  # 0x10: an address that needs escaping
        for _ in range(2):  # the second time round, every frame comes from the codec's memory
            for seq in range(256):
                want = encode_frame(address, seq, message.CMD, b"", role is Role.DEVICE)
                assert codec.send(message, seq, address) == want
                assert codec.send(type(message)(), seq, address) == want  # another instance


def test_a_message_with_fields_is_encoded_each_time_from_its_own_payload() -> None:
    codec = FrameCodec(Role.HOST, MESSAGES)
    for mode, new_shoe in ((0, 0), (0, 1), (1, 0), (0, 0)):
        arm = Arm(mode, new_shoe)
        assert codec.send(arm, 9, 1) == encode_frame(1, 9, Arm.CMD, arm.encode_payload(), False)
    refused = (codec.send(Nak(reason), 9, 1) for reason in NakReason)
    assert len(set(refused)) == len(NakReason)


def _one_by_one(codec: FrameCodec, chunks: list[bytes]) -> list[Frame | ProtocolError]:
    out: list[Frame | ProtocolError] = []
    for chunk in chunks:
        codec.receive_data(chunk)
        while (item := codec.next_event()) is not None:
            out.append(item)
    return out


def _decoded(codec: FrameCodec, chunks: list[bytes]) -> list[Frame | ProtocolError]:
    out: list[Frame | ProtocolError] = []
    for chunk in chunks:
        for item in codec.decode(chunk):
            out.append(Frame(*item) if isinstance(item, tuple) else item)
    return out


_device = FrameCodec(Role.DEVICE, MESSAGES)
_frames = st.sampled_from(
    [
        _device.send(GetStatus(), 5, 1),  # a command: the host takes it as a frame
        _device.send(Ack(), 7, 1),
        _device.send(CardDrawnEvent(3, 3, 12, 1, 0), 0x10, 1),  # escaped SEQ
        FrameCodec(Role.HOST, MESSAGES).send(Ack(), 2, 1),  # our own direction: an error
    ]
)
_noise = st.binary(max_size=12)


@given(st.lists(st.one_of(_frames, _noise), max_size=12), st.data())
def test_decode_gives_what_next_event_gives_one_by_one(parts: list[bytes], data: Any) -> None:
    stream = b"".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert _decoded(FrameCodec(Role.HOST, MESSAGES), chunks) == _one_by_one(
        FrameCodec(Role.HOST, MESSAGES), chunks
    )


# --- the mailbox -----------------------------------------------------------------------------


def test_the_mailbox_keeps_order_and_wakes_its_getter(on_loop: LoopRun) -> None:
    async def body() -> None:
        box: Mailbox[int] = Mailbox()
        getter = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        assert not getter.done()
        for n in range(5):
            box.put(n)
        assert await getter == 0
        assert box.qsize() == 4 and not box.empty()
        assert await box.get() == 1
        assert box.drain() == [2, 3, 4]
        assert box.empty() and box.drain() == []
        with pytest.raises(IndexError):
            box.get_nowait()

    on_loop(body())


def test_a_getter_cancelled_after_its_wake_up_passes_it_on(on_loop: LoopRun) -> None:
    async def body() -> None:
        box: Mailbox[str] = Mailbox()
        first = asyncio.ensure_future(box.get())
        second = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        box.put("card")  # wakes the first getter...
        first.cancel()  # ...which is cancelled before it runs
        assert await asyncio.wait_for(second, 5) == "card"
        assert first.cancelled()
        box.put("next")
        assert await box.get() == "next"

    on_loop(body())


# --- the table's log in a round --------------------------------------------------------------


async def _play_a_round(table: Table, control: InProcessControl) -> None:
    """One Thirteen round as a dealer plays it (bench/bench_table.py's script, unpaced)."""
    proc: Any = table.procedure

    async def act(action: str, payload: dict[str, Any] | None = None) -> None:
        result = await table.act(action, "D1", "dealer", payload or {})
        assert result["accepted"], (action, result["violation"])

    async def wait(predicate: Callable[[], bool]) -> None:
        assert await table.wait_for(predicate, 30.0), proc.phase

    await wait(lambda: all(d in proc.identified for d in proc.devices))
    await act("open_table")
    await act("confirm_hand_shuffle")
    await wait(lambda: proc.phase == "CUT")
    await act("confirm_cut", {"by": "player", "player": "P1", "cards": 20, "one_hand": True})
    await act("load_shoe")
    await act("place_bet", {"player": "P1", "seat": 1, "amount": 300, "units": 3, "seated": True})
    await act("shake_dice", {"player": "P1"})
    await wait(lambda: proc.phase == "DEALING" and table.quiet())
    assert (await control.request({"op": "deal", "count": 52}))["dealt"] == 52
    await wait(lambda: proc.phase == "BANKER_ARRANGING")
    rows = {
        seat: {"head": c[:3], "middle": c[3:8], "tail": c[8:]}
        for seat in (0, 1)
        for c in [proc.seat_cards(seat)]
    }
    await act("arrange_banker")
    await act("open_banker")
    await act("enter_arrangement", {"seat": 0, **rows[0]})
    await act("player_arranged", {"seat": 1})
    await act("open_hand", {"seat": 1})
    await act("enter_arrangement", {"seat": 1, **rows[1]})
    await act("settle_round")
    await wait(lambda: proc.phase == "ROUND_OVER" and table.quiet())


def test_a_rounds_commands_and_unused_facts_are_logged_at_debug(tmp_path: Path) -> None:
    key, _ = new_world()
    config = table_config(tmp_path / "j", world=key)

    async def main() -> list[dict[str, Any]]:
        table, _ = make_table(config)
        await table.start()
        try:
            with capture_logs() as logs:
                await _play_a_round(table, InProcessControl(key))
        finally:
            await table.stop()
        return logs

    try:
        logs = asyncio.run(main())
    finally:
        forget_world(key)
    commands = [e for e in logs if e["event"] == "table.device_command"]
    assert {(e["device"], e["command"]) for e in commands} >= {
        ("shuffler", "shuffle"),
        ("shoe_reader", "arm"),
        ("shoe_reader", "disarm"),
        ("dice_shaker", "shake"),
        ("timer_bell", "start"),
        ("timer_bell", "stop"),
    }
    assert {e["log_level"] for e in commands} == {"debug"}
    ignored = [e for e in logs if e["event"] == "table.device_event_ignored"]
    assert {type(e["fact"]) for e in ignored} == {TimerWarning, TimerExpired, BellRang}
    assert {e["log_level"] for e in ignored} == {"debug"}
    # the bell's driver logs those facts itself, at info
    bell = {
        e["event"] for e in logs if e.get("device") == "timer_bell" and e["log_level"] == "info"
    }
    assert {"timer_bell.warning", "timer_bell.expired", "timer_bell.rang"} <= bell


# --- the driver's clock ----------------------------------------------------------------------


def test_the_drivers_time_is_its_clocks_even_a_clock_given_later(table: Any) -> None:
    assert MonotonicClock().now is time.monotonic  # the function itself: no frame a read
    assert MonotonicClock().wall is time.time
    clock = ManualClock(500.0)

    async def body() -> None:
        loop = asyncio.get_running_loop()
        assert MonotonicClock(loop).now == loop.time  # that loop's own time
        driver = ShoeReaderDriver(table.url("shoe_reader"), timing=TIMING)
        driver.clock = clock  # a replay harness's manual clock, given after construction
        assert await driver.start()
        await driver.status()
        sent = clock.now()
        await clock.advance(1.0)
        command = asyncio.ensure_future(driver.status())
        await settle()
        await command
        # the round trip is measured on the manual clock: it stood still during the exchange
        assert driver.link.last_round_trip == 0.0 and clock.now() == sent + 1.0
        await driver.close()

    asyncio.run(body())
