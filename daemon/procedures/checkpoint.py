"""The checkpoint codec: a procedure's state as JSON, exact on the way back (tuples and dicts
with integer keys are tagged), for the runtime's checkpoints (docs/table.md)."""

from __future__ import annotations

import copy
from typing import Any

_TUPLE, _KEYED = "__tuple__", "__keyed__"


_PLAIN = frozenset({str, int, float, bool, type(None)})


def encode(value: Any) -> Any:
    """JSON-able, and exact on the way back: tuples and dicts with int keys are tagged."""
    # The usual values first, by exact type (a checkpoint is taken at every round's end and
    # is mostly lists of dicts of strings and ints); anything else the general way below.
    # A scalar inside a list or a dict is taken as it is, without a call of its own: most of
    # a checkpoint's values are.
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        return [v if type(v) in _PLAIN else encode(v) for v in value]
    if kind is dict and _TUPLE not in value and _KEYED not in value:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                break
            out[k] = v if type(v) in _PLAIN else encode(v)
        else:
            return out
    return _encode(value)


def _encode(value: Any) -> Any:
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and _TUPLE not in value and _KEYED not in value:
            return {k: encode(v) for k, v in value.items()}
        return {_KEYED: [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TUPLE: [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not checkpointable")


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {_TUPLE}:
            return tuple(decode(v) for v in value[_TUPLE])
        if set(value) == {_KEYED}:
            return {decode(k): decode(v) for k, v in value[_KEYED]}
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def clone(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars) by exact type, several times
    faster than `copy.deepcopy`; any other value (a tuple, an object) goes to `deepcopy`."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {k: clone(v) for k, v in value.items()}
    if kind is list:
        return [clone(v) for v in value]
    return copy.deepcopy(value)
