"""Training mode: what a person does to the simulated devices, one implementation
(`simulators.control.handle_control`) behind the API (`/api/training`, `tabled run --http`), the
console (test_console_training.py) and `tabled sim`'s control channel."""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_table import FakeTable
from fastapi.testclient import TestClient
from training_support import ROOT, auth, tabled_run, write_people

from daemon.api.app import create_app
from daemon.api.routes.training import currency_of
from daemon.config import ApiConfig, load_config
from daemon.training import Training
from drivers.clock import ManualClock
from drivers.dice_shaker.messages import Shake
from drivers.shuffler.messages import StartShuffle
from simulators.base import DeviceModel
from simulators.control import handle_control
from simulators.dice_shaker import DiceShakerModel
from simulators.shoe_reader import ShoeReaderModel
from simulators.shuffler import ShufflerModel
from simulators.timer_bell import TimerBellModel
from simulators.world import TableWorld, forget_world, get_world
from tests.loopback_http import http

_worlds = itertools.count()


@pytest.fixture
def world() -> Iterator[TableWorld]:
    key = f"training-{next(_worlds)}"
    yield get_world(key)
    forget_world(key)


class Wire:
    """A model's bytes to the host, kept to be decoded."""

    def __init__(self) -> None:
        self.sent = bytearray()

    def __call__(self, data: bytes) -> None:
        self.sent += data


def model(cls: type[DeviceModel], world: TableWorld) -> tuple[Any, Wire]:
    wire = Wire()
    return cls(world=world, scheduler=ManualClock(), output=wire), wire


def test_by_hand_a_shuffle_waits_for_a_person_and_ends_as_they_say(world: TableWorld) -> None:
    shuffler, _ = model(ShufflerModel, world)
    assert handle_control(world, {"op": "by_hand", "on": True}) == {"ok": True}
    with shuffler.lock:
        shuffler.handle(StartShuffle(52))
    assert shuffler.busy and world.waiting("shuffler") and world.generation == 0
    # With a fault: the shuffle ends at once, a card short (the count says so).
    done = handle_control(world, {"op": "shuffle", "fault": "wrong_count"})
    assert done == {"ok": True, "finished": True}
    assert not shuffler.busy and world.generation == 1 and len(world.items) == 51
    assert shuffler.describe()["latched"] == ["wrong_count"]
    # Nothing waits now: a plain shuffle is refused, a fault is armed for the next one.
    refused = handle_control(world, {"op": "shuffle"})
    assert refused["ok"] is False and "nothing waiting" in refused["error"]
    armed = handle_control(world, {"op": "shuffle", "fault": "jam"})
    assert armed == {"ok": True, "finished": False, "armed": "jam"}
    assert shuffler.armed == ["jam"]
    bad = handle_control(world, {"op": "shuffle", "fault": "lid_open"})
    assert bad["ok"] is False and "takes a 'fault' of" in bad["error"]


def test_by_hand_a_throw_lands_as_the_trainer_says_and_off_it_finishes_alone(
    world: TableWorld,
) -> None:
    shaker, _ = model(DiceShakerModel, world)
    handle_control(world, {"op": "by_hand", "on": True})
    with shaker.lock:
        shaker.handle(Shake())
    assert handle_control(world, {"op": "shake", "fault": "die_out_of_cup"})["finished"]
    assert not shaker.busy and shaker.armed == []
    with shaker.lock:
        shaker.handle(Shake())
    assert world.waiting("dice_shaker")
    # Switching hand operation off lets what waits finish by itself.
    assert handle_control(world, {"op": "by_hand", "on": False}) == {"ok": True}
    assert not world.waiting("dice_shaker") and not shaker.busy
    assert handle_control(world, {"op": "by_hand", "on": "yes"})["ok"] is False


