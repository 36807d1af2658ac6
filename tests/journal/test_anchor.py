"""The writer appends only to a chain it has checked end to end, fast through the keyed anchor
(daemon/journal/anchor.py): an edit anywhere, the anchor's included, is refused at open."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.config import JournalConfig
from daemon.journal import Journal, JournalCorrupt, JournalError, verify
from daemon.journal.anchor import (
    ANCHOR_EVERY,
    ANCHOR_NAME,
    KEY_NAME,
    AnchorRefused,
    chain_unchanged,
    load_key,
    read_anchor,
)
from daemon.journal.format import journal_files

REPO = Path(__file__).resolve().parents[2]


def build(directory: Path, lines: int = 24, rotate_bytes: int = 900) -> None:
    """A closed journal of several files: `lines` events after the opening line."""
    config = JournalConfig(dir=directory, durability="none", rotate_bytes=rotate_bytes)
    with Journal.open(config, "T01") as journal:
        for i in range(lines):
            journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)


def reopen(directory: Path) -> None:
    config = JournalConfig(dir=directory, durability="none", rotate_bytes=900)
    Journal.open(config, "T01").close()


def every_line(directory: Path) -> list[tuple[Path, int]]:
    return [
        (path, number)
        for path in journal_files(directory)
        for number in range(1, len(path.read_bytes().splitlines()) + 1)
    ]


def edit_line(path: Path, number: int, old: bytes, new: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    assert old in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    path.write_bytes(b"".join(lines))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pristine") / "journal"
    build(directory)
    return directory


def copy_of(pristine: Path, tmp_path: Path) -> Path:
    target = tmp_path / "journal"
    shutil.copytree(pristine, target)
    return target


def test_a_clean_close_leaves_an_anchor_that_vouches_for_every_file(tmp_path: Path) -> None:
    directory = tmp_path / "journal"
    build(directory)
    files = journal_files(directory)
    assert len(files) >= 4
    key = load_key(directory, create=False)
    anchor = read_anchor(directory, key)
    assert anchor is not None and [s.name for s in anchor.files] == [p.name for p in files]
    assert anchor.seq == verify(directory).last_seq  # the closing head
    assert chain_unchanged(files, anchor)  # the next open reads no journal line
    assert stat.S_IMODE((directory / KEY_NAME).stat().st_mode) == 0o600
    reopen(directory)
    assert verify(directory).ok


def test_a_copied_journal_opens_after_a_walk(pristine: Path, tmp_path: Path) -> None:
    # New inodes and times: the anchor no longer vouches, the lines are walked instead.
    directory = copy_of(pristine, tmp_path)
    anchor = read_anchor(directory, load_key(directory, create=False))
    assert anchor is not None and chain_unchanged(journal_files(directory), anchor)
    reopen(directory)
    assert verify(directory).ok


def test_an_edit_of_any_line_is_refused_and_named(pristine: Path, tmp_path: Path) -> None:
    for index, (original, number) in enumerate(every_line(pristine)):
        directory = tmp_path / f"case{index}"
        shutil.copytree(pristine, directory)
        path = directory / original.name
        edit_line(path, number, b'"mono":', b'"mono": ')
        with pytest.raises(JournalCorrupt) as refused:
            reopen(directory)
        assert f"{path.name} line {number}" in str(refused.value), (index, str(refused.value))
        assert "verify-log" in str(refused.value)


def test_an_edit_that_puts_back_size_and_modification_time_is_still_caught(
    pristine: Path, tmp_path: Path
) -> None:
    directory = copy_of(pristine, tmp_path)
    reopen(directory)  # anchored as this copy: every file vouched for by its stamp
    path = journal_files(directory)[1]
    before = path.stat()
    edit_line(path, 2, b'"i":', b'"j":')  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    with pytest.raises(JournalCorrupt, match=f"{path.name} line 2"):
        reopen(directory)


def test_lines_cut_off_the_end_are_caught_by_the_anchor(pristine: Path, tmp_path: Path) -> None:
    # The chain alone cannot show it: what is left is a valid, shorter chain.
    directory = copy_of(pristine, tmp_path)
    last = journal_files(directory)[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-2]))
    assert verify(directory).ok
    with pytest.raises(JournalCorrupt, match="ends before the expected seq"):
        reopen(directory)


def test_a_whole_file_removed_from_the_middle_is_caught(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    journal_files(directory)[2].unlink()
    with pytest.raises(JournalCorrupt, match="REMOVED"):
        reopen(directory)


def test_an_edited_anchor_is_refused(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    anchor = directory / ANCHOR_NAME
    anchor.write_bytes(anchor.read_bytes().replace(b'"seq":', b'"seq":1', 1))
    with pytest.raises(AnchorRefused, match="HMAC"):
        reopen(directory)


def test_an_anchor_from_another_key_is_refused(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    (directory / KEY_NAME).write_bytes(b"f" * 64 + b"\n")
    with pytest.raises(AnchorRefused):
        reopen(directory)


def test_without_its_anchor_the_journal_is_verified_line_by_line(
    pristine: Path, tmp_path: Path
) -> None:
    directory = copy_of(pristine, tmp_path)
    (directory / ANCHOR_NAME).unlink()
    reopen(directory)  # intact: opens, and is anchored again
    assert (directory / ANCHOR_NAME).exists()
    (directory / ANCHOR_NAME).unlink()
    path = journal_files(directory)[0]
    edit_line(path, 3, b'"i":', b'"j":')
    with pytest.raises(JournalCorrupt, match=f"{path.name} line 3"):
        reopen(directory)


def test_a_key_others_may_read_is_refused(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    (directory / KEY_NAME).chmod(0o640)
    with pytest.raises(JournalError, match="chmod 600"):
        reopen(directory)


def test_the_oldest_files_may_be_archived_off_the_pc(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    for path in journal_files(directory)[:2]:
        path.unlink()
    reopen(directory)  # the anchor lists them: only the oldest may go
    (directory / ANCHOR_NAME).unlink()
    reopen(directory)  # without it, checked from the first file left


def test_tabled_run_refuses_a_broken_chain_naming_the_line(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    path = journal_files(directory)[1]
    edit_line(path, 2, b'"i":', b'"j":')
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "run", "--journal", str(directory)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert f"{path.name} line 2" in result.stderr and "Traceback" not in result.stderr


def test_the_writer_anchors_as_it_goes_and_when_asked(tmp_path: Path) -> None:
    directory = tmp_path / "journal"
    config = JournalConfig(dir=directory, durability="none")
    with Journal.open(config, "T01") as journal:
        for i in range(ANCHOR_EVERY + 10):
            journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
        key = load_key(directory, create=False)
        anchored = read_anchor(directory, key)
        assert anchored is not None and ANCHOR_EVERY <= anchored.seq < journal.last_seq
        journal.anchor()  # a checkpoint's
        anchored = read_anchor(directory, key)
        assert anchored is not None and anchored.seq == journal.last_seq


CRASH = """
import os, sys
from pathlib import Path
from daemon.config import JournalConfig
from daemon.journal import Journal
journal = Journal.open(JournalConfig(dir=Path(sys.argv[1]), durability="fsync"), "T01")
for i in range(30):
    journal.append("shoe.card_read", actor="shoe_reader", payload={"i": i}, commit=True)
os._exit(0)  # no close: the lines after the opening anchor are not anchored
"""


def test_after_a_crash_the_newest_file_is_walked(pristine: Path, tmp_path: Path) -> None:
    directory = copy_of(pristine, tmp_path)
    reopen(directory)
    subprocess.run([sys.executable, "-c", CRASH, str(directory)], check=True, cwd=REPO)
    crashed = tmp_path / "crashed"
    shutil.copytree(directory, crashed)
    reopen(directory)  # intact: opens
    newest = journal_files(crashed)[-1]
    number = len(newest.read_bytes().splitlines()) - 5  # past the last anchor
    edit_line(newest, number, b'"i":', b'"j":')
    with pytest.raises(JournalCorrupt, match=f"{newest.name} line {number}"):
        reopen(crashed)
