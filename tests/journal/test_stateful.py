"""Any interleaving of appends, commits, clock moves and restarts replays what was appended."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from daemon.config import JournalConfig
from daemon.journal import Journal, Record, verify


class JournalMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="journal-state-"))
        self.wall = 1_800_003_600.0
        self.mono = 50.0
        self.config = JournalConfig(dir=self.dir, durability="none", rotate_bytes=700)
        self.journal: Journal | None = self._open()
        self.appended: list[Record] = []
        self.durable_upto = 0  # index into `appended` of what a commit acknowledged

    def _open(self) -> Journal:
        return Journal.open(self.config, "T01", wall=lambda: self.wall, monotonic=lambda: self.mono)

    @precondition(lambda self: self.journal is not None)
    @rule(
        commit=st.booleans(),
        size=st.integers(0, 400),
        round_id=st.one_of(st.none(), st.integers(1, 9), st.text("R0123456789", max_size=4)),
    )
    def append(self, commit: bool, size: int, round_id: int | str | None) -> None:
        assert self.journal is not None
        record = self.journal.append(
            "table.step",
            actor="dealer",
            round_id=round_id,
            payload={"n": len(self.appended), "pad": "é" * size},
            commit=commit,
        )
        self.appended.append(record)
        if commit:
            self.durable_upto = len(self.appended)

    @rule(seconds=st.sampled_from([0.001, 1.0, 3600.0, 86_400.0]))
    def time_passes(self, seconds: float) -> None:
        self.wall += seconds
        self.mono += seconds

    @precondition(lambda self: self.journal is not None)
    @rule()
    def restart(self) -> None:
        assert self.journal is not None
        self.journal.close()
        self.durable_upto = len(self.appended)  # close flushes
        self.journal = self._open()

    @invariant()
    def replay_holds_every_acknowledged_event_in_order(self) -> None:
        assert self.journal is not None
        replayed = [r for r in self.journal.replay() if r.event == "table.step"]
        assert replayed[: self.durable_upto] == self.appended[: self.durable_upto]
        assert replayed == self.appended  # replay includes what is still buffered
        assert verify(self.dir).ok

    def teardown(self) -> None:
        if self.journal is not None:
            self.journal.close()
        shutil.rmtree(self.dir, ignore_errors=True)


JournalMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
test_journal_state_machine = JournalMachine.TestCase
