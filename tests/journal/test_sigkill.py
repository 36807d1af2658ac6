from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from daemon.config import JournalConfig
from daemon.journal import Journal, verify

APPENDER = Path(__file__).with_name("_appender.py")


def kill_after_acks(directory: Path, seed: int, acks: int) -> dict[int, str]:
    """Run the appender, SIGKILL it once `acks` acknowledgements were read; all acks seen."""
    child = subprocess.Popen(
        [sys.executable, str(APPENDER), str(directory), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    acknowledged: dict[int, str] = {}
    for raw in child.stdout:
        word, seq, digest = raw.decode().split()
        assert word == "ack"
        acknowledged[int(seq)] = digest
        if len(acknowledged) >= acks:
            break
    os.kill(child.pid, signal.SIGKILL)
    # Whatever the child printed before dying was acknowledged too.
    rest, errors = child.communicate(timeout=30)
    for raw in rest.decode().splitlines():
        parts = raw.split()
        if len(parts) == 3 and parts[0] == "ack":
            acknowledged[int(parts[1])] = parts[2]
    assert child.returncode == -signal.SIGKILL, errors.decode()
    return acknowledged


def test_sigkill_at_random_points_loses_nothing_acknowledged(tmp_path: Path) -> None:
    rng = random.Random(4)
    acknowledged: dict[int, str] = {}
    opens = 0
    for run in range(6):
        acknowledged |= kill_after_acks(tmp_path, seed=run, acks=rng.randrange(1, 120))
        opens += 1
        before = verify(tmp_path)
        assert before.problem is None or before.problem.kind == "torn", before.problem
        config = JournalConfig(dir=tmp_path, durability="fsync", rotate_bytes=256 * 1024)
        with Journal.open(config, "T01") as journal:
            opens += 1
            replayed = {r.seq: r for r in journal.replay()}
            if before.problem is not None:
                assert journal.torn is not None
                assert replayed[journal.last_seq - 1].event == "journal.torn_tail_truncated"
        for seq, digest in acknowledged.items():
            assert replayed[seq].hash == digest, f"acknowledged seq {seq} lost or altered"
        assert [r.seq for r in replayed.values()] == list(range(1, len(replayed) + 1))
        after = verify(tmp_path)
        assert after.ok, after.problem
    assert sum(1 for r in replayed.values() if r.event == "journal.opened") == opens
