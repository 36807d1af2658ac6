"""The journal: the table's append-only, hash-chained, durable record and its source of truth.

The package's modules, each with one job (docs/journal.md):

- `format`: the line format, the hash rule, file names, `Record` and `record_dict`;
- `writer`: `Journal`, the one process that appends (locking, group commit, rotation);
- `recovery`: opening for writing: the chain checked end to end, a torn tail cut, the resume point;
- `anchor`: the keyed anchor of the durable head that keeps that check fast;
- `subscription`: the bounded feeds of durable events that `Journal.subscribe` hands out;
- `reader`: `replay` and `last_event`, reading without the lock;
- `verifier`: `verify`, the whole chain checked with the first bad line named;
- `logger`: `journal_logger`, structlog's API over `Journal.append`;
- `cli`: `tabled verify-log`.
"""

from daemon.journal.anchor import AnchorRefused
from daemon.journal.format import GENESIS, JournalCorrupt, JournalError, Record, record_dict
from daemon.journal.logger import journal_logger
from daemon.journal.reader import TornTail, last_event, replay, scan
from daemon.journal.subscription import JournalClosed, SubscriberLagged, Subscription
from daemon.journal.verifier import Problem, VerifyResult, verify
from daemon.journal.writer import RECENT_RECORDS, Journal, JournalFailed, JournalLocked

__all__ = [
    "GENESIS",
    "RECENT_RECORDS",
    "AnchorRefused",
    "Journal",
    "JournalClosed",
    "JournalCorrupt",
    "JournalError",
    "JournalFailed",
    "JournalLocked",
    "Problem",
    "Record",
    "SubscriberLagged",
    "Subscription",
    "TornTail",
    "VerifyResult",
    "journal_logger",
    "last_event",
    "record_dict",
    "replay",
    "scan",
    "verify",
]
