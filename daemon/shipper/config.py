"""The `[feed]` section of the table's config: where and how the journal is shipped to NATS.

Absent, nothing is shipped (the embedded default config names no broker). Present, every journal
line goes to the JetStream stream `stream` on the subject ``<subject_prefix>.<table id>.<event>``
(docs/floor.md)::

    [feed]
    servers = ["nats://10.1.0.5:4222", "nats://10.1.0.6:4222"]   # several for a cluster
    stream = "TABLED"
    subject_prefix = "tabled"
    site = "cotai-1"               # optional: sent as the Tabled-Site header
    creds = "/etc/tabled/feed.nk"             # the table's nkey seed (`tabled feed nkey`), or a
                                              #   NATS .creds file; or user + password, or token
    tls_ca = "/etc/tabled/nats-ca.pem"        # TLS: the broker's CA; tls_cert + tls_key for a
                                              #   client certificate (optional)
    window = 512                   # messages in flight, unacknowledged, at most
    drain_seconds = 5.0            # a clean stop waits this long for the outbox to drain
    duplicate_window_seconds = 300 # JetStream's de-duplication window for a created stream
    max_age_days = 0               # retention of a created stream (0: no limit)

Paths are relative to the config file's folder. Files are read when the shipper connects, not at
start-up: a missing credentials file is a journaled feed error and the table plays on. A secret
file (`creds`, `tls_key`) that group or others may read or write is refused like the tokens file
(`secret_problem`), with the `chmod 600` that fixes it.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from daemon.sections import Check, Context, Section, number, optional, path, text, whole

# A NATS subject token: no dots, wildcards, whitespace or control characters.
TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9_\-]+$")
SUBJECT_PREFIX_PATTERN = re.compile(r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")
STREAM_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_\-]+$")


def nats_servers(cls: Any, value: Any) -> Any:
    """A config's NATS servers (the feed's, the floor's): a non-empty list of nats:// or tls://
    URLs, as a tuple; one URL alone (`servers = "nats://..."`) is a list of one. Several are
    the nodes of a cluster: the client connects to one that answers and, when it is lost,
    to another (docs/floor.md, "A three-node cluster")."""
    if isinstance(value, str):
        value = (value,)
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple) or not value:
        raise ValueError("a non-empty list of nats:// (or tls://) URLs")
    for url in value:
        if not isinstance(url, str) or not url.startswith(("nats://", "tls://")):
            raise ValueError(f"{url!r} is not a nats:// or tls:// URL")
    return value


# The keys of a NATS client's identity and TLS, the same in [feed] and [floor].
NATS_FILES = ("creds", "tls_ca", "tls_cert", "tls_key")


class NatsClient(Protocol):
    """What a NATS client section says (the table's `[feed]`, the floor's `[floor]`)."""

    @property
    def servers(self) -> tuple[str, ...]: ...
    @property
    def user(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...
    @property
    def token(self) -> str | None: ...
    @property
    def creds(self) -> Path | None: ...
    @property
    def tls_ca(self) -> Path | None: ...
    @property
    def tls_cert(self) -> Path | None: ...
    @property
    def tls_key(self) -> Path | None: ...


def auth_problem(section: NatsClient) -> None:
    """The checks across a NATS client's keys: ValueError saying which keys clash."""
    if (section.user is None) != (section.password is None):
        raise ValueError("user and password go together")
    ways = [section.user is not None, section.token is not None, section.creds is not None]
    if sum(ways) > 1:
        raise ValueError("one of creds, user/password or token, not several")
    if (section.tls_cert is None) != (section.tls_key is None):
        raise ValueError("tls_cert and tls_key go together (a client certificate and its key)")
    if section.tls_cert is not None and not uses_tls(section):
        raise ValueError("tls_cert: a client certificate needs TLS (tls_ca, or tls:// servers)")


def uses_tls(section: NatsClient) -> bool:
    return section.tls_ca is not None or any(s.startswith("tls://") for s in section.servers)


