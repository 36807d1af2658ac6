"""The floor's configuration: one TOML file with `[floor]`, `[api]` and `[pits]`.

    [floor]
    servers = ["nats://127.0.0.1:4222"]   # the NATS cluster (several URLs for a cluster)
    stream = "TABLED"                     # the JetStream stream the tables ship to
    subject_prefix = "tabled"             # subjects <prefix>.<table>.<event>
    durable = "floor"                     # the durable consumer's name (one per floor)
    database = "postgresql://floor@127.0.0.1:5432/floor"
    batch = 500                           # messages fetched and committed together
    catchup_batch = 5000                  # the same while a backlog is unread (catching up)
    live = true                           # a live view of new lines beside the history
                                          #   (tiles and alerts current while it catches up)
    provisional_hide_seconds = 10         # the page hides what the live view showed that no
                                          #   signed head has proven after this long
    replicas = 1                          # the stream's, if the floor creates it (3: cluster)
    retention_months = 3                  # raw lines kept in the database; older months may be
                                          #   archived to files (`tabled floor archive`)
    creds = "floor.nk"                    # the floor's nkey seed (`tabled floor nkey`) or a
                                          #   NATS .creds file; or user + password, or token
    tls_ca = "nats-ca.pem"                # TLS: the broker's CA; tls_cert + tls_key for a
                                          #   client certificate (optional)

    [api]
    listen = "127.0.0.1:8800"             # loopback unless said otherwise
    tokens_file = "floor-tokens.toml"     # `tabled token NAME pit --append floor-tokens.toml`
    allowed_hosts = ["floor.pit.example"] # names besides loopback and `listen`'s host (Host header)
    tls_cert = "floor.crt"                # TLS served by the floor itself (both or neither);
    tls_key = "floor.key"                 #   required beyond loopback unless
    plain_http_behind_proxy = false       #   a TLS-terminating proxy on this PC is in front

    [pits]
    "Pit A" = ["T01", "T02"]              # which tables the page groups and filters as a pit

    [integrity]                           # the floor's integrity update (docs/integrity.md)
    period_seconds = 3600                 # a pass over each table's new lines; 0: none
    misread_limit = 1000                  # the shoe reader's accepted misreads: 1 card in N

Unknown keys and wrong types are refused with the key named, like the table's config: the
whole file is one pydantic dataclass (daemon/configfile.py, the validator of every config file),
and every mistake is said at once on one line.

`[api]` is the table's `ApiConfig` (daemon.config) with the floor's port: the same keys, checks
and error wording, and the same doors (daemon.api.doors) serve it. Only the console's
`console_idle_seconds` is not the floor's.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass as config_dataclass

from daemon.config import ApiConfig
from daemon.configfile import SECTION, ConfigError, Number, Where, read, refused, unknown_sections
from daemon.shipper.config import NATS_FILES, auth_problem, nats_servers

SUBJECT_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")


@config_dataclass(frozen=True, config=SECTION)
class FloorSection:
    servers: tuple[StrictStr, ...] = ("nats://127.0.0.1:4222",)
    stream: StrictStr = "TABLED"
    subject_prefix: StrictStr = "tabled"
    durable: StrictStr = "floor"
    database: StrictStr = "postgresql:///floor"
    batch: StrictInt = Field(default=500, ge=1, le=10_000)
    catchup_batch: StrictInt = Field(default=5000, ge=1, le=10_000)
    # The live view (daemon/floor/live.py): a second consumer, new lines only, that keeps the
    # tiles and alerts current while the history catches up. false: the history alone.
    live: StrictBool = True
    # The page hides a provisional tile, violation, fault or override (the live view's, not yet
    # stored: no signed head has proven its line) still unproven after this many seconds.
    provisional_hide_seconds: Number = Field(default=10.0, ge=1, le=3600)
    # The replicas of the stream when the floor creates it (3 on a three-node cluster).
    replicas: StrictInt = Field(default=1, ge=1, le=5)
    # Months of raw lines kept in the database: a month wholly older may be archived to a file
    # (`tabled floor archive`, docs/floor-service.md "Retention and archives").
    retention_months: StrictInt = Field(default=3, ge=1, le=1200)
    # The floor's identity on the broker and its TLS: the [feed]'s keys, the same checks.
    user: StrictStr | None = None
    password: StrictStr | None = None
    token: StrictStr | None = None
    creds: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None

    _servers = field_validator("servers", mode="before")(nats_servers)  # the feed's rule

    @field_validator(*NATS_FILES, mode="before")
    @classmethod
    def _file(cls, value: Any) -> Any:
        if value is None or isinstance(value, Path):
            return value
        if not isinstance(value, str) or value == "":
            raise ValueError(f"expected a file's path, got {value!r}")
        return value

    @model_validator(mode="after")
    def _auth(self) -> FloorSection:
        auth_problem(self)
        return self

    def resolved(self, base: Path) -> FloorSection:
        """The same section with its relative file paths made absolute against `base`."""
        changes = {
            key: base / getattr(self, key)
            for key in NATS_FILES
            if getattr(self, key) is not None and not getattr(self, key).is_absolute()
        }
        return replace(self, **changes) if changes else self

    @field_validator("stream", "subject_prefix", "durable")
    @classmethod
    def _token(cls, value: str) -> str:
        if not SUBJECT_TOKEN.match(value):
            raise ValueError(f"{value!r}: letters, digits, _ and - only")
        return value

    @field_validator("database")
    @classmethod
    def _database(cls, value: str) -> str:
        if not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("expected a postgresql:// URL")
        return value


@config_dataclass(frozen=True, config=SECTION)
class FloorApi(ApiConfig):
    """The table's `[api]` (listen, tokens_file, allowed_origins, allowed_hosts, tls_cert,
    tls_key, plain_http_behind_proxy), listening on the floor's port by default. Its checks are
    the table's; `console_idle_seconds` is refused in the file (the console's, not the floor's)."""

    listen: StrictStr = "127.0.0.1:8800"


