"""Traceability as data: the catalogue, the guards found in the source, the marked tests, and
`tabled trace` run as a process; docs/traceability.md is what it prints."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from daemon.trace import marks
from daemon.trace.catalogue import ARTICLES, BY_CITATION, STATUSES
from daemon.trace.cites import canonical, covers, find_citations
from daemon.trace.guards import guards, scan
from daemon.trace.report import COMMAND, Trace, markdown, trace, uncatalogued

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "traceability.md"
SEEDS = ROOT.parent / "shared" / "seeds"  # as docs/rules.md cites them


def tabled(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def traces() -> list[Trace]:
    return trace()


# ---- the suite's own guarantees ---------------------------------------------------------------


def test_every_enforced_article_has_a_guard_and_a_test(traces: list[Trace]) -> None:
    lacking = [
        (t.article.citation, "no guard" if not t.guards else "no test")
        for t in traces
        if t.article.status == "enforced" and (not t.guards or not t.tests)
    ]
    assert lacking == [], f"enforced without a guard or a test: {lacking}"


def test_the_doc_is_what_tabled_trace_prints(traces: list[Trace]) -> None:
    assert DOC.read_text(encoding="utf-8") == markdown(traces), f"run: {COMMAND}"


def test_every_article_mark_names_an_article_of_the_catalogue() -> None:
    folder = marks.tests_dir()
    assert folder == ROOT / "tests"
    marked = marks.marked_tests(folder)
    assert len(marked) > 100
    unknown = sorted({(t.nodeid, c) for t in marked for c in t.citations if c not in BY_CITATION})
    assert unknown == []


def test_every_citation_in_the_source_names_an_article_of_the_catalogue() -> None:
    assert uncatalogued(scan()) == []
    units = scan()
    typo = [replace(units[0], citations=frozenset({"Portaria 15/90/M Art. 2(9)"}))]
    assert uncatalogued(typo) == [(units[0].path, "Portaria 15/90/M Art. 2(9)")]


def test_named_guards_exist_and_carry_their_article() -> None:
    units = {unit.path: unit for unit in scan()}
    named = [(a, path) for a in ARTICLES for path in a.guards]
    assert named, "the catalogue names the guards discovery cannot find"
    for article, path in named:
        assert path in units, f"{article.citation}: {path} is gone; re-point the catalogue"
        unit = units[path]
        cites = any(covers(article.citation, c) for c in unit.citations)
        assert cites or any(m in unit.text for m in article.marks), (article.citation, path)


def test_the_catalogue_quotes_the_seed_texts() -> None:
    """Every quoted phrase is the text's own (the ellipses join phrases that are)."""
    if not SEEDS.is_dir():
        pytest.skip("the regulation texts are not on this machine")
    texts = {
        "Portaria 51/89/M": (SEEDS / "000_b3e0f6060f152856.txt").read_text(encoding="utf-8"),
        "Portaria 15/90/M": (SEEDS / "002_3c1df3246e497b85.txt").read_text(encoding="utf-8"),
        "003": (SEEDS / "003_152644a49ce34d45.txt").read_text(encoding="utf-8"),
    }
    for article in ARTICLES:
        for line in article.text.replace("…", "\n").splitlines():
            part = line.strip("：:、；; ")
            if part:
                assert part in texts[article.regulation], (article.citation, part)


def test_each_status_is_known_and_explained() -> None:
    assert len(BY_CITATION) == len(ARTICLES)
    for article in ARTICLES:
        assert article.status in STATUSES
        if article.status != "enforced":
            assert article.reason, f"{article.citation}: say why it is {article.status}"


