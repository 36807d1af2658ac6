"""The tests that prove an article: marked ``@pytest.mark.article("51/89/M", "2(a)")``.

The marker takes the regulation's short name (``51/89/M``, ``15/90/M``, ``003``) and one or
more of its paragraphs (``"2(a)"``, ``"9 II"``, ``"Table II"``, ``"way 3 shoot"``); a module's
``pytestmark`` applies to each of its tests. Tests are read with `ast` from the tests/ of a
source checkout, never imported or run, so `tabled trace` is quick; an installed wheel has no
tests and says so.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from daemon.trace.cites import canonical


@dataclass(frozen=True)
class MarkedTest:
    nodeid: str  # tests/rules/test_thirteen.py::test_name (a class's: ::Class::test_name)
    line: int
    citations: tuple[str, ...]


def tests_dir(base: Path | None = None) -> Path | None:
    """tests/ beside the package in a source checkout of tabled, or None (an installed wheel)."""
    if base is None:
        base = Path(__file__).resolve().parents[2]
    tests, project = base / "tests", base / "pyproject.toml"
    if not (tests / "conftest.py").is_file() or not project.is_file():
        return None
    if 'name = "tabled"' not in project.read_text(encoding="utf-8"):
        return None
    return tests


def _article_marks(node: ast.expr) -> Iterator[tuple[str, ...]]:
    """The arguments of each ``pytest.mark.article(...)`` in a decorator or pytestmark."""
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "article"
            and isinstance(call.func.value, ast.Attribute)
            and call.func.value.attr == "mark"
        ):
            args = [a.value for a in call.args if isinstance(a, ast.Constant)]
            if len(args) == len(call.args) and all(isinstance(a, str) for a in args):
                yield tuple(str(a) for a in args)
            else:
                raise ValueError(f"line {call.lineno}: article marks take string literals")


def citations_of(args: tuple[str, ...]) -> tuple[str, ...]:
    """``("15/90/M", "5(3)", "5(4)")`` -> the canonical citations."""
    if len(args) < 2:
        raise ValueError(f"article{args!r}: give the regulation and at least one paragraph")
    regulation, *paragraphs = args
    return tuple(canonical(regulation, p) for p in paragraphs)


_Test = ast.FunctionDef | ast.AsyncFunctionDef


def _tests(tree: ast.Module) -> Iterator[tuple[str, _Test]]:
    for node in tree.body:
        if isinstance(node, _Test) and node.name.startswith("test"):
            yield node.name, node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, _Test) and item.name.startswith("test"):
                    yield f"{node.name}::{item.name}", item


def marked_tests(tests: Path) -> list[MarkedTest]:
    """Every test under `tests` marked with an article, in file then line order."""
    found: list[MarkedTest] = []
    for file in sorted(tests.rglob("test_*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        module_marks: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
            ):
                for args in _article_marks(node.value):
                    module_marks.extend(citations_of(args))
        relative = file.relative_to(tests.parent).as_posix()
        for name, node in _tests(tree):
            cited = list(module_marks)
            for decorator in node.decorator_list:
                for args in _article_marks(decorator):
                    cited.extend(citations_of(args))
            if cited:
                found.append(MarkedTest(f"{relative}::{name}", node.lineno, tuple(cited)))
    return found
