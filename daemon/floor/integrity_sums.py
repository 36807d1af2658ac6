"""The integrity pass's running sums (daemon/floor/integrity.py runs the pass): each table's
device sums (`integrity_devices`) loaded at once and written back at once, the decks of many
tables scored in one numpy batch, and one table's new lines folded into them.

Written back in one statement each (arrays unnested by PostgreSQL), not a statement a row: a
pass of 800 tables touches ~1,600 device rows and ~16,000 reader rows, and psycopg's
`executemany` costs a round of parse, bind and execute on both sides for every one of them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:
    from daemon.analytics.source import AuditData

DUMPS = json.JSONEncoder(separators=(",", ":")).encode


class Sums:
    """The stored sums of the tables in a pass, loaded at once, written back at once."""

    def __init__(self, conn: psycopg.Connection[Any], tables: list[str]) -> None:
        from daemon.analytics.dice import DiceStats  # noqa: PLC0415 - numpy: in the pass only
        from daemon.analytics.shuffle import ShuffleStats  # noqa: PLC0415

        self.dice: dict[tuple[str, str], DiceStats] = {}
        self.shuffle: dict[tuple[str, str], ShuffleStats] = {}
        self.skipped: dict[tuple[str, str], int] = defaultdict(int)
        self.touched: set[tuple[str, str, str]] = set()
        rows = conn.execute(
            "SELECT table_id, kind, serial, stats, skipped FROM integrity_devices "
            "WHERE table_id = ANY(%s)",
            (tables,),
        ).fetchall()
        for table, kind, serial, stats, skipped in rows:
            if kind == "dice":
                self.dice[(table, serial)] = DiceStats.from_json(stats)
            else:
                self.shuffle[(table, serial)] = ShuffleStats.from_json(stats)
                self.skipped[(table, serial)] = int(skipped)

    def write(self, conn: psycopg.Connection[Any]) -> None:
        """The touched devices' sums, in one statement."""
        rows: list[tuple[str, str, str, int, int, str]] = []
        for table, kind, serial in sorted(self.touched):
            if kind == "dice":
                dice = self.dice[(table, serial)]
                rows.append((table, kind, serial, dice.throws, 0, DUMPS(dice.json())))
            else:
                deck = self.shuffle[(table, serial)]
                skipped = self.skipped[(table, serial)]
                rows.append((table, kind, serial, deck.decks, skipped, DUMPS(deck.json())))
        if not rows:
            return
        conn.execute(
            "INSERT INTO integrity_devices (table_id, kind, serial, samples, skipped, stats) "
            "SELECT t, k, s, n, x, j::jsonb FROM unnest(%s::text[], %s::text[], %s::text[], "
            "%s::bigint[], %s::bigint[], %s::text[]) AS r(t, k, s, n, x, j) "
            "ON CONFLICT (table_id, kind, serial) DO UPDATE "
            "SET samples = excluded.samples, skipped = excluded.skipped, "
            "stats = excluded.stats, updated_at = now()",
            [list(column) for column in zip(*rows, strict=True)],
        )


class Decks:
    """Decks of many tables (keyed), their rising sequences and guessing scores computed in
    one numpy batch: the guessing game steps through the 52 positions, and 20 decks a table
    are too few to carry those steps' cost alone."""

    def __init__(self) -> None:
        self.parts: list[tuple[tuple[str, str], Any]] = []

    def add(self, key: tuple[str, str], decks: Any) -> None:
        if len(decks):
            self.parts.append((key, decks))

    def scored(self) -> dict[tuple[str, str], tuple[Any, Any, Any]]:
        """key -> (decks, rising sequences, scores)."""
        import numpy as np  # noqa: PLC0415 - numpy: in the pass only

        from daemon.analytics.shuffle import guess_scores, rising_sequences  # noqa: PLC0415

        if not self.parts:
            return {}
        every = np.concatenate([decks for _, decks in self.parts])
        rising, scores = rising_sequences(every), guess_scores(every)
        found: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
        at = 0
        for key, decks in self.parts:
            end = at + len(decks)
            found[key] = (decks, rising[at:end], scores[at:end])
            at = end
        return found


def fold(
    sums: Sums,
    table: str,
    data: AuditData,
    decks: Decks,
    reader_rows: list[tuple[Any, ...]],
) -> None:
    """Add what one table's new lines hold to its sums (the decks: once `decks` is scored)."""
    from daemon.analytics.dice import DiceStats  # noqa: PLC0415 - numpy: in the pass only
    from daemon.analytics.shuffle import permutations  # noqa: PLC0415

    for serial in data.dice:
        stats = sums.dice.get((table, serial))
        if stats is None:
            stats = sums.dice[(table, serial)] = DiceStats.of(data.throws(serial)[:0])
        stats.add(data.throws(serial))
        sums.touched.add((table, "dice", serial))
    for serial in set(data.deck_outputs) | set(data.decks_skipped):
        decks.add((table, serial), permutations(*data.decks(serial)))
        sums.skipped[(table, serial)] += data.decks_skipped.get(serial, 0)
        sums.touched.add((table, "shuffle", serial))
    for (serial, dealer), counts in data.reader_by_dealer.items():
        reader_rows.append((table, serial, dealer, counts.reads, counts.misreads, counts.entered))
