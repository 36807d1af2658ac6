"""The device contract: what every kind of device the registry knows (drivers.kinds: the built-in
ones and the plug-ins', the worked example of docs/devices.md among them) must do through its
driver, as the table uses it, whatever its wire. Each kind runs the same suite against its own
simulator, over a `sim://` port and over a pseudo-terminal (both through pyserial), and with
`pytest -m hardware` against a real port:
TABLED_HARDWARE_PORTS="shuffler=/dev/ttyUSB0,ascii_shoe=/dev/ttyUSB3,..." (a kind missing from
the variable is skipped; TABLED_HARDWARE_BAUD, default 115200).

The suite: the link comes up with the device's whole identity and answers STATUS; a build the
approved list does not name is reported and refused every device command (approval is the
casino's, never a plug-in's to give); line noise on the wire leaves the next exchange answered;
the table's command for the device's role goes through the kind's adapter and what the device
then reports comes back as the procedure's input; a cable pulled and put back is a link down,
then up (a simulated device, switched off with its port, reports its restart). What a
protocol promises byte by byte is its own suite (the tabled protocol's:
tests/drivers/test_contract.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import pytest

from drivers.adapter import DeviceAdapter, ProcedureInput, adapter_class
from drivers.base import DeviceDriver, driver_class
from drivers.events import (
    DeviceError,
    DeviceFault,
    DeviceRestarted,
    DeviceStatus,
    DriverEvent,
    LinkDown,
    LinkUp,
    NotApproved,
)
from drivers.kinds import find, kinds
from drivers.link import LinkTiming
from drivers.shoe_reader.messages import card_name
from simulators.pty_host import PtyHost
from simulators.spec import SimSpec
from simulators.world import TableWorld, forget_world, get_world

KINDS = sorted(kinds())
TIMING = LinkTiming(poll_interval=3600.0, reconnect_initial=0.05, reconnect_max=0.2)
OPERATION_SECONDS = 90.0  # a real shuffle takes tens of seconds
ACTIONS = frozenset({"card_read", "shuffle_completed", "dice_landed", "fault_reported"})


@dataclass(frozen=True)
class Operation:
    """The table's command for a device of this role, and the procedure input it leads to
    (None: the role's results are not inputs, as the timer bell's)."""

    command: str
    args: dict[str, Any]
    result: str | None


# What the procedures send each role (daemon/procedures: "shuffle", "shake", "arm", "start").
OPERATIONS = {
    "shuffler": Operation("shuffle", {}, "shuffle_completed"),
    "dice_shaker": Operation("shake", {}, "dice_landed"),
    "shoe_reader": Operation("arm", {"cards": 52}, "card_read"),  # then the dealer draws
    "timer_bell": Operation("start", {"seconds": 1}, None),
}


@dataclass(frozen=True)
class Build:
    """An approved build, as the config's `[[devices.NAME.approved]]` gives one."""

    make: str
    model: str
    firmware: str
    firmware_hash: str


Body = Callable[["Target"], Coroutine[Any, Any, None]]


@dataclass
class Target:
    kind: str
    port: str
    baudrate: int
    world: TableWorld | None  # None: a real device

    @property
    def role(self) -> str:
        return find(self.kind).role

    def driver(self, **kwargs: Any) -> DeviceDriver:
        return driver_class(self.kind)(self.port, baudrate=self.baudrate, timing=TIMING, **kwargs)

    def adapter(self, driver: DeviceDriver) -> DeviceAdapter:
        return adapter_class(self.kind)(driver, ACTIONS)


def hardware_ports() -> dict[str, str]:
    spec = os.environ.get("TABLED_HARDWARE_PORTS", "")
    pairs = (item.partition("=") for item in spec.split(",") if item)
    return {name.strip(): port.strip() for name, _, port in pairs}


TARGETS = [
    pytest.param((kind, where), id=f"{kind}-{where}", marks=marks)
    for kind in KINDS
    for where, marks in (("sim", ()), ("pty", ()), ("hardware", pytest.mark.hardware))
]


@pytest.fixture(params=TARGETS)
def run(request: pytest.FixtureRequest) -> Callable[[Body], None]:
    """Run a test's body against its target, on a loop of its own (the pty's simulator
    runs on that loop too)."""
    kind, where = request.param
    if where == "hardware":
        port = hardware_ports().get(kind)
        if port is None:
            pytest.skip(f"no hardware port for {kind} in TABLED_HARDWARE_PORTS")
        baudrate = int(os.environ.get("TABLED_HARDWARE_BAUD", "115200"))

    def runner(body: Body) -> None:
        async def main() -> None:
            if where == "hardware":
                await body(Target(kind, port, baudrate, None))
                return
            key = f"contract-{kind}-{where}-{os.getpid()}-{id(body)}"
            world = get_world(key)
            try:
                if where == "sim":
                    await body(Target(kind, f"sim://{kind}?world={key}&seed=5", 9600, world))
                    return
                async with pty_device(kind, world) as path:
                    await body(Target(kind, path, 9600, world))
            finally:
                forget_world(key)

        asyncio.run(main())

    return runner


@contextlib.asynccontextmanager
async def pty_device(kind: str, world: TableWorld) -> AsyncIterator[str]:
    host = PtyHost(asyncio.get_running_loop())
    try:
        yield host.add(SimSpec(device=kind, seed=5), world).port
    finally:
        host.close()