@config_dataclass(frozen=True, config=SECTION)
class IntegritySection:
    """The floor's integrity update: every `period_seconds` a pass over each table's lines
    since the last (daemon/floor/integrity.py); it raises the dice_bias, shuffle_bias,
    reader_misreads and hold_outlier alerts. 0 turns it off."""

    period_seconds: Number = Field(default=3600.0, ge=0, le=86_400)
    misread_limit: StrictInt = Field(default=1000, ge=1)


@dataclass(frozen=True)
class FloorConfig:
    """A floor's validated config (what the floor runs on)."""

    floor: FloorSection = field(default_factory=FloorSection)
    api: FloorApi = field(default_factory=FloorApi)
    pits: dict[str, str] = field(default_factory=dict)  # table id -> pit name
    integrity: IntegritySection = field(default_factory=IntegritySection)
    source: str = "<defaults>"


@config_dataclass(frozen=True, config=SECTION)
class _FloorFile:
    """The file's shape, validated in one pass: every mistake is reported at once."""

    floor: FloorSection = field(default_factory=FloorSection)
    api: FloorApi = field(default_factory=FloorApi)
    pits: dict[StrictStr, list[StrictStr]] = field(default_factory=dict)
    integrity: IntegritySection = field(default_factory=IntegritySection)

    @field_validator("floor")
    @classmethod
    def _floor_paths(cls, value: FloorSection, info: ValidationInfo) -> FloorSection:
        # The credentials and TLS files are relative to the floor file's folder.
        base = (info.context or {}).get("base")
        return value.resolved(Path(base)) if base is not None else value

    @field_validator("api")
    @classmethod
    def _api_paths(cls, value: FloorApi, info: ValidationInfo) -> FloorApi:
        # The token and TLS files are relative to the floor file's folder, as the table's are.
        base = (info.context or {}).get("base")
        return value.resolved(Path(base)) if base is not None else value

    @field_validator("pits")
    @classmethod
    def _each_table_once(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for pit, tables in value.items():
            for table in tables:
                if table in seen:
                    raise ValueError(f"{pit}: {table} is already in pit {seen[table]!r}")
                seen[table] = pit
        return value


_FLOOR = TypeAdapter(_FloorFile)


def parse_floor_config(
    data: dict[str, Any], source: str = "<memory>", base: Path | None = None
) -> FloorConfig:
    """Validate a parsed floor file. Relative paths resolve against `base` (the file's folder)."""
    unknown = unknown_sections(data, ("floor", "api", "pits", "integrity"))
    if unknown:
        raise ConfigError(f"{source}: {'; '.join(unknown)}")
    if "console_idle_seconds" in (data.get("api") or {}):
        raise ConfigError(
            f"{source}: api.console_idle_seconds: unknown key (the console's, not the floor's)"
        )
    try:
        file = _FLOOR.validate_python(data, context={"base": base or Path.cwd()})
    except ValidationError as exc:
        raise refused(source, exc, _keys) from None
    pits = {table: pit for pit, tables in file.pits.items() for table in tables}
    return FloorConfig(
        floor=file.floor, api=file.api, pits=pits, integrity=file.integrity, source=source
    )


def _keys(place: Where) -> list[str]:
    """The keys a section of the floor's file takes (for an unknown key's "did you mean")."""
    section = {"floor": FloorSection, "api": FloorApi, "integrity": IntegritySection}.get(
        str(place[0]) if place else ""
    )
    if section is None:
        return []
    names = [f.name for f in dataclasses.fields(section)]
    return [name for name in names if name != "console_idle_seconds"]


def load_floor_config(path: Path | str | None) -> FloorConfig:
    """Read a floor config; None is every default (loopback NATS, database `floor`)."""
    if path is None:
        return FloorConfig()
    file = Path(path)
    data = read(file)
    return parse_floor_config(data, source=str(file), base=file.resolve().parent)
