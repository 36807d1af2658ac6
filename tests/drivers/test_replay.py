"""Record and replay: captures taken through `capture://`, fed back into the unchanged drivers.

The shipped captures in tests/fixtures/captures/ are regression fixtures: each replays into
today's driver and must give its expected file. They were recorded by the scenarios below
(`python tests/drivers/test_replay.py` records them again, after checking that the replay of
each new capture reports what the live driver reported).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import sys
import tty
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from drivers.base import DeviceDriver, driver_class
from drivers.capture import (
    CLOSE,
    OPEN,
    RX,
    TX,
    CaptureFormatError,
    capture_all,
    capture_url,
    parse_capture,
    parse_capture_url,
    read_capture,
)
from drivers.clock import MonotonicClock, settle
from drivers.dice_shaker.driver import DiceShakerDriver
from drivers.events import CommandRefused, LinkLost
from drivers.link import LinkTiming
from drivers.replay import compare, describe_event, format_expected, replay, replay_file
from drivers.replay import main as replay_main
from drivers.shoe_reader.driver import ShoeReaderDriver
from drivers.shuffler.driver import ShufflerDriver
from drivers.timer_bell.driver import TimerBellDriver
from simulators.shoe_reader import ShoeReaderModel
from simulators.world import TableWorld, forget_world, get_world, standard_deck

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
TIMING = LinkTiming(poll_interval=3600.0)
_worlds = itertools.count()

Scenario = Callable[[Any, TableWorld], Awaitable[None]]


def seeded_stack(seed: int) -> list[Any]:
    cards = list(standard_deck())
    random.Random(seed).shuffle(cards)
    return cards


async def shuffler_round(driver: ShufflerDriver, world: TableWorld) -> None:
    await driver.shuffle(52)
    await settle()


async def dice_round(driver: DiceShakerDriver, world: TableWorld) -> None:
    for _ in range(2):
        await driver.shake()
        await settle()
    world.inject("dice_shaker", "die_tilted")
    await driver.shake()
    await settle()
    await driver.shake()
    await settle()


async def draws(world: TableWorld, count: int) -> None:
    for _ in range(count):
        world.dealer_draw()
        await settle()


async def shoe_round(driver: ShoeReaderDriver, world: TableWorld) -> None:
    world.load(seeded_stack(7))
    world.place_cut_card(13)
    await driver.arm(new_shoe=True)
    await draws(world, 14)  # 13 cards and the cut card
    await driver.disarm()


async def bell_round(driver: TimerBellDriver, world: TableWorld) -> None:
    await driver.start_timer(300, warn_before=30)
    await settle()
    await driver.ring()
    await settle()
    await driver.remaining()


async def shoe_bad_crc_burst(driver: ShoeReaderDriver, world: TableWorld) -> None:
    world.load(seeded_stack(8))
    await driver.arm(new_shoe=True)
    await draws(world, 3)
    world.inject("shoe_reader", "bad_crc")
    await draws(world, 6)
    await driver.status()
    world.clear("shoe_reader", "bad_crc")
    await draws(world, 3)


async def shoe_removed_mid_deal(driver: ShoeReaderDriver, world: TableWorld) -> None:
    world.load(seeded_stack(9))
    await driver.arm(new_shoe=True)
    await draws(world, 5)
    world.inject("shoe_reader", "shoe_removed")
    await settle()
    await draws(world, 1)  # nothing comes out of a shoe that is not there
    with pytest.raises(CommandRefused):
        await driver.arm()
    world.clear("shoe_reader", "shoe_removed")
    await settle()
    await draws(world, 1)  # put back but not re-armed: out of phase
    await driver.clear_faults()
    await settle()
    await driver.arm()
    await draws(world, 3)


async def shoe_link_lost_and_back(driver: ShoeReaderDriver, world: TableWorld) -> None:
    world.load(seeded_stack(10))
    await driver.arm(new_shoe=True)
    await draws(world, 2)
    world.inject("shoe_reader", "no_response")
    with pytest.raises(LinkLost):
        await driver.status()
    while not driver.link_up:  # the driver reconnects by itself, after its backoff
        await asyncio.sleep(0.01)
    world.load(seeded_stack(11))  # the reconnected (power-cycled) reader: a fresh shoe
    await driver.arm(new_shoe=True)
    await draws(world, 2)


SCENARIOS: dict[str, tuple[str, str, Scenario]] = {
    "shuffler-clean-round": ("shuffler", "seed=3", shuffler_round),
    "dice-clean-round": ("dice_shaker", "seed=5", dice_round),
    "shoe-clean-round": ("shoe_reader", "seed=1", shoe_round),
    "bell-clean-round": ("timer_bell", "seed=1", bell_round),
    "shoe-bad-crc-burst": ("shoe_reader", "seed=1", shoe_bad_crc_burst),
    "shoe-removed-mid-deal": ("shoe_reader", "seed=1", shoe_removed_mid_deal),
    "shoe-link-lost-and-back": ("shoe_reader", "seed=2", shoe_link_lost_and_back),
}
# Real seconds pass while a link is lost and recovered: record that scenario with short timing.
QUICK = LinkTiming(reply_timeout=0.05, tries=2, poll_interval=3600.0, reconnect_initial=0.1)


async def record(name: str, path: Path, timing: LinkTiming = TIMING) -> dict[str, Any]:
    """Run a scenario live through `capture://`; what the live driver reported."""
    device, options, scenario = SCENARIOS[name]
    key = f"replay-{next(_worlds)}"
    world = get_world(key)
    try:
        url = capture_url(f"sim://{device}?{options}&world={key}", path)
        driver: DeviceDriver = driver_class(device)(url, timing=timing)
        assert await driver.start()
        await scenario(driver, world)
        await settle()
        events = [describe_event(e) for e in driver.pending_events()]
        counters = driver.link.counters.as_dict()
        await driver.close()
    finally:
        forget_world(key)
    return {"events": events, "counters": counters}


def shipped() -> list[str]:
    return sorted(p.name.removesuffix(".capture.jsonl") for p in FIXTURES.glob("*.capture.jsonl"))


def test_the_shipped_captures_cover_each_device_and_the_faults() -> None:
    assert set(SCENARIOS) <= set(shipped())


@pytest.mark.parametrize("name", shipped())
def test_a_shipped_capture_replays_to_its_expected_events(name: str) -> None:
    result = replay_file(FIXTURES / f"{name}.capture.jsonl")
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text(encoding="utf-8"))
    assert compare(result, expected) == []
    assert result.tx_matches and result.events


@pytest.mark.parametrize(
    "name", ["shoe-removed-mid-deal", "shoe-bad-crc-burst", "bell-clean-round"]
)
def test_a_replay_reports_what_the_live_driver_reported(name: str, tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    live = asyncio.run(record(name, path))
    result = replay_file(path)
    assert result.tx_matches
    assert result.events == live["events"]
    assert result.counters == live["counters"]


def test_a_lost_link_and_its_reconnect_replay_as_they_happened(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    live = asyncio.run(record("shoe-link-lost-and-back", path, QUICK))
    assert [r.direction for r in read_capture(path).records].count("open") == 2
    result = asyncio.run(replay(read_capture(path), timing=QUICK))
    assert result.tx_matches
    assert result.events == live["events"]
    assert result.counters == live["counters"] and result.counters["timeouts"] == 2
    kinds = [e["event"] for e in result.events]
    assert kinds == [
        "LinkUp",
        "CardDrawn",
        "CardDrawn",
        "LinkDown",
        "LinkUp",
        "DeviceRestarted",  # the reopened port is a power-cycled reader
        "CardDrawn",
        "CardDrawn",
    ]


def test_the_fixtures_show_what_they_are_named_for() -> None:
    crc = json.loads((FIXTURES / "shoe-bad-crc-burst.expected.json").read_text())
    assert crc["counters"]["error_crc"] >= 3
    assert [e["sequence"] for e in crc["events"] if e["event"] == "CardDrawn"] == list(range(1, 13))
    removed = json.loads((FIXTURES / "shoe-removed-mid-deal.expected.json").read_text())
    kinds = [e["event"] for e in removed["events"]]
    assert kinds.count("DoorChanged") == 2
    assert {"call": "Arm", "args": {"mode": 0, "new_shoe": 0}, "outcome": "refused: door_open"} in (
        removed["calls"]
    )


def test_a_changed_byte_in_a_capture_is_caught(tmp_path: Path) -> None:
    capture = read_capture(FIXTURES / "shoe-clean-round.capture.jsonl")
    lines = (FIXTURES / "shoe-clean-round.capture.jsonl").read_text().splitlines()
    # Corrupt the first card the shoe reported: a bad CRC now, a NAK the host never sent.
    index = next(
        i
        for i, line in enumerate(lines[1:], start=1)
        if json.loads(line)["dir"] == RX and " d0 " in json.loads(line)["hex"]
    )
    item = json.loads(lines[index])
    data = bytearray.fromhex(item["hex"])
    data[-2] ^= 0x01
    item["hex"] = data.hex(" ")
    lines[index] = json.dumps(item)
    result = asyncio.run(replay(parse_capture(lines)))
    expected = json.loads((FIXTURES / "shoe-clean-round.expected.json").read_text())
    problems = compare(result, expected)
    assert not result.tx_matches and problems
    assert len(capture.records) == len(lines) - 1


def test_capture_urls_and_files_are_checked(tmp_path: Path) -> None:
    url = capture_url("sim://shoe_reader?seed=3&world=T1", "/var/cap/shoe.jsonl")
    assert parse_capture_url(url) == (
        "sim://shoe_reader?seed=3&world=T1",
        Path("/var/cap/shoe.jsonl"),
    )
    for bad in ("capture://sim://shoe_reader", "capture://#x", "spy:///dev/ttyS0#x"):
        with pytest.raises(ValueError):
            parse_capture_url(bad)
    with pytest.raises(CaptureFormatError, match="not a tabled-capture"):
        parse_capture(['{"format": "pcap"}'])
    with pytest.raises(CaptureFormatError, match=":2:"):
        parse_capture([json.dumps(_header()), '{"t": 0, "dir": "tx", "hex": "zz"}'])
    with pytest.raises(CaptureFormatError, match="empty"):
        parse_capture([])


def test_every_port_of_a_table_can_be_captured(tmp_path: Path) -> None:
    ports = {"shoe_reader": "sim://shoe_reader?world=T9", "timer_bell": "/dev/ttyUSB3"}
    wrapped = capture_all(ports, tmp_path, stamp="20261129T120000Z")
    assert wrapped == {
        "shoe_reader": f"capture://sim://shoe_reader?world=T9#{tmp_path}/shoe_reader-20261129T120000Z.jsonl",
        "timer_bell": f"capture:///dev/ttyUSB3#{tmp_path}/timer_bell-20261129T120000Z.jsonl",
    }
    assert parse_capture_url(wrapped["timer_bell"])[0] == "/dev/ttyUSB3"


def _header() -> dict[str, Any]:
    return {
        "format": "tabled-capture",
        "version": 1,
        "port": "/dev/ttyUSB0",
        "baudrate": 9600,
        "device": None,
        "started": "2026-11-29T00:00:00+00:00",
    }


def test_a_capture_of_a_real_pseudo_terminal(tmp_path: Path) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    path = tmp_path / "pty.jsonl"
    world = TableWorld("pty-capture", standard_deck())

    async def body() -> None:
        loop = asyncio.get_running_loop()
        model = ShoeReaderModel(
            world=world,
            scheduler=MonotonicClock(loop),
            output=lambda data: os.write(master, data) and None,
        )
        loop.add_reader(master, lambda: model.receive_data(os.read(master, 4096)))
        # Real time on a real pty: a generous reply timeout, so a loaded machine's stall is not
        # a retransmission that the capture then holds and the expected events do not.
        patient = LinkTiming(poll_interval=3600.0, reply_timeout=5.0)
        driver = ShoeReaderDriver(capture_url(os.ttyname(slave), path), timing=patient)
        assert await driver.start()
        await driver.arm(new_shoe=True)
        world.dealer_draw()
        await asyncio.wait_for(driver.next_event(), 5)  # LinkUp
        drawn = await asyncio.wait_for(driver.next_event(), 5)
        assert drawn.card == "As"  # type: ignore[attr-defined]
        await driver.close()
        loop.remove_reader(master)
        model.close()

    try:
        asyncio.run(body())
    finally:
        os.close(master)
        os.close(slave)
    capture = read_capture(path)
    assert capture.header.device is None and capture.header.port.startswith("/dev/")
    assert {r.direction for r in capture.records} == {TX, RX, OPEN, CLOSE}
    result = replay_file(path, device="shoe_reader")
    assert result.tx_matches
    assert [e["event"] for e in result.events] == ["LinkUp", "CardDrawn"]


def write_fixtures(directory: Path) -> None:
    """Record every scenario, check its replay against the live run, and write both files."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        path = directory / f"{name}.capture.jsonl"
        path.unlink(missing_ok=True)  # replaced, not kept as NAME.1
        live = asyncio.run(record(name, path))
        result = replay_file(path)
        if not result.tx_matches or result.events != live["events"]:
            raise SystemExit(f"{name}: the replay does not report what the live driver did")
        expected = directory / f"{name}.expected.json"
        expected.write_text(format_expected(result.as_expected()), encoding="utf-8")
        print(f"{name}: {len(result.events)} events")


