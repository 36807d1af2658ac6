"""The three rooms of the table's daemon and the one door between them (docs/architecture.md).

- `daemon.table`: the runtime, its devices, its journal writing and its publication side;
- `daemon.api`: the HTTP process (routes, doors, tokens, the remote facade over the channel);
- `daemon.contract`: what the two share (the facade's types, the channel's frames, metrics).

Neither the table nor the API imports the other; the contract imports neither; and no files of
the three import each other in a circle. Every import counts: at the top of a module, inside a
function, under `TYPE_CHECKING` (a circle of types is still a circle for whoever reads them).

Run as a script, it prints the rooms' import graph in graphviz's dot language:

    python tests/test_architecture.py | dot -Tsvg -o docs/architecture.svg
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOMS = ("daemon.table", "daemon.api", "daemon.contract")
# Which room may not import which.
NEVER = {
    "daemon.table": ("daemon.api",),
    "daemon.api": ("daemon.table",),
    "daemon.contract": ("daemon.table", "daemon.api"),
}


def module_of(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(rooms: tuple[str, ...] = ROOMS) -> dict[str, Path]:
    """Every module of the three rooms (or of `rooms`), by its dotted name."""
    found = {}
    for room in rooms:
        for path in sorted((REPO / room.replace(".", "/")).rglob("*.py")):
            found[module_of(path)] = path
    return found


def imported(path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The modules `path` imports (each with its line), wherever in the file the import is."""
    name = module_of(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    yield from imports_in(path.read_text(encoding="utf-8"), package, known)


def imports_in(text: str, package: str, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The modules a source text of `package` imports, each with its line."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            yield from ((sub, node.lineno) for sub in submodules)
            if len(submodules) < len(node.names):
                yield base, node.lineno


def graph(rooms: tuple[str, ...] = ROOMS) -> dict[str, dict[str, int]]:
    """Module -> {module of the three rooms (or `rooms`) it imports: the first line that does}."""
    known = modules(rooms)
    edges: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        out = edges.setdefault(name, {})
        for named, line in imported(path, known):
            target = named
            while target and target not in known:
                target = target.rpartition(".")[0]  # `import a.b.c`: the nearest module known
            if target and target != name:
                out.setdefault(target, line)
    return edges


def room_of(module: str) -> str:
    return next(r for r in ROOMS if module == r or module.startswith(r + "."))


def crossings() -> list[str]:
    """Every import across the rooms' walls, as `file:line imports module`."""
    known = modules()
    found = []
    for name, targets in graph().items():
        never = NEVER[room_of(name)]
        for target, line in sorted(targets.items()):
            if any(target == n or target.startswith(n + ".") for n in never):
                found.append(f"{known[name].relative_to(REPO)}:{line} imports {target}")
    return found


def circles(rooms: tuple[str, ...] = ROOMS) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    edges = graph(rooms)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_neither_the_table_nor_the_api_imports_the_other() -> None:
    assert crossings() == []


def test_no_files_of_the_three_rooms_import_each_other_in_a_circle() -> None:
    assert circles() == []


# The whole of the daemon's code: every package of the wheel.
EVERYWHERE = ("daemon", "drivers", "simulators")
MOST_LINES = 500


def test_no_files_anywhere_import_each_other_in_a_circle() -> None:
    """Not only the three rooms: a circle anywhere (a top-level import, one inside a function
    or under TYPE_CHECKING) is two files a reader must take in at once."""
    assert circles(EVERYWHERE) == []


def test_no_module_is_over_500_lines() -> None:
    """A module a reader takes in at one sitting (issue 24): split by what the parts do."""
    long = {
        str(path.relative_to(REPO)): n
        for path in modules(EVERYWHERE).values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert long == {}


def test_the_contract_stands_on_the_game_declarations_and_the_journal_alone() -> None:
    """The door imports the game's declarations and the journal's reading: nothing else of the
    project (not a procedure, a driver, the config, the training)."""
    known = modules()
    beneath = {
        target
        for name, path in known.items()
        if room_of(name) == "daemon.contract"
        for target, _ in imported(path, known)
        if target.split(".")[0] in ("daemon", "drivers", "simulators") and not room_of_any(target)
    }
    assert beneath <= {"daemon.procedures.spec", "daemon.journal", "daemon.journal.format"}


def test_the_reader_sees_every_kind_of_import() -> None:
    """The graph's reader, on a text with each kind of import it must see (a reader that missed
    one would pass the two tests above whatever the code does)."""
    known = {m: Path() for m in ("daemon.api.gate", "daemon.table.feed", "daemon.contract.facade")}
    text = (
        "from typing import TYPE_CHECKING\n"
        "import daemon.api.gate\n"
        "if TYPE_CHECKING:\n"
        "    from daemon.table import feed\n"
        "def late():\n"
        "    from .facade import ActionSpec\n"
    )
    found = {module for module, _ in imports_in(text, "daemon.contract", known)}
    assert found == {"daemon.api.gate", "daemon.table.feed", "daemon.contract.facade", "typing"}


def floors_below() -> dict[str, set[str]]:
    """Module of the three rooms -> the packages outside them it imports (`daemon.journal`,
    `drivers`, ...: a package of the project a node, the standard library and others left
    out)."""
    known = modules()
    found: dict[str, set[str]] = {}
    for name, path in known.items():
        for target, _ in imported(path, known):
            top = target.split(".")
            if top[0] not in ("daemon", "drivers", "simulators") or room_of_any(target):
                continue
            below = ".".join(top[:2]) if top[0] == "daemon" and len(top) > 1 else top[0]
            found.setdefault(name, set()).add(below)
    return found


def room_of_any(module: str) -> str | None:
    return next((r for r in ROOMS if module == r or module.startswith(r + ".")), None)


def dot() -> str:
    """The three rooms' import graph in graphviz's dot language: a cluster a room, and the
    floors below them (each package one node) that they import."""
    edges, below = graph(), floors_below()
    colours = {"daemon.table": "#dbe8f5", "daemon.api": "#f5e3d6", "daemon.contract": "#e0f0dc"}
    lines = [
        "digraph rooms {",
        '  graph [rankdir=LR, fontname="Helvetica", fontsize=14, ranksep=1.2, nodesep=0.15];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [color="#00000055", arrowsize=0.5];',
    ]
    for room in ROOMS:
        lines.append(f'  subgraph "cluster_{room}" {{ label="{room}"; style=rounded;')
        for name in sorted(edges):
            if room_of(name) == room:
                short = name.removeprefix(room).removeprefix(".") or "__init__"
                lines.append(f'    "{name}" [label="{short}", fillcolor="{colours[room]}"];')
        lines.append("  }")
    for package in sorted(set().union(*below.values())):
        lines.append(f'  "{package}" [shape=ellipse, fillcolor="#eeeeee"];')
    for name, targets in sorted(edges.items()):
        for target in sorted(targets):
            lines.append(f'  "{name}" -> "{target}";')
    for name, packages in sorted(below.items()):
        for package in sorted(packages):
            lines.append(f'  "{name}" -> "{package}" [color="#00000022"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(dot())
