"""The floor's configuration: one TOML file with `[floor]`, `[api]` and `[pits]`.

    [floor]
    servers = ["nats://127.0.0.1:4222"]   # the NATS cluster (several URLs for a cluster)
    stream = "TABLED"                     # the JetStream stream the tables ship to
    subject_prefix = "tabled"             # subjects <prefix>.<table>.<event>
    durable = "floor"                     # the durable consumer's name (one per floor)
    database = "postgresql://floor@127.0.0.1:5432/floor"
    batch = 500                           # messages fetched and committed together
    catchup_batch = 5000                  # the same while a backlog is unread (catching up)

    [api]
    listen = "127.0.0.1:8800"             # loopback unless said otherwise
    tokens_file = "floor-tokens.toml"     # `tabled token NAME pit --append floor-tokens.toml`
    allowed_hosts = ["floor.pit.example"] # names besides loopback and `listen`'s host (Host header)
    tls_cert = "floor.crt"                # TLS served by the floor itself (both or neither);
    tls_key = "floor.key"                 #   required beyond loopback unless
    plain_http_behind_proxy = false       #   a TLS-terminating proxy on this PC is in front

    [pits]
    "Pit A" = ["T01", "T02"]              # which tables the page groups and filters as a pit

Unknown keys and wrong types are refused with the key named, like the table's config: the
whole file is one pydantic model, and every mistake is said at once on one line.

`[api]` is the table's `ApiConfig` (daemon.config) with the floor's port: the same keys, checks
and error wording, and the same doors (daemon.api.doors) serve it. Only the console's
`console_idle_seconds` is not the floor's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic.dataclasses import dataclass as config_dataclass

from daemon.config import ApiConfig, ConfigError, _describe
from daemon.shipper.config import nats_servers
from daemon.tomltext import TomlRefused, read_toml

SUBJECT_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")
_STRICT = ConfigDict(extra="forbid")  # strict types per field (StrictInt, StrictStr)


@config_dataclass(frozen=True, config=_STRICT)
class FloorSection:
    servers: tuple[StrictStr, ...] = ("nats://127.0.0.1:4222",)
    stream: StrictStr = "TABLED"
    subject_prefix: StrictStr = "tabled"
    durable: StrictStr = "floor"
    database: StrictStr = "postgresql:///floor"
    batch: StrictInt = Field(default=500, ge=1, le=10_000)
    catchup_batch: StrictInt = Field(default=5000, ge=1, le=10_000)

    _servers = field_validator("servers", mode="before")(nats_servers)  # the feed's rule

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


@config_dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class FloorApi(ApiConfig):
    """The table's `[api]` (listen, tokens_file, allowed_origins, allowed_hosts, tls_cert,
    tls_key, plain_http_behind_proxy), listening on the floor's port by default. Its checks are
    the table's; `console_idle_seconds` is refused in the file (the console's, not the floor's)."""

    listen: StrictStr = "127.0.0.1:8800"


@dataclass(frozen=True)
class FloorConfig:
    """A floor's validated config (what the floor runs on)."""

    floor: FloorSection = field(default_factory=FloorSection)
    api: FloorApi = field(default_factory=FloorApi)
    pits: dict[str, str] = field(default_factory=dict)  # table id -> pit name
    source: str = "<defaults>"


@config_dataclass(frozen=True, config=_STRICT)
class _FloorFile:
    """The file's shape, validated in one pass: every mistake is reported at once."""

    floor: FloorSection = field(default_factory=FloorSection)
    api: FloorApi = field(default_factory=FloorApi)
    pits: dict[StrictStr, list[StrictStr]] = field(default_factory=dict)

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
    unknown = [key for key in data if key not in ("floor", "api", "pits")]
    if unknown:
        raise ConfigError(
            f"{source}: {', '.join(sorted(unknown))}: unknown key(s) (the file's sections: "
            "floor, api, pits)"
        )
    if "console_idle_seconds" in (data.get("api") or {}):
        raise ConfigError(
            f"{source}: api.console_idle_seconds: unknown key (the console's, not the floor's)"
        )
    try:
        file = _FLOOR.validate_python(data, context={"base": base or Path.cwd()})
    except ValidationError as exc:
        raise ConfigError(f"{source}: {'; '.join(_describe(e) for e in exc.errors())}") from None
    pits = {table: pit for pit, tables in file.pits.items() for table in tables}
    return FloorConfig(floor=file.floor, api=file.api, pits=pits, source=source)


def load_floor_config(path: Path | str | None) -> FloorConfig:
    """Read a floor config; None is every default (loopback NATS, database `floor`)."""
    if path is None:
        return FloorConfig()
    file = Path(path)
    try:
        data = read_toml(file)
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: cannot read it: {exc}") from None
    except TomlRefused as exc:
        raise ConfigError(f"{file}: {exc}") from None
    return parse_floor_config(data, source=str(file), base=file.resolve().parent)
