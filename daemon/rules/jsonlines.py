"""The JSON-lines loop behind `tabled rules GAME COMMAND`: one request a line in, one answer a
line out, for every game.

A line that cannot be read or answered gets ``{"line": n, "error": "..."}`` naming the problem
(with the request's ``"id"`` when it has one) and the stream goes on; the status is 1 if any
line failed. Blank lines (JSON whitespace only) get no answer. A bare JSON string or list is
the command's one-field request (``{"cards": ...}``, ``{"tiles": ...}``). A field the command
does not read is refused, so a misspelt one cannot silently fall back to a default.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

Answer = Callable[[dict[str, Any]], dict[str, Any]]


class RequestError(ValueError):
    """A JSON line that does not say what the command needs; the message names the problem."""


def refuse_unknown(value: dict[str, Any], known: frozenset[str], where: str = "") -> None:
    """Refuse a field nobody reads, naming it and the fields that are read."""
    unknown = sorted(key for key in value if key not in known)
    if unknown:
        listed, reads = ", ".join(map(repr, unknown)), ", ".join(sorted(known))
        raise RequestError(f"{where}unknown field {listed} (this reads {reads})")


def _request(raw: bytes, bare: str) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        request = json.loads(text)
    except json.JSONDecodeError as error:
        raise RequestError(f"not JSON: {error.msg} at column {error.colno}") from None
    except RecursionError:
        raise RequestError("not JSON this reader takes: nested too deep") from None
    if isinstance(request, str | list):
        request = {bare: request}
    if not isinstance(request, dict):
        raise RequestError(f"a request is a JSON object, not {type(request).__name__}")
    return request


def serve(
    answer: Answer,
    lines: Iterable[bytes],
    out: BinaryIO,
    *,
    reads: frozenset[str] | None,
    bare: str,
) -> int:
    """Answer each line with `answer`; `reads` is every field the command reads (None: any)."""
    status = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        echo: dict[str, Any] = {}
        try:
            request = _request(raw.strip(), bare)
            if "id" in request:
                echo = {"id": request["id"]}
            if reads is not None:
                refuse_unknown(request, reads)
            reply = answer(request)
        except ValueError as error:  # RequestError and the engines' own (cards, tiles, rules)
            reply, status = {"line": number, "error": str(error)}, 1
        except Exception as error:  # one odd line must not end a lab's stream
            # A request shaped in a way no check foresaw: still one line, still going.
            reply = {"line": number, "error": f"cannot handle this request: {error!r}"}
            status = 1
        reply = echo | reply
        out.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
        out.flush()
    return status
