"""Checking a journal's chain, and naming the first line that was changed, removed or inserted.

Each line links to the one before it by ``seq`` (one more) and ``prev`` (the SHA-256 of the
previous line's bytes). Walking the lines, the first broken link is explained by the smallest
edit that accounts for it, looking one line behind and one ahead:

- this line was *inserted* if the line before links straight to the next one;
- the line before was *inserted* if the line two back links straight to this one;
- lines were *removed* before this one if its seq jumps and it links properly to the next;
- this line was *changed* if it does not link to the next one either (its seq, its prev or
  its JSON were edited);
- otherwise the line before was *changed*: this line still names the hash of what it was.

A chain alone cannot show an edit to the very last line, or lines cut off the end: compare
the head (last seq and hash) with one recorded elsewhere, e.g. by the operator API's feed
(`verify(..., expect=(seq, hash))`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from daemon.journal.format import (
    GENESIS,
    RawLine,
    decode_line,
    journal_files,
    line_hash,
    parse_file_name,
    read_lines,
)

CHANGED, REMOVED, INSERTED, TORN = "changed", "removed", "inserted", "torn"


@dataclass(frozen=True)
class Problem:
    """The first fault found: `kind` is changed, removed, inserted or torn.

    `file` and `line` (1-based) name the line: the changed or inserted one, the one right
    after the removed ones, or the torn tail. `missing` is the removed seq range.
    """

    kind: str
    file: Path
    line: int
    seq: int | None
    detail: str
    missing: tuple[int, int] | None = None

    def describe(self) -> str:
        where = f"{self.file.name} line {self.line}"
        if self.seq is not None:
            where += f" (seq {self.seq})"
        return f"{self.kind.upper()}: {where}: {self.detail}"


@dataclass(frozen=True)
class VerifyResult:
    path: Path
    files: tuple[Path, ...]
    events: int
    first_seq: int | None
    last_seq: int | None
    head: str
    problem: Problem | None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class _Line:
    raw: RawLine | None  # None: the virtual line before the chain's first
    seq: int | None
    prev: str | None
    hash: str | None

    @property
    def virtual(self) -> bool:
        return self.raw is None


def _parse(raw: RawLine) -> _Line:
    try:
        record = decode_line(raw.data)
    except ValueError:
        return _Line(raw, None, None, line_hash(raw.data))
    return _Line(raw, record.seq, record.prev, record.hash)


def _links(a: _Line | None, b: _Line | None) -> bool:
    if a is None or b is None or b.seq is None or b.prev is None:
        return False
    if a.virtual:
        return (a.seq is None or b.seq == a.seq + 1) and (a.hash is None or b.prev == a.hash)
    return a.seq is not None and b.seq == a.seq + 1 and b.prev == a.hash


def _problem(
    kind: str, line: _Line, detail: str, missing: tuple[int, int] | None = None
) -> Problem:
    # Only real lines are ever blamed: _explain never names the virtual start line.
    path, number = (line.raw.path, line.raw.number) if line.raw is not None else (Path(), 0)
    return Problem(kind, path, number, line.seq, detail, missing)


def _explain(before: _Line | None, prev: _Line, cur: _Line, after: _Line | None) -> Problem:
    if after is not None and _links(prev, after):
        return _problem(INSERTED, cur, "the lines around it link to each other without it")
    if before is not None and _links(before, cur):
        return _problem(INSERTED, prev, "the lines around it link to each other without it")
    if (
        cur.seq is not None
        and prev.seq is not None
        and cur.seq > prev.seq + 1
        and (after is None or _links(cur, after))
    ):
        first, last = prev.seq + 1, cur.seq - 1
        span = f"seq {first}" if first == last else f"seq {first}..{last}"
        return _problem(REMOVED, cur, f"{span} removed before this line", (first, last))
    if cur.seq is None:
        return _problem(CHANGED, cur, "not a journal event line")
    if after is not None and not _links(cur, after):
        return _problem(CHANGED, cur, "links neither to the line before nor to the line after")
    if prev.virtual:
        return _problem(CHANGED, cur, "does not start the chain (seq 1 after the genesis hash)")
    if prev.seq is not None and cur.seq == prev.seq + 1:
        return _problem(
            CHANGED, prev, "its hash is no longer the prev recorded by the line after it"
        )
    if prev.seq is not None and cur.seq <= prev.seq:
        return _problem(INSERTED, cur, f"seq {cur.seq} does not follow seq {prev.seq}")
    return _problem(CHANGED, cur, "does not follow the line before it")


def _lines(files: list[Path]) -> Iterator[RawLine]:
    for path in files:
        yield from read_lines(path)


def _start(root: Path, files: list[Path], archived: bool) -> _Line:
    """The virtual line before the first one checked."""
    if root.is_dir() and not archived:
        return _Line(None, 0, None, GENESIS)
    parsed = parse_file_name(files[0].name) if files else None
    first = parsed[0] if parsed is not None else (1 if root.is_dir() else None)
    return _Line(
        None,
        None if first is None else first - 1,
        None,
        GENESIS if first == 1 else None,
    )


def verify(
    path: Path | str,
    *,
    expect: tuple[int, str] | None = None,
    archived: bool = False,
    progress: Callable[[int], object] | None = None,
) -> VerifyResult:
    """Check the chain of a journal directory (from seq 1) or of one journal file.

    One file is checked from the seq its name gives; its first `prev` links to a file that is
    not there (unless it starts at seq 1). `expect` = (seq, hash) recorded elsewhere, checked
    against the line with that seq, catches an edit of the last lines or a cut-off end.
    `archived`: a directory whose oldest files were archived off it is checked from its first
    file's seq, as one file would be (the writer opening it; `tabled verify-log` wants seq 1).
    """
    root = Path(path)
    files = journal_files(root) if root.is_dir() else [root]
    start = _start(root, files, archived)
    raws = _lines(files)
    last_file = files[-1] if files else None
    window: deque[_Line] = deque()
    torn: RawLine | None = None

    def fill(n: int) -> None:
        nonlocal torn
        while len(window) < n and torn is None:
            raw = next(raws, None)
            if raw is None:
                return
            if progress is not None:  # the bytes read, for `tabled verify-log`'s progress bar
                progress(len(raw.data))
            if not raw.complete and raw.path == last_file:
                torn = raw
                return
            window.append(_parse(raw))

    before: _Line | None = None
    prev = start
    count = 0
    first_seq: int | None = None
    expect_seen = False

    def result(problem: Problem | None) -> VerifyResult:
        good, n = prev, count
        # When the blame falls on the line before the broken link, the chain is intact only
        # up to the line before that one.
        if (
            problem is not None
            and prev.raw is not None
            and (problem.file, problem.line) == (prev.raw.path, prev.raw.number)
            and before is not None
        ):
            good, n = before, count - 1
        last = None if good.virtual else good.seq
        head = good.hash if good.hash is not None else GENESIS
        return VerifyResult(root, tuple(files), n, first_seq if n else None, last, head, problem)

    while True:
        fill(2)
        if not window:
            break
        cur = window.popleft()
        if not _links(prev, cur):
            return result(_explain(before, prev, cur, window[0] if window else None))
        if expect is not None and cur.seq == expect[0]:
            expect_seen = True
            if cur.hash != expect[1]:
                return result(
                    _problem(CHANGED, cur, f"its hash is not the expected {expect[1][:16]}...")
                )
        before, prev = prev, cur
        count += 1
        if first_seq is None:
            first_seq = cur.seq
    if expect is not None and not expect_seen:
        last = None if prev.virtual else prev.seq
        where_file = prev.raw.path if prev.raw is not None else (files[-1] if files else root)
        return result(
            Problem(
                REMOVED,
                where_file,
                prev.raw.number if prev.raw is not None else 0,
                last,
                f"the journal ends before the expected seq {expect[0]}",
                ((last or 0) + 1, expect[0]),
            )
        )
    if torn is not None:
        return result(
            Problem(
                TORN,
                torn.path,
                torn.number,
                None,
                f"{len(torn.data)} bytes without an end of line at offset {torn.offset} "
                "(an unacknowledged write cut by a crash; opening the journal truncates it)",
            )
        )
    return result(None)
