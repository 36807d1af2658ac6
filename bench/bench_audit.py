"""The integrity audit at full size: its power and false alarms, and a year of one table.

    .venv/bin/python bench/bench_audit.py [--stats-only | --speed-only]
        [--lines 2500000] [--dir DIR] [--audits 1000] [--throws 5000000]

Statistics (the goals of docs/integrity.md, measured, seeded):
- dice: false alarms of the 30 CUSUM monitors over --throws fair throws, per 100,000 throws
  (goal <= 1); a face at 0.19 on all four dice and on one die, caught within 4,000 throws, in
  1,000 runs each (goal >= 90 %);
- shuffles: --audits audits of 500 decks from a cryptographically random shuffler (os.urandom;
  goal: <= 1 % flagged), and of a one-pass 10-shelf and a 5-riffle shuffler (goal: >= 99 %).

Speed: a synthetic journal in the real format (written by the journal's own writer, rounds of a
Thirteen table: ~130 lines each, fair dice and shuffles), --lines lines (a year of one table is
~25 M; the figure is scaled linearly when fewer are written), then `tabled audit` of each kind
in one pass, its time and peak RSS, beside the peer: a plain pandas read of the same files
(`pandas.read_json(lines=True)`, file by file) keeping the same events. Goals: <= 60 s and
<= 1 GiB for 25 M lines. Figures depend on the machine's load; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from daemon.analytics import cusum, shuffle

YEAR_LINES = 25_000_000
GOAL_SECONDS = 60.0
GOAL_RSS = 1 << 30
RANKS = "A23456789TJQK"
CARDS = [r + s for s in "shdc" for r in RANKS]


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


# ---- statistics -------------------------------------------------------------------------------


def bench_dice(throws: int) -> None:
    design = cusum.design()
    rng = np.random.default_rng(1)
    alarms = 0
    chunk = 1_000_000
    for start in range(0, throws, chunk):
        n = min(chunk, throws - start)
        alarms += len(cusum.monitor(rng.integers(1, 7, (n, 4)).astype(np.int8)))
    rate = alarms / throws * 1e5
    print(
        f"dice  false alarms: {alarms} in {throws:,} fair throws = {rate:.2f} per 100,000 "
        f"(exact from the chain: {design.false_alarms_per_100k:.2f}; goal <= 1: "
        f"{verdict(rate <= 1.0)})"
    )
    faces = np.array([0.81 / 5] * 5 + [0.19])
    for label, positions, exact in (
        ("all four dice", (0, 1, 2, 3), design.power_all_dice),
        ("one die", (2,), design.power_one_die),
    ):
        caught = 0
        for _ in range(1000):
            sample = rng.integers(1, 7, (cusum.GOAL_THROWS, 4)).astype(np.int8)
            for p in positions:
                sample[:, p] = rng.choice(np.arange(1, 7), size=cusum.GOAL_THROWS, p=faces)
            caught += any(a.face == 6 for a in cusum.monitor(sample))
        print(
            f"dice  face 6 at 0.19 on {label}: caught within 4,000 throws in {caught}/1000 "
            f"= {caught / 10:.1f}% (exact {exact:.1%}; goal >= 90%: {verdict(caught >= 900)})"
        )


def crypto_decks(decks: int) -> shuffle.Permutations:
    keys = np.frombuffer(os.urandom(8 * decks * shuffle.CARDS), dtype=np.uint64)
    return np.asarray(np.argsort(keys.reshape(decks, shuffle.CARDS), axis=1), dtype=np.int16)


def _flagged_audits(decks: shuffle.Permutations, audits: int, size: int) -> int:
    rising = shuffle.rising_sequences(decks)
    scores = shuffle.guess_scores(decks)
    flagged = 0
    for a in range(audits):
        part = slice(a * size, (a + 1) * size)
        flagged += shuffle.flagged(shuffle.tests(decks[part], rising[part], scores[part]))
    return flagged


def bench_shuffle(audits: int, size: int = 500) -> None:
    flagged = 0
    step = 100
    for start in range(0, audits, step):
        n = min(step, audits - start)
        flagged += _flagged_audits(crypto_decks(n * size), n, size)
    print(
        f"shuffle  cryptographically random (os.urandom): {flagged}/{audits} audits of "
        f"{size} decks flagged = {flagged / audits:.2%} (goal <= 1%: "
        f"{verdict(flagged <= audits / 100)})"
    )
    rng = np.random.default_rng(2)
    power_audits = min(audits, 200)
    for label, make in (
        ("one-pass 10-shelf", lambda n: shuffle.shelf_decks(rng, n, 10, 1)),
        ("5 riffles", lambda n: shuffle.riffle_decks(rng, n, 5)),
    ):
        flagged = _flagged_audits(make(power_audits * size), power_audits, size)
        smallest = next(
            d for d in (10, 20, 30, 50, 100, 200, 500) if shuffle.power(d)[label] >= 0.99
        )
        print(
            f"shuffle  {label}: {flagged}/{power_audits} audits of {size} decks flagged = "
            f"{flagged / power_audits:.1%} (goal >= 99%: "
            f"{verdict(flagged >= 0.99 * power_audits)}); 99% power from {smallest} decks"
        )


# ---- a year of one table ----------------------------------------------------------------------


def _settlement(rng: random.Random) -> list[dict[str, object]]:
    entries = []
    for seat in (1, 2, 3):
        amount = 100 * rng.randint(1, 3)
        won = rng.random() < 0.43
        entries.append(
            {
                "seat": seat,
                "player": f"P{seat}",
                "amount": amount,
                "outcome": "player" if won else "banker",
                "late": False,
                "net": f"{amount * 0.49:.2f}" if won else f"-{amount}",
                "rules": {
                    "ruleset": "macau-1989",
                    "outcome": "player" if won else "banker",
                    "banker_units": 1,
                    "player_units": 2,
                    "rows": [],
                    "foul": None,
                    "special": None,
                    "bet": amount // 100,
                    "prize": "0.5",
                    "commission": f"{0.01 * amount / 100:.2f}" if won else "0",
                    "player_net": "0.49" if won else "-1",
                },
            }
        )
    return entries


def write_journal(directory: Path, lines: int, seed: int = 7) -> int:
    """Rounds of a Thirteen table by the journal's own writer until `lines` are written."""
    from daemon.config import JournalConfig  # noqa: PLC0415
    from daemon.journal import Journal  # noqa: PLC0415

    journal = Journal.open(JournalConfig(dir=directory, durability="none"), "T01")
    rng = random.Random(seed)
    cards = list(CARDS)
    for device, serial in (
        ("shuffler", "SHUF-1"),
        ("dice_shaker", "DICE-1"),
        ("shoe_reader", "SHOE-1"),
    ):
        journal.stage(
            "device.identified",
            f"device:{device}",
            0,
            {"device": device, "approved": True, "serial": serial},
            False,
        )
    written = 4
    round_id = 0
    while written < lines:
        round_id += 1
        stage = journal.stage
        dealer = "dealer:D1"
        stage(
            "table.input",
            dealer,
            round_id,
            {"action": "confirm_hand_shuffle", "payload": {}},
            False,
        )
        stage("deck.hand_shuffled", dealer, round_id, {}, False)
        rng.shuffle(cards)
        stage(
            "table.input",
            "device:shuffler",
            round_id,
            {"action": "shuffle_completed", "payload": {"count": 52}},
            False,
        )
        stage(
            "deck.machine_shuffled",
            "device:shuffler",
            round_id,
            {"count": 52, "mode": "random"},
            False,
        )
        cut = rng.randint(10, 42)
        stage(
            "table.input",
            dealer,
            round_id,
            {"action": "confirm_cut", "payload": {"cards": cut}},
            False,
        )
        stage("deck.cut", dealer, round_id, {"by": "dealer", "player": None, "cards": cut}, False)
        stage("shoe.loaded", dealer, round_id, {"redeal": False}, False)
        for seat in (1, 2, 3):
            bet = {"player": f"P{seat}", "seat": seat, "amount": 100, "units": 1}
            stage("table.input", dealer, round_id, {"action": "place_bet", "payload": bet}, False)
            stage("bet.placed", dealer, round_id, {"replaced": False, **bet}, False)
        stage("bets.closed", dealer, round_id, {"seats": [1, 2, 3]}, True)
        throw = [rng.randint(1, 6) for _ in range(4)]
        stage(
            "table.input",
            "device:dice_shaker",
            round_id,
            {"action": "dice_landed", "payload": {"dice": throw, "valid": True}},
            False,
        )
        stage(
            "dice.landed",
            "device:dice_shaker",
            round_id,
            {"dice": throw, "total": sum(throw), "first_seat": 1},
            True,
        )
        for index, card in enumerate(cards, start=1):
            stage(
                "table.input",
                "device:shoe_reader",
                round_id,
                {"action": "card_read", "payload": {"card": card, "index": index}},
                False,
            )
            stage(
                "card.dealt",
                "device:shoe_reader",
                round_id,
                {"card": card, "seat": index % 4, "index": index, "face_up": False},
                True,
            )
        for seat in (0, 1, 2, 3):
            stage(
                "table.input",
                dealer,
                round_id,
                {"action": "enter_arrangement", "payload": {"seat": seat}},
                False,
            )
            stage("arrangement.entered", dealer, round_id, {"seat": seat}, False)
        stage("table.input", dealer, round_id, {"action": "settle_round", "payload": {}}, False)
        stage("round.settled", dealer, round_id, {"settlement": _settlement(rng)}, True)
        stage("round.started", dealer, round_id + 1, {}, False)
        written += 26 + 2 * 52 + 10
    journal.close()
    return written


