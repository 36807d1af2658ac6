"""A disk that refuses a write (here: the file-size limit, EFBIG) stops the journal for good."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from daemon.config import JournalConfig
from daemon.journal import Journal, verify

CHILD = r"""
import json, resource, signal, sys
from pathlib import Path
from daemon.config import JournalConfig
from daemon.journal import Journal, JournalFailed

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
journal = Journal.open(JournalConfig(dir=Path(sys.argv[1]), durability="fsync"), "T01")
resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))
acknowledged, failures = [], []
for i in range(200):
    try:
        record = journal.append(
            "shoe.card_read", actor="shoe_reader", payload={"i": i, "pad": "x" * 300}, commit=True
        )
        acknowledged.append([record.seq, record.hash])
    except JournalFailed as exc:
        failures.append(str(exc))
print(json.dumps({"acknowledged": acknowledged, "failures": failures}))
"""


def test_a_failed_write_stops_the_journal_and_recovery_keeps_what_was_acknowledged(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result = json.loads(done.stdout)
    acknowledged = {seq: digest for seq, digest in result["acknowledged"]}
    failures = result["failures"]
    assert 5 < len(acknowledged) < 20
    # The first failure is the write; every append after it is refused, never half-done.
    assert len(acknowledged) + len(failures) == 200
    assert "write failed" in failures[0]
    assert all("unusable" in failure for failure in failures[1:])
    assert "journal.failed" in done.stderr

    torn = verify(tmp_path).problem  # the write stopped mid-line at the size limit
    assert torn is not None and torn.kind == "torn"
    with Journal.open(JournalConfig(dir=tmp_path, durability="fsync"), "T01") as journal:
        assert journal.torn is not None
        replayed = {r.seq: r.hash for r in journal.replay()}
    assert all(replayed[seq] == digest for seq, digest in acknowledged.items())
    assert verify(tmp_path).ok