if __name__ == "__main__":
    write_fixtures(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES)


def test_the_replay_command_checks_and_blesses(tmp_path: Path, capsys: Any) -> None:
    capture = FIXTURES / "bell-clean-round.capture.jsonl"
    expected = FIXTURES / "bell-clean-round.expected.json"
    assert replay_main([str(capture), str(expected)]) == 0
    changed = json.loads(expected.read_text())
    changed["events"][1]["remaining"] = 29
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(changed))
    assert replay_main([str(capture), str(wrong)]) == 1
    assert "event 1: expected" in capsys.readouterr().out
    blessed = tmp_path / "blessed.json"
    assert replay_main([str(capture), str(blessed), "--write"]) == 0
    assert blessed.read_text() == expected.read_text()


def test_the_replay_command_names_a_bad_input_and_exits_2(tmp_path: Path, capsys: Any) -> None:
    capture = FIXTURES / "bell-clean-round.capture.jsonl"
    expected = FIXTURES / "bell-clean-round.expected.json"
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text(capture.read_text()[:300])
    not_a_capture = tmp_path / "other.jsonl"
    not_a_capture.write_text('{"format": "other"}\n')
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    cases = [
        ([str(tmp_path / "missing.jsonl"), str(expected)], "missing.jsonl"),
        ([str(truncated), str(expected)], "truncated.jsonl:"),
        ([str(not_a_capture), str(expected)], "not a tabled-capture"),
        ([str(capture), str(tmp_path / "missing.json")], "missing.json"),
        ([str(capture), str(listed)], "not an expected file"),
        ([str(capture), str(expected), "--device", "toaster"], "toaster"),
    ]
    for argv, message in cases:
        assert replay_main(argv) == 2, argv
        assert message in capsys.readouterr().err
    assert expected.read_text() == (FIXTURES / "bell-clean-round.expected.json").read_text()
