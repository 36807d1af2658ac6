from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from daemon.config import JournalConfig
from daemon.journal import Journal, verify
from daemon.journal.format import journal_files, line_hash

Entries = list[tuple[Path, bytes]]


def build(directory: Path, events: int, rotate_bytes: int = 1 << 20) -> Entries:
    config = JournalConfig(dir=directory, durability="none", rotate_bytes=rotate_bytes)
    wall = iter(range(1_800_003_600, 1_800_003_600 + 10_000))
    with Journal.open(config, "T01", wall=lambda: float(next(wall)), monotonic=lambda: 5.0) as j:
        for i in range(events - 1):
            j.append(
                "shoe.card_read", actor="shoe_reader", round_id="R1", payload={"i": i}, commit=True
            )
    return [(p, line) for p in journal_files(directory) for line in p.read_bytes().splitlines(True)]


def rewrite(directory: Path, entries: Entries) -> None:
    files = journal_files(directory)
    for path in files:
        path.write_bytes(b"".join(line for p, line in entries if p == path))


def position(entries: Entries, index: int) -> tuple[Path, int]:
    path = entries[index][0]
    return path, sum(1 for p, _ in entries[: index + 1] if p == path)


def edit(line: bytes, **fields: object) -> bytes:
    obj = json.loads(line)
    obj.update(fields)
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def run_verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", "verify-log", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_intact_journal_verifies(tmp_path: Path) -> None:
    entries = build(tmp_path, 12, rotate_bytes=700)
    result = verify(tmp_path)
    assert result.ok and result.events == 12 and (result.first_seq, result.last_seq) == (1, 12)
    assert result.head == line_hash(entries[-1][1])
    done = run_verify(str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OK: 12 events in")


def test_a_changed_line_is_named(tmp_path: Path) -> None:
    entries = build(tmp_path, 10, rotate_bytes=700)
    path, line = entries[4]
    entries[4] = (path, line.replace(b'"i":3', b'"i":4'))
    rewrite(tmp_path, entries)
    problem = verify(tmp_path).problem
    assert problem is not None
    assert (problem.kind, problem.seq) == ("changed", 5)
    assert (problem.file, problem.line) == position(entries, 4)
    done = run_verify(str(tmp_path))
    assert done.returncode == 1
    assert f"CHANGED: {problem.file.name} line {problem.line} (seq 5)" in done.stdout


def test_a_removed_line_is_named(tmp_path: Path) -> None:
    entries = build(tmp_path, 10)
    del entries[6]
    rewrite(tmp_path, entries)
    problem = verify(tmp_path).problem
    assert problem is not None
    assert (problem.kind, problem.line, problem.seq, problem.missing) == ("removed", 7, 8, (7, 7))
    done = run_verify(str(tmp_path))
    assert done.returncode == 1
    assert "REMOVED: journal-000000000001-20270115.jsonl line 7 (seq 8)" in done.stdout
    assert "seq 7 removed before this line" in done.stdout


def test_an_inserted_line_is_named(tmp_path: Path) -> None:
    entries = build(tmp_path, 10)
    path, line = entries[3]
    forged = edit(line, seq=4, prev=line_hash(line), payload={"i": 99})
    entries.insert(4, (path, forged))
    rewrite(tmp_path, entries)
    problem = verify(tmp_path).problem
    assert problem is not None
    assert (problem.kind, problem.line, problem.seq) == ("inserted", 5, 4)
    done = run_verify(str(tmp_path))
    assert done.returncode == 1
    assert "INSERTED: journal-000000000001-20270115.jsonl line 5 (seq 4)" in done.stdout


def test_a_removed_file_is_named(tmp_path: Path) -> None:
    build(tmp_path, 20, rotate_bytes=700)
    files = journal_files(tmp_path)
    files[1].unlink()
    problem = verify(tmp_path).problem
    assert problem is not None and problem.kind == "removed"
    assert (problem.file, problem.line) == (files[2], 1)
    first_removed = int(files[1].name.split("-")[1])
    assert problem.missing == (first_removed, int(files[2].name.split("-")[1]) - 1)


def test_the_first_file_removed_is_caught_in_a_directory_but_one_file_stands_alone(
    tmp_path: Path,
) -> None:
    build(tmp_path, 20, rotate_bytes=700)
    files = journal_files(tmp_path)
    assert verify(files[1]).ok  # one file is checked from the seq its name gives
    files[0].unlink()
    problem = verify(tmp_path).problem
    assert problem is not None and problem.kind == "removed" and problem.missing is not None
    assert problem.missing[0] == 1


def test_a_torn_tail_is_reported_apart_from_tampering(tmp_path: Path) -> None:
    entries = build(tmp_path, 5)
    with entries[-1][0].open("ab") as fh:
        fh.write(b'{"seq":6,"ts":"2027-01')
    result = verify(tmp_path)
    assert result.problem is not None and result.problem.kind == "torn"
    assert result.events == 5
    done = run_verify(str(tmp_path))
    assert done.returncode == 3
    assert "TORN" in done.stdout


def test_an_expected_head_catches_a_cut_off_end(tmp_path: Path) -> None:
    entries = build(tmp_path, 8)
    head = line_hash(entries[-1][1])
    assert verify(tmp_path, expect=(8, head)).ok
    rewrite(tmp_path, entries[:-2])
    assert verify(tmp_path).ok  # a chain alone cannot see its end cut off
    problem = verify(tmp_path, expect=(8, head)).problem
    assert problem is not None and problem.kind == "removed" and problem.missing == (7, 8)
    assert run_verify(str(tmp_path), "--expect", f"8:{head}").returncode == 1
    entries[-1] = (entries[-1][0], edit(entries[-1][1], payload={"i": -1}))
    rewrite(tmp_path, entries)
    problem = verify(tmp_path, expect=(8, head)).problem
    assert problem is not None and (problem.kind, problem.seq) == ("changed", 8)


def test_cli_usage_errors(tmp_path: Path) -> None:
    assert run_verify(str(tmp_path / "nowhere")).returncode == 2
    assert run_verify(str(tmp_path)).returncode == 2  # no journal files
    build(tmp_path, 3)
    assert run_verify(str(tmp_path), "--expect", "x").returncode == 2
    done = run_verify(str(tmp_path), "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["events"] == 3


@st.composite
def tampering(draw: st.DrawFn) -> tuple[int, int, str, int, int, int]:
    events = draw(st.integers(4, 30))
    rotate = draw(st.sampled_from([500, 900, 1 << 20]))
    kind = draw(st.sampled_from(["payload", "seq", "prev", "garble", "remove", "insert"]))
    # The last line stays: a chain alone cannot tell an edit of its end (see --expect).
    at = draw(st.integers(0, events - 2))
    to = draw(st.integers(at, events - 2))
    variant = draw(st.integers(0, 2))
    return events, rotate, kind, at, to, variant


@given(tampering())
def test_any_single_tampering_is_named_exactly(case: tuple[int, int, str, int, int, int]) -> None:
    events, rotate, kind, at, to, variant = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        entries = build(root, events, rotate)
        path, line = entries[at]
        obj = json.loads(line)
        if kind == "payload":
            entries[at] = (path, edit(line, payload={"i": -7}))
        elif kind == "seq":
            entries[at] = (path, edit(line, seq=obj["seq"] + (1 if variant else -1) or 99))
        elif kind == "prev":
            entries[at] = (path, edit(line, prev="f" * 64))
        elif kind == "garble":
            entries[at] = (path, line[: len(line) // 2] + b"\n")
        elif kind == "remove":
            del entries[at : to + 1]
        else:
            source = entries[to][1]
            if variant == 0:  # a copy of some line, altered
                extra = edit(source, payload={"forged": True})
            elif variant == 1 and at > 0:  # forged to link to the line before it
                before = entries[at - 1][1]
                extra = edit(
                    source, seq=json.loads(before)["seq"] + 1, prev=line_hash(before), payload={}
                )
            else:
                extra = b"not a journal line\n"
            entries.insert(at, (path, extra))
        rewrite(root, entries)
        problem = verify(root).problem
        assert problem is not None
        expected_kind = {"remove": "removed", "insert": "inserted"}.get(kind, "changed")
        assert problem.kind == expected_kind, problem
        assert (problem.file, problem.line) == position(entries, at), problem
        if kind == "remove":
            assert problem.missing == (at + 1, to + 1)


@given(
    junk=st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"") + b"\n")
    | st.just(b"[" * 100_000 + b"\n")
    | st.just(b"\x00" * 64 + b"\n"),
    at=st.integers(0, 6),
)
def test_any_junk_line_is_named_as_inserted_never_a_crash(junk: bytes, at: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        entries = build(root, 8)
        entries.insert(at, (entries[at][0], junk))
        rewrite(root, entries)
        problem = verify(root).problem
        assert problem is not None and problem.kind == "inserted"
        assert (problem.file, problem.line) == position(entries, at)
