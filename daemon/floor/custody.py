"""Chain custody: is this line the next link of its table's chain?

Pure judgement, no I/O: the store feeds each table's lines (in seq order) with what it knows of
the neighbouring lines, and records what `Custody` answers. The rules, per table:

- seq must follow the highest seq received: a jump is a **gap** (seqs last+1..seq-1 missing);
- a line's ``prev`` must be the SHA-256 of the line before it (GENESIS before seq 1): otherwise
  a **broken_link**;
- a seq received again with other bytes is a **fork** (the same bytes again are a no-op);
- a line that fills a gap later (a resend, `tabled feed replay`) is checked against both of its
  neighbours; the gap alert is resolved once every seq in it is present. A filled gap whose
  lines do not chain is a broken_link of its own, which never resolves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from daemon.journal.format import GENESIS, Record


@dataclass(frozen=True)
class Alert:
    table: str
    seq: int
    kind: str  # gap | fork | broken_link | malformed
    expected_hash: str | None = None
    actual_hash: str | None = None
    gap_to: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    evidence: bytes | None = None


@dataclass
class Custody:
    """One table's chain head and the neighbours the store looked up for this batch."""

    table: str
    last_seq: int = 0
    head_hash: str | None = None
    # seq -> (hash, prev) of lines already stored or accepted in this batch
    known: dict[int, tuple[str, str]] = field(default_factory=dict)

    def judge(self, rec: Record) -> tuple[str, list[Alert]]:
        """("new" | "fill" | "duplicate" | "fork", alerts) for the next line of this table."""
        alerts: list[Alert] = []
        if rec.seq > self.last_seq:
            if rec.seq == self.last_seq + 1:
                expected = GENESIS if self.last_seq == 0 else self.head_hash
                if expected is not None and rec.prev != expected:
                    alerts.append(self._broken(rec.seq, expected, rec.prev, "previous line"))
            else:
                alerts.append(
                    Alert(
                        self.table,
                        self.last_seq + 1,
                        "gap",
                        expected_hash=None,
                        actual_hash=rec.prev,
                        gap_to=rec.seq - 1,
                        details={
                            "missing": [self.last_seq + 1, rec.seq - 1],
                            "next_seq": rec.seq,
                            "next_prev": rec.prev,
                        },
                    )
                )
            self.last_seq, self.head_hash = rec.seq, rec.hash
            self.known[rec.seq] = (rec.hash, rec.prev)
            return "new", alerts
        stored = self.known.get(rec.seq)
        if stored is not None:
            if stored[0] == rec.hash:
                return "duplicate", alerts
            alerts.append(
                Alert(
                    self.table,
                    rec.seq,
                    "fork",
                    expected_hash=stored[0],
                    actual_hash=rec.hash,
                    details={"stored_hash": stored[0], "received_hash": rec.hash},
                    evidence=rec.line,
                )
            )
            return "fork", alerts
        # A seq below the head that the floor never had: it fills a gap.
        before = GENESIS if rec.seq == 1 else self.known.get(rec.seq - 1, (None, ""))[0]
        if before is not None and rec.prev != before:
            alerts.append(self._broken(rec.seq, before, rec.prev, "previous line (gap fill)"))
        after = self.known.get(rec.seq + 1)
        if after is not None and after[1] != rec.hash:
            alerts.append(self._broken(rec.seq + 1, rec.hash, after[1], "filled line"))
        self.known[rec.seq] = (rec.hash, rec.prev)
        return "fill", alerts

    def _broken(self, seq: int, expected: str, actual: str, link: str) -> Alert:
        return Alert(
            self.table,
            seq,
            "broken_link",
            expected_hash=expected,
            actual_hash=actual,
            details={"link_to": link, "expected_prev": expected, "prev": actual},
        )
