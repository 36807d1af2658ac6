"""What an autoplay run prints: rounds, outcomes, violations by article, faults by device, seconds
per round, and the journal to check."""

from __future__ import annotations

import statistics
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Summary:
    game: str
    table: str
    rounds: int = 0
    # Every round's seconds for the exact median, 8 bytes a round (not a float object each).
    seconds: array[float] = field(default_factory=lambda: array("d"))
    outcomes: Counter[str] = field(default_factory=Counter)
    hands: Counter[str] = field(default_factory=Counter)
    violations: Counter[str] = field(default_factory=Counter)
    attempted: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)
    supervisor: Counter[str] = field(default_factory=Counter)
    voided: int = 0
    journal: str = ""
    last_seq: int = 0
    durability: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "table": self.table,
            "rounds": self.rounds,
            "seconds_per_round": {
                "median": statistics.median(self.seconds) if self.seconds else None,
                "mean": statistics.fmean(self.seconds) if self.seconds else None,
                "max": max(self.seconds, default=None),
                "total": sum(self.seconds),
            },
            "outcomes": dict(self.outcomes),
            "hands": dict(self.hands),
            "violations_by_article": dict(self.violations),
            "violations_attempted": dict(self.attempted),
            "faults_by_device": dict(self.faults),
            "faults_injected": dict(self.injected),
            "supervisor": dict(self.supervisor),
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
        lines.append("  outcomes            " + _counts(self.outcomes))
        if self.hands:
            lines.append("    of which          " + _counts(self.hands))
        if self.voided:
            lines.append(f"  voided              {self.voided} deal(s) or round(s)")
        total = sum(self.violations.values())
        lines.append(f"  violations          {total} refused and journaled")
        for article, n in sorted(self.violations.items()):
            lines.append(f"    {article:<40} {n}")
        lines.append(f"  faults              {sum(self.faults.values())} (HOLD or TILT)")
        for device, n in sorted(self.faults.items()):
            lines.append(f"    {device:<40} {n}")
        if self.injected:
            lines.append("  injected            " + _counts(self.injected))
        if self.supervisor:
            lines.append("  supervisor          " + _counts(self.supervisor))
        lines.append(
            f"  journal             {self.journal} ({self.durability}), last seq {self.last_seq}"
            f"; check it with: tabled verify-log {self.journal}"
        )
        return "\n".join(lines)


def _counts(counter: Counter[str]) -> str:
    return "   ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"
