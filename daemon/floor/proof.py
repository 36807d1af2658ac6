"""Which received lines are the table's own: proven by a signed head, through the chain.

Pure judgement, no I/O (as `custody.py`): the store gives one table's candidate lines (received
in this batch or waiting in `pending_lines`), the heads that verified (seq -> the SHA-256 the
table signed for that seq) and the lines it already holds around them, and `prove` says which
candidates are proven, which are forged, and which still wait.

A candidate at seq S is **proven** when its SHA-256 is what a verified head says line S has, or
what the ``prev`` of the proven line S+1 says. So one head proves its line and every line
below it that links, down to the lines already held. Any other candidate at a seq whose line
is known (by a head, by the link from S+1, or already held) is **forged**: the table's line
there has another hash. A candidate at a seq nothing speaks for yet waits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from daemon.journal.format import Record


class Candidate(NamedTuple):  # one a line of a batch: a tuple is made in a third of the time
    rec: Record
    ts: datetime
    subject: str
    stored: bool = False  # already in pending_lines (from an earlier batch)


@dataclass
class Verdicts:
    proven: list[Candidate] = field(default_factory=list)  # ascending seq
    forged: list[tuple[Candidate, str, str]] = field(default_factory=list)  # (line, want, why)
    duplicate: list[Candidate] = field(default_factory=list)  # bytes the floor already holds
    waiting: list[Candidate] = field(default_factory=list)


def prove(
    candidates: list[Candidate],
    heads: dict[int, str],
    held: dict[int, tuple[str, str]],
) -> Verdicts:
    """`heads`: seq -> hash of verified heads; `held`: seq -> (hash, prev) of lines the floor
    already holds as the table's (at least the neighbours of the candidates below its head)."""
    out = Verdicts()
    by_seq: dict[int, dict[str, Candidate]] = {}
    for cand in candidates:
        by_seq.setdefault(cand.rec.seq, {}).setdefault(cand.rec.hash, cand)
    proven: dict[int, Candidate] = {}
    for seq in sorted(by_seq, reverse=True):
        lines = by_seq[seq]
        if seq in held:
            have = held[seq][0]
            for digest, cand in lines.items():
                if digest == have:
                    out.duplicate.append(cand)
                else:
                    out.forged.append((cand, have, "another line is the table's at this seq"))
            continue
        want = heads.get(seq)
        why = "the table's signed head names another line"
        if want is None:
            above = proven.get(seq + 1)
            if above is not None:
                want = above.rec.prev
            elif seq + 1 in held:
                want = held[seq + 1][1]
            why = "the table's next line does not link to it"
        if want is None:
            out.waiting.extend(lines.values())
            continue
        for digest, cand in lines.items():
            if digest == want:
                proven[seq] = cand
            else:
                out.forged.append((cand, want, why))
    out.proven = [proven[seq] for seq in sorted(proven)]
    return out
