"""The table runtime: one procedure, its devices and its journal, behind the operator API.

`Table` loads nothing itself beyond its `TableConfig`: it opens the journal, builds the
procedure of the configured game, replays the journal into it, connects the configured drivers
and then turns

- each driver event (a throw, a shuffle count, a card read, a fault, a door, a link lost) into
  a procedure input from `device:<name>`, as the device's adapter says;
- each operator action (`act`, from the API or the scripted autoplay) into an input from
  `<role>:<person>`;
- the five-minute deadline of the procedure into `timer_expired` from `system`, fired by the
  table's own clock (the bell is told, never asked);

and the procedure's device commands into driver calls, issued once the input that caused them
is durable. docs/table.md tells the whole runtime. One job a module:

- `runtime`: inputs -> procedure -> journal -> commands, and table time (`Table`);
- `commit`: the group commit of the inputs nothing outside waits for;
- `deadline`: the procedure's deadline as a timer; `waiters`: who waits for the table to change;
- `devices`: the drivers and their adapters, commands out; `intake`: their events in;
- `recovery`: checkpoints, and the replay of the journal at start;
- `publish`: what the operator API reads of the table (`Table.facade`, the published state);
- `builder`: the procedure of the configured game; `common`: what they share.

Nothing here imports the API (`daemon.api`): what the two share is `daemon.contract`.
"""

from __future__ import annotations

from daemon.procedures.events import CHECKPOINT_EVENT, INPUT_EVENT
from daemon.table.builder import build_procedure
from daemon.table.common import (
    Fed,
    JournalMismatch,
    TableError,
    TableStats,
)
from daemon.table.runtime import Table

__all__ = [
    "CHECKPOINT_EVENT",
    "INPUT_EVENT",
    "Fed",
    "JournalMismatch",
    "Table",
    "TableError",
    "TableStats",
    "build_procedure",
]
