"""SIGKILL of `tabled run` at many points of a round, and the restarts after each.

One journal lives through every kill. Each child plays scripted rounds (`--autoplay`) with
faults and prints `ack SEQ ACTION` once an input (the dealer's, or a device's: a card read) is
durable; the test kills it after its k-th acknowledgement of a given action (or of any), so the
kill lands in a shuffle counting, bets placed, dice in the air, a deal half done, players
arranging, or wherever the table has got to (a HOLD...). Kill points named by action keep the
phases covered however the table's commits group a burst of card reads. The next child is
the restart under test: its recovery must rebuild exactly the round the journal holds, come
back in HOLD (or TILT), keep every line that was there, and carry on from it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from daemon.procedures.base import Input
from tests.table.scenario_support import (
    REPO,
    inputs_of,
    journal_lines,
    replayed,
    table_config,
    toml,
)

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
# (action, k): kill after the child's k-th acknowledged input of that action; None: of any.
KILL_POINTS: tuple[tuple[str | None, int], ...] = (
    (None, 3),
    ("confirm_hand_shuffle", 1),
    ("place_bet", 2),
    ("shake_dice", 1),
    ("card_read", 12),
    (None, 38),
    ("open_banker", 1),
    ("enter_arrangement", 2),
    ("card_read", 40),
    (None, 117),
)


def child(config: Path, seed: int, rounds: int, log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daemon",
            "run",
            "--config",
            str(config),
            "--autoplay",
            str(rounds),
            "--seed",
            str(seed),
            "--trace",
            "--fault-share",
            "0.5",
            "--violation-share",
            "0.5",
        ],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )


def check_recovery(
    data: dict[str, Any], before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    """`after` is the journal once the restart has run: `before` unchanged at its head, and the
    restart's recovery equal to the replay of `before`'s inputs."""
    assert after[: len(before)] == before, "a journaled line changed or went missing"
    rest = after[len(before) :]
    started = next(r for r in rest if r["event"] == "table.started")
    assert started["payload"]["replayed_inputs"] == len(inputs_of(before))
    # The restart restored the last round-boundary checkpoint and replayed only what follows it
    # (the snapshot below is still checked against a replay of every input).
    checkpoints = [r for r in before if r["event"] == "table.checkpoint"]
    if checkpoints:
        last = checkpoints[-1]
        assert started["payload"]["checkpoint_seq"] == last["seq"]
        tail = [r for r in before if r["event"] == "table.input" and r["seq"] > last["seq"]]
        assert started["payload"]["replayed_after_checkpoint"] == len(tail)
        assert last["payload"]["inputs"] == len(inputs_of(before)) - len(tail)
    if not inputs_of(before):
        return
    recovered = next(
        r for r in rest if r["event"] == "table.input" and r["payload"]["action"] == "recovered"
    )
    recovery = next(r for r in rest if r["event"] == "table.recovery")
    procedure = replayed(data, inputs_of(before))
    phase_at_kill = procedure.phase
    item = Input.from_payload(recovered["payload"])
    assert procedure.handle(item.action, item.actor, item.payload, item.now).accepted
    snapshot = recovery["payload"]["snapshot"]
    assert snapshot == procedure.snapshot()
    assert snapshot["phase"] in ("HOLD", "TILT")
    if phase_at_kill not in ("HOLD", "TILT"):
        assert snapshot["suspended"] == phase_at_kill
    # The round intact: the seats, bets, dice and cards so far, the timer's deadline (paused).
    before_kill = replayed(data, inputs_of(before)).snapshot()
    for key in ("round", "seats", "bets", "dice", "dealt", "shakes", "first_seat"):
        assert snapshot[key] == before_kill[key], key
    deadline = before_kill["timer"]["deadline"]
    if deadline is not None:
        assert snapshot["timer"]["paused_remaining"] == max(deadline - item.now, 0.0)


def test_sigkill_at_many_points_then_restart_loses_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "j"
    # Real-time devices scaled down: a shuffle takes 80 ms, a shake 8 ms, so the kills land
    # inside device waits as well as between actions.
    data = table_config(journal, durability="fsync", speed=0.002)
    config = tmp_path / "t.toml"
    config.write_text(toml(data))
    before: list[dict[str, Any]] = []
    phases = set()
    for number, (target, acks) in enumerate(KILL_POINTS):
        log = tmp_path / f"child-{number}.log"
        process = child(config, seed=number, rounds=1000, log=log)
        acknowledged: list[tuple[int, str]] = []
        try:
            assert process.stdout is not None
            for line in process.stdout:
                if line.startswith("ack "):
                    _, seq, action = line.split()
                    acknowledged.append((int(seq), action))
                    if sum(target in (None, a) for _, a in acknowledged) == acks:
                        break
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        reached = sum(target in (None, a) for _, a in acknowledged)
        assert reached == acks, f"the child stopped: {log.read_text()[-2000:]}"
        after = journal_lines(journal)
        check_recovery(data, before, after)
        # Everything acknowledged is there: the action's input, in its group, at its seq.
        by_seq = {r["seq"]: r for r in after}
        for acked, action in acknowledged:
            assert acked in by_seq, f"acknowledged seq {acked} ({action}) lost"
            group = [r for r in after if r["seq"] <= acked and r["event"] == "table.input"]
            assert group[-1]["payload"]["action"] == action
        phases.add(replayed(data, inputs_of(after)).phase)
        before = after
    # A last restart plays a whole round on from wherever the last kill left the table.
    final = subprocess.run(
        [
            sys.executable,
            "-m",
            "daemon",
            "run",
            "--config",
            str(config),
            "--autoplay",
            "1",
            "--seed",
            "99",
        ],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert final.returncode == 0, final.stderr
    after = journal_lines(journal)
    check_recovery(data, before, after)
    verify = subprocess.run(
        [sys.executable, "-m", "daemon", "verify-log", str(journal)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert verify.returncode in (0, 3), verify.stdout  # 3: intact, ending in a torn line
    assert len(phases) >= 4, phases
