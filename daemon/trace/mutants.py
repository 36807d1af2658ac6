"""The mutants of the proof: each guard of an enforced article, disabled by one small edit.

A mutant is the guard's source file with one edit that makes the guard accept what it refused
(or stop computing what it computes), for one article:

- a function or method that refuses citing the article: each of its own ``raise`` statements
  citing it, each statement call that passes the article (``integer(payload, "seat", ART_5_1,
  ...)``) and each statement under a comment citing it becomes ``pass``;
- a function that cites the article only as a whole (its docstring, the comments above it):
  its body becomes ``return None`` (``return True`` for a condition, ``-> bool``, the empty
  value of a container it returns: ``[]`` for ``-> list[Event]``);
- a constant or a field's default: a number grows by one, a flag flips, a setting becomes its
  next choice, another text empties, a container empties (``BET_ACTIONS = ()``: every action
  after the shake is taken), as `daemon.trace.values` says;
- an entry of an action table: its parameters unchecked (``params=None``), else the article
  it cites emptied.

A class (a record type, a procedure as a whole) is not mutated: what it does is in its methods
and fields, which are units of their own. The edit is made to a copy of the text, never to the
tree; `daemon.trace.prove` runs the article's tests against it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from daemon.trace.cites import covers, find_citations
from daemon.trace.guards import (
    GUARD_ROOTS,
    Unit,
    _children,
    _default_regulation,
    _string_value,
    parsed,
)
from daemon.trace.values import empty_return, value_edit


@dataclass(frozen=True)
class Mutant:
    article: str
    guard: str  # the unit's path, module:qualname
    module: str  # the dotted module the file is imported as
    file: Path
    operator: str  # the edit, in a few words
    line: int  # the first line edited
    source: str  # the whole file, edited
    swap: str | None  # the function whose code is swapped in a running process, or None


@dataclass(frozen=True)
class Unmutated:
    article: str
    guard: str
    reason: str


_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.If)


def _import_time(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `node` that run when its module is imported: a function's decorators and
    defaults, never its body (nor a lambda's)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Function):
            yield from (n for d in child.decorator_list for n in ast.walk(d))
            yield from (n for d in child.args.defaults for n in ast.walk(d))
        elif not isinstance(child, ast.Lambda):
            yield child
            yield from _import_time(child)


@cache
def called_at_import(base: Path) -> frozenset[str]:
    """The names of the functions the guard modules call while they are imported (a module's
    top level, a class body): ``GAME = Game(..., visibility=declare())``, ``_row(3, ...)``."""
    names: set[str] = set()
    for root in GUARD_ROOTS:
        for file in sorted((base / root).rglob("*.py")):
            for node in _import_time(parsed(file)[1]):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    names.add(node.func.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    names.add(node.func.attr)
    return frozenset(names)


def _offset(lines: Sequence[str], line: int, col: int) -> int:
    """The character offset in the text of ast's (1-based line, UTF-8 byte column)."""
    before = sum(len(text) for text in lines[: line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8"))


def _edit(source: str, edits: Sequence[tuple[ast.AST, str]]) -> str:
    """`source` with each node's text replaced, last first so offsets hold."""
    lines = source.splitlines(keepends=True)
    spans = []
    for node, text in edits:
        start = _offset(lines, node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = _offset(lines, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        spans.append((start, end, text))
    for start, end, text in sorted(spans, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def _find(tree: ast.Module, qualname: str) -> list[ast.AST]:
    """The chain of nodes from the module down to `qualname` (``Class.method``), or []."""
    chain: list[ast.AST] = []
    scope: ast.AST = tree
    for name in qualname.split("."):
        found = next((node for child, node in _children(scope) if child == name), None)
        if found is None:
            return []
        chain.append(found)
        scope = found
    return chain


def _own(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `node`'s own code: nested functions, classes and lambdas left out."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, _Function | ast.ClassDef | ast.Lambda):
            continue
        yield child
        stack.extend(ast.iter_child_nodes(child))


class _Cites:
    """Whether a piece of source cites an article: its strings and the constants it names."""

    def __init__(self, known: dict[str, str], default: str | None) -> None:
        self.known, self.default = known, default

    def text(self, text: str, article: str) -> bool:
        return any(covers(article, c) for c in find_citations(text, self.default))

    def node(self, node: ast.AST, article: str) -> bool:
        for part in ast.walk(node):
            if isinstance(part, ast.expr):
                value = _string_value(part, self.known)
                if value is not None and self.text(value, article):
                    return True
        return False


def _comment_above(lines: Sequence[str], node: ast.stmt) -> str:
    above, line = [], node.lineno - 1
    while line >= 1 and lines[line - 1].strip().startswith("#"):
        above.append(lines[line - 1])
        line -= 1
    return "\n".join(above)


def _sites(
    function: _Function, lines: Sequence[str], cites: _Cites, article: str
) -> list[ast.stmt]:
    sites: list[ast.stmt] = []
    for node in _own(function):
        if not isinstance(node, ast.stmt):
            continue
        if (
            (isinstance(node, ast.Raise) and cites.node(node, article))
            or (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Call)
                and cites.node(node.value, article)
            )
            or (isinstance(node, _SIMPLE) and cites.text(_comment_above(lines, node), article))
        ):
            sites.append(node)
    # A site inside another (a raise inside a cited `if`) goes with it.
    inside = {id(n) for site in sites for n in ast.walk(site) if n is not site}
    return [site for site in sites if id(site) not in inside]


def _body_edit(function: _Function) -> tuple[list[tuple[ast.AST, str]], str]:
    body = function.body
    doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    code = body[1:] if doc and len(body) > 1 else body
    value = empty_return(function.returns)
    # The freevars (`super()`'s __class__) kept, so the code fits the function it replaces.
    keep = (
        "; super"
        if any(isinstance(n, ast.Name) and n.id == "super" for n in _own(function))
        else ""
    )
    first, last = code[0], code[-1]
    span = ast.stmt(
        lineno=first.lineno,
        col_offset=first.col_offset,
        end_lineno=last.end_lineno,
        end_col_offset=last.end_col_offset,
    )
    return [(span, f"return {value}{keep}")], f"body -> return {value}"


def _entry(assign: ast.AST, unit: Unit, name: str) -> ast.Call | None:
    for node in ast.walk(assign):
        if isinstance(node, ast.Call) and node.lineno == unit.line:
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value == name:
                return node
            if any(
                isinstance(k.value, ast.Constant) and k.value.value == name for k in node.keywords
            ):
                return node
    return None


def _entry_edit(
    call: ast.Call, cites: _Cites, article: str
) -> tuple[list[tuple[ast.AST, str]], str] | None:
    params = next((k for k in call.keywords if k.arg == "params"), None)
    if params is not None and not (isinstance(params.value, ast.Constant)):
        return [(params.value, "None")], "params -> None (unchecked)"
    args = [a for a in call.args[1:] if cites.node(a, article)]
    args += [k.value for k in call.keywords if cites.node(k.value, article)]
    if not args:
        return None
    return [(a, '""') for a in args], "its article -> empty"


def mutant(
    unit: Unit, article: str, base: Path, known: dict[str, str], module: str
) -> Mutant | Unmutated:
    """The mutant of `unit` for `article` (or why it has none)."""
    if unit.file.suffix != ".py":
        return Unmutated(article, unit.path, "a table of data")
    source, tree = parsed(unit.file)
    lines = source.splitlines()
    qualname = unit.path.split(":", 1)[1]
    entry = None
    if qualname.endswith("]"):
        qualname, entry = qualname[:-1].split("[", 1)
    chain = _find(tree, qualname)
    if not chain:
        return Unmutated(article, unit.path, "not found in its file")
    node = chain[-1]
    cites = _Cites(known, _default_regulation(module, source))
    swap = None
    edits: list[tuple[ast.AST, str]]
    if entry is not None:
        call = _entry(node, unit, entry)
        made = None if call is None else _entry_edit(call, cites, article)
        if made is None:
            return Unmutated(article, unit.path, "an entry with nothing to edit")
        edits, operator = made
    elif isinstance(node, ast.ClassDef):
        return Unmutated(article, unit.path, "a type: its methods and fields are units")
    elif isinstance(node, _Function):
        sites = _sites(node, lines, cites, article)
        if sites:
            edits = [(site, "pass") for site in sites]
            at = ", ".join(str(s.lineno) for s in sites)
            operator = f"{len(sites)} check(s) -> pass (line {at})"
        else:
            edits, operator = _body_edit(node)
        # The outermost function of the chain is the one a running process can swap, unless
        # the modules call it while they are imported: what it made then (a game's visibility
        # rule, an action's parameters) is built already, so only a fresh import runs it.
        top = next(i for i, n in enumerate(chain) if isinstance(n, _Function))
        swap = ".".join(qualname.split(".")[: top + 1])
        if swap.rsplit(".", 1)[-1] in called_at_import(base):
            swap = None
    else:
        value = getattr(node, "value", None)
        if value is None:
            return Unmutated(article, unit.path, "a field without a default")
        made_value = value_edit(
            value, tree, getattr(node, "annotation", None), qualname.rsplit(".", 1)[-1]
        )
        if isinstance(made_value, str):
            return Unmutated(article, unit.path, made_value)
        part, text, operator = made_value
        edits = [(part, text)]
    first = min(getattr(n, "lineno", 0) for n, _ in edits)
    return Mutant(
        article, unit.path, module, unit.file, operator, first, _edit(source, edits), swap
    )
