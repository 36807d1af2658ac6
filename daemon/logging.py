"""The daemon's operational log: structlog, one event a line, for the casino's IT.

This is not the journal (the journal is the audited record of the table, `daemon.journal`):
it says what the process is doing (ports opened, rotations, retries) for operators and
systemd's journal. Events are dotted facts (`journal.rotated`) with key-value fields. The
standard library's loggers (uvicorn, transitions, asyncio) are routed through the same
renderer, so one stream holds everything in one format.

One style per output, for every command: JSON lines when stderr is not a terminal (a pipe, a
file, systemd's journal) or is the journal systemd named in `$JOURNAL_STREAM` (its device and
inode), readable text when it is a person's terminal. The console renderer is for that
person; `rich`, which structlog uses when it is installed, is not a runtime dependency
(requirements.lock), so the approved build never loads it, and `tabled` imports structlog with
rich hidden (`daemon.cli`), so a development venv, which has it for the test
tools, starts the same.

What is logged at info is what the process does, not each thing the table sees: a card read
(`shoe.card_read`, one a card, 52 a Thirteen round) is at debug, since the journal is the record
of each card; a card's faults (out of phase, duplicate) have their own warning or error lines.

Each line is written and flushed as it is made (one `write` a line), so a crash or a SIGKILL
loses none of the lines logged before it (tests/daemon/test_oplog.py). The chain is structlog's
own processors but for the two that cost most per line: the timestamp (`_UtcTimestamp`, the
same ISO 8601 UTC form without building a datetime) and the JSON (`_JSONLine`, one encoder
made once instead of one a line as `json.dumps` with `default` makes).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import structlog

from daemon.safetext import safe_lines

LEVELS = ("debug", "info", "warning", "error", "critical")


class _UtcTimestamp:
    """`timestamp`: ISO 8601 in UTC to the microsecond, `2026-12-01T16:23:29.619263Z`, as
    structlog's `TimeStamper(fmt="iso", utc=True)` writes it (except that a time on a whole
    second keeps its `.000000`), for a third of the cost: the date and time to the second
    are formatted once a second, not a datetime built a line."""

    __slots__ = ("_clock", "_second")

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock  # nanoseconds since the epoch
        # (second, its text): one tuple, so a thread never reads one's text with another's second
        self._second: tuple[int, str] = (-1, "")

    def __call__(self, _logger: Any, _method: str, event_dict: Any) -> Any:
        ns = self._clock()
        second = ns // 1_000_000_000
        cached = self._second
        if cached[0] != second:
            cached = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
            self._second = cached
        event_dict["timestamp"] = f"{cached[1]}.{ns // 1000 % 1_000_000:06d}Z"
        return event_dict


def _json_fallback(value: Any) -> Any:
    """A value JSON has no form for: its `__structlog__()` if it has one, else its repr
    (structlog's JSONRenderer's rule)."""
    try:
        return value.__structlog__()
    except AttributeError:
        return repr(value)


class _JSONLine:
    """The event as one JSON object, exactly as structlog's `JSONRenderer()` writes it
    (`json.dumps`' separators and ASCII escapes), with one encoder made once: `json.dumps`
    given a `default` builds a new encoder every call."""

    __slots__ = ("_encode",)

    def __init__(self) -> None:
        self._encode = json.JSONEncoder(default=_json_fallback).encode

    def __call__(self, _logger: Any, _method: str, event_dict: Any) -> str:
        return self._encode(event_dict)


class _Escaped:
    """A console line with the control characters of what it carries (a device's words, a
    reason) escaped, so nothing logged acts on the terminal (daemon/safetext.py); the JSON
    lines are ASCII-escaped already."""

    __slots__ = ("_render",)

    def __init__(self, render: Any) -> None:
        self._render = render

    def __call__(self, logger: Any, method: str, event_dict: Any) -> str:
        return safe_lines(self._render(logger, method, event_dict))


def wants_json(out: TextIO) -> bool:
    """JSON for a machine (a pipe, a file, systemd's journal), text for a person's terminal.

    Under systemd `$JOURNAL_STREAM` is `DEVICE:INODE` of the stream it connected to the
    journal: when that is this output, JSON even if it were a terminal. (`$INVOCATION_ID` alone
    says only that some ancestor is a unit: a terminal opened from a desktop session has it,
    and a person reads that terminal.)"""
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        return True  # not a file descriptor: a buffer a program reads
    journal = os.environ.get("JOURNAL_STREAM", "")
    if journal:
        with contextlib.suppress(OSError, ValueError):
            device, inode = (int(part) for part in journal.split(":", 1))
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (device, inode):
                return True
    return not os.isatty(fd)


def configure_logging(
    level: str = "info",
    *,
    json: bool | None = None,
    stream: TextIO | None = None,
    cache: bool = True,
) -> None:
    """Configure structlog (and stdlib logging) for the daemon's operational log.

    `json` None picks JSON lines when `stream` is not a terminal and a readable console
    format when it is. `cache` False lets tests reconfigure loggers already handed out.
    """
    if level not in LEVELS:
        raise ValueError(f"log level {level!r}: one of {', '.join(LEVELS)}")
    out = sys.stderr if stream is None else stream
    as_json = wants_json(out) if json is None else json
    number = logging.getLevelNamesMapping()[level.upper()]
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        _UtcTimestamp(),
        structlog.processors.StackInfoRenderer(),
    ]
    renderer: Any
    if as_json:
        # No locals in tracebacks: they may hold API tokens or player data.
        shared.append(
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        )
        renderer = _JSONLine()
    else:
        # Someone at a terminal asked for it (or `json=False`). Plain tracebacks: structlog's
        # default here is rich's when rich happens to be installed, which prints locals.
        renderer = _Escaped(
            structlog.dev.ConsoleRenderer(
                colors=False, exception_formatter=structlog.dev.plain_traceback
            )
        )
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(number),
        # write + flush a line (PrintLogger's print makes two writes and a flush of it)
        logger_factory=structlog.WriteLoggerFactory(out),
        context_class=dict,
        cache_logger_on_first_use=cache,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_tabled", False):
            root.removeHandler(old)
    handler._tabled = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(number)
    # `transitions` narrates every callback it runs at INFO (four lines an input). The journal
    # holds each transition already; the narration would drown the operational log and cost
    # time between a device frame and its journal line. Its warnings still show; `debug`
    # brings the narration back.
    logging.getLogger("transitions").setLevel(
        number if number <= logging.DEBUG else max(number, logging.WARNING)
    )


def get_logger(name: str | None = None, **initial_values: Any) -> Any:
    """A bound operational logger: ``get_logger("drivers.shoe").info("shoe.link_up", port=p)``.

    Before `configure_logging` runs (a library use, a test, a CLI that prints results), it
    writes to stderr rather than structlog's default stdout, so stdout stays the command's.
    """
    if structlog.is_configured():
        logger = structlog.get_logger(**initial_values)
    else:
        logger = structlog.wrap_logger(structlog.PrintLogger(sys.stderr), **initial_values)
    return logger if name is None else logger.bind(logger=name)
