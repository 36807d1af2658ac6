"""What every device's audit shares: the family's error rate, Holm's step-down, a finding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scipy import special

# The family-wise false-alarm rate of one audit of one device (all its fixed-sample tests
# together, Holm's step-down): one fair device in a thousand audits is flagged by chance.
FAMILY_ALPHA = 0.001


@dataclass(frozen=True)
class Test:
    """One test's result: its name, statistic, p-value and what it means in words."""

    name: str
    statistic: float
    p_value: float
    detail: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "statistic": round(self.statistic, 6),
            "p_value": self.p_value,
            "detail": self.detail,
            **dict(self.extra),
        }


def holm(p_values: Sequence[float], alpha: float = FAMILY_ALPHA) -> list[bool]:
    """Holm's step-down: which hypotheses are rejected with the family-wise rate `alpha`."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        rejected[i] = True
    return rejected


def adjusted_min_p(p_values: Sequence[float]) -> float:
    """The family's p-value: the smallest Holm-adjusted p-value (1 when there is none)."""
    if not p_values:
        return 1.0
    ordered = sorted(p_values)
    best = 1.0
    running = 0.0
    for rank, p in enumerate(ordered):
        running = max(running, min(1.0, p * (len(ordered) - rank)))
        best = min(best, running)
    return best


@dataclass
class Finding:
    """One device (or table) audited: flagged or not, the tests, and the power in words."""

    kind: str  # dice | shuffle | reader | hold
    subject: str  # the serial (or table / shift / dealer)
    flagged: bool
    statistic: float
    p_value: float
    verdict: str
    power: str
    samples: int
    tests: list[Test] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "serial" if self.kind != "hold" else "group": self.subject,
            "flagged": self.flagged,
            "statistic": round(self.statistic, 6),
            "p_value": self.p_value,
            "verdict": self.verdict,
            "power": self.power,
            "samples": self.samples,
            "tests": [t.json() for t in self.tests],
            **self.extra,
        }


def binomial_greater(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): scipy.stats.binomtest's one-sided "greater" p-value,
    by the special function (microseconds, not milliseconds: the floor computes thousands)."""
    if k <= 0:
        return 1.0
    return float(min(1.0, special.bdtrc(k - 1, n, p)))
