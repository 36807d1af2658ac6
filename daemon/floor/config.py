"""The floor's configuration: one TOML file with `[floor]`, `[api]` and `[pits]`.

    [floor]
    servers = ["nats://127.0.0.1:4222"]   # the NATS cluster (several URLs for a cluster)
    stream = "TABLED"                     # the JetStream stream the tables ship to
    subject_prefix = "tabled"             # subjects <prefix>.<table>.<event>
    durable = "floor"                     # the durable consumer's name (one per floor)
    database = "postgresql://floor@127.0.0.1:5432/floor"
    batch = 500                           # messages fetched and committed together

    [api]
    listen = "127.0.0.1:8800"             # loopback unless said otherwise
    tokens_file = "floor-tokens.toml"     # `tabled token NAME pit --append floor-tokens.toml`
    allowed_hosts = ["floor.pit.example"] # names besides loopback and `listen`'s host (Host header)
    tls_cert = "floor.crt"                # TLS served by the floor itself (both or neither);
    tls_key = "floor.key"                 #   required beyond loopback unless
    plain_http_behind_proxy = false       #   a TLS-terminating proxy on this PC is in front

    [pits]
    "Pit A" = ["T01", "T02"]              # which tables the page groups and filters as a pit

Unknown keys and wrong types are refused with the key named, like the table's config.

`[api]` is the table's `ApiConfig` (daemon.config) with the floor's port: the same keys, checks
and error wording, and the same doors (daemon.api.doors) serve it. Only the console's
`console_idle_seconds` is not the floor's.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, StrictStr, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass as config_dataclass

from daemon.config import ApiConfig, ConfigError, _describe

SUBJECT_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class FloorSection:
    servers: tuple[str, ...] = ("nats://127.0.0.1:4222",)
    stream: str = "TABLED"
    subject_prefix: str = "tabled"
    durable: str = "floor"
    database: str = "postgresql:///floor"
    batch: int = 500


@config_dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class FloorApi(ApiConfig):
    """The table's `[api]` (listen, tokens_file, allowed_origins, allowed_hosts, tls_cert,
    tls_key, plain_http_behind_proxy), listening on the floor's port by default."""

    listen: StrictStr = "127.0.0.1:8800"


_FLOOR_API = TypeAdapter(FloorApi)


@dataclass(frozen=True)
class FloorConfig:
    floor: FloorSection = field(default_factory=FloorSection)
    api: FloorApi = field(default_factory=FloorApi)
    pits: dict[str, str] = field(default_factory=dict)  # table id -> pit name
    source: str = "<defaults>"


def _take(section: dict[str, Any], key: str, kind: type, where: str, default: Any) -> Any:
    if key not in section:
        return default
    value = section.pop(key)
    if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
        raise ConfigError(f"{where}.{key}: expected {kind.__name__}, got {value!r}")
    return value


def _leftovers(section: dict[str, Any], where: str) -> None:
    if section:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(section))}")


def parse_floor_config(
    data: dict[str, Any], source: str = "<memory>", base: Path | None = None
) -> FloorConfig:
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    base = base or Path.cwd()
    raw = data.pop("floor", {})
    if not isinstance(raw, dict):
        raise ConfigError("[floor] must be a table")
    servers = _take(raw, "servers", list, "floor", ["nats://127.0.0.1:4222"])
    if not servers or not all(
        isinstance(s, str) and s.startswith(("nats://", "tls://")) for s in servers
    ):
        raise ConfigError("floor.servers: expected a list of nats:// or tls:// URLs")
    floor = FloorSection(
        servers=tuple(servers),
        stream=_take(raw, "stream", str, "floor", "TABLED"),
        subject_prefix=_take(raw, "subject_prefix", str, "floor", "tabled"),
        durable=_take(raw, "durable", str, "floor", "floor"),
        database=_take(raw, "database", str, "floor", "postgresql:///floor"),
        batch=_take(raw, "batch", int, "floor", 500),
    )
    for key in ("stream", "subject_prefix", "durable"):
        if not SUBJECT_TOKEN.match(getattr(floor, key)):
            raise ConfigError(f"floor.{key}: letters, digits, _ and - only")
    if not floor.database.startswith(("postgresql://", "postgres://")):
        raise ConfigError("floor.database: expected a postgresql:// URL")
    if not 1 <= floor.batch <= 10_000:
        raise ConfigError(f"floor.batch: {floor.batch} is outside 1..10000")
    _leftovers(raw, "floor")

    api_raw = data.pop("api", {})
    if not isinstance(api_raw, dict):
        raise ConfigError("[api] must be a table")
    if "console_idle_seconds" in api_raw:
        raise ConfigError("api.console_idle_seconds: unknown key (the console's, not the floor's)")
    try:
        api = _FLOOR_API.validate_python(api_raw, context={"base": base})
    except ValidationError as exc:
        problems = [_describe({**e, "loc": ("api", *e["loc"])}) for e in exc.errors()]
        raise ConfigError("; ".join(problems)) from None

    pits_raw = data.pop("pits", {})
    if not isinstance(pits_raw, dict):
        raise ConfigError("[pits] must be a table of pit = [table ids]")
    pits: dict[str, str] = {}
    for pit, tables in pits_raw.items():
        if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
            raise ConfigError(f"pits.{pit}: expected a list of table ids")
        for table in tables:
            if table in pits:
                raise ConfigError(f"pits.{pit}: {table} is already in pit {pits[table]!r}")
            pits[table] = pit
    _leftovers(data, "config")
    return FloorConfig(floor=floor, api=api, pits=pits, source=source)


def load_floor_config(path: Path | str | None) -> FloorConfig:
    """Read a floor config; None is every default (loopback NATS, database `floor`)."""
    if path is None:
        return FloorConfig()
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such config file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    return parse_floor_config(data, source=str(file), base=file.resolve().parent)
