"""The shared table world and the control channel, in process."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest

from drivers.clock import ManualClock
from drivers.shuffler.messages import StartShuffle
from simulators.control import MAX_LINE, handle_control, serve_control
from simulators.shuffler import ShufflerModel
from simulators.world import Card, Tile, paigow_tiles, standard_deck


def test_the_deck_and_the_tiles() -> None:
    deck = standard_deck()
    assert len(set(deck)) == 52 and Card(1, 0) in deck and Card(13, 3) in deck
    tiles = paigow_tiles()
    assert len(tiles) == 32
    counts = Counter(tiles)
    assert counts[Tile(6, 6)] == 2 and counts[Tile(1, 2)] == 1  # civil pairs, military singles
    assert sum(t.top + t.bottom for t in tiles) == 227


def test_the_shoe_deals_what_the_shuffler_shuffled_after_the_cut(table: Any) -> None:
    model = ShufflerModel(world=table.world, scheduler=ManualClock(), output=lambda _: None)
    model.handle(StartShuffle(52))
    model._drain()
    shuffled = list(table.world.items)
    assert table.world.generation == 1 and sorted(shuffled) == sorted(standard_deck())
    table.world.cut(20)
    assert table.world.draw() == shuffled[20]
    assert table.world.remaining == 51
    with pytest.raises(ValueError, match="cannot cut"):
        table.world.cut(53)


def test_control_requests(table: Any) -> None:
    world = table.world
    ShufflerModel(world=world, scheduler=ManualClock(), output=lambda _: None)
    assert handle_control(world, {"op": "inject", "device": "shuffler", "fault": "lid_open"}) == {
        "ok": True
    }
    state = handle_control(world, {"op": "state"})
    assert state["ok"] and state["devices"]["shuffler"]["doors_open"] == ["lid"]
    assert handle_control(world, {"op": "clear", "device": "shuffler", "fault": "lid_open"})["ok"]
    assert handle_control(world, {"op": "unplug", "device": "shuffler"}) == {"ok": True}
    assert world.unplugged == {"shuffler"}
    assert handle_control(world, {"op": "plug", "device": "shuffler"}) == {"ok": True}
    drawn = handle_control(world, {"op": "draw"})
    assert drawn["ok"] and set(drawn["drawn"]) == {"rank", "suit"}
    for bad, error in [
        ({"op": "inject", "device": "shoe_reader", "fault": "x"}, "no simulated shoe_reader"),
        ({"op": "inject", "device": "shuffler", "fault": "melted"}, "no fault 'melted'"),
        ({"op": "inject", "device": "shuffler"}, "needs 'device' and 'fault'"),
        ({"op": "dance"}, "unknown op"),
        ({"op": "unplug", "device": "shufler"}, "shufler"),
        ({"op": "plug", "device": 3}, "needs 'device'"),
        (["op"], "JSON object"),
    ]:
        reply = handle_control(world, bad)
        assert reply["ok"] is False and error in reply["error"], reply


def test_a_dealer_draw_goes_through_the_shoe_when_one_is_attached(table: Any) -> None:
    table.world.set_draw_handler(lambda: {"drawn": "by the shoe"})
    assert handle_control(table.world, {"op": "draw"}) == {"ok": True, "drawn": "by the shoe"}


def test_the_control_socket_answers_every_line_even_a_bad_one(table: Any, tmp_path: Any) -> None:
    async def body() -> None:
        ShufflerModel(world=table.world, scheduler=ManualClock(), output=lambda _: None)
        control = await serve_control(table.world, tmp_path / "control.sock")
        reader, writer = await asyncio.open_unix_connection(str(tmp_path / "control.sock"))
        writer.write(b'{"op": "state"}\nnot json\n' + b"x" * (MAX_LINE + 10) + b"\n")
        replies = [json.loads(await reader.readline()) for _ in range(3)]
        assert replies[0]["ok"] is True
        assert replies[1]["ok"] is False and "not JSON" in replies[1]["error"]
        assert replies[2] == {"ok": False, "error": f"request line longer than {MAX_LINE} bytes"}
        assert await reader.readline() == b""  # then the session ends
        writer.close()
        await control.close()

    asyncio.run(body())
