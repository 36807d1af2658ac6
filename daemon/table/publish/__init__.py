"""The table's publication side: what the operator API reads of a running table.

- `facade`: the table's `TableFacade` in its own process (`Table.facade`, a member);
- `views`, `explain`: the console's view of the procedure's state;
- `publisher`: the state as immutable text after each durable change, for the API process;
- `training`: the training controls, run where the simulated devices live.

The API (`daemon.api`) never imports this package, nor this package the API: what they share is
`daemon.contract`, and `daemon.run` wires the two (`served`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.contract.facade import Served
from daemon.table.publish.publisher import SnapshotPublisher

if TYPE_CHECKING:
    from daemon.table.runtime import Table


def served(table: Table) -> Served:
    """What the API process's launcher is handed of `table` (started, on its running loop): its
    facade, a publisher of its state, its journal and its wall clock."""
    return Served(table.facade, SnapshotPublisher(table), table.journal, table.wall)
