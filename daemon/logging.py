"""The daemon's operational log: structlog, one event a line, for the casino's IT.

This is not the journal (the journal is the audited record of the table, `daemon.journal`):
it says what the process is doing (ports opened, rotations, retries) for operators and
systemd's journal. Events are dotted facts (`journal.rotated`) with key-value fields. The
standard library's loggers (uvicorn, transitions, asyncio) are routed through the same
renderer, so one stream holds everything in one format.

Production (stderr not a terminal: systemd) writes JSON lines. The console renderer is for a
person at a terminal; `rich`, which structlog uses when it is installed, is not a runtime
dependency (requirements.lock), so the approved build never loads it, and `tabled` imports
structlog with rich hidden (`daemon.cli`), so a development venv, which has it for the test
tools, starts the same.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error", "critical")


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
    as_json = not out.isatty() if json is None else json
    number = logging.getLevelNamesMapping()[level.upper()]
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
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
        renderer = structlog.processors.JSONRenderer()
    else:
        # Someone at a terminal asked for it (or `json=False`). Plain tracebacks: structlog's
        # default here is rich's when rich happens to be installed, which prints locals.
        renderer = structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=structlog.PrintLoggerFactory(out),
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
