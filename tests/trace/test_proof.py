"""The proof of the trace: each guard of an enforced article, disabled, fails a test of it.

Today's share of the articles is proven here (every DAYS-th, `daemon.trace.proofdoc`: all of
them in DAYS days); the whole proof is `bench/bench_trace_proof.py`. A survived guard fails
this test. The mutants, the hook that puts one in place in a process the tests start, the CLI
and the journal's evidence are tested as they are used: through `tabled` as a process, on a
journal a table wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest

from daemon.trace.equivalents import EQUIVALENT, MARK
from daemon.trace.guards import Unit, constants, scan
from daemon.trace.hook import SITECUSTOMIZE, VARIABLE
from daemon.trace.mutants import Mutant, mutant
from daemon.trace.prove import DAYS, day_sample, enforced, plan
from daemon.trace.reexec import Modules
from daemon.trace.report import trace
from daemon.trace.runner import Done, Task, read, run, use_mutant
from daemon.trace.values import ALREADY_EMPTY
from tests.daemon.cli_support import journal_lines

ROOT = Path(__file__).resolve().parents[2]


def tabled(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def citations() -> list[str]:
    return [t.article.citation for t in enforced(trace(with_journal=False))]


@cache
def units() -> list[Unit]:
    return scan()


def the_mutant(guard: str, article: str) -> Mutant:
    unit = next(u for u in units() if u.path == guard)
    module = guard.split(":", 1)[0]
    made = mutant(unit, article, ROOT, constants()[module], module)
    assert isinstance(made, Mutant), made
    return made


def test_todays_share_of_the_enforced_articles_is_proven() -> None:
    """Through `tabled trace --prove` as a process, as a lab runs it: the proof forks a child a
    mutant, and a child forked from this test worker would inherit what the tests before it
    left in the process (modules, the working folder), which the CLI's process does not have."""
    today = datetime.now(UTC).date()
    sample = day_sample(citations(), today)
    assert sample
    chosen = [arg for article in sample for arg in ("--article", article)]
    proved = tabled("trace", "--prove", "--json", *chosen)
    proofs = json.loads(proved.stdout)
    assert [p["article"] for p in proofs] == sample, proved.stderr
    not_proven = [line for line in proved.stderr.splitlines() if "not proven" in line]
    assert proved.returncode == 0 and not_proven == [], not_proven or proved.stderr[-2000:]
    assert all(p["mutants"] and p["survived"] == 0 == p["errors"] for p in proofs)


def test_every_enforced_article_is_proven_once_in_the_rotation() -> None:
    every = citations()
    monday = date(2026, 1, 5)
    week = [day_sample(every, monday + timedelta(days=n)) for n in range(DAYS)]
    assert sorted(c for day in week for c in day) == sorted(every)
    assert day_sample(every, monday + timedelta(days=DAYS)) == week[0]


def test_the_mutant_disables_only_the_checks_citing_its_article() -> None:
    m = the_mutant(
        "daemon.procedures.paigow.bank:PaiGowBank._check_take_bank",
        "Portaria 15/90/M Art. 5(2)",
    )
    original = m.file.read_text(encoding="utf-8")
    # The turn's check (citing 5(1) or 5(2)) and the bettor's; the 5(1)-only ones stay.
    assert m.swap == "PaiGowBank._check_take_bank" and m.operator.startswith("2 check(s)")
    assert m.source.count("ART_5_2") == original.count("ART_5_2") - 2
    for kept in ("has just held the bank its rounds", "has just held the bank; it passes on"):
        assert m.source.count(kept) == original.count(kept) == 1
    data = the_mutant("daemon.procedures.paigow.game:BET_ACTIONS", "Portaria 15/90/M Art. 2(7)")
    assert data.swap is None and "BET_ACTIONS = ()" in data.source
    assert m.file.read_text(encoding="utf-8") == original  # never the tree


