"""Config sections checked as they are built, without pydantic.

A section is a frozen dataclass deriving from `Section`, with one check per field in `CHECKS`
and, optionally, an `after` method for the checks across its fields. Built in code
(`JournalConfig(rotate_bytes=-1)`, `dataclasses.replace`), it checks what it is given; read from
a file (`build(cls, data, context)`), every mistake in the file is collected, each with the key
it is under, and unknown or missing keys are mistakes too. The words are the ones the config's
errors have always used (`input should be a valid integer, got 'big'`), so an operator reads
the same line whichever way a value was refused.

Why not pydantic: importing it and building the config's schemas was about 40 % of `tabled
run`'s CPU from start to its first device input (issue 10 item 7), for a few dozen keys read
once. The API process and the floor still use pydantic for what they serve.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

Where = tuple[str | int, ...]
# What is wrong: a text, or (a value that is not a table) one that names the place it is at.
Message = str | Callable[[str], str]
Problem = tuple[Where, Message]
Context = Mapping[str, Any] | None  # "base": relative paths' folder; "partial": see config.py
Check = Callable[[Any, Context], Any]

S = TypeVar("S", bound="Section")

# A message that names its own key ("roulette: unknown device") goes under its place's key.
_KEYED = re.compile(r"^[A-Za-z_][\w.]*: ")


def unknown_key(key: object, known: Iterable[str], what: str = "key") -> str:
    """`unknown key`, with the nearest known name when one is close (a typo's fix)."""
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f"unknown {what}; did you mean {close[0]!r}?" if close else f"unknown {what}"


def where_text(where: Where) -> str:
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def describe(where: Where, message: Message) -> str:
    """One mistake as `key: what is wrong`."""
    place = where_text(where)
    text = message(place) if callable(message) else message
    if not place:  # a check across keys names its keys itself
        return text
    return f"{place}.{text}" if _KEYED.match(text) else f"{place}: {text}"


class SectionError(ValueError):
    """Every mistake found in a section, `problems` (place, what); said on one line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(describe(where, message) for where, message in problems))


class Section:
    """Base of a checked config section (a frozen dataclass): see the module's doc."""

    CHECKS: ClassVar[dict[str, Check]] = {}

    def __post_init__(self) -> None:
        problems: list[Problem] = []
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            checked = _run(self.CHECKS[field.name], value, None, (field.name,), problems)
            if checked is not value:
                object.__setattr__(self, field.name, checked)
        if not problems:
            _after(self, None, problems)
        if problems:
            raise SectionError(problems)

    def after(self, context: Context) -> None:
        """The checks across fields, once each field is right: ValueError if one fails."""


def build(cls: type[S], data: Any, context: Context = None) -> S:
    """A section from a file's table (a dict): SectionError naming every mistake."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise SectionError([((), _not_a_table(data))])
    problems: list[Problem] = []
    fields = [field for field in dataclasses.fields(cls) if field.init]  # type: ignore[arg-type]
    names = {field.name for field in fields}
    values: dict[str, Any] = {}
    for field in fields:
        if field.name in data:
            values[field.name] = _run(
                cls.CHECKS[field.name], data[field.name], context, (field.name,), problems
            )
        elif field.default is not dataclasses.MISSING:
            values[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            values[field.name] = field.default_factory()
        else:
            problems.append(((field.name,), "required"))
    problems += [((key,), unknown_key(key, names)) for key in data if key not in names]
    if problems:
        raise SectionError(problems)
    # Each value is checked already (and its paths resolved against the context's base): the
    # instance is made without __init__, whose checks would run again without the context.
    section = cls.__new__(cls)
    for name, value in values.items():
        object.__setattr__(section, name, value)
    _after(section, context, problems)
    if problems:
        raise SectionError(problems)
    return section


def _run(check: Check, value: Any, context: Context, where: Where, problems: list[Problem]) -> Any:
    try:
        return check(value, context)
    except SectionError as exc:
        problems += [((*where, *inner), message) for inner, message in exc.problems]
    except ValueError as exc:
        problems.append((where, str(exc)))
    return value


def _after(section: Section, context: Context, problems: list[Problem]) -> None:
    try:
        section.after(context)
    except SectionError as exc:
        problems += exc.problems
    except ValueError as exc:
        problems.append(((), str(exc)))


def _not_a_table(value: Any) -> Message:
    return lambda place: f"expected a table ([{place}]), got {value!r}"


def _wrong(text: str, value: Any) -> ValueError:
    return ValueError(f"{text}, got {value!r}")


# --- the checks ---------------------------------------------------------------------------------


def section(cls: type[Section]) -> Check:
    """A nested section: a table in the file, or the section itself in code."""
    return lambda value, context: build(cls, value, context)


def anything(value: Any, _context: Context) -> Any:
    return value


def optional(check: Check) -> Check:
    return lambda value, context: None if value is None else check(value, context)


def _bounded(value: Any, gt: float | None, ge: float | None, le: float | None) -> Any:
    if gt is not None and not value > gt:
        raise _wrong(f"input should be greater than {gt}", value)
    if ge is not None and not value >= ge:
        raise _wrong(f"input should be greater than or equal to {ge}", value)
    if le is not None and not value <= le:
        raise _wrong(f"input should be less than or equal to {le}", value)
    return value


def whole(*, gt: int | None = None, ge: int | None = None, le: int | None = None) -> Check:
    """An integer (true and 1.0 are not), in range."""

    def check(value: Any, _context: Context) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _wrong("input should be a valid integer", value)
        return _bounded(value, gt, ge, le)

    return check


def number(*, gt: float | None = None, ge: float | None = None, le: float | None = None) -> Check:
    """A number (an integer or a float; not true, not "5"), in range, as a float."""

    def check(value: Any, _context: Context) -> Any:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _wrong("input should be a valid number", value)
        return _bounded(float(value), gt, ge, le)

    return check


def flag(value: Any, _context: Context) -> Any:
    if not isinstance(value, bool):
        raise _wrong("input should be a valid boolean", value)
    return value


def text(*, min_length: int = 0, pattern: str | None = None) -> Check:
    """A string (not a number), at least `min_length` long, matching `pattern`."""
    compiled = re.compile(pattern) if pattern is not None else None

    def check(value: Any, _context: Context) -> Any:
        if not isinstance(value, str):
            raise _wrong("input should be a valid string", value)
        if len(value) < min_length:
            plural = "" if min_length == 1 else "s"
            raise _wrong(f"string should have at least {min_length} character{plural}", value)
        if compiled is not None and not compiled.search(value):
            raise _wrong(f"string should match pattern '{pattern}'", value)
        return value

    return check


def one_of(*allowed: object) -> Check:
    """One of the values listed (of the same type: true is not 1)."""
    words = [repr(v) for v in allowed]
    said = ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]

    def check(value: Any, _context: Context) -> Any:
        if not any(type(value) is type(v) and value == v for v in allowed):
            raise _wrong(f"input should be {said}", value)
        return value

    return check


def path(*, from_base: bool = True) -> Check:
    """A path (text in a file). `from_base`: a relative one in a file is relative to the
    context's base folder (the working directory); in code it stays as given."""

    def check(value: Any, context: Context) -> Any:
        if not isinstance(value, str | os.PathLike):
            raise _wrong("input is not a valid path", value)
        result = Path(value)
        base = context.get("base") if context is not None else None
        if from_base and base is not None and not result.is_absolute():
            return Path(base) / result
        return result

    return check


def tuple_of(check: Check) -> Check:
    """A list (a tuple in code) of items each passing `check`, as a tuple."""

    def check_all(value: Any, context: Context) -> Any:
        if not isinstance(value, list | tuple):
            raise _wrong("input should be a list", value)
        problems: list[Problem] = []
        items = tuple(_run(check, item, context, (i,), problems) for i, item in enumerate(value))
        if problems:
            raise SectionError(problems)
        return items

    return check_all


def table_of(check: Check) -> Check:
    """A table of text keys, each value passing `check`, as a dict."""

    def check_all(value: Any, context: Context) -> Any:
        if not isinstance(value, dict):
            raise _wrong("input should be a valid dictionary", value)
        problems: list[Problem] = []
        items = {}
        for key, item in value.items():
            if not isinstance(key, str):
                problems.append(((key,), f"a key should be a valid string, got {key!r}"))
            items[key] = _run(check, item, context, (key,), problems)
        if problems:
            raise SectionError(problems)
        return items

    return check_all