def test_the_shoe_the_bell_the_doors_and_power(world: TableWorld) -> None:
    shoe, _ = model(ShoeReaderModel, world)
    bell, _ = model(TimerBellModel, world)
    world.load(list(world.deck))
    face_up = handle_control(world, {"op": "draw", "fault": "face_up"})
    assert face_up["ok"] and face_up["reader"] == "read" and face_up["flags"] & 0x01
    misread = handle_control(world, {"op": "draw", "fault": "misread"})
    assert misread["reader"] == "misread"
    # A deal stops at the first card not read (the misread latched a fault; the shoe still
    # deals, so the count asked is dealt).
    dealt = handle_control(world, {"op": "deal", "count": 5})
    assert dealt["ok"] and dealt["dealt"] == 5 and world.remaining == 52 - 7
    for count in (0, 65, "5", True):
        assert handle_control(world, {"op": "deal", "count": count})["ok"] is False
    assert handle_control(world, {"op": "ring"}) == {"ok": True} and bell.rings == 1
    assert handle_control(world, {"op": "door", "device": "shoe_reader", "open": True})["ok"]
    assert shoe.describe()["doors_open"] == ["shoe"]
    blocked = handle_control(world, {"op": "draw"})
    assert blocked["reader"] == "shoe_removed" and blocked["drawn"] is None
    assert handle_control(world, {"op": "door", "device": "shoe_reader", "open": False})["ok"]
    assert shoe.describe()["doors_open"] == []
    no_door = handle_control(world, {"op": "door", "device": "timer_bell", "open": True})
    assert no_door["ok"] is False and "has no door" in no_door["error"]
    assert handle_control(world, {"op": "power", "device": "timer_bell", "on": False})["ok"]
    assert world.unplugged == {"timer_bell"}
    assert handle_control(world, {"op": "power", "device": "timer_bell", "on": True})["ok"]
    assert world.unplugged == set()
    for bad in ({"op": "power", "device": "timer_bell"}, {"op": "power", "device": "kettle"}):
        assert handle_control(world, bad)["ok"] is False


def test_training_exists_only_when_every_device_is_simulated(tmp_path: Path) -> None:
    class Table:
        def __init__(self, config: Any) -> None:
            self.config = config

    shipped = load_config(None)
    assert Training.of(Table(shipped)) is not None
    text = (ROOT / "config" / "table.toml").read_text()
    real = tmp_path / "real.toml"
    real.write_text(text.replace('port = "sim://timer_bell"', 'port = "/dev/ttyUSB3"'))
    assert tomllib.loads(real.read_text())["devices"]["timer_bell"]["port"] == "/dev/ttyUSB3"
    assert Training.of(Table(load_config(real))) is None
    assert Training.of(object()) is None


def test_the_currency_is_the_configs_and_mop_when_it_says_none() -> None:
    class Config:
        currency = "HKD"

    class Table:
        config = Config()

    assert currency_of(Table()) == "HKD"
    assert currency_of(object()) == "MOP"
    assert currency_of(type("T", (), {"config": load_config(None)})()) == "MOP"


def test_a_table_with_no_simulated_devices_has_no_training_routes(tmp_path: Path) -> None:
    tokens = write_people(tmp_path / "tokens.toml")
    client = TestClient(create_app(FakeTable(), ApiConfig(tokens_file=tokens)))
    assert client.get("/api/training", headers=auth("trainer")).status_code == 404
    r = client.post("/api/training/draw", headers=auth("admin"))
    assert r.status_code == 404 and r.json()["error"] == "not_simulated"
    body = client.get("/api/console", headers=auth("trainer")).json()
    assert {k: body[k] for k in ("currency", "training", "trainer")} == {
        "currency": "MOP",
        "training": False,
        "trainer": False,
    }
    # The game's words for the console, and no tiles at a Thirteen table.
    assert body["words"]["phases"]["CUT"] == {"zh": "切牌", "en": "Cut"}
    assert body["tiles"] == []
    # Described for integrators: every control, the trainer's body.
    schema = client.get("/openapi.json").json()
    post = schema["paths"]["/api/training/{op}"]["post"]
    [op] = [p for p in post["parameters"] if p["name"] == "op"]
    assert "deal" in json.dumps(op["schema"]) and "shake" in json.dumps(op["schema"])
    assert "/api/training" in schema["paths"] and "/api/console" in schema["paths"]