def test_a_value_is_changed_by_the_smallest_edit_that_still_imports() -> None:
    """A setting becomes its next declared choice (an empty text would read as the default);
    a container built by a call keeps its call; a record built by a call changes a number; a
    function's body returns the empty value of its container; an alias names an edited copy;
    nothing already empty, and no type, is mutated."""
    order = the_mutant(
        "daemon.rules.paigow.rulesets:PaiGowRules.settlement_order", "Portaria 15/90/M Art. 2(3)"
    )
    assert order.operator == "'collect_then_pay' -> 'hand_by_hand' (the next of its choices)"
    tie = the_mutant("daemon.rules.thirteen.rulesets:RuleSet.tie_break", "003 way 1 top card")
    assert "tie_break: str = 'top-card'" in tie.source  # from the module's _CHOICES
    table = the_mutant("daemon.rules.thirteen.rulesets:MACAU_UNITS", "Portaria 51/89/M Art. 9 II")
    assert "MACAU_UNITS=_units({})" in "".join(table.source.split())
    seat = the_mutant("daemon.procedures.thirteen.actions:_SEAT", "Portaria 51/89/M Art. 3")
    assert seat.operator == "its 0 -> 1" and '_SEAT = seat(1, 3, "Seat", "門")' in seat.source
    events = the_mutant("daemon.procedures.thirteen.game:EVENTS", "Portaria 51/89/M Art. 8")
    assert "EVENTS: dict[str, Event] = {}" in events.source
    alias = the_mutant("daemon.rules.thirteen.rulesets:HK_UNITS", "003 way 1 odds")
    assert "HK_UNITS = _units({})" in alias.source  # Macau's table, aliased, stays whole
    assert "MACAU_UNITS=_units({" in "".join(alias.source.split())
    for made in (order, tie, table, seat, events, alias):
        compile(made.source, str(made.file), "exec")
    left = {
        u.guard: u.reason
        for _, _, unmutated in plan(["003 way 2 specials", "Portaria 51/89/M Art. 4"])
        for u in unmutated
    }
    assert left["daemon.rules.thirteen.rulesets:RuleSet.excluded_head_runs"] == ALREADY_EMPTY
    assert left["daemon.procedures.spec:Opens"].startswith("a type")


def test_a_process_the_tests_start_runs_the_mutant(tmp_path: Path) -> None:
    m = the_mutant("daemon.rules.thirteen.deal:first_seat_from_dice", "Portaria 51/89/M Art. 2(b)")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    saved = os.environ.get(VARIABLE)
    spec = use_mutant(m, tmp_path, 1)
    if saved is None:
        os.environ.pop(VARIABLE)
    else:
        os.environ[VARIABLE] = saved
    code = "from daemon.rules.thirteen.deal import first_seat_from_dice as f; print(f(7))"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    plain = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    mutated = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, VARIABLE: str(spec)},
        check=False,
    )
    assert plain.stdout.strip().isdigit() and mutated.stdout.strip() == "None"


def test_a_guard_no_test_notices_survives(tmp_path: Path) -> None:
    """The runner says `survived` when the tests pass against the mutant: a test that never
    takes the bank cannot notice the bank's guard gone."""
    m = the_mutant(
        "daemon.procedures.paigow.bank:PaiGowBank._check_take_bank",
        "Portaria 15/90/M Art. 5(2)",
    )
    unrelated = "tests/rules/test_paigow_tiles.py::test_art_9_2_split_chickens_count_six_and_three"
    noticing = "tests/procedures/test_paigow_bank.py::" + (
        "test_a_guest_declining_passes_the_bank_to_the_next_door_and_one_who_has_bet_takes_it"
    )
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    ended: dict[int, Done] = {}
    tasks = [Task(1, [unrelated], m), Task(2, [noticing], m)]
    run(tasks, ROOT, tmp_path, jobs=2, timeout=300, done=lambda t, d: ended.update({t.key: d}))
    assert ended[1].exit == 0 and read(tmp_path, 1)["failed"] is None  # survived
    assert ended[2].exit == 1 and read(tmp_path, 2)["failed"] == noticing  # killed


def test_tabled_trace_prove_prints_each_guard_killed_with_its_time() -> None:
    done = tabled("trace", "--prove", "--article", "15/90/M Art. 9(2)", "--json")
    assert done.returncode == 0, done.stderr
    (proof,) = json.loads(done.stdout)
    assert proof["article"] == "Portaria 15/90/M Art. 9(2)"
    assert proof["killed"] == len(proof["mutants"]) > 0 and proof["survived"] == 0
    assert all(m["seconds"] > 0 and m["by"].startswith("tests/") for m in proof["mutants"])
    text = tabled("trace", "--prove", "--article", "15/90/M Art. 9(2)")
    assert (
        "| `daemon.rules.paigow.tiles:Tile.pips` | body -> return None | **killed** |"
        in text.stdout
    )
    unknown = tabled("trace", "--prove", "--article", "15/90/M Art. 12")
    assert unknown.returncode == 1 and unknown.stderr.startswith("tabled trace: ")


