"""The guards of a transition table, read as data: which rows of one (phase, trigger) can hold
together, and whether some row holds whatever the round's state.

Each row of a game's `TRANSITIONS` may carry `conditions` (each must hold) and `unless` (each
must not). `transitions` tries a trigger's rows from the phase in the order written and fires
the first whose guards pass. Read here, a guard is a name (or callable) that is true or false;
nothing is assumed of what it means, so every combination of the values of a pair's guards is
a case to consider. That is enough to tell:

- `covers`: some row fires in every case (a pair with a row without guards, or whose guards
  leave no case out): the engine need not keep the round to take it back (`Engine.handle`);
- `exclusive`: a row that fires in no case where another row of the pair could; its place
  among them changes which row fires in no case, only how soon `transitions` finds it. A
  game writes the row it fires most often (a card of the deal under way) first, with `unless`
  naming the guards of the rows it would otherwise come after;
- `first`: which row fires in a given case, as `transitions` picks it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# A guard: the condition (a method's name or a callable) and the value it must return.
Guard = tuple[Any, bool]
# Past this many distinct guards in one pair, `covers` answers False without trying them all
# (the engine then keeps the round, as for any pair not known to fire).
MAX_GUARDS = 16


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def guards(row: Mapping[str, Any]) -> tuple[Guard, ...]:
    """A row's guards, in the order `transitions` checks them: `conditions`, then `unless`."""
    return (
        *((c, True) for c in _listed(row.get("conditions"))),
        *((c, False) for c in _listed(row.get("unless"))),
    )


def sources(row: Mapping[str, Any]) -> list[Any]:
    return _listed(row["source"])


def pairs(transitions: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Any]]:
    """Each (phase name, trigger) of a table, with its rows in the order written."""
    out: dict[tuple[str, str], list[Any]] = {}
    for row in transitions:
        for source in sources(row):
            out.setdefault((source.name, row["trigger"]), []).append(row)
    return out


def holds(row_guards: Sequence[Guard], case: Mapping[Any, bool]) -> bool:
    return all(case[condition] == target for condition, target in row_guards)


def cases(rows: Sequence[Sequence[Guard]]) -> Iterable[dict[Any, bool]] | None:
    """Every combination of the values of the guards `rows` name (None past `MAX_GUARDS`)."""
    names = list(dict.fromkeys(condition for row in rows for condition, _ in row))
    if len(names) > MAX_GUARDS:
        return None
    return (
        dict(zip(names, values, strict=True))
        for values in itertools.product((False, True), repeat=len(names))
    )


def first(rows: Sequence[Sequence[Guard]], case: Mapping[Any, bool]) -> int | None:
    """The index of the row that fires in `case` (the first whose guards pass), or None."""
    return next((i for i, row in enumerate(rows) if holds(row, case)), None)


def covers(rows: Sequence[Sequence[Guard]]) -> bool:
    """Whether some row fires whatever the values of the guards."""
    if any(not row for row in rows):
        return True
    every = cases(rows)
    return every is not None and all(first(rows, case) is not None for case in every)


def exclusive(rows: Sequence[Sequence[Guard]], index: int) -> bool:
    """Whether row `index` fires in no case where another row of `rows` would pass."""
    every = cases(rows)
    if every is None:
        return False
    mine = rows[index]
    others = [row for i, row in enumerate(rows) if i != index]
    return not any(holds(mine, case) and any(holds(row, case) for row in others) for case in every)