# ---- citations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "default", "expected"),
    [
        ("Portaria 51/89/M Art. 2(a)", None, ["Portaria 51/89/M Art. 2(a)"]),
        ("Art. 7-11", "Portaria 51/89/M", [f"Portaria 51/89/M Art. {n}" for n in range(7, 12)]),
        (
            "Art. 2(2)(3): dealing",
            "Portaria 15/90/M",
            ["Portaria 15/90/M Art. 2(2)", "Portaria 15/90/M Art. 2(3)"],
        ),
        (
            "Art. 6(1)-(2)",
            "Portaria 15/90/M",
            ["Portaria 15/90/M Art. 6(1)", "Portaria 15/90/M Art. 6(2)"],
        ),
        (
            "Portaria 15/90/M Art. 5(3), 6(3), 8",
            None,
            ["Portaria 15/90/M Art. 5(3)", "Portaria 15/90/M Art. 6(3)", "Portaria 15/90/M Art. 8"],
        ),
        (
            "Art. 9 II.6 and Art. 10",
            "Portaria 51/89/M",
            ["Portaria 51/89/M Art. 9 II.6", "Portaria 51/89/M Art. 10"],
        ),
        ("(Thirteen Art. 4)", "Portaria 15/90/M", ["Portaria 51/89/M Art. 4"]),
        ("000 Art. 6 (Portaria 51/89/M)", None, ["Portaria 51/89/M Art. 6"]),
        (
            "Table II and Art. 7(2)",
            "Portaria 15/90/M",
            ["Portaria 15/90/M Table II", "Portaria 15/90/M Art. 7(2)"],
        ),
        ("Art. 2(b)", None, []),  # no regulation: not attributed
        ("the restart. ART_2A", "Portaria 51/89/M", []),
    ],
)
def test_citations_are_read_back_canonical(
    text: str, default: str | None, expected: list[str]
) -> None:
    assert list(find_citations(text, default)) == expected


def test_a_finer_citation_is_inside_its_article_and_not_the_reverse() -> None:
    assert covers("Portaria 51/89/M Art. 9 II", "Portaria 51/89/M Art. 9 II.6")
    assert not covers("Portaria 51/89/M Art. 9 I", "Portaria 51/89/M Art. 9 II")
    assert not covers("Portaria 51/89/M Art. 1(a)", "Portaria 51/89/M Art. 1")
    assert canonical("003", "way 3 shoot") == "003 way 3 shoot"
    assert canonical("15/90/M", "Table I") == "Portaria 15/90/M Table I"


# ---- discovery on a tree of its own ------------------------------------------------------------


def test_guards_are_found_by_the_constants_they_use_and_the_text_they_carry(tmp_path: Path) -> None:
    (tmp_path / "daemon" / "paigow").mkdir(parents=True)
    (tmp_path / "daemon" / "__init__.py").write_text("")
    (tmp_path / "daemon" / "articles.py").write_text(
        'REGULATION = "Portaria 15/90/M"\nART_2_7 = f"{REGULATION} Art. 2(7)"\n'
    )
    (tmp_path / "daemon" / "paigow" / "__init__.py").write_text(
        textwrap.dedent(
            '''\
            """Pai Gow: everything, Art. 1-9 (a module's docstring names no guard)."""
            from daemon.articles import ART_2_7

            ACTIONS = [Action("place_bet", {"dealer"}, ART_2_7), Action("other", {"x"}, "H1")]
            SPECS = {"move_bet": Spec(roles={"dealer"}, article=ART_2_7), "none": Spec()}
            MORE = (Spec(name="withdraw_bet", article=ART_2_7),)


            class Base:
                CLOSED = ART_2_7

                def check(self):
                    raise Refused(ART_2_7, "closed")

                def _closed(self):
                    return type(self).CLOSED

                def helper(self):
                    return 1


            # Art. 5(3): the stake bounds the bank.
            def limit(stake):
                """And Art. 6(2)-(3) in the docstring."""

                def inner():
                    return "Art. 8"

                return inner
            '''
        )
    )
    (tmp_path / "daemon" / "paigow" / "actions.toml").write_text(
        textwrap.dedent(
            """\
            [actions.take_bank]
            article = "Art. 5(1)"
            roles = ["dealer"]

            [[phases]]
            name = "SETTING"
            note = "players first, then the banker (Art. 6(1))"
            """
        )
    )
    found = {unit.path: sorted(unit.citations) for unit in guards(scan(tmp_path))}
    art = "Portaria 15/90/M Art."
    assert found == {
        "daemon.paigow:ACTIONS[place_bet]": [f"{art} 2(7)"],
        "daemon.paigow:SPECS[move_bet]": [f"{art} 2(7)"],
        "daemon.paigow:MORE[withdraw_bet]": [f"{art} 2(7)"],
        "daemon/paigow/actions.toml:actions.take_bank": [f"{art} 5(1)"],
        "daemon/paigow/actions.toml:phases[SETTING]": [f"{art} 6(1)"],
        "daemon.paigow:Base.CLOSED": [f"{art} 2(7)"],
        "daemon.paigow:Base.check": [f"{art} 2(7)"],
        "daemon.paigow:Base._closed": [f"{art} 2(7)"],
        "daemon.paigow:limit": [f"{art} 5(3)", f"{art} 6(2)", f"{art} 6(3)"],
        "daemon.paigow:limit.inner": [f"{art} 8"],
    }


