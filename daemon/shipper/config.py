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
from pathlib import Path
from typing import Annotated, Any, Protocol, Self

from pydantic import Field, StrictStr, field_validator, model_validator
from pydantic.dataclasses import dataclass

from daemon.configfile import SECTION, Number, Whole

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


def nats_file(cls: Any, value: Any) -> Any:
    """A NATS client's credentials or TLS file (text in the file, a Path in code); made
    absolute against the config's folder by `resolved`."""
    if value == "":
        raise ValueError("an empty path")
    return value


def _token(pattern: re.Pattern[str], words: str) -> Any:
    def check(cls: Any, value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{value!r}: {words}")
        return value

    return check


@dataclass(frozen=True, config=SECTION)
class FeedConfig:
    """The checked `[feed]` section (immutable; unknown keys are refused)."""

    servers: tuple[StrictStr, ...] = ("nats://127.0.0.1:4222",)
    stream: StrictStr = "TABLED"
    subject_prefix: StrictStr = "tabled"
    site: StrictStr | None = None
    user: StrictStr | None = None
    password: StrictStr | None = None
    token: StrictStr | None = None
    creds: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    window: Annotated[Whole, Field(ge=1, le=65536)] = 512
    drain_seconds: Annotated[Number, Field(ge=0, le=300)] = 5.0
    ack_timeout_seconds: Annotated[Number, Field(gt=0, le=300)] = 5.0
    connect_timeout_seconds: Annotated[Number, Field(gt=0, le=60)] = 2.0
    backoff_max_seconds: Annotated[Number, Field(gt=0, le=3600)] = 10.0
    duplicate_window_seconds: Annotated[Number, Field(gt=0, le=7 * 86400)] = 300.0
    max_age_days: Annotated[Number, Field(ge=0)] = 0.0
    max_bytes: Annotated[Whole, Field(ge=-1)] = -1
    replicas: Annotated[Whole, Field(ge=1, le=5)] = 1

    _servers = field_validator("servers", mode="before")(nats_servers)
    _files = field_validator(*NATS_FILES, mode="before")(nats_file)
    _stream = field_validator("stream")(
        _token(STREAM_NAME_PATTERN, "letters, digits, - and _ only")
    )
    _prefix = field_validator("subject_prefix")(
        _token(SUBJECT_PREFIX_PATTERN, "dot-separated tokens of letters, digits, - and _")
    )

    @model_validator(mode="after")
    def _auth(self) -> Self:
        auth_problem(self)
        return self

    def resolved(self, base: Path) -> Self:
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
