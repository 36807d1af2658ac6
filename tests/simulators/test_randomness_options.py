"""Honest faults of randomness, set by `sim://` URL options: a loaded die, a shelf or k-riffle
shuffler, a reader that misreads one card in N. The dice go through pyserial and the driver;
the shuffler and the reader through their models with the world they share."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import pytest

from drivers.clock import ManualClock
from drivers.dice_shaker.driver import DiceShakerDriver, DiceThrown
from drivers.framing import FrameCodec, Role
from drivers.link import LinkTiming
from drivers.shuffler.messages import StartShuffle
from simulators.dice_shaker import parse_bias
from simulators.shoe_reader import ShoeReaderModel
from simulators.shuffler import ShufflerModel, riffle_shuffle, shelf_shuffle
from simulators.spec import parse_sim_url
from simulators.world import standard_deck


def rising_sequences(order: list[int]) -> int:
    """Rising sequences of a permutation of 0..n-1 (the input positions, in output order)."""
    where = {card: i for i, card in enumerate(order)}
    return 1 + sum(where[c + 1] < where[c] for c in range(len(order) - 1))


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sim://dice_shaker?bias=7:0.2", "faces 1-6"),
        ("sim://dice_shaker?bias=6:1.5", "faces 1-6"),
        ("sim://dice_shaker?bias=6:0.5,5:0.6", "sum to 1"),
        ("sim://dice_shaker?bias=6:0.19&die=5", "position 1-4"),
        ("sim://dice_shaker?die=2", "give its bias"),
        ("sim://dice_shaker?shelves=3", "unknown option(s) shelves"),
        ("sim://shuffler?model=wash", "one of random, shelf, riffle"),
        ("sim://shuffler?model=riffle&shelves=4", "takes no shelves"),
        ("sim://shuffler?model=shelf&shelves=1", "at least 2"),
        ("sim://shuffler?model=riffle&riffles=x", "riffles=x"),
        ("sim://shoe_reader?misread=0", "one card in N"),
        ("sim://timer_bell?misread=10", "unknown option(s) misread"),
    ],
)
def test_a_bad_option_is_a_one_line_error_naming_the_url(url: str, message: str) -> None:
    with pytest.raises(ValueError, match="sim://") as caught:
        parse_sim_url(url)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_options_are_kept_on_the_spec() -> None:
    spec = parse_sim_url("sim://shuffler?model=shelf&shelves=10&passes=1&seed=3")
    assert dict(spec.options) == {"model": "shelf", "shelves": "10", "passes": "1"}
    assert spec.seed == 3


def test_bias_names_one_face_and_shares_the_rest() -> None:
    faces = parse_bias("6:0.19")
    assert faces[5] == 0.19 and all(abs(p - 0.81 / 5) < 1e-12 for p in faces[:5])
    assert sum(parse_bias("6:0.3,1:0.2")) == pytest.approx(1.0)


def _throws(url: str, count: int) -> list[tuple[int, ...]]:
    async def body() -> list[tuple[int, ...]]:
        driver = DiceShakerDriver(url, timing=LinkTiming(poll_interval=3600.0))
        assert await driver.start()
        driver.pending_events()
        out = []
        for _ in range(count):
            await driver.shake()
            event = await asyncio.wait_for(driver.next_event(), 5)
            assert isinstance(event, DiceThrown)
            out.append(tuple(event.dice))
        await driver.close()
        return out

    return asyncio.run(body())


def test_a_loaded_die_lands_on_its_face_as_often_as_the_url_says(table: Any) -> None:
    throws = _throws(table.url("dice_shaker", seed=5, bias="6:0.5", die=2), 400)
    by_position = [Counter(t[i] for t in throws) for i in range(4)]
    # Position 2 is loaded: 0.5 against 1/6 (400 throws: sd 25 around 200).
    assert 150 < by_position[1][6] < 250
    for i in (0, 2, 3):  # the others are fair: 400/6 = 67, sd 7.5
        assert by_position[i][6] < 110


def test_an_unloaded_shaker_throws_what_it_always_threw_by_seed(table: Any) -> None:
    plain = _throws(table.url("dice_shaker", seed=11), 20)
    assert plain == _throws(table.url("dice_shaker", seed=11), 20)


def test_one_riffle_leaves_at_most_two_rising_sequences_and_k_riffles_two_to_the_k() -> None:
    rng = random.Random(1)
    deck = list(range(52))
    for k in (1, 2, 3):
        for _ in range(200):
            order = riffle_shuffle(deck, rng, k)
            assert sorted(order) == deck
            assert rising_sequences(order) <= 2**k


def test_a_shelf_pile_reads_down_then_up_in_the_order_the_cards_went_in() -> None:
    rng = random.Random(2)
    deck = list(range(52))
    for _ in range(100):
        order = shelf_shuffle(deck, rng, shelves=1, passes=1)
        low = order.index(min(order))
        assert order[: low + 1] == sorted(order[: low + 1], reverse=True)
        assert order[low:] == sorted(order[low:])
    assert sorted(shelf_shuffle(deck, rng, shelves=10, passes=2)) == deck


def test_the_machine_shuffles_the_deck_as_it_was_dealt_with_its_mechanism(table: Any) -> None:
    codec = FrameCodec(Role.HOST, ShufflerModel.MESSAGES)
    model = ShufflerModel(
        world=table.world,
        scheduler=ManualClock(),
        output=lambda data: None,
        seed=4,
        options={"model": "riffle", "riffles": "1"},
    )
    deck = standard_deck()
    index = {card: i for i, card in enumerate(deck)}
    previous = [index[c] for c in table.world.collect()]
    assert previous == list(range(52))  # a new deck goes in in its box order
    for seq in range(1, 6):
        model.receive_data(codec.send(StartShuffle(52), seq, 1))
        assert table.world.generation == seq
        stack = table.world.collect()  # the dealt stack is what the dealer collects next
        order = [index[c] for c in stack]
        where = {card: i for i, card in enumerate(previous)}
        assert rising_sequences([where[c] for c in order]) <= 2  # one riffle of what went in
        previous = order


def test_a_reader_that_misreads_one_card_in_n(table: Any) -> None:
    model = ShoeReaderModel(
        world=table.world,
        scheduler=ManualClock(),
        output=lambda data: None,
        seed=9,
        options={"misread": "20"},
    )
    reads: Counter[str] = Counter()
    for _ in range(40):
        table.world.load(list(standard_deck()))
        model.shoe_armed = True
        for _ in range(52):
            reads[model.dealer_draw()["reader"]] += 1
    # 2,080 cards at 1 in 20: 104 expected, sd 10.
    assert 70 < reads["misread"] < 140
    assert reads["read"] + reads["misread"] == 2080
