"""The simulated shuffler and the device end of the link, with manual time."""

from __future__ import annotations

import itertools
import math
import random
import secrets
from collections.abc import Callable, MutableSequence
from typing import Any

import pytest

from drivers.clock import ManualClock
from drivers.framing import Frame, FrameCodec, ProtocolError, Role
from drivers.messages import Ack, FaultRaised, GetStatus, Identify, Message, Nak, NakReason
from drivers.shuffler.messages import ShuffleDone, StartShuffle
from simulators.base import UnknownFault
from simulators.shuffler import ShufflerModel, fisher_yates
from simulators.spec import SimSpec, parse_sim_url
from simulators.world import standard_deck


class Host:
    """The host end written with the codec only: what the model sends is decoded and kept."""

    def __init__(self, table: Any, speed: float = 0.0, **kwargs: Any) -> None:
        self.scheduler = ManualClock()
        self.codec = FrameCodec(Role.HOST, ShufflerModel.MESSAGES)
        self.heard: list[Frame | ProtocolError] = []
        self.model = ShufflerModel(
            world=table.world, scheduler=self.scheduler, output=self._hear, speed=speed, **kwargs
        )

    def _hear(self, data: bytes) -> None:
        self.codec.receive_data(data)
        while (item := self.codec.next_event()) is not None:
            self.heard.append(item)

    def send(self, message: Message, seq: int) -> list[Frame | ProtocolError]:
        self.heard = []
        self.model.receive_data(self.codec.send(message, seq, 1))
        return self.heard


def test_a_retransmitted_command_is_answered_again_but_not_acted_on_twice(table: Any) -> None:
    host = Host(table, speed=1.0, seed=1)
    assert host.send(StartShuffle(52), 5) == [Frame(1, 5, Ack())]
    assert host.send(StartShuffle(52), 5) == [Frame(1, 5, Ack())]  # the ACK was lost
    assert host.model.counters["duplicates"] == 1
    assert host.send(StartShuffle(52), 6) == [Frame(1, 6, Nak(NakReason.BUSY))]
    host.heard = []
    host.scheduler.tick(40.0)
    assert [f.message for f in host.heard if isinstance(f, Frame)] == [ShuffleDone(1, 52, 0, 0, 0)]
    assert table.world.generation == 1  # one shuffle, not two


def test_a_shuffle_takes_its_time_scaled_by_speed(table: Any) -> None:
    host = Host(table, speed=0.5, seed=1)
    host.send(StartShuffle(52), 1)
    host.scheduler.tick(19.9)
    assert host.heard == [Frame(1, 1, Ack())]
    host.scheduler.tick(0.1)
    assert isinstance(host.heard[-1], Frame) and isinstance(host.heard[-1].message, ShuffleDone)


def test_an_event_is_resent_until_acked_then_the_next_one_goes(table: Any) -> None:
    host = Host(table, seed=1, faults=["jam"])
    frames = host.send(StartShuffle(52), 1)
    assert frames[0] == Frame(1, 1, Ack())
    event = frames[1]
    assert isinstance(event, Frame) and event.message == FaultRaised(1, 4)
    host.heard = []
    host.scheduler.tick(ShufflerModel.EVENT_TIMEOUT)
    assert host.heard == [event]  # resent, same SEQ and number
    assert host.send(Ack(), event.seq) == []
    host.scheduler.tick(10 * ShufflerModel.EVENT_TIMEOUT)
    assert host.heard == []


def test_an_event_never_acked_is_dropped_after_its_tries_and_status_shows_it(table: Any) -> None:
    host = Host(table, seed=1, faults=["jam"])
    host.send(StartShuffle(52), 1)
    host.scheduler.tick(10 * ShufflerModel.EVENT_TIMEOUT)
    sent = [f for f in host.heard if isinstance(f, Frame) and f.message == FaultRaised(1, 4)]
    assert len(sent) == ShufflerModel.EVENT_TRIES  # the first transmission and the resends
    (status,) = host.send(GetStatus(), 2)
    assert isinstance(status, Frame)
    assert status.message.events == 1 and status.message.pending == 0  # type: ignore[attr-defined]


def test_a_damaged_frame_gets_nak_seq_0_and_the_model_keeps_going(table: Any) -> None:
    host = Host(table, seed=1)
    host.heard = []
    host.model.receive_data(b"\x02\x01\x01\x00\x11\x00\x00\x03")
    assert host.heard == [Frame(1, 0, Nak(NakReason.BAD_FRAME))]
    (identity,) = host.send(Identify(), 1)
    assert isinstance(identity, Frame) and identity.message == host.model.identity()