def test_marked_tests_are_read_without_importing_them(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "tabled"\n')
    tests = tmp_path / "tests" / "rules"
    tests.mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text("")
    (tests / "test_x.py").write_text(
        textwrap.dedent(
            """\
            import pytest
            import does_not_exist  # never imported by the reader

            pytestmark = [pytest.mark.article("003", "way 3 shoot")]


            @pytest.mark.article("15/90/M", "5(3)", "Table II")
            @pytest.mark.parametrize("x", [1])
            def test_a(x):
                pass


            class TestB:
                @pytest.mark.article("51/89/M", "2(a)")
                def test_b(self):
                    pass
            """
        )
    )
    folder = marks.tests_dir(tmp_path)
    assert folder == tmp_path / "tests"
    assert [(t.nodeid, t.citations) for t in marks.marked_tests(folder)] == [
        (
            "tests/rules/test_x.py::test_a",
            ("003 way 3 shoot", "Portaria 15/90/M Art. 5(3)", "Portaria 15/90/M Table II"),
        ),
        ("tests/rules/test_x.py::TestB::test_b", ("003 way 3 shoot", "Portaria 51/89/M Art. 2(a)")),
    ]
    assert marks.tests_dir(tmp_path / "tests") is None  # no checkout of tabled there


# ---- `tabled trace` as a process ---------------------------------------------------------------


def test_tabled_trace_json_lists_every_article_with_its_guards_and_tests() -> None:
    result = tabled("trace", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["article"] for r in rows] == [a.citation for a in ARTICLES]
    for row in rows:
        assert {"article", "text", "guards", "tests", "status"} <= set(row)
    cut = next(r for r in rows if r["article"] == "Portaria 51/89/M Art. 2(a)")
    assert cut["text"].startswith("首先由庄荷以手洗牌")
    guard = "daemon.procedures.thirteen.deal:ThirteenDeal._check_confirm_cut"
    assert guard in cut["guards"]
    assert any(
        t.endswith("::test_the_cut_is_one_hand_of_at_least_ten_by_a_player_or_else_the_dealer")
        for t in cut["tests"]
    )
    paigow = json.loads(tabled("trace", "--game", "paigow", "--json").stdout)
    assert paigow and {r["game"] for r in paigow} == {"paigow"}


def test_tabled_trace_writes_the_doc_and_refuses_bad_options(tmp_path: Path) -> None:
    target = tmp_path / "trace.md"
    written = tabled("trace", "-o", str(target))
    assert written.returncode == 0, written.stderr
    assert target.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")
    for bad in (["--game", "baccarat"], ["--bogus"], ["-o"]):
        result = tabled("trace", *bad)
        assert result.returncode == 2 and "usage: tabled trace" in result.stderr, bad
    nowhere = tabled("trace", "-o", str(tmp_path / "missing" / "trace.md"))
    assert nowhere.returncode == 1 and "cannot write" in nowhere.stderr


def test_without_a_source_checkout_tests_are_not_available(tmp_path: Path) -> None:
    """As installed from the wheel: the packages, no tests/ beside them."""
    for package in ("daemon", "drivers"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    result = tabled("trace", "--json", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "tests not available" in result.stderr
    rows = json.loads(result.stdout)
    assert all(r["tests"] is None for r in rows)
    assert any(r["guards"] for r in rows)
    text = tabled("trace", "--game", "thirteen", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}).stdout
    assert "not available (no source checkout)" in text
