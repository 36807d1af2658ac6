"""The edit of a value for the proof's mutants: a constant, a field's default, what a function
returns when its body goes.

The smallest edit that changes what the value says, and that still builds at import (a mutant
whose module cannot be imported proves nothing):

- a flag flips, a number grows by one;
- a text that is one of a declared set of choices (a ``Literal`` annotation, or the module's
  table of a setting's choices such as ``_CHOICES = {"tie_break": ("all-cards", "top-card")}``)
  becomes the next choice: an empty text would be read as the default by a reader that only
  tests for the other choices, and the mutant would change nothing; any other text empties;
- a container empties, and a call building one from a literal (``MappingProxyType({...})``,
  ``frozenset({...})``, ``_units({...})``) gets that literal emptied; a value already empty
  (``frozenset()``, ``()``) has nothing to disable and is left unmutated with that reason, and
  so is a type (``Opens = Literal[...]``); another call gives the empty value its annotation
  declares (``EVENTS: dict[...] = events(...)``), else its first number grows
  (``seat(0, 3, ...)``: seat 0 is refused), else an empty one of the type it built;
- a function's body returns the empty value of its declared return type (``[]`` for a
  ``list[...]``), ``True`` for a condition, else ``None``.
"""

from __future__ import annotations

import ast
from copy import deepcopy as copy_of

_EMPTY_LITERALS: dict[type[ast.expr], str] = {
    ast.Tuple: "()",
    ast.List: "[]",
    ast.Dict: "{}",
    ast.DictComp: "{}",
    ast.ListComp: "[]",
    ast.Set: "set()",
    ast.SetComp: "set()",
}
_EMPTY_BUILDERS = frozenset({"frozenset", "set", "tuple", "list", "dict", "MappingProxyType"})
_EMPTY_RETURNS = {
    "list": "[]",
    "List": "[]",
    "Sequence": "()",
    "tuple": "()",
    "Tuple": "()",
    "dict": "{}",
    "Dict": "{}",
    "Mapping": "{}",
    "set": "set()",
    "frozenset": "frozenset()",
}
ALREADY_EMPTY = "its value is already empty: there is nothing in it to disable"


def _is_empty(value: ast.expr) -> bool:
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return not value.elts
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name | ast.Attribute):
        name = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
        return name in _EMPTY_BUILDERS and all(_is_empty(a) for a in value.args)
    return False


def _literal_strings(node: ast.expr) -> list[str]:
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    return [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def choices(tree: ast.Module, annotation: ast.expr | None, name: str, value: str) -> list[str]:
    """The declared choices of the setting `name` whose value is `value`, or [] if none."""
    literal = annotation
    if isinstance(annotation, ast.Name):
        literal = None
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == annotation.id
            ):
                literal = node.value
    if (
        isinstance(literal, ast.Subscript)
        and isinstance(literal.value, ast.Name)
        and literal.value.id == "Literal"
    ):
        found = _literal_strings(literal.slice)
        if value in found:
            return found
    for node in tree.body:
        table = getattr(node, "value", None)
        if not isinstance(table, ast.Dict):
            continue
        for key, entry in zip(table.keys, table.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == name:
                found = _literal_strings(entry) if isinstance(entry, ast.Tuple | ast.List) else []
                if value in found:
                    return found
    return []


def value_edit(
    value: ast.expr, tree: ast.Module, annotation: ast.expr | None, name: str
) -> tuple[ast.expr, str, str] | str:
    """The part of a constant's or default's `value` to replace, its replacement and the edit's
    description; or the reason it has none (an alias of another constant, a value already
    empty)."""
    if isinstance(value, ast.Constant):
        v = value.value
        if isinstance(v, bool):
            return value, repr(not v), f"{v!r} -> {not v!r}"
        if isinstance(v, int | float):
            return value, repr(v + 1), f"{v!r} -> {v + 1!r}"
        if isinstance(v, str):
            options = choices(tree, annotation, name, v)
            if len(options) > 1:
                other = options[(options.index(v) + 1) % len(options)]
                return value, repr(other), f"{v!r} -> {other!r} (the next of its choices)"
            return (value, '""', "text -> empty") if v else (value, '"x"', "empty text -> 'x'")
        return "a constant of no type the proof edits"
    if _is_empty(value):
        return ALREADY_EMPTY
    for kind, text in _EMPTY_LITERALS.items():
        if isinstance(value, kind):
            return value, text, f"value -> {text}"
    if isinstance(value, ast.Name):
        return _alias_edit(value, tree)
    if isinstance(value, ast.Call) and value.args:
        # A container built from a literal: the literal empties, the call stays (its type and
        # what it checks are kept, so the module still imports).
        first = value.args[0]
        if isinstance(first, tuple(_EMPTY_LITERALS)) and not _is_empty(first):
            inner = value_edit(first, tree, None, name)
            if isinstance(inner, tuple):
                return inner[0], inner[1], f"{ast.unparse(value.func)}'s {inner[2]}"
    if isinstance(value, ast.Subscript):
        return "a type (``Literal[...]``): the values that use it are the units"
    declared = empty_return(annotation)
    if declared not in {"None", "True"}:
        return value, declared, f"value -> {declared}"
    if isinstance(value, ast.Call):
        # A record built by a call (a parameter's spec, a rank): its first number grows.
        numbers = [
            a
            for a in [*value.args, *(k.value for k in value.keywords)]
            if (isinstance(a, ast.Constant) and type(a.value) in {int, float})
            or (
                isinstance(a, ast.UnaryOp)
                and isinstance(a.op, ast.USub)
                and isinstance(a.operand, ast.Constant)
                and type(a.operand.value) in {int, float}
            )
        ]
        if numbers:
            number = ast.literal_eval(numbers[0])
            return numbers[0], repr(number + 1), f"its {number!r} -> {number + 1!r}"
    return value, f"type({ast.unparse(value)})()", "value -> an empty one of its type"


def _alias_edit(alias: ast.Name, tree: ast.Module) -> tuple[ast.expr, str, str] | str:
    """An alias (``HK_UNITS = MACAU_UNITS``) names a copy of the value it names, edited: the
    alias's rule changes, the other constant's stays."""
    named = next(
        (
            node
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            and node.value is not None
            and any(
                isinstance(t, ast.Name) and t.id == alias.id
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
        ),
        None,
    )
    if named is None or named.value is None or isinstance(named.value, ast.Name):
        return "an alias of a constant defined elsewhere: the constant it names is the unit"
    edit = value_edit(named.value, tree, getattr(named, "annotation", None), alias.id)
    if isinstance(edit, str):
        return edit
    part, text, description = edit
    where = list(ast.walk(named.value)).index(part)
    copy = copy_of(named.value)
    replaced = _Replace(list(ast.walk(copy))[where], ast.parse(text, mode="eval").body)
    return alias, ast.unparse(replaced.visit(copy)), f"-> a copy of {alias.id}, {description}"


class _Replace(ast.NodeTransformer):
    def __init__(self, old: ast.AST, new: ast.expr) -> None:
        self.old, self.new = old, new

    def visit(self, node: ast.AST) -> ast.AST:
        return self.new if node is self.old else super().visit(node)


def empty_return(returns: ast.expr | None) -> str:
    """What a function's body returns when the proof takes the body away."""
    text = ast.unparse(returns) if returns is not None else ""
    if text == "bool":
        return "True"
    head = returns.value if isinstance(returns, ast.Subscript) else returns
    name = head.id if isinstance(head, ast.Name) else getattr(head, "attr", "")
    return _EMPTY_RETURNS.get(name, "None")