def test_the_api_on_tabled_run_roles_refusals_and_the_journal(tmp_path: Path) -> None:
    with tabled_run(tmp_path) as url:

        def train(op: str, role: str = "trainer", **body: Any) -> httpx.Response:
            return http.post(f"{url}/api/training/{op}", json=body, headers=auth(role))

        for role in ("dealer", "supervisor", "surveillance"):
            assert http.get(url + "/api/training", headers=auth(role)).status_code == 403
            assert train("draw", role).status_code == 403
        described = http.get(url + "/api/training", headers=auth("admin")).json()
        assert [d["name"] for d in described["devices"]] == [
            "dice_shaker",
            "shoe_reader",
            "shuffler",
            "timer_bell",
        ]
        shuffler = described["devices"][2]
        assert shuffler["door"]["label"]["en"] == "Lid"
        assert {"jam", "wrong_count", "sort_mode"} <= {f["fault"] for f in shuffler["faults"]}
        for role, trainer in (("dealer", False), ("trainer", True), ("admin", True)):
            body = http.get(url + "/api/console", headers=auth(role)).json()
            assert {k: body[k] for k in ("currency", "training", "trainer")} == {
                "currency": "MOP",
                "training": True,
                "trainer": trainer,
            }
        # Bad requests: clear answers, nothing done.
        assert train("dance").status_code == 422
        assert train("door", device="shuffler", open=True, colour="red").status_code == 422
        assert train("deal", count=0).status_code == 422
        assert train("door", device="kettle", open=True).status_code == 422
        refused = train("shake")
        assert refused.status_code == 409 and "nothing waiting" in refused.json()["message"]
        assert train("door", device="shuffler", open=True).json() == {"ok": True}
        lid = http.get(url + "/api/training", headers=auth("trainer")).json()["devices"][2]
        assert lid["door"]["open"] is True
        assert train("door", "admin", device="shuffler", open=False).status_code == 200

        journal = http.get(
            url + "/api/journal", params={"limit": 1000}, headers=auth("surveillance")
        ).json()["events"]
        controls = [e for e in journal if e["event"] == "training.control"]
        assert [(c["actor"], c["payload"]["op"], c["payload"]["ok"]) for c in controls] == [
            ("trainer:chan.trainer", "shake", False),
            ("trainer:chan.trainer", "door", True),
            ("admin:it.admin", "door", True),
        ]
        assert controls[1]["payload"]["device"] == "shuffler"
        forbidden = [e for e in journal if e["event"] == "api.forbidden"]
        assert {e["payload"]["role"] for e in forbidden} == {"dealer", "supervisor", "surveillance"}


def test_tabled_sim_serves_the_same_controls_on_its_socket(tmp_path: Path) -> None:
    control = tmp_path / "control.sock"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daemon",
            "sim",
            "--speed",
            "0",
            "--json",
            "--by-hand",
            "--control",
            str(control),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        said = [json.loads(process.stdout.readline()) for _ in range(5)]
        assert said[-1] == {"control": str(control)}
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(control))
            lines = sock.makefile("rw")

            def ask(request: dict[str, Any]) -> dict[str, Any]:
                lines.write(json.dumps(request) + "\n")
                lines.flush()
                reply: dict[str, Any] = json.loads(lines.readline())
                return reply

            assert ask({"op": "state"})["by_hand"] is True  # --by-hand
            assert ask({"op": "by_hand", "on": False}) == {"ok": True}
            assert ask({"op": "by_hand", "on": True}) == {"ok": True}
            assert ask({"op": "door", "device": "dice_shaker", "open": True}) == {"ok": True}
            state = ask({"op": "state"})
            assert state["by_hand"] is True
            assert state["devices"]["dice_shaker"]["doors_open"] == ["base"]
            assert ask({"op": "ring"}) == {"ok": True}
            assert ask({"op": "shuffle"})["ok"] is False
    finally:
        process.terminate()
        process.wait(timeout=10)
