"""Helpers for whole-table scenarios: configs on fresh simulated worlds, a table started on a
temporary journal, and journal reading."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.config import TableConfig, parse_config
from daemon.procedures.base import Input, Procedure
from daemon.table import INPUT_EVENT, Table, build_procedure
from drivers.clock import ManualClock, MonotonicClock
from simulators.world import TableWorld, get_world

_worlds = itertools.count()
REPO = Path(__file__).resolve().parents[2]
THIRTEEN_DEVICES = ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")


def new_world() -> tuple[str, TableWorld]:
    key = f"scenario-{next(_worlds)}"
    return key, get_world(key)


def table_config(
    journal: Path,
    *,
    game: str = "thirteen",
    world: str = "default",
    durability: str = "none",
    devices: tuple[str, ...] | None = None,
    seed: int = 7,
    speed: float = 0.0,
    hands: int = 8,
) -> dict[str, Any]:
    names = devices or (THIRTEEN_DEVICES if game == "thirteen" else ("dice_shaker",))
    table: dict[str, Any] = {"id": "T09", "game": game}
    if game == "paigow":
        table["paigow_hands"] = hands
    return {
        "table": table,
        "journal": {"dir": str(journal), "durability": durability},
        "devices": {
            name: {"port": f"sim://{name}?world={world}&seed={seed + i}&speed={speed}"}
            for i, name in enumerate(names)
        },
    }


def toml(data: dict[str, Any]) -> str:
    """Enough TOML for the configs above (tables of scalars)."""
    lines: list[str] = []

    def emit(prefix: str, section: dict[str, Any]) -> None:
        scalars = {k: v for k, v in section.items() if not isinstance(v, dict)}
        if prefix:
            lines.append(f"[{prefix}]")
        for key, value in scalars.items():
            lines.append(f"{key} = {json.dumps(value)}")
        for key, value in section.items():
            if isinstance(value, dict):
                emit(f"{prefix}.{key}" if prefix else key, value)

    emit("", data)
    return "\n".join(lines) + "\n"


EPOCH = 1_800_000_000.0


def make_table(
    config: dict[str, Any], *, clock: ManualClock | None = None
) -> tuple[Table, TableConfig]:
    """A table on `config`; with a manual clock (its `wall_start` EPOCH, say), the table's time
    and its journal's move with it."""
    parsed = parse_config(config)
    if clock is None:
        return Table(parsed, driver_clock=MonotonicClock()), parsed
    return Table(parsed, clock=clock, driver_clock=MonotonicClock()), parsed


def journal_lines(directory: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(directory.glob("journal-*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if line:
                with contextlib.suppress(ValueError):  # a torn last line
                    out.append(json.loads(line))
    return out


def inputs_of(lines: list[dict[str, Any]]) -> list[Input]:
    return [Input.from_payload(r["payload"]) for r in lines if r["event"] == INPUT_EVENT]


def replayed(config: dict[str, Any], inputs: list[Input]) -> Procedure:
    procedure = build_procedure(parse_config(config))
    for item in inputs:
        outcome = procedure.handle(item.action, item.actor, item.payload, item.now)
        assert outcome.accepted, (item, outcome.violation)
    return procedure


async def until(table: Table, predicate: Callable[[], bool], what: str) -> None:
    assert await table.wait_for(predicate, 10.0), (
        f"waited for {what}; phase {table.procedure.phase}"
    )