@pytest.mark.article("15/90/M", "5(5)")
def test_the_journal_evidence_of_co_banking_in_a_journal_a_table_wrote(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    config = ROOT / "config" / "paigow.toml"
    played = tabled(
        "run", "--config", str(config), "--journal", str(journal), "--seed", "3", "--autoplay", "8"
    )
    assert played.returncode == 0, played.stderr
    lines = journal_lines(journal)
    co_banked = [r["seq"] for r in lines if r["event"] == "bank.co_banked"]
    inputs = [
        r["seq"]
        for r in lines
        if r["event"] == "table.input" and r["payload"]["action"] == "co_bank"
    ]
    assert co_banked and len(inputs) == len(co_banked)
    article = "15/90/M Art. 5(5)"
    found = tabled("trace", "--article", article, "--journal", str(journal), "--json")
    assert found.returncode == 0, found.stderr
    (evidence,) = json.loads(found.stdout)
    assert evidence["actions"] == ["co_bank"] and "bank.co_banked" in evidence["events"]
    assert [x["seq"] for x in evidence["lines"] if x["kind"] == "event"] == co_banked
    assert [x["seq"] for x in evidence["lines"] if x["kind"] == "input"] == inputs
    text = tabled("trace", "--article", article, "--journal", str(journal))
    assert f"found: {len(evidence['lines'])} lines ({len(inputs)} inputs" in text.stdout
    assert text.stdout.startswith(f"# Portaria 15/90/M Art. 5(5) in {journal}\n")
    missing = tabled("trace", "--article", article, "--journal", str(tmp_path / "none"))
    assert missing.returncode == 1 and "no such journal folder" in missing.stderr


def test_each_equivalent_mutant_names_a_guard_of_its_article_and_is_not_run() -> None:
    """An entry of daemon/trace/equivalents.py names a guard the trace gives its article (a
    renamed or removed guard fails here), and the proof leaves that guard unmutated with the
    entry's reason, as the proof's doc shows."""
    assert EQUIVALENT
    articles = sorted({article for article, _ in EQUIVALENT})
    planned = {t.article.citation: (t, made, left) for t, made, left in plan(articles)}
    for (article, guard), reason in EQUIVALENT.items():
        t, made, left = planned[article]
        assert guard in t.guards, f"{article}: {guard} is no guard of it"
        assert guard not in {m.guard for m in made}
        assert {"guard": guard, "reason": MARK + reason} in [
            {"guard": u.guard, "reason": u.reason} for u in left
        ]
    doc = (ROOT / "docs" / "traceability.md").read_text(encoding="utf-8")
    assert all(f"- {a}: `{g}` — {r}" in doc for (a, g), r in EQUIVALENT.items())


def test_a_function_the_modules_call_at_import_runs_fresh() -> None:
    """Pai Gow's visibility rule is made once, when its game is imported (`declare()`): a
    swap of its code in a running process would change nothing already made, so its mutant
    takes the fresh path, a new process importing the mutant's text."""
    reveal = the_mutant(
        "daemon.procedures.paigow.visibility:declare.reveal", "Portaria 15/90/M Art. 6(2)"
    )
    assert reveal.swap is None and reveal.operator == "body -> return None"
    row = the_mutant("daemon.procedures.thirteen.actions:_row", "Portaria 51/89/M Art. 7")
    assert row.swap is None
    check = the_mutant(
        "daemon.procedures.paigow.procedure:PaiGowProcedure._check_set_hand",
        "Portaria 15/90/M Art. 6(1)",
    )
    assert check.swap == "PaiGowProcedure._check_set_hand"


def test_a_data_mutant_runs_its_module_again_then_each_module_importing_it() -> None:
    """The session puts a mutant of data in place by running its module again, then every
    project module that imports it, each after the modules it imports (daemon/trace/reexec)."""
    import daemon.procedures.paigow  # noqa: F401, PLC0415 - imports the tiles' dependents

    order = Modules(ROOT).dependents("daemon.rules.paigow.tiles")
    assert order[0] == "daemon.rules.paigow.tiles"
    for before, after in (
        ("daemon.rules.paigow.tiles", "daemon.rules.paigow.classes"),
        ("daemon.rules.paigow.classes", "daemon.rules.paigow"),
        ("daemon.rules.paigow", "daemon.procedures.paigow.procedure"),
    ):
        assert order.index(before) < order.index(after)
    assert "daemon.rules.thirteen.rulesets" not in order  # imports nothing of the tiles
    assert not any(name.startswith("daemon.trace.") for name in order)
