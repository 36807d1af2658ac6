"""The journal: the table's append-only, hash-chained, durable record and its source of truth.

The package's modules, each with one job (docs/journal.md):

- `format`: the line format, the hash rule, file names, `Record` and `record_dict`;
- `writer`: `Journal`, the one process that appends (group commit, durability, anchoring);
- `chain`: the next line of the chain (its seq, bytes and hash) made from an event;
- `segment`: the newest line file, the lines staged for it, rotation to a new one;
- `recovery`: opening for writing: the lock, the chain checked end to end, a torn tail cut, the
  resume point;
- `anchor`: the keyed anchor of the durable head that keeps that check fast;
- `live`: the recent records and the subscribers an open journal keeps in memory;
- `subscription`: the bounded feeds of durable events that `Journal.subscribe` hands out;
- `private`: the folder's and files' modes, and what a user refused the folder is told;
- `reader`: `replay` and `last_event`, reading without the lock;
- `verifier`: `verify`, the whole chain checked with the first bad line named;
- `logger`: `journal_logger`, structlog's API over `Journal.append`;
- `cli`: `tabled verify-log`.
"""

from daemon.journal.anchor import AnchorRefused
from daemon.journal.format import GENESIS, JournalCorrupt, JournalError, Record, record_dict
from daemon.journal.live import RECENT_RECORDS
from daemon.journal.logger import journal_logger
from daemon.journal.reader import TornTail, last_event, replay, scan
from daemon.journal.recovery import JournalLocked
from daemon.journal.subscription import JournalClosed, SubscriberLagged, Subscription
from daemon.journal.verifier import Problem, VerifyResult, verify
from daemon.journal.writer import Journal, JournalFailed

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
