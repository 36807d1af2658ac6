"""The guards of the source, found by the articles they cite, without importing the code.

A guard is a unit of source that names an article: a function or method (a transition
condition, a payload check, a device judgement, a rules-engine computation), a class, a module
or class constant, or one entry of an action table (``ACTIONS[place_bet]``: a call in a
module-level table whose first argument is a name and whose other arguments cite an article).
A unit cites an article by a constant it uses (``Refused(ART_2A, ...)``, with ``ART_2A`` built
from ``REGULATION``, resolved across modules) or in its own text: its docstring, its strings,
its comments and the comment lines just above it. A mention without a regulation
(``Art. 6(2)``) takes the module's: the game its path names, else the one its text names.

A game's actions kept as TOML data are read the same way, table by table (`_data_units`).
Everything here reads files (`ast`, `tomllib`), never imports them, so moving a module or
renaming a package keeps the list true; `scan` is the one place that knows where guards live
(`GUARD_ROOTS`, `SKIP`).
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from daemon.trace.cites import PAIGOW, THIRTEEN, find_citations

# Packages whose modules hold guards, and the modules that describe or drive the game instead
# (the operator API, the table's publication side that serves the console its views and
# explanations, the integrity analytics, autoplay's simulated dealer, CLIs, docs generators,
# this, the floor's synthetic journals: sample lines that name articles as data).
GUARD_ROOTS = ("daemon", "drivers")
SKIP = re.compile(
    r"(^|/)(api|publish|analytics|trace|autoplay|client|journal\w*|logging|sdnotify|diagram"
    r"|\w*cli|__main__|synthetic)(/|\.py$)"
)
_GAME_WORDS = (
    (PAIGOW, re.compile(r"paigow|pai gow|牌九", re.IGNORECASE)),
    (THIRTEEN, re.compile(r"thirteen|十三张|十三張", re.IGNORECASE)),
)


@dataclass(frozen=True)
class Unit:
    """One named unit of source: `path` is ``module:qualname``."""

    path: str
    file: Path
    line: int
    text: str  # its own lines: nested units are cut out
    citations: frozenset[str]
    table_entry: bool = False


@dataclass
class _Module:
    name: str
    file: Path
    tree: ast.Module
    lines: list[str]
    constants: dict[str, str] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def _module_name(file: Path, base: Path) -> str:
    parts = list(file.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _default_regulation(module: str, text: str) -> str | None:
    """The regulation of a bare ``Art.`` in this text: the game its path names, else the one
    game the text names; None when neither or both."""
    for regulation, words in _GAME_WORDS:
        if words.search(module.replace("_", " ").replace(".", " ")):
            return regulation
    named = [regulation for regulation, words in _GAME_WORDS if words.search(text)]
    return named[0] if len(named) == 1 else None


def _string_value(node: ast.expr | None, known: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                part = _string_value(value.value, known)
            else:
                part = _string_value(value, known)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    return None


def _collect(modules: dict[str, _Module]) -> None:
    """Each module's string constants and imports; constants built from imported ones too."""
    for module in modules.values():
        for node in module.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = (alias.name, None)
    for _ in range(3):  # constants built from constants of other modules settle in a few passes
        for module in modules.values():
            known = _known(module, modules)
            for node in module.tree.body:
                target, value = _assignment(node)
                if target is not None and (text := _string_value(value, known)) is not None:
                    module.constants[target] = text
                    known[target] = text


def _class_attributes(modules: dict[str, _Module]) -> dict[str, set[str]]:
    """Class attributes set to a string constant in some class (``EQUIPMENT_ARTICLE = ART_1``):
    a base class reading ``type(self).EQUIPMENT_ARTICLE`` cites each game's value."""
    values: dict[str, set[str]] = {}
    for module in modules.values():
        known = _known(module, modules)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    name, value = _assignment(item)
                    text = _string_value(value, known)
                    if name is not None and text is not None:
                        values.setdefault(name, set()).add(text)
    return values


def _known(module: _Module, modules: dict[str, _Module]) -> dict[str, str]:
    known = dict(module.constants)
    for local, (source, name) in module.imports.items():
        if name is not None and source in modules and name in modules[source].constants:
            known[local] = modules[source].constants[name]
    return known


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return (target.id if isinstance(target, ast.Name) else None), node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


_Named = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign


def _children(node: ast.AST) -> Iterator[tuple[str, _Named]]:
    """The named units directly inside `node` (functions, classes, assignments to a name)."""
    body: list[ast.stmt] = getattr(node, "body", [])
    stack = list(body)
    while stack:
        child = stack.pop(0)
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield child.name, child
        elif isinstance(child, ast.Assign | ast.AnnAssign) and not isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef
        ):
            name, _ = _assignment(child)
            if name is not None:
                yield name, child
        else:  # if/for/with/try blocks: their definitions are still this scope's
            for attr in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(child, attr, []) or [])


def _first_line(node: ast.stmt, lines: list[str]) -> int:
    """The unit's first line (1-based), taking in decorators and the comments just above."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    while start > 1 and lines[start - 2].strip().startswith("#") and "---" not in lines[start - 2]:
        start -= 1
    return start


def _units(
    module: _Module, known: dict[str, str], attributes: dict[str, set[str]]
) -> Iterator[Unit]:
    default_all = _default_regulation(module.name, "\n".join(module.lines))

    def walk(parent: ast.AST, prefix: str) -> Iterator[Unit]:
        for name, node in _children(parent):
            qualname = f"{prefix}{name}"
            start, end = _first_line(node, module.lines), node.end_lineno or node.lineno
            nested = [
                (_first_line(c, module.lines), c.end_lineno or c.lineno) for _, c in _children(node)
            ]
            own = [i for i in range(start, end + 1) if not any(a <= i <= b for a, b in nested)]
            mine = _own_nodes(node)
            entries = list(_table_entries(node, known)) if _is_assign(node) else []
            in_entries = {id(n) for entry, _, _ in entries for n in ast.walk(entry)}
            entry_lines = {
                i for e, _, _ in entries for i in range(e.lineno, (e.end_lineno or e.lineno) + 1)
            }
            text = "\n".join(module.lines[i - 1] for i in own if i not in entry_lines)
            used = {
                known[n.id]
                for n in mine
                if isinstance(n, ast.Name) and n.id in known and id(n) not in in_entries
            }
            used |= {
                value
                for n in mine
                if isinstance(n, ast.Attribute) and n.attr in attributes
                for value in attributes[n.attr]
            }
            if isinstance(node, ast.Assign | ast.AnnAssign) and name in module.constants:
                continue  # a citation constant itself (ART_2A = f"{REGULATION} Art. 2(a)")
            default = _default_regulation(module.name, text) or default_all
            cited = set(find_citations(text, default))
            for constant in used:
                cited |= set(find_citations(constant, default))
            for call, entry, entry_cites in entries:
                segment = ast.get_source_segment("\n".join(module.lines), call) or ""
                yield Unit(
                    f"{module.name}:{qualname}[{entry}]",
                    module.file,
                    call.lineno,
                    segment,
                    frozenset(entry_cites),
                    table_entry=True,
                )
            yield Unit(f"{module.name}:{qualname}", module.file, start, text, frozenset(cited))
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(node, f"{qualname}.")

    yield from walk(module.tree, "")


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """`node` and its descendants, without the named units inside it (each is its own unit):
    one walk a level, not one a level for every enclosing unit."""
    inner = {id(child) for _, child in _children(node)}
    found: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(c for c in ast.iter_child_nodes(current) if id(c) not in inner)
    return found


@cache
def _parsed(file: Path, stamp: tuple[int, int]) -> tuple[str, ast.Module]:
    """A file's text and its tree, read once per version of the file (`stamp`: its mtime and
    size); the trees are only read, never changed."""
    source = file.read_text(encoding="utf-8")
    return source, ast.parse(source, str(file))


def parsed(file: Path) -> tuple[str, ast.Module]:
    info = file.stat()
    return _parsed(file, (info.st_mtime_ns, info.st_size))


def _is_assign(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None


_ENTRY_NAMES = ("name", "action", "trigger")


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _cites(nodes: Iterable[ast.expr], known: dict[str, str]) -> set[str]:
    cites: set[str] = set()
    for node in nodes:
        for part in ast.walk(node):
            if isinstance(part, ast.expr) and (value := _string_value(part, known)) is not None:
                cites |= set(find_citations(value))
    return cites


def _table_entries(
    node: ast.stmt, known: dict[str, str]
) -> Iterator[tuple[ast.expr, str, set[str]]]:
    """The entries of a table of actions: a call named by its first argument or its
    ``name=``/``action=``/``trigger=`` (``Action("place_bet", roles, ART_3)``), or a dict
    entry keyed by a name (``{"place_bet": Spec(article=ART_3)}``), citing what the rest of
    the entry resolves to."""
    value = getattr(node, "value", None)
    taken: set[int] = set()
    for part in ast.walk(value) if isinstance(value, ast.expr) else ():
        if id(part) in taken:
            continue
        if isinstance(part, ast.Dict):
            for key, item in zip(part.keys, part.values, strict=True):
                name = _literal(key)
                cites = _cites([item], known) if name is not None else set()
                if name is not None and cites:
                    taken |= {id(n) for n in ast.walk(item)}
                    yield item, name, cites
        elif isinstance(part, ast.Call):
            keywords = {k.arg: k.value for k in part.keywords if k.arg is not None}
            name = _literal(part.args[0]) if part.args else None
            rest = [*part.args[1:], *keywords.values()]
            if name is None:
                label = next((k for k in _ENTRY_NAMES if _literal(keywords.get(k))), None)
                if label is not None:
                    name = _literal(keywords[label])
                    rest = [*part.args, *(v for k, v in keywords.items() if k != label)]
            cites = _cites(rest, known) if name is not None else set()
            if name is not None and cites:
                taken |= {id(n) for n in ast.walk(part)}
                yield part, name, cites


def _modules(base: Path, roots: Iterable[str]) -> dict[str, _Module]:
    modules: dict[str, _Module] = {}
    for root in roots:
        for file in sorted((base / root).rglob("*.py")):
            relative = file.relative_to(base).as_posix()
            if SKIP.search(relative):
                continue
            source, tree = parsed(file)
            name = _module_name(file, base)
            modules[name] = _Module(name, file, tree, source.splitlines())
    return modules


def _data_units(base: Path, roots: Iterable[str]) -> Iterator[Unit]:
    """Tables of TOML data under the roots (a game's actions kept as data): each table whose
    own strings cite an article, as ``path/to/file.toml:actions.place_bet``; an array's table
    is named by its ``name``/``action``/``trigger``, else by its index."""
    for root in roots:
        for file in sorted((base / root).rglob("*.toml")):
            relative = file.relative_to(base).as_posix()
            if SKIP.search(relative.removesuffix(".toml") + ".py"):
                continue
            source = file.read_text(encoding="utf-8")
            default = _default_regulation(relative.replace("/", "."), source)
            stack: list[tuple[str, dict[str, Any]]] = [("", tomllib.loads(source))]
            while stack:
                where, table = stack.pop(0)
                strings: list[str] = []
                for key, value in table.items():
                    items = value if isinstance(value, list) else [value]
                    for index, item in enumerate(items):
                        if isinstance(item, dict):
                            label = next((item[k] for k in _ENTRY_NAMES if k in item), index)
                            suffix = f"[{label}]" if isinstance(value, list) else ""
                            stack.append((f"{where}.{key}{suffix}".lstrip("."), item))
                        elif isinstance(item, str):
                            strings.append(item)
                cited = frozenset(c for text in strings for c in find_citations(text, default))
                if cited:
                    yield Unit(f"{relative}:{where}", file, 1, "\n".join(strings), cited)


def scan(base: Path | None = None, roots: Iterable[str] = GUARD_ROOTS) -> list[Unit]:
    """Every named unit of the guard modules under `base` (the directory holding the
    packages; by default the one this package is installed in), citing or not."""
    if base is None:
        base = Path(__file__).resolve().parents[2]
    modules = _modules(base, roots)
    _collect(modules)
    attributes = _class_attributes(modules)
    units: list[Unit] = []
    for module in modules.values():
        units.extend(_units(module, _known(module, modules), attributes))
    units.extend(_data_units(base, roots))
    return units


def guards(units: Iterable[Unit]) -> list[Unit]:
    """The units that cite an article."""
    return [unit for unit in units if unit.citations]


def constants(
    base: Path | None = None, roots: Iterable[str] = GUARD_ROOTS
) -> dict[str, dict[str, str]]:
    """Each guard module's string constants by name, imported ones too (``ART_11`` -> its
    citation), as `scan` resolves them: what a mutant reads to find the checks citing an article."""
    if base is None:
        base = Path(__file__).resolve().parents[2]
    modules = _modules(base, roots)
    _collect(modules)
    return {name: _known(module, modules) for name, module in modules.items()}
