"""What every config file of tabled shares: read with bounds, checked by pydantic, refused in
one line.

The table's file (daemon/config.py, its `[feed]` in daemon/shipper/config.py) and the floor's
(daemon/floor/config.py) are pydantic dataclasses: one validator for every config file. This
module reads a file (daemon.tomltext: size, dotted names and nesting bounded, so a file nested
100,000 deep is a line, not a traceback), holds the field types the files share (strict: "5" is
not 5, 1 is not true), and says every mistake pydantic found on one line, each as
`key: what is wrong` under the key the file uses: ``journal.rotate_bytes: input should be
greater than 0, got -1``, with the nearest known name for an unknown key (a typo's fix).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
)

from daemon.tomltext import TomlRefused, read_toml

# A section of a file: unknown keys are refused. Strict types per field, not for the whole
# section: a path is text in a file, a tuple a list.
SECTION = ConfigDict(extra="forbid")

Name = Annotated[StrictStr, Field(min_length=1)]
Where = tuple[str | int, ...]
# "roulette: unknown device" under `devices` is devices.roulette's.
_KEYED = re.compile(r"^[A-Za-z_][\w.]*: ")


class ConfigError(ValueError):
    """A config file is missing, malformed or names something unknown: one line."""


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"input should be a valid number, got {value!r}")
    return float(value)


# A number in the file: an integer or a float (not true, not "5"), as a float.
Number = Annotated[float, BeforeValidator(_number)]
Whole = StrictInt


def relative_to_base(value: Path | None, info: ValidationInfo) -> Path | None:
    """A relative path read from a file resolves against the context's base (the working
    directory for the table's file); built in code (no context) it stays as given."""
    base = info.context.get("base") if isinstance(info.context, dict) else None
    if value is None or base is None or value.is_absolute():
        return value
    return Path(base) / value


def read(file: Path) -> dict[str, Any]:
    """A config file's tables; ConfigError (one line naming the file) when it cannot be."""
    try:
        return read_toml(file)
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: cannot read it: {exc}") from None
    except TomlRefused as exc:
        raise ConfigError(f"{file}: {exc}") from None


def unknown_key(key: object, known: Iterable[str], what: str = "key") -> str:
    """`unknown key`, with the nearest known name when one is close (a typo's fix)."""
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f"unknown {what}; did you mean {close[0]!r}?" if close else f"unknown {what}"


def unknown_sections(data: dict[str, Any], sections: Iterable[str]) -> list[str]:
    """A file's top-level keys that are none of its sections, each as a mistake."""
    known = list(sections)
    listed = ", ".join(known)
    return [
        f"{key}: {unknown_key(key, known)} (the file's sections: {listed})"
        for key in data
        if key not in known
    ]


def where_text(where: Where) -> str:
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def describe(where: Where, message: str) -> str:
    """One mistake as `key: what is wrong`; a check across keys names its keys itself."""
    place = where_text(where)
    if not place:
        return message
    return f"{place}.{message}" if _KEYED.match(message) else f"{place}: {message}"


Known = Callable[[Where], Iterable[str]]


def _one(error: Any, known: Known | None, rename: Callable[[Where], Where]) -> str:
    loc = rename(tuple(error["loc"]))
    kind = error["type"]
    if kind == "value_error":
        return describe(loc, str(error["ctx"]["error"]))
    if kind in {"unexpected_keyword_argument", "extra_forbidden"}:
        return describe(loc, unknown_key(loc[-1], known(loc[:-1]) if known else ()))
    if kind in {"missing", "missing_argument"}:
        return describe(loc, "required")
    if kind in {"dataclass_type", "model_type"}:
        return describe(loc, f"expected a table ([{where_text(loc)}]), got {error['input']!r}")
    text = (
        error["msg"].replace("a valid tuple", "a list").replace(" for <class 'pathlib.Path'>", "")
    )
    return describe(loc, f"{text[0].lower()}{text[1:]}, got {error['input']!r}")


def refused(
    source: str,
    exc: ValidationError,
    known: Known | None = None,
    rename: Callable[[Where], Where] = lambda where: where,
) -> ConfigError:
    """Every mistake pydantic found, on one line after the file's name (an operator fixes
    them in one go). `known(place)`: the keys a place takes, for an unknown key's "did you
    mean"; `rename`: a field's place in the file, where it differs from the field's."""
    said = "; ".join(_one(error, known, rename) for error in exc.errors())
    return ConfigError(f"{source}: {said}")
