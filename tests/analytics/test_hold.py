"""The hold against the rule set's game math: the z a fair table gets, the z of a table that pays
too much, the shifts in Macau time, the seats' covariance in the variance; a Taiwan Pai Gow
table's hold (the house's commission) against its own game math."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from daemon.analytics.hold import audit, game_math, shift_of
from daemon.analytics.source import Bet, Round
from tests.daemon.cli_support import REPO, tabled

FIGURES = {
    "r": {
        "house_advantage": 0.10,
        "house_advantage_ci95": [0.10, 0.10],
        "variance_per_unit": 1.0,
        "seat_covariance": 0.5,
    }
}


def rounds(mean_net: float, n: int, seed: int, seats: int = 1) -> list[Round]:
    rng = np.random.default_rng(seed)
    played = []
    for i in range(n):
        # Per unit bet: mean `mean_net`, variance 1, seats correlated 0.5 (a shared term).
        shared = rng.normal()
        nets = [mean_net + np.sqrt(0.5) * (shared + rng.normal()) for _ in range(seats)]
        ts = f"2026-12-02T{(i // 60) % 24:02d}:{i % 60:02d}:00.000000Z"
        bets = [Bet(s + 1, 100.0, 100.0 * net, 0.0) for s, net in enumerate(nets)]
        played.append(Round("T01", ts, "dealer:D1", "r", bets))
    return played


def test_a_table_that_pays_what_its_rules_say_is_within_3_sd() -> None:
    (finding,) = audit(rounds(-0.10, 5000, 1, seats=3), "table", FIGURES)
    assert not finding.flagged and abs(finding.statistic) < 3
    assert finding.extra["theoretical_hold"] == 0.10
    assert abs(finding.extra["hold"] - 0.10) < 0.03


def test_a_table_that_pays_too_much_is_flagged() -> None:
    (finding,) = audit(rounds(-0.02, 5000, 2, seats=3), "table", FIGURES)
    assert finding.flagged and finding.statistic < -3
    assert finding.verdict.startswith("FLAGGED") and "of this drop" in finding.power


def test_the_seats_covariance_widens_the_variance() -> None:
    (independent,) = audit(rounds(-0.10, 100, 3, seats=3), "table",
                           {"r": {**FIGURES["r"], "seat_covariance": 0.0}})  # fmt: skip
    (shared,) = audit(rounds(-0.10, 100, 3, seats=3), "table", FIGURES)
    # Same data: a z divided by sqrt(1 + 2 * 0.5) = sqrt(2) when the seats share half.
    assert abs(shared.statistic * 2**0.5 - independent.statistic) < 1e-9


def test_shifts_are_macau_time() -> None:
    assert shift_of("2026-12-02T00:27:33.000000Z") == "2026-12-02 day"  # 08:27 in Macau
    assert shift_of("2026-12-02T08:00:00.000000Z") == "2026-12-02 swing"  # 16:00
    assert shift_of("2026-12-01T17:00:00.000000Z") == "2026-12-02 night"  # 01:00 next day
    by_shift = audit(rounds(-0.10, 1440, 4), "shift", FIGURES)  # a round a minute, a day
    assert [(f.subject, f.samples) for f in by_shift] == [
        ("shift 2026-12-02 day", 480), ("shift 2026-12-02 swing", 480),
        ("shift 2026-12-03 night", 480),
    ]  # fmt: skip


def test_the_stored_game_math_names_its_seed_size_and_interval() -> None:
    figures = game_math()
    assert {"macau-1989", "hk-common"} <= set(figures)
    for name, entry in figures.items():
        low, high = entry["house_advantage_ci95"]
        assert entry["ruleset"] == name and entry["seed"] and entry["deals"] > 0
        assert low <= entry["house_advantage"] <= high and entry["variance_per_unit"] > 0


def played_paigow(folder: Path, table: str = "T03", rounds: str = "8") -> Path:
    """A Taiwan Pai Gow table (config/paigow.toml, macau-1990) played by `tabled run`."""
    config = (REPO / "config" / "paigow.toml").read_text()
    config = config.replace('durability = "fsync"', 'durability = "none"')
    config = config.replace('id = "T02"', f'id = "{table}"')
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.toml").write_text(config)
    journal = folder / "journal"
    done = tabled(
        "run", "--config", "t.toml", "--autoplay", rounds, "--seed", "3", "--fault-share", "0",
        "--violation-share", "0", "--journal", str(journal), cwd=folder, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return journal


def test_a_pai_gow_tables_hold_is_the_house_commission_against_its_game_math(
    tmp_path: Path,
) -> None:
    journal = played_paigow(tmp_path)
    settled = [
        json.loads(line)["payload"]["settlement"]
        for path in sorted(journal.glob("*.jsonl"))
        for line in path.read_bytes().splitlines()
        if b'"event":"round.settled"' in line
    ]
    drop = sum(door["bet"] for s in settled for door in s["doors"])
    taken = sum(s["commission"] for s in settled) + sum(
        c["net"] for s in settled for c in s["co_bankers"] if c["house"]
    )
    done = tabled("audit", "hold", str(journal), "--by", "table", "--json", timeout=300)
    assert done.returncode in (0, 4), done.stderr
    (group,) = json.loads(done.stdout)["groups"]
    assert group["rulesets"] == ["macau-1990"] and group["samples"] == len(settled) > 0
    assert group["drop"] == drop and group["win"] == taken and group["commission"] > 0
    figures = game_math()["macau-1990"]
    assert figures["game"] == "paigow" and group["theoretical_hold"] == pytest.approx(
        figures["house_advantage"]
    )
    assert group["statistic"] != 0 and "|z| > 3 flags" in group["power"]


def test_the_pai_gow_monte_carlo_is_its_seed_and_agrees_with_the_stored_figures() -> None:
    from daemon.analytics.paigow_math import simulate  # noqa: PLC0415

    stored = game_math()["macau-1990"]
    assert stored["method"] == "monte carlo" and stored["seed"] == 2026
    small = simulate("macau-1990", 1500, 7)
    assert small == simulate("macau-1990", 1500, 7)  # the seed is the run
    low, high = small["house_advantage_ci95"]
    half = (high - low) / 2
    assert abs(small["house_advantage"] - stored["house_advantage"]) < 3 * half
    # Every rule set of the engine has its figures, from the same seed and deals.
    for name in ("macau-1990-banker-corrected", "macau-1990-free-setting"):
        assert game_math()[name]["deals"] == stored["deals"]
