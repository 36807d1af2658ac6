"""`journal_logger`: structlog's API over the journal, every call one append."""

from __future__ import annotations

from typing import Any

import structlog

from daemon.journal.format import Record
from daemon.journal.writer import Journal


class _JournalSink:
    """The structlog 'logger' behind `journal_logger`: every level is one journal append."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def _append(self, **fields: Any) -> Record:
        event = fields.pop("event")
        actor = fields.pop("actor", None)
        if not isinstance(actor, str):
            raise ValueError(f"journal event {event!r} needs actor=")
        round_id = fields.pop("round_id", None)
        commit = bool(fields.pop("commit", True))
        return self._journal.append(
            event, actor=actor, round_id=round_id, payload=fields, commit=commit
        )

    msg = debug = info = warning = warn = error = critical = exception = fatal = log = _append


_CONTEXT_KEYS = ("actor", "round_id")


def _journal_context(_logger: Any, _method: str, event_dict: Any) -> Any:
    # Only who and which round come from structlog's contextvars: other context bound for the
    # operational log (a request id, a client address) must not leak into the record.
    context = structlog.contextvars.get_contextvars()
    for key in _CONTEXT_KEYS:
        if key in context and key not in event_dict:
            event_dict[key] = context[key]
    # A dict as the chain's result is passed to the sink as keyword arguments.
    return event_dict


def journal_logger(journal: Journal, **initial_values: Any) -> Any:
    """A structlog logger that journals: ``log.info("shoe.card_read", card="AS", commit=True)``.

    Bind `actor` and `round_id` (``log.bind(round_id="R7")``, or as structlog contextvars: only
    those two are taken from there); every other key lands in the payload. `commit` defaults to
    True here (the safe side). The call returns the `Record`.
    """
    return structlog.wrap_logger(
        _JournalSink(journal),
        processors=[_journal_context],
        wrapper_class=structlog.BoundLogger,
        context_class=dict,
        cache_logger_on_first_use=False,
        **initial_values,
    )
