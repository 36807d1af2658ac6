"""TOML files read with bounds: every config, floor config and tokens file goes through here.

`tomllib` is exact but not defensive. A value nested 100,000 deep (`a = [[[[...`) raises
`RecursionError` from deep inside the parser (a traceback, not a config error), and a dotted key
of 10,000 parts (`x.x.x...x = 1`, 20 KB) costs it 2.4 s and 400 MB, 100,000 parts more memory
than a table PC has (its cost grows with the square of the parts). What the daemon's files hold
is small and shallow (the example configs are under 4 KB and 3 levels deep), so a file is
refused, in one line that says why and where, when it is:

- larger than `MAX_BYTES` (read at most that much plus one byte: a FIFO or /dev/zero ends too);
- holds a dotted name (`a.b.c`, a `[table.header]`) of more than `MAX_PARTS` parts, found by a
  linear scan before the parser sees the text;
- nested deeper than `MAX_DEPTH` (tables, arrays, inline tables), or so deep that the parser
  itself runs out of stack.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

MAX_BYTES = 1 << 20  # a config or tokens file (the largest shipped is 2.2 KB)
MAX_PARTS = 32  # parts of one dotted name
MAX_DEPTH = 32  # levels of tables, arrays and inline tables

# One token of the scan: a quoted string (on one line; one left open runs to the line's end, so a
# line of `\"` with no closing quote is one token, not a rescan from every quote), a bare run of
# key characters, blanks, a dot, a newline, or any other character (each ends a dotted name).
_TOKEN = re.compile(
    r"""(?P<part>"(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?|[A-Za-z0-9_-]+)"""
    r"""|(?P<blank>[ \t]+)|(?P<dot>\.)|(?P<nl>\n)|."""
)


class TomlRefused(ValueError):
    """A TOML text this module will not parse, or that does not parse: the reason, one line."""


def read_toml(file: Path) -> dict[str, Any]:
    """The TOML file's tables. `OSError` and `UnicodeDecodeError` as reading raises them (a
    missing file: `FileNotFoundError`); `TomlRefused` for what the module docstring lists and
    for text that is not TOML."""
    with file.open("rb") as stream:
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise TomlRefused(f"larger than {MAX_BYTES} bytes, which no file of tabled's needs")
    return loads_toml(data.decode("utf-8"))


def loads_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`, with `read_toml`'s bounds on size, dotted names and nesting."""
    if len(text) > MAX_BYTES:
        raise TomlRefused(f"larger than {MAX_BYTES} bytes, which no file of tabled's needs")
    _dotted_names(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlRefused(f"not valid TOML: {exc}") from None
    except RecursionError:
        raise TomlRefused(f"nested more than {MAX_DEPTH} levels deep") from None
    _nesting(data)
    return data


def _dotted_names(text: str) -> None:
    """Refuse a dotted name of more than `MAX_PARTS` parts (one pass, no backtracking)."""
    line, parts, after_dot = 1, 0, False
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "part":
            parts = parts + 1 if after_dot or parts == 0 else 1
            after_dot = False
            if parts > MAX_PARTS:
                raise TomlRefused(
                    f"line {line}: a dotted name of more than {MAX_PARTS} parts "
                    f"(nested tables more than {MAX_PARTS} deep)"
                )
        elif kind == "dot":
            after_dot = parts > 0
        elif kind == "blank":
            continue
        else:
            if kind == "nl":
                line += 1
            parts, after_dot = 0, False


def _nesting(data: dict[str, Any]) -> None:
    """Refuse tables, arrays and inline tables nested more than `MAX_DEPTH` levels deep."""
    if nested_deeper_than(data, MAX_DEPTH):
        raise TomlRefused(f"nested more than {MAX_DEPTH} levels deep")


def nested_deeper_than(data: dict[str, Any] | list[Any], levels: int) -> bool:
    """Whether `data` holds objects (dicts) and lists more than `levels` levels deep, found
    level by level (no recursion: what it checks may be too deep to recurse through)."""
    level: list[Any] = [data]
    for _ in range(levels):
        level = [
            inner
            for value in level
            for inner in (value.values() if isinstance(value, dict) else value)
            if isinstance(inner, dict | list)
        ]
        if not level:
            return False
    return True
