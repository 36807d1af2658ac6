"""`tabled run` starts with what its table needs only (issue 10 item 7: start-up CPU).

What a run has imported is read from the process itself: `python -m daemon run` started through a
wrapper that, when the daemon prints its first durable device input (`--trace`), writes the
process's `sys.modules` to a file. The tables of the rules engines are read from a fresh
interpreter. bench/bench_cpu.py measures the CPU this saves.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from daemon.run import GC_YOUNG
from tests.daemon.cli_support import REPO, environment

# `python -m daemon ARGS`, its stdout watched: at the first line naming a device input, the
# modules loaded so far go to the file named by the first argument, and the kind of loop
# running the table (`loop:MODULE.CLASS`).
WATCHED = """
import asyncio, runpy, sys
listing = sys.argv.pop(1)

class Watched:
    def __init__(self, out):
        self.out = out
        self.listed = False

    def write(self, text):
        if "device_" in text and not self.listed:
            self.listed = True
            loop = type(asyncio.get_running_loop())  # printed on the table's loop
            names = [*sorted(sys.modules), f"loop:{loop.__module__}.{loop.__name__}"]
            with open(listing, "w") as f:
                f.write("\\n".join(names))
        return self.out.write(text)

    def __getattr__(self, name):
        return getattr(self.out, name)

sys.stdout = Watched(sys.stdout)
sys.argv[0] = "tabled"
runpy.run_module("daemon", run_name="__main__", alter_sys=True)
"""


def loaded_by_run(tmp_path: Path, *args: str) -> set[str]:
    """The modules `tabled run --trace ARGS` has loaded when its first device input is durable."""
    listing = tmp_path / "modules.txt"
    process = subprocess.Popen(
        [sys.executable, "-c", WATCHED, str(listing), "run", "--trace",
         "--journal", str(tmp_path / "journal"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO,
        env=environment(),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        while "device_" not in (line := process.stdout.readline()):
            assert line, "tabled run ended before its first device input"
    finally:
        process.terminate()
        process.wait(timeout=60)
    return set(listing.read_text().split())


def test_a_thirteen_table_loads_neither_the_api_nor_rich(tmp_path: Path) -> None:
    modules = loaded_by_run(tmp_path)  # the embedded config: a Thirteen table, no --http
    # What it plays is there (and the listing works). Every game's declaration, its procedure
    # class included, is loaded with the registry (issue 24: the start-up goal that kept the
    # other game out is withdrawn; one registry, no lazy loaders).
    assert {"daemon.procedures.thirteen.procedure", "daemon.rules.thirteen.ranking"} <= modules
    # No web framework without --http:
    assert not {m for m in modules if m.split(".")[0] in {"fastapi", "starlette", "uvicorn"}}
    # structlog's console pretty-printer: installed in this venv (the test tools need it), not
    # in the approved build; the daemon never loads it.
    assert "rich.console" not in modules and "rich.traceback" not in modules
    # The table runs on uvloop's loop (daemon/eventloop.py: less CPU a round and an exchange).
    assert "loop:uvloop.Loop" in modules


def test_a_plain_run_loads_nothing_only_the_api_feed_or_floor_needs(tmp_path: Path) -> None:
    modules = loaded_by_run(tmp_path)  # the embedded config: no --http, no [feed]
    # The config was read and checked by pydantic, the validator of every config file
    # (daemon/configfile.py; issue 24: the start-up goal that kept pydantic out is withdrawn).
    assert {"daemon.config", "daemon.configfile", "pydantic"} <= modules
    # The shipper's NATS client, the floor's PostgreSQL driver, HTTP servers and clients: none
    # without a [feed] or --http.
    heavy = {"nats", "psycopg", "uvicorn", "httpx", "websockets", "h11"}
    assert not {m for m in modules if m.split(".")[0] in heavy}
    # The package metadata is read (importlib.metadata, with the email parser it uses): the
    # `tabled.devices` entry points, so a vendor's driver installed as its own package is found
    # by the config (drivers/kinds.py, docs/devices.md).
    assert "importlib.metadata" in modules
    assert not {m for m in modules if m.startswith(("daemon.floor", "daemon.api.app"))}
    # The table's publication side (its views, published snapshots, journal feed) is the
    # table's own since issue 24 (daemon/table/publish) and loads with it.
    # greenlet, like rich: structlog's when installed, not in the approved build.
    assert "greenlet" not in modules
    assert not {
        m for m in modules if m.startswith(("daemon.shipper.engine", "daemon.shipper.broker"))
    }


def test_a_pai_gow_table_plays_its_own_procedure(tmp_path: Path) -> None:
    modules = loaded_by_run(tmp_path, "--config", str(REPO / "config" / "paigow.toml"))
    assert {"daemon.procedures.paigow.procedure", "daemon.rules.paigow"} <= modules


def test_thirteens_tables_are_built_on_first_use_once() -> None:
    code = """
from daemon.rules.thirteen import house, ranking, rank, house_way
from daemon.procedures.thirteen import ThirteenProcedure
ThirteenProcedure("T01")
print(len(ranking._SLOTS), len(ranking.ROWS5), "_MIDDLES" in vars(house))
rows5 = ranking.ROWS5
print(rank("As Ks Qs Js Ts"), rank("2c 2d 3h"), len(ranking.ROWS5) > 0 and rows5 is ranking.ROWS5)
print("_MIDDLES" in vars(house))
head, middle, tail = house_way("As Ad Kc Kd Qh Qs 2c 5d 7h 9s Jc 3d 4h")
middles = house._MIDDLES
house_way("2s 3s 4s 5s 6s 7d 8d 9d Td Jd Qc Kc Ac")
print(len(tail), house._MIDDLES is middles, house.SCORE3 is vars(house)["SCORE3"])
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
        env=environment(), timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.splitlines() == [
        "0 0 False",  # a procedure is built, nothing ranked yet: no table
        "royal_flush() one_pair(2 3) True",  # the first rank builds them, in place
        "False",  # the house way's own tables wait for the house way
        "5 True True",  # built once, kept
    ]


# `python -m daemon ARGS` that writes to stderr, with each thing it prints, how many objects are
# frozen out of the collector's sight (gc.freeze). `tabled run` ends with os._exit: no atexit.
FROZEN = """
import gc, runpy, sys

class Counted:
    def __init__(self, out):
        self.out = out

    def write(self, text):
        sys.stderr.write(f"frozen {gc.get_freeze_count()} young {gc.get_threshold()[0]}\\n")
        return self.out.write(text)

    def __getattr__(self, name):
        return getattr(self.out, name)

sys.stdout = Counted(sys.stdout)
sys.argv[0] = "tabled"
runpy.run_module("daemon", run_name="__main__", alter_sys=True)
"""


def test_what_start_up_built_is_out_of_the_collectors_sight(tmp_path: Path) -> None:
    """Once started, `tabled run` freezes what start-up built, so no full collection on the
    table's loop walks the modules, the config and the rules' tables again; and its young
    collections are fewer (`daemon.run.GC_YOUNG`)."""
    done = subprocess.run(
        [sys.executable, "-c", FROZEN, "run", "--autoplay", "1", "--journal",
         str(tmp_path / "journal")],
        check=False, capture_output=True, text=True, cwd=REPO, env=environment(), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stderr.rsplit("frozen ", 1)[1].split()
    frozen, young = int(last[0]), int(last[2])
    assert frozen > 10_000, f"only {frozen} objects frozen"
    # and the young generation collected less often than Python's default (700)
    assert young == GC_YOUNG > 700
