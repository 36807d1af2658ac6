"""A mutant of data in a running test session: its module, and every module that imports it,
run again in place.

A constant, a field's default or a table's entry is read when modules are imported: ``from
game import BET_ACTIONS`` copies the value, a class built at import keeps its defaults. So the
mutant's module is run again from the mutant's text *in its own namespace* (the same module
object, so a function defined there sees the new values through its globals), and then each
project module that imports it, directly or through another, in the order they import each
other: each rebinds what it took from the mutant's module and remakes what it built from it,
tests and conftest modules included. The session (`daemon.trace.swap`) does this in the forked
child of each mutant, from the code of every project module compiled once before it forks; a
mutant whose modules will not run again in place (a registry that refuses a second
registration) reports an error there and takes the fresh path, a new process.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

from daemon.trace.mutants import Mutant

# The proof's own machinery runs in the child: it is never run again under it.
_MACHINERY = frozenset(
    f"daemon.trace.{name}"
    for name in ("hook", "mutants", "prove", "reexec", "runner", "swap", "values", "guards")
)
_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _import_time(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported (not inside a function)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif not isinstance(node, _Function):
            yield from _import_time(node)


class Modules:
    """The project's imported modules: each one's code and the project modules it imports.
    Built in the session's process before it forks, so each child starts from it."""

    def __init__(self, root: Path) -> None:
        self.code: dict[str, CodeType] = {}
        self.imports: dict[str, set[str]] = {}
        trees: dict[str, tuple[ast.Module, bool]] = {}
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if not file or not file.endswith(".py") or name in _MACHINERY or name == "__main__":
                continue
            path = Path(file).resolve()
            if root not in path.parents or ".venv" in path.relative_to(root).parts:
                continue
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source, str(path))
            self.code[name] = compile(tree, file, "exec", dont_inherit=True)
            trees[name] = (tree, path.name == "__init__.py")
        for name, (tree, package) in trees.items():
            self.imports[name] = set(self._imported(tree, name, package))

    def _imported(self, tree: ast.Module, name: str, package: bool) -> Iterator[str]:
        parent = name if package else name.rpartition(".")[0]
        for node in _import_time(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                relative = "." * node.level + (node.module or "")
                try:
                    base = importlib.util.resolve_name(relative, parent) if node.level else relative
                except ImportError:
                    continue
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            # Not the parent packages the import runs first: a package imports its modules, so
            # counting it as theirs would make every package a cycle.
            yield from (target for target in targets if target in self.code)

    def dependents(self, module: str) -> list[str]:
        """`module` and every project module importing it, directly or not, each after the
        modules of that set it imports."""
        users: dict[str, set[str]] = {}
        for name, imported in self.imports.items():
            for target in imported:
                users.setdefault(target, set()).add(name)
        found, stack = {module}, [module]
        while stack:
            for user in users.get(stack.pop(), ()):
                if user not in found:
                    found.add(user)
                    stack.append(user)
        order: list[str] = []
        seen: set[str] = set()

        def visit(name: str) -> None:
            seen.add(name)
            for target in sorted(self.imports.get(name, ())):
                if target in found and target not in seen:
                    visit(target)
            order.append(name)

        for name in self.code:  # in the order they were imported, for the cycles' sake
            if name in found and name not in seen:
                visit(name)
        return order

    def run_again(self, mutant: Mutant) -> int:
        """Run the mutant's module from its text, then its dependents, in place; how many.
        `RefusesToLoad` when one of them refuses to load with the mutant in place."""
        if mutant.module not in self.code:
            raise LookupError(f"{mutant.module} is not imported by the session")
        code = compile(mutant.source, str(mutant.file), "exec", dont_inherit=True)
        self.code[mutant.module] = code
        order = self.dependents(mutant.module)
        for name in order:
            try:
                exec(self.code[name], sys.modules[name].__dict__)  # noqa: S102 - the project's
            except _REFUSALS as exc:
                why = f"{type(exc).__name__}: {exc}"
                raise RefusesToLoad(f"import of {name} refused: {why}"[:300]) from exc
        return len(order)


# What a module's own checks raise when a table it builds at import does not hold together (a
# hand parsed against an emptied tile set, a name missing from an emptied table). Anything else
# (a TypeError, a NameError) is the edit's defect: an error, not a kill.
_REFUSALS = (ValueError, LookupError, AssertionError)


class RefusesToLoad(Exception):
    """A module refuses to load with the mutant in place: the guard is shown necessary at
    import, before any test runs (every test of the article fails to load)."""