PEER = """
import sys, glob, pandas as pd
kept = 0
for path in sorted(glob.glob(sys.argv[1] + '/journal-*.jsonl')):
    frame = pd.read_json(path, lines=True)
    kept += int(frame['event'].isin(['dice.landed', 'card.dealt', 'deck.machine_shuffled',
        'round.settled', 'device.identified', 'shoe.loaded', 'table.tilted']).sum())
print(kept)
"""


def bench_speed(lines: int, directory: Path | None) -> None:
    folder = Path(directory or tempfile.mkdtemp(prefix="bench-audit-"))
    journal = folder / "journal"
    if not journal.exists():
        start = time.perf_counter()
        written = write_journal(journal, lines)
        print(
            f"journal: {written:,} lines written in {time.perf_counter() - start:.0f} s "
            f"({sum(f.stat().st_size for f in journal.iterdir()) / 1e9:.2f} GB)"
        )
    written = sum(1 for f in sorted(journal.glob("journal-*.jsonl")) for _ in f.open("rb"))
    scale = YEAR_LINES / written
    # The start-up's share, not scaled: imports, the CUSUM's chain, the shuffle's alternatives
    # (measured on 40,000 decks once an audit has two decks): a journal of a few rounds.
    tiny = folder / "tiny"
    if not tiny.exists():
        write_journal(tiny, 1000)
    tabled = [sys.executable, "-m", "daemon", "audit"]
    # Each run measures its own child: the RSS of one at a time (a fresh interpreter). The
    # year is scaled from the CPU seconds (on a loaded machine the wall clock is the queue's),
    # the start-up's (a 1,000-line journal's) once, the rest in proportion to the lines.
    print(f"{written:,} lines; the machine's load average now: {os.getloadavg()[0]:.1f}")
    print(
        f"{'':<26}{'wall s':>8}{'CPU s':>8}{'lines/CPU s':>13}{'peak RSS':>10}"
        f"{'25 M lines (CPU, scaled)':>26}"
    )
    for kind in ("dice", "shuffle", "reader", "hold"):
        _, _, fixed = measure_alone([*tabled, kind, str(tiny), "--json"])
        seconds, rss, cpu = measure_alone([*tabled, kind, str(journal), "--json"])
        year = fixed + max(cpu - fixed, 0.0) * scale
        print(
            f"tabled audit {kind:<13}{seconds:>8.1f}{cpu:>8.1f}{written / cpu:>13,.0f}"
            f"{rss / 2**20:>8.0f} M{year:>16.0f} s  goal <= 60 s: {verdict(year <= GOAL_SECONDS)}"
            f", RSS <= 1 GiB: {verdict(rss <= GOAL_RSS)}"
        )
    try:
        import pandas  # noqa: F401, PLC0415
    except ImportError:
        print("peer: pandas is not installed (pip install '.[bench]')")
        return
    seconds, rss, cpu = measure_alone([sys.executable, "-c", PEER, str(journal)])
    print(
        f"{'peer: pandas.read_json':<26}{seconds:>8.1f}{cpu:>8.1f}{written / cpu:>13,.0f}"
        f"{rss / 2**20:>8.0f} M{cpu * scale:>16.0f} s"
    )
    if directory is None:
        shutil.rmtree(folder)


def measure_alone(command: list[str]) -> tuple[float, int, float]:
    """(wall seconds, peak RSS, CPU seconds) of `command`, run under a wrapper process of its
    own so that the peak RSS and the CPU are this command's only."""
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "d = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps([time.perf_counter() - t, u.ru_maxrss * 1024, d.returncode, "
        "u.ru_utime + u.ru_stime]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, *command], capture_output=True, text=True, check=True
    )
    seconds, rss, status, cpu = json.loads(done.stdout)
    if status not in (0, 4):
        raise SystemExit(f"{' '.join(command)} exited {status}")
    return float(seconds), int(rss), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats-only", action="store_true")
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument("--lines", type=int, default=2_500_000)
    parser.add_argument("--dir", type=Path, help="keep (or reuse) the synthetic journal here")
    parser.add_argument("--audits", type=int, default=1000)
    parser.add_argument("--throws", type=int, default=5_000_000)
    args = parser.parse_args()
    if not args.speed_only:
        bench_dice(args.throws)
        bench_shuffle(args.audits)
    if not args.stats_only:
        bench_speed(args.lines, args.dir)


if __name__ == "__main__":
    main()
