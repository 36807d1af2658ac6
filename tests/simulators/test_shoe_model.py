"""The simulated shoe reader with manual time: the device end of its messages, the dealer's
draw through the world, and its faults."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.clock import ManualClock
from drivers.framing import Frame, FrameCodec, ProtocolError, Role
from drivers.messages import Ack, GetStatus, Message, Nak, NakReason, Status
from drivers.shoe_reader.messages import (
    Arm,
    CardDrawnEvent,
    CutCardEvent,
    Disarm,
    DrawFlag,
    HandOpenedEvent,
    MisreadEvent,
    ShoeMode,
)
from simulators.base import UnknownFault
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import Card, TableWorld, Tile, paigow_tiles, standard_deck


class Host:
    """The host end written with the codec only; it ACKs every event it hears."""

    def __init__(self, table: Any, **kwargs: Any) -> None:
        self.scheduler = ManualClock()
        self.codec = FrameCodec(Role.HOST, ShoeReaderModel.MESSAGES)
        self.heard: list[Frame | ProtocolError] = []
        self.ack = True
        self.model = ShoeReaderModel(
            world=table.world, scheduler=self.scheduler, output=self._hear, **kwargs
        )

    def _hear(self, data: bytes) -> None:
        self.codec.receive_data(data)
        while (item := self.codec.next_event()) is not None:
            self.heard.append(item)
            model = getattr(self, "model", None)  # None while the model is being built
            if self.ack and model and isinstance(item, Frame) and item.message.KIND == "event":
                model.receive_data(self.codec.send(Ack(), item.seq, 1))

    def send(self, message: Message, seq: int) -> list[Message]:
        self.heard = []
        self.model.receive_data(self.codec.send(message, seq, 1))
        return self.messages()

    def messages(self) -> list[Message]:
        return [f.message for f in self.heard if isinstance(f, Frame)]

    def draw(self, table: Any) -> tuple[dict[str, Any], list[Message]]:
        self.heard = []
        result = table.world.dealer_draw()
        return result, self.messages()


def test_the_first_card_read_is_this_frame_on_the_wire(table: Any) -> None:
    table.world.load([Card(1, 0), Card(10, 3)])
    host = Host(table)
    sent: list[bytes] = []
    host.model.output = sent.append
    host.model.receive_data(bytes.fromhex("02 01 09 10 22 40 00 01 0d 38 03"))  # ARM, new shoe
    assert sent == [bytes.fromhex("02 81 09 00 06 55 db 03")]  # ACK, SEQ 9
    sent.clear()
    table.world.dealer_draw()
    # CARD_DRAWN number 1, sequence 1, ace of spades, the device's SEQ 1
    assert sent == [bytes.fromhex("02 81 01 07 d0 00 01 00 01 01 00 00 bd cc 03")]


def test_a_retransmitted_arm_does_not_restart_the_draw_sequence(table: Any) -> None:
    host = Host(table, seed=1)
    assert host.send(Arm(ShoeMode.CARDS, 1), 5) == [Ack()]
    for _ in range(2):
        host.draw(table)
    assert host.send(Arm(ShoeMode.CARDS, 1), 5) == [Ack()]  # our ACK was lost: resent
    assert host.model.counters["duplicates"] == 1
    _, (drawn,) = host.draw(table)
    assert isinstance(drawn, CardDrawnEvent) and drawn.sequence == 3 and drawn.number == 3


def test_the_shoe_deals_the_stack_in_order_and_stops_at_the_cut_card(table: Any) -> None:
    stack = list(standard_deck())
    table.world.load(stack)
    table.world.place_cut_card(2)
    host = Host(table)
    host.send(Arm(ShoeMode.CARDS, 1), 1)
    results = [host.draw(table) for _ in range(4)]
    assert [r["reader"] for r, _ in results] == ["read", "read", "cut_card", "read"]
    assert [m for _, ms in results for m in ms] == [
        CardDrawnEvent(1, 1, stack[0].rank, stack[0].suit, 0),
        CardDrawnEvent(2, 2, stack[1].rank, stack[1].suit, 0),
        CutCardEvent(3, 2),
        CardDrawnEvent(4, 3, stack[2].rank, stack[2].suit, 0),
    ]
    assert table.world.remaining == 49


def test_an_unacknowledged_draw_is_resent_with_the_same_number(table: Any) -> None:
    host = Host(table)
    host.ack = False
    host.send(Arm(ShoeMode.CARDS, 1), 1)
    _, first = host.draw(table)
    _, second = host.draw(table)
    assert second == []  # one event in flight at a time
    host.heard = []
    host.scheduler.tick(ShoeReaderModel.EVENT_TIMEOUT)
    assert host.messages() == first
    host.ack = True
    (frame,) = [f for f in host.heard if isinstance(f, Frame)]
    host.heard = []
    host.model.receive_data(host.codec.send(Ack(), frame.seq, 1))
    (queued,) = host.messages()
    assert isinstance(queued, CardDrawnEvent) and queued.sequence == 2


def test_disarmed_draws_are_out_of_phase_and_latched(table: Any) -> None:
    host = Host(table)
    host.send(Arm(ShoeMode.CARDS, 1), 1)
    host.send(Disarm(), 2)
    _, (drawn,) = host.draw(table)
    assert isinstance(drawn, CardDrawnEvent) and drawn.flags == DrawFlag.OUT_OF_PHASE
    (status,) = host.send(GetStatus(), 3)
    assert isinstance(status, Status) and status.faults == 1 << 6
    assert host.send(Arm(ShoeMode.CARDS, 0), 4) == [Nak(NakReason.FAULT_ACTIVE)]


def test_a_shoe_removed_by_url_is_an_open_door_and_no_card_comes_out(table: Any) -> None:
    host = Host(table, faults=["shoe_removed"])
    (status,) = host.send(GetStatus(), 1)
    assert isinstance(status, Status) and status.doors == 1
    assert host.send(Arm(ShoeMode.CARDS, 1), 2) == [Nak(NakReason.DOOR_OPEN)]
    result, messages = host.draw(table)
    assert result == {"drawn": None, "reader": "shoe_removed"} and messages == []
    assert table.world.remaining == 52


def test_tile_mode_opens_hands_of_four_and_misreads_a_foreign_item(table: Any) -> None:
    tiles = list(paigow_tiles())
    table.world.load([*tiles[:4], Card(1, 0), *tiles[4:7]])
    host = Host(table)
    host.send(Arm(ShoeMode.TILES, 1), 1)
    result, (hand,) = host.draw(table)
    assert result["hand"] == 1 and result["reader"] == "read"
    assert hand == HandOpenedEvent(1, 1, 0, (0x66, 0x11, 0x44, 0x13))
    result, (misread,) = host.draw(table)
    assert result["reader"] == "misread" and misread == MisreadEvent(2, 2)
    assert host.draw(table)[0]["reader"] == "empty"


def test_the_reader_sorts_each_tile_by_pips(table: Any) -> None:
    table.world.load([Tile(6, 1), Tile(5, 4), Tile(2, 2), Tile(3, 1)])
    host = Host(table)
    host.send(Arm(ShoeMode.TILES, 1), 1)
    _, (hand,) = host.draw(table)
    assert isinstance(hand, HandOpenedEvent) and hand.tiles == (0x16, 0x45, 0x22, 0x13)


def test_without_a_shoe_the_world_still_lets_the_dealer_draw(table: Any) -> None:
    host = Host(table)
    host.model.close()
    assert table.world.dealer_draw()["reader"] is None


def test_unknown_faults_are_refused(table: Any) -> None:
    with pytest.raises(UnknownFault, match="no fault 'sticky'"):
        Host(table, faults=["sticky"])


_host_frames = st.sampled_from(
    [
        bytes.fromhex("02 01 09 10 22 40 00 01 0d 38 03"),  # ARM, new shoe
        bytes.fromhex("02 01 0a 10 22 40 01 00 c0 fa 03"),  # ARM, tiles
        bytes.fromhex("02 01 0b 00 41 de a0 03"),  # DISARM
        bytes.fromhex("02 01 10 22 00 12 2a a7 03"),  # GET_STATUS
        b"draw",  # the dealer draws here
    ]
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.binary(max_size=40), _host_frames), max_size=12))
def test_any_input_and_draws_give_only_good_frames_and_it_keeps_answering(
    table: Any, parts: list[bytes]
) -> None:
    world = TableWorld(table.key, standard_deck())
    heard = FrameCodec(Role.HOST, ShoeReaderModel.MESSAGES)
    frames: list[Frame] = []

    def output(data: bytes) -> None:
        heard.receive_data(data)
        while (item := heard.next_event()) is not None:
            assert not isinstance(item, ProtocolError), item
            frames.append(item)

    model = ShoeReaderModel(world=world, scheduler=ManualClock(), output=output, seed=1)
    for part in parts:
        if part == b"draw":
            world.dealer_draw()
        else:
            model.receive_data(part)
    model.receive_data(FrameCodec(Role.HOST, ShoeReaderModel.MESSAGES).send(GetStatus(), 200, 1))
    assert any(f.seq == 200 and isinstance(f.message, Status) for f in frames)