def secret_problem(path: Path, key: str) -> str | None:
    """Why a secret file (an nkey seed, a .creds, a TLS key) must not be used, in one line;
    None when it is private to this user (or absent: the connection says that)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if mode & 0o077 == 0:
        return None
    return (
        f"{key}: {path}: mode {mode & 0o777:04o} lets group or others read or write a secret; "
        f"it must be private to the daemon's user: chmod 600 {path}"
    )


def secrets_problem(section: NatsClient, where: str) -> str | None:
    """The first secret file of a section that group or others may read, in one line; None
    when each is private or absent."""
    for key in ("creds", "tls_key"):
        path = getattr(section, key)
        problem = secret_problem(path, f"{where}.{key}") if path is not None else None
        if problem:
            return problem
    return None


def _matching(pattern: re.Pattern[str], words: str) -> Check:
    def check(value: Any, context: Context) -> Any:
        value = text()(value, context)
        if not pattern.match(value):
            raise ValueError(f"{value!r}: {words}")
        return value

    return check


def _file(value: Any, context: Context) -> Any:
    """A file's path; made absolute against the config's folder by `FeedConfig.resolved`."""
    if value == "":
        raise ValueError("an empty path")
    return path(from_base=False)(value, context)


_OPTIONAL_TEXT = optional(text())
_OPTIONAL_FILE = optional(_file)


@dataclass(frozen=True)
class FeedConfig(Section):
    """The checked `[feed]` section (immutable; unknown keys are refused)."""

    servers: tuple[str, ...] = ("nats://127.0.0.1:4222",)
    stream: str = "TABLED"
    subject_prefix: str = "tabled"
    site: str | None = None
    user: str | None = None
    password: str | None = None
    token: str | None = None
    creds: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    window: int = 512
    drain_seconds: float = 5.0
    ack_timeout_seconds: float = 5.0
    connect_timeout_seconds: float = 2.0
    backoff_max_seconds: float = 10.0
    duplicate_window_seconds: float = 300.0
    max_age_days: float = 0.0
    max_bytes: int = -1
    replicas: int = 1

    CHECKS: ClassVar[dict[str, Check]] = {
        "servers": lambda value, _context: nats_servers(None, value),
        "stream": _matching(STREAM_NAME_PATTERN, "letters, digits, - and _ only"),
        "subject_prefix": _matching(
            SUBJECT_PREFIX_PATTERN, "dot-separated tokens of letters, digits, - and _"
        ),
        "site": _OPTIONAL_TEXT,
        "user": _OPTIONAL_TEXT,
        "password": _OPTIONAL_TEXT,
        "token": _OPTIONAL_TEXT,
        "creds": _OPTIONAL_FILE,
        "tls_ca": _OPTIONAL_FILE,
        "tls_cert": _OPTIONAL_FILE,
        "tls_key": _OPTIONAL_FILE,
        "window": whole(ge=1, le=65536),
        "drain_seconds": number(ge=0, le=300),
        "ack_timeout_seconds": number(gt=0, le=300),
        "connect_timeout_seconds": number(gt=0, le=60),
        "backoff_max_seconds": number(gt=0, le=3600),
        "duplicate_window_seconds": number(gt=0, le=7 * 86400),
        "max_age_days": number(ge=0),
        "max_bytes": whole(ge=-1),
        "replicas": whole(ge=1, le=5),
    }

    def after(self, context: Context) -> None:
        if (self.user is None) != (self.password is None):
            raise ValueError("user and password go together")
        auth_problem(self)

    def resolved(self, base: Path) -> FeedConfig:
        """The same section with its relative file paths made absolute against `base`."""
        changes = {}
        for key in NATS_FILES:
            path = getattr(self, key)
            if path is not None and not path.is_absolute():
                changes[key] = base / path
        return dataclasses.replace(self, **changes) if changes else self

    @property
    def uses_tls(self) -> bool:
        return uses_tls(self)

    def subject(self, table_id: str, event: str) -> str:
        return f"{self.subject_prefix}.{table_id}.{event}"

    @property
    def stream_subjects(self) -> str:
        return f"{self.subject_prefix}.>"
