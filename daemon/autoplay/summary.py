"""What an autoplay run prints: rounds, each bet's outcome, violations by article (with what the
article says), the faults played and what the supervisor did about them, seconds per round, and
the journal to check.

The counts the table keeps (violations, holds and tilts, settled rounds) are read from it in one
place, `read_table`, so the summary says what the table journaled, not what the script meant to
do; what only the script knows (the faults it played, the violations it attempted, the hands
that were late or foul) it counts itself as it plays.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.table import Table

# What ends a HOLD or TILT: the supervisor clears it, or voids the round it held.
CLEARS = ("clear_hold", "clear_tilt", "void_round")


def bet_outcomes(settlement: Mapping[str, Any]) -> list[str]:
    """The outcome of each bet a `round.settled` payload settles, one entry per bet.

    Thirteen settles bet by bet (a list of entries); Pai Gow settles door by door, and a door
    carries every bet placed on it (`bettors`), so a door with two bets counts twice.
    """
    settled = settlement.get("settlement")
    if isinstance(settled, list):
        return [str(entry.get("outcome")) for entry in settled]
    if isinstance(settled, Mapping):
        return [
            str(door.get("outcome"))
            for door in settled.get("doors", [])
            for _bet in door.get("bettors") or [None]
        ]
    return []


def read_table(table: Table) -> tuple[Counter[str], Counter[str], Counter[str], int]:
    """(bet outcomes, violations by article, holds and tilts by device, rounds settled): what the
    table counted over this process's life. The one place the summary reads `Table.stats`."""
    stats = table.stats
    outcomes: Counter[str] = Counter()
    for settlement in stats.settlements:
        outcomes.update(bet_outcomes(settlement))
    return (
        outcomes,
        Counter(stats.violations_by_article),
        Counter(stats.faults_by_device),
        stats.rounds_settled,
    )


def article_title(citation: str, width: int = 60) -> str:
    """What an article says, shortened to `width` characters (the catalogue's gloss; for a
    paragraph the catalogue has only as a whole article, the article's). Empty for a rule of
    tabled's own, whose citation already says it in words."""
    from daemon.trace.catalogue import BY_CITATION  # noqa: PLC0415 - only to print a summary

    article = BY_CITATION.get(citation) or BY_CITATION.get(re.sub(r"\(\w+\)$", "", citation))
    if article is None:
        return ""
    gloss = article.gloss.split("; ")[0].rstrip(".")
    return gloss if len(gloss) <= width else gloss[: width - 1].rstrip(" ,") + "…"


@dataclass
class Summary:
    game: str
    table: str
    rounds: int = 0
    seconds: list[float] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    hands: Counter[str] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    attempted: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    played: Counter[str] = field(default_factory=Counter)
    supervisor: Counter[str] = field(default_factory=Counter)
    voided: int = 0
    settled: int = 0
    journal: str = ""
    last_seq: int = 0
    durability: str = ""

    def read(self, table: Table) -> Summary:
        """Take the table's own counts and its journal's last line (call it again after the
        table stops, so the last seq is the one `tabled verify-log` reports)."""
        self.outcomes, self.violations, self.faults, self.settled = read_table(table)
        journal = table.journal
        self.journal = str(table.journal_config.dir)
        self.durability = table.journal_config.durability
        self.last_seq = journal.last_seq if journal is not None else 0
        return self

    @property
    def clears(self) -> int:
        return sum(self.supervisor[action] for action in CLEARS)

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "table": self.table,
            "rounds": self.rounds,
            "rounds_settled": self.settled,
            "seconds_per_round": {
                "median": statistics.median(self.seconds) if self.seconds else None,
                "mean": statistics.fmean(self.seconds) if self.seconds else None,
                "max": max(self.seconds, default=None),
                "total": sum(self.seconds),
            },
            "bets_settled": sum(self.outcomes.values()),
            "outcomes_per_bet": dict(self.outcomes),
            "hands": dict(self.hands),
            "violations_by_article": dict(self.violations),
            "violations_attempted": dict(self.attempted),
            "faults_by_device": dict(self.faults),
            "faults_played": dict(self.played),
            "supervisor": dict(self.supervisor),
            "cleared": self.clears,
            "voided": self.voided,
            "journal": self.journal,
            "last_seq": self.last_seq,
            "durability": self.durability,
        }

    def render(self) -> str:
        lines = [f"autoplay: {self.rounds} round(s) of {self.game} at table {self.table}"]
        if self.seconds:
            lines.append(
                f"  seconds per round   median {statistics.median(self.seconds):.3f}   "
                f"mean {statistics.fmean(self.seconds):.3f}   max {max(self.seconds):.3f}   "
                f"(total {sum(self.seconds):.2f} s)"
            )
        bets = sum(self.outcomes.values())
        lines.append(
            f"  bets settled        {bets} in {self.settled} round(s), outcome per bet: "
            + _counts(self.outcomes, ", ")
        )
        if self.hands:
            lines.append("    hands             " + _counts(self.hands))
        if self.voided:
            lines.append(f"  voided              {self.voided} deal(s) or round(s)")
        total = sum(self.violations.values())
        lines.append(
            f"  violations          {total} refused and journaled"
            + (", by article:" if total else "")
        )
        width = max((len(a) for a in self.violations), default=0)
        for article, n in sorted(self.violations.items()):
            lines.append(f"    {n:>4}  {article:<{width}}  {article_title(article)}".rstrip())
        if self.attempted:
            lines.append("    attempted         " + _counts(self.attempted, ", "))
        played = sum(self.played.values())
        lines.append(f"  faults played       {played}" + _listed(self.played))
        held = sum(self.faults.values())
        lines.append(f"  holds and tilts     {held}" + _listed(self.faults))
        clears = Counter({a: self.supervisor[a] for a in CLEARS if self.supervisor[a]})
        left = held - self.clears
        matched = (
            "nothing to clear"
            if held == 0 and self.clears == 0
            else "every one cleared"
            if left == 0
            else f"{left} not cleared by a clear or a void"
            if left > 0
            else f"{-left} more than the holds and tilts (a clear that did not end one)"
        )
        lines.append(f"  cleared             {self.clears}{_listed(clears)}: {matched}")
        others = Counter({a: n for a, n in self.supervisor.items() if a not in CLEARS})
        if others:
            lines.append("  supervisor also     " + _counts(others, ", "))
        lines.append(
            f"  journal             {self.journal} ({self.durability}), last seq {self.last_seq}"
            f"; check it with: tabled verify-log {self.journal}"
        )
        return "\n".join(lines)


def _counts(counter: Mapping[str, int], sep: str = "   ") -> str:
    return sep.join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def _listed(counter: Mapping[str, int]) -> str:
    return f" ({_counts(counter, ', ')})" if counter else ""
