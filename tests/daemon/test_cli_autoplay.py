"""`tabled run --autoplay`'s summary says what the journal holds: each bet's outcome, the
articles broken with what they say, the faults played and the clears, the journal's last seq."""

from __future__ import annotations

import json
import re
import socket
from collections import Counter
from pathlib import Path

import pytest

from daemon.autoplay.summary import article_title, bet_outcomes
from daemon.trace.catalogue import BY_CITATION
from tests.daemon.cli_support import REPO, journal_lines, tabled

CONFIGS = {"thirteen": REPO / "config" / "table.toml", "paigow": REPO / "config" / "paigow.toml"}


def _autoplay(game: str, journal: Path, *extra: str) -> tuple[str, dict[str, object]]:
    args = ("run", "--config", str(CONFIGS[game]), "--journal", str(journal), "--seed", "5")
    text = tabled(*args, "--autoplay", "3", *extra)
    assert text.returncode == 0, text.stderr
    as_json = tabled(*args, "--autoplay", "3", "--json", *extra, "--journal", str(journal) + "2")
    assert as_json.returncode == 0, as_json.stderr
    return text.stdout, json.loads(as_json.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("game", ["thirteen", "paigow"])
def test_the_summary_counts_each_bet_and_ends_at_the_journal_s_last_seq(
    game: str, tmp_path: Path
) -> None:
    text, summary = _autoplay(
        game, tmp_path / "j", "--fault-share", "0.5", "--violation-share", "1"
    )
    lines = journal_lines(tmp_path / "j2")
    placed = [r for r in lines if r["event"] in ("bet.placed", "bet.withdrawn")]
    bets = sum(1 if r["event"] == "bet.placed" else -1 for r in placed)
    outcomes: Counter[str] = Counter()
    for r in lines:
        if r["event"] == "round.settled":
            outcomes.update(bet_outcomes(r["payload"]))
    assert summary["outcomes_per_bet"] == dict(outcomes)
    assert summary["bets_settled"] == sum(outcomes.values()) == bets > 0
    # The last seq is the journal's, after the table stopped: what `verify-log` reports.
    check = tabled("verify-log", "--json", str(tmp_path / "j2"))
    assert check.returncode == 0, check.stdout
    assert summary["last_seq"] == json.loads(check.stdout)["last_seq"] == lines[-1]["seq"]
    check_text = tabled("verify-log", "--json", str(tmp_path / "j"))
    last = json.loads(check_text.stdout)["last_seq"]
    assert f"last seq {last};" in text
    assert f"bets settled        {bets} in 3 round(s), outcome per bet: " in text
    assert "injected" not in text and "faults played" in text


def test_the_summary_names_each_article_with_what_it_says(tmp_path: Path) -> None:
    text, summary = _autoplay("thirteen", tmp_path / "j", "--violation-share", "1")
    articles = summary["violations_by_article"]
    assert isinstance(articles, dict) and articles
    for article, count in articles.items():
        assert f"{count:>4}  {article}" in text
        if not article.startswith("Portaria "):
            continue  # tabled's own rules, e.g. "tabled H1 (faults disable play ...)", say it
        title = article_title(article)
        assert title and BY_CITATION[article].gloss.startswith(title.rstrip("…"))
        assert re.search(rf"{re.escape(article)} +{re.escape(title)}$", text, re.MULTILINE)


def test_the_faults_played_are_matched_with_the_clears(tmp_path: Path) -> None:
    text, summary = _autoplay("thirteen", tmp_path / "j", "--fault-share", "1")
    lines = journal_lines(tmp_path / "j2")
    held = [r for r in lines if r["event"] in ("table.held", "table.tilted")]
    played = summary["faults_played"]
    assert isinstance(played, dict) and sum(played.values()) == 3
    assert sum(summary["faults_by_device"].values()) == len(held) > 0  # type: ignore[union-attr]
    assert summary["cleared"] == len(held)
    assert f"holds and tilts     {len(held)} (" in text
    assert f"cleared             {len(held)} (" in text and "every one cleared" in text


def test_a_device_that_never_comes_up_is_named_with_its_port(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = f"socket://127.0.0.1:{closed.getsockname()[1]}"  # nothing listens there
    config = CONFIGS["thirteen"].read_text().replace('"sim://shoe_reader"', f'"{port}"')
    (tmp_path / "t.toml").write_text(config)
    result = tabled(
        "run", "--config", str(tmp_path / "t.toml"), "--journal", str(tmp_path / "j"),
        "--autoplay", "1",
    )  # fmt: skip
    assert result.returncode == 1
    assert f"shoe_reader at {port} never came up" in result.stderr
    assert "Connection refused" in result.stderr
