"""Recovery: the table's state after a restart is the replay of its journal.

A `table.checkpoint` (journaled when a round ends) holds the procedure's whole state, the count
of inputs it stands for and the table time of the last one. A restart restores the last
checkpoint and replays the `table.input` lines after it; without a usable checkpoint, every
input from the first line. An input the journal says was accepted that replays as refused
means the procedure or the config changed: the table stops rather than run a changed round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from daemon.journal import Journal, last_event
from daemon.procedures.base import Input, Procedure
from daemon.procedures.events import CHECKPOINT_EVENT, INPUT_EVENT
from daemon.table.common import JournalMismatch

if TYPE_CHECKING:
    from daemon.config import TableConfig


@dataclass
class Recovered:
    """What the journal rebuilt."""

    procedure: Procedure
    inputs: int  # accepted inputs in the whole journal (a checkpoint's count, plus the replayed)
    replayed: int  # inputs replayed after the checkpoint (all of them without one)
    last_now: float  # the table time of the last input (0.0 for an empty journal)
    checkpoint_seq: int | None


def checkpoint_payload(procedure: Procedure, inputs: int, now: float) -> dict[str, Any]:
    return {"inputs": inputs, "now": now, "procedure": procedure.checkpoint()}


def recover(
    journal: Journal,
    journal_dir: Path,
    game: str,
    procedure: Procedure,
    rebuild: Callable[[], Procedure],
    *,
    use_checkpoint: bool = True,
    log: Any = None,
) -> Recovered:
    """Replay the journal into `procedure` (a fresh one, from the journal's last checkpoint
    when `use_checkpoint`; `rebuild` makes another if that checkpoint does not fit);
    JournalMismatch for the journal of another game or config."""
    log = log or structlog.get_logger("tabled.table")
    state = Recovered(procedure, 0, 0, 0.0, None)
    start = 1
    record = last_event(journal_dir, CHECKPOINT_EVENT) if use_checkpoint else None
    if record is not None:
        try:
            payload = record.payload
            procedure.restore(payload["procedure"])
            inputs, now = int(payload["inputs"]), float(payload["now"])
        except (KeyError, TypeError, ValueError) as exc:
            # A checkpoint that does not fit this configuration is passed over: the full
            # replay then decides (and names a journal of another game or table).
            log.warning("table.checkpoint_unused", seq=record.seq, error=str(exc))
            state.procedure = procedure = rebuild()
        else:
            state.inputs, state.last_now = inputs, now
            state.checkpoint_seq = record.seq
            start = record.seq + 1
    for record in journal.replay(start):
        if record.event == "table.started":
            started = record.payload.get("game")
            if started != game:
                raise JournalMismatch(
                    f"{journal_dir}: the journal of a {started} table; this config runs {game}"
                )
            continue
        if record.event != INPUT_EVENT:
            continue
        item = Input.from_payload(record.payload)
        outcome = procedure.handle(item.action, item.actor, item.payload, item.now)
        if not outcome.accepted:
            # The journal says it was accepted: a different procedure would replay it
            # differently, and that must stop the table rather than run a changed round.
            raise JournalMismatch(
                f"seq {record.seq}: {item.action} replays as refused "
                f"({outcome.violation}); the procedure or config changed"
            )
        state.last_now = max(state.last_now, item.now)
        state.inputs += 1
        state.replayed += 1
    return state


def how_it_ended(folder: Path) -> str:
    """How the last run ended: "clean" when its journal's last line is the table's own stop,
    "unclean" otherwise (a crash, a kill, a power cut). The procedure decides what that means
    (a clean stop between rounds plays on; anything else waits for a supervisor)."""
    stopped = last_event(folder, "table.stopped")
    started = last_event(folder, "table.started")
    clean = stopped is not None and (started is None or stopped.seq > started.seq)
    return "clean" if clean else "unclean"


def started_payload(
    config: TableConfig, recovered: Recovered, replayed: int, procedure: Procedure
) -> dict[str, Any]:
    """The `table.started` line: what runs, and what the start rebuilt from the journal."""
    return {
        "game": config.game,
        "ruleset": config.ruleset,
        "hands": config.paigow_hands if config.game == "paigow" else None,
        "devices": {n: d.port for n, d in sorted(config.devices.items())},
        "config": config.source,
        "replayed_inputs": recovered.inputs,
        "checkpoint_seq": recovered.checkpoint_seq,
        "replayed_after_checkpoint": replayed,
        "phase": procedure.phase,
    }