async def next_of(driver: DeviceDriver, *kinds: type[DriverEvent]) -> DriverEvent:
    """The driver's next event of one of `kinds` (others are passed over)."""

    async def wait() -> DriverEvent:
        while not isinstance(event := await driver.next_event(), kinds):
            pass
        return event

    return await asyncio.wait_for(wait(), OPERATION_SECONDS)


def test_the_link_comes_up_with_the_whole_identity_and_answers_status(
    run: Callable[[Body], None],
) -> None:
    async def body(target: Target) -> None:
        driver = target.driver()
        assert await driver.start(keep_trying=False), driver.last_error
        identity = driver.identity
        assert identity is not None and identity.make and identity.model and identity.serial
        assert identity.firmware and len(identity.firmware_hash) == 32
        assert isinstance(await next_of(driver, LinkUp), LinkUp)
        assert isinstance(await driver.status(), DeviceStatus)
        assert driver.link.last_round_trip is not None
        assert driver.link.counters.as_dict()["frames_received"] >= 3
        await driver.close()

    run(body)


def test_a_build_not_on_the_approved_list_is_refused_every_device_command(
    run: Callable[[Body], None],
) -> None:
    async def body(target: Target) -> None:
        probe = target.driver()
        assert await probe.start(keep_trying=False), probe.last_error
        identity = probe.identity
        assert identity is not None
        await probe.close()
        listed = Build(
            identity.make, identity.model, identity.firmware, identity.firmware_hash.hex()
        )
        other = Build(identity.make, identity.model, identity.firmware + "-x", "0" * 64)

        driver = target.driver(approved=[other])
        assert await driver.start(keep_trying=False)
        assert driver.approved is False
        up = await next_of(driver, LinkUp)
        assert isinstance(up, LinkUp) and up.approved is False
        fault = await next_of(driver, DeviceFault)
        assert isinstance(fault, DeviceFault) and fault.kind == "unapproved_firmware"
        operation = OPERATIONS[target.role]
        with pytest.raises(NotApproved):
            await target.adapter(driver).send(operation.command, operation.args)
        await driver.close()

        driver = target.driver(approved=[other, listed])
        assert await driver.start(keep_trying=False)
        assert driver.approved is True
        await driver.close()

    run(body)


NOISE = [
    b"\x00\xff" * 40,
    bytes(range(256)),
    b"\r\n\r\n\n",
    b"\x02\x10\x03" * 20 + b"\n",
    b"ID\r\nSTATUS",  # a stray half-command of a line protocol, then a line end (next)
    b"\r\n",
]


def test_line_noise_leaves_the_next_exchange_answered(run: Callable[[Body], None]) -> None:
    async def body(target: Target) -> None:
        driver = target.driver()
        assert await driver.start(keep_trying=False)
        identity = driver.identity
        transport = driver._transport
        assert transport is not None
        for chunk in NOISE:
            transport.write(chunk)
            await asyncio.sleep(0.02)
        # A device may answer the noise (a line protocol cannot tell its answer to a stray
        # line from its answer to the next command): the line goes quiet first.
        await asyncio.sleep(0.3)
        assert await driver.identify() == identity
        assert isinstance(await driver.status(), DeviceStatus)
        assert driver.link_up
        await driver.close()

    run(body)


def test_the_tables_command_for_its_role_goes_through_its_adapter(
    run: Callable[[Body], None],
) -> None:
    async def body(target: Target) -> None:
        driver = target.driver()
        assert await driver.start(keep_trying=False)
        adapter = target.adapter(driver)
        operation = OPERATIONS[target.role]
        await adapter.send(operation.command, operation.args)
        drawn: dict[str, Any] | None = None
        if target.role == "shoe_reader":
            if target.world is None:
                return  # on hardware a person would have to draw the card
            drawn = target.world.dealer_draw()
            assert drawn["reader"] == "read", drawn
        if operation.result is None:  # what it then reports is no input (the timer bell's)
            event = await next_of(driver, DriverEvent)
            while isinstance(event, LinkUp):
                event = await next_of(driver, DriverEvent)
            assert adapter.input_for(event) is None, event
            await driver.close()
            return
        item: ProcedureInput | None = None
        while item is None or item.action != operation.result:
            item = adapter.input_for(await next_of(driver, DriverEvent))
        if drawn is not None:  # the card the dealer drew, as the procedure takes it
            rank, suit = drawn["drawn"]["rank"], drawn["drawn"]["suit"]
            assert item.payload["card"] == card_name(rank, suit)
            assert item.payload["index"] == drawn["sequence"]
        await driver.close()

    run(body)


def test_a_cable_pulled_and_put_back_is_a_link_down_then_up(
    run: Callable[[Body], None], request: pytest.FixtureRequest
) -> None:
    if request.node.callspec.id.endswith("-hardware"):
        pytest.skip("on hardware a person pulls the cable: tabled devices shows it")

    async def body(target: Target) -> None:
        assert target.world is not None
        driver = target.driver()
        assert await driver.start()
        assert isinstance(await next_of(driver, LinkUp), LinkUp)
        target.world.unplug(target.role)
        if target.port.startswith("/dev/"):
            # a pty has no cable to pull: the device goes silent, found by the next exchange
            with contextlib.suppress(DeviceError):
                await driver.status()
        down = await next_of(driver, LinkDown)
        assert isinstance(down, LinkDown)
        target.world.plug(target.role)
        assert isinstance(await next_of(driver, LinkUp), LinkUp)
        if target.port.startswith("sim://"):
            # a simulated device whose port closed was switched off: it comes back restarted
            assert isinstance(await next_of(driver, DeviceRestarted), DeviceRestarted)
        assert driver.link_up
        await driver.close()

    run(body)