def test_urls_and_fault_names_are_checked(table: Any) -> None:
    assert parse_sim_url("sim://dice_shaker?seed=7&fault=die_tilted,dice_stacked&speed=0.5") == (
        SimSpec("dice_shaker", 7, ("die_tilted", "dice_stacked"), 0.5)
    )
    for bad in (
        "sim://",
        "sim://shuffler?colour=red",
        "sim://shuffler?seed=x",
        "loop://",
        "sim://shuffler?speed=nan",
        "sim://shuffler?speed=inf",
        "sim://shuffler?speed=-1",
        "sim://shuffler?address=128",
    ):
        with pytest.raises(ValueError):
            parse_sim_url(bad)
    with pytest.raises(UnknownFault, match="no fault 'melted'"):
        Host(table, faults=["melted"])


# --- randomness (DOMAIN R3) -------------------------------------------------------------------

Shuffle = Callable[[MutableSequence[int], random.Random], None]


def position_chi_square(shuffle: Shuffle, rng: random.Random, rounds: int) -> tuple[float, int]:
    """Chi-square of where each of 52 cards lands over `rounds` shuffles (52 x 52 cells)."""
    counts = [[0] * 52 for _ in range(52)]
    for _ in range(rounds):
        deck = list(range(52))
        shuffle(deck, rng)
        for position, card in enumerate(deck):
            counts[card][position] += 1
    expected = rounds / 52
    statistic = sum((c - expected) ** 2 / expected for row in counts for c in row)
    return statistic, 51 * 51


def critical_value(df: int, z: float) -> float:
    """Wilson-Hilferty approximation of the chi-square quantile at standard-normal `z`."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def rotate_only(deck: MutableSequence[int], rng: random.Random) -> None:
    k = rng.randrange(len(deck))
    deck[:] = list(deck[k:]) + list(deck[:k])


def test_the_csprng_fisher_yates_passes_a_chi_square_test() -> None:
    statistic, df = position_chi_square(fisher_yates, secrets.SystemRandom(), 2600)
    assert statistic < critical_value(df, 4.75)  # p > 1e-6: a false alarm once in a million


def naive_swap(deck: MutableSequence[int], rng: random.Random) -> None:
    """The classic mistake: swap each card with any position (n^n paths onto n! orders)."""
    for i in range(len(deck)):
        j = rng.randrange(len(deck))
        deck[i], deck[j] = deck[j], deck[i]


def sattolo(deck: MutableSequence[int], rng: random.Random) -> None:
    """The off-by-one mistake: j < i, so no card can stay where it was."""
    for i in range(len(deck) - 1, 0, -1):
        j = rng.randrange(i)
        deck[i], deck[j] = deck[j], deck[i]


@pytest.mark.parametrize("broken", [rotate_only, naive_swap, sattolo])
def test_the_chi_square_test_catches_a_broken_shuffle(broken: Shuffle) -> None:
    statistic, df = position_chi_square(broken, random.Random(5), 2600)
    assert statistic > critical_value(df, 4.75)


def test_the_simulated_shufflers_own_shuffles_pass_the_chi_square_test(table: Any) -> None:
    """The model end to end, unseeded as in production: START_SHUFFLE on the wire, the deck
    it leaves in the table world, 2,600 times."""
    host = Host(table)
    deck = standard_deck()
    index = {card: i for i, card in enumerate(deck)}
    shuffles = itertools.count()

    def through_the_model(cards: MutableSequence[int], _: random.Random) -> None:
        table.world.replace_deck(deck)  # the dealer puts the deck back in card order
        seq = host.model._next_event_seq
        heard = host.send(StartShuffle(52), next(shuffles) % 255 + 1)
        done = [f.message for f in heard if isinstance(f, Frame)]
        assert [m.count for m in done if isinstance(m, ShuffleDone)] == [52]
        host.model.receive_data(host.codec.send(Ack(), seq, 1))
        cards[:] = [index[card] for card in table.world.items]

    assert isinstance(host.model.rng, secrets.SystemRandom)
    statistic, df = position_chi_square(through_the_model, random.Random(), 2600)
    assert statistic < critical_value(df, 4.75)


def test_an_unseeded_model_draws_from_the_system_csprng(table: Any) -> None:
    host = Host(table)
    assert isinstance(host.model.rng, secrets.SystemRandom)
    assert sorted(table.world.collect()) == sorted(standard_deck())


def test_identify_starts_a_session_so_a_restarted_hosts_seq_is_not_a_duplicate(
    table: Any,
) -> None:
    host = Host(table, speed=1.0, seed=1)
    assert host.send(StartShuffle(52), 1) == [Frame(1, 1, Ack())]
    (identity,) = host.send(Identify(), 1)  # a new host process: its first SEQ is 1 again
    assert isinstance(identity, Frame) and identity.message == host.model.identity()
    # acted on, not answered from the cache: the running shuffle makes it BUSY
    assert host.send(StartShuffle(52), 1) == [Frame(1, 1, Nak(NakReason.BUSY))]
