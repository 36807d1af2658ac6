"""The table's configuration: one TOML file, `config/table.toml` by default.

`load_config(None)` reads the embedded default (every device simulated); a path reads that file.
Unknown keys and wrong types are refused with a message naming the key, so a typo in a table PC's
config stops the daemon at start-up instead of silently running with a default.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEVICE_NAMES = ("shuffler", "dice_shaker", "shoe_reader", "timer_bell")
BAUDRATES = (9600, 19200, 38400, 57600, 115200)  # the range the devices' RS-232 links use
GAMES = ("thirteen", "paigow")
# A DNS name or an IP address (IPv6 with or without brackets), no scheme, port or path.
_HOST_NAME = re.compile(
    r"^(\[[0-9A-Fa-f:.]+\]"  # [IPv6]
    r"|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"  # IPv6
    r"|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)$"  # a DNS name or IPv4
)


class ConfigError(ValueError):
    """The configuration file is missing, malformed or names something unknown."""


@dataclass(frozen=True)
class ApprovedFirmware:
    """One device build the casino has approved: the identity a device must report to be used."""

    make: str
    model: str
    firmware: str
    firmware_hash: str


@dataclass(frozen=True)
class DeviceConfig:
    name: str
    port: str
    baudrate: int = 115200
    address: int = 1
    enabled: bool = True
    approved: tuple[ApprovedFirmware, ...] = ()


@dataclass(frozen=True)
class JournalConfig:
    dir: Path = Path("var/journal")
    # "fsync": every commit point is on disk before it is acknowledged (the only setting for a
    # live table). "none": no fsync, for simulation and benchmarks only.
    durability: str = "fsync"
    rotate_bytes: int = 64 * 1024 * 1024
    rotate_daily: bool = True


@dataclass(frozen=True)
class ApiConfig:
    listen: str = "127.0.0.1:8700"
    tokens_file: Path | None = None
    # Browser origins besides the console's own that may open the push feed, e.g. a
    # surveillance page on another host: "https://surveillance.example".
    allowed_origins: tuple[str, ...] = ()
    # Names besides the loopback ones and `listen`'s host that the API answers to (its Host
    # header), e.g. "table07.pit.casino.example"; any other name is refused (DNS rebinding).
    allowed_hosts: tuple[str, ...] = ()
    # TLS served by the daemon itself (PEM files); required to listen beyond loopback unless
    # `plain_http_behind_proxy` says a TLS-terminating proxy on the PC is in front.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    plain_http_behind_proxy: bool = False
    # The console signs its person out after this long without a touch or a key: longer than
    # the five-minute arrangement, so a dealer waiting on the players is not signed out at the bell.
    console_idle_seconds: int = 600


@dataclass(frozen=True)
class TableConfig:
    table_id: str = "T01"
    game: str = "thirteen"
    ruleset: str = "macau-1989"
    paigow_hands: int = 8
    devices: dict[str, DeviceConfig] = field(default_factory=dict)
    journal: JournalConfig = field(default_factory=JournalConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    source: str = "<defaults>"


def default_config_path() -> Path:
    """The embedded default: packaged as `daemon/_config/table.toml`, else the source tree's."""
    packaged = Path(__file__).parent / "_config" / "table.toml"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parent.parent / "config" / "table.toml"


def _take(section: dict[str, Any], key: str, kind: type, where: str, default: Any) -> Any:
    if key not in section:
        return default
    value = section.pop(key)
    if kind is int and isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected an integer, got {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"{where}.{key}: expected {kind.__name__}, got {value!r}")
    return value


def _no_leftovers(section: dict[str, Any], where: str) -> None:
    if section:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(section))}")


def _approved(items: Any, where: str) -> tuple[ApprovedFirmware, ...]:
    if not isinstance(items, list):
        raise ConfigError(f"{where}.approved: expected a list of tables")
    out = []
    for i, raw in enumerate(items):
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}.approved[{i}]: expected a table")
        item = dict(raw)
        w = f"{where}.approved[{i}]"
        entry = ApprovedFirmware(
            make=_take(item, "make", str, w, ""),
            model=_take(item, "model", str, w, ""),
            firmware=_take(item, "firmware", str, w, ""),
            firmware_hash=_take(item, "firmware_hash", str, w, ""),
        )
        _no_leftovers(item, w)
        out.append(entry)
    return tuple(out)


def _device(name: str, raw: Any) -> DeviceConfig:
    where = f"devices.{name}"
    if name not in DEVICE_NAMES:
        raise ConfigError(f"{where}: unknown device (known: {', '.join(DEVICE_NAMES)})")
    if not isinstance(raw, dict):
        raise ConfigError(f"[{where}] must be a table")
    section = dict(raw)
    port = _take(section, "port", str, where, None)
    if not port:
        raise ConfigError(f"{where}.port: required (a pyserial URL or a device path)")
    if port.startswith("sim://"):
        simulated = port.removeprefix("sim://").partition("?")[0]
        if simulated != name:
            raise ConfigError(f"{where}.port: {port!r} simulates a {simulated}, not a {name}")
    baudrate = _take(section, "baudrate", int, where, 115200)
    if baudrate not in BAUDRATES:
        raise ConfigError(
            f"{where}.baudrate: {baudrate} is not one of {', '.join(map(str, BAUDRATES))}"
        )
    address = _take(section, "address", int, where, 1)
    if not 1 <= address <= 127:
        raise ConfigError(f"{where}.address: {address} is outside 1..127 (the frame's ADDR)")
    device = DeviceConfig(
        name=name,
        port=port,
        baudrate=baudrate,
        address=address,
        enabled=_take(section, "enabled", bool, where, True),
        approved=_approved(section.pop("approved", []), where),
    )
    _no_leftovers(section, where)
    return device


def parse_config(
    data: dict[str, Any], source: str = "<memory>", base: Path | None = None
) -> TableConfig:
    """Build a TableConfig from parsed TOML. Relative paths resolve against `base` (the cwd)."""
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in data.items()}
    table = data.pop("table", {})
    if not isinstance(table, dict):
        raise ConfigError("[table] must be a table")
    table_id = _take(table, "id", str, "table", "T01")
    game = _take(table, "game", str, "table", "thirteen")
    if game not in GAMES:
        raise ConfigError(f"table.game: {game!r} is not one of {', '.join(GAMES)}")
    default_ruleset = "macau-1989" if game == "thirteen" else "macau-1990"
    ruleset = _take(table, "ruleset", str, "table", default_ruleset)
    paigow_hands = _take(table, "paigow_hands", int, "table", 8)
    if paigow_hands not in (4, 8):
        raise ConfigError(f"table.paigow_hands: {paigow_hands} (Art. 2(4) allows 8 or 4)")
    _no_leftovers(table, "table")

    devices_raw = data.pop("devices", {})
    if not isinstance(devices_raw, dict):
        raise ConfigError("[devices] must be a table")
    devices = {name: _device(name, raw) for name, raw in devices_raw.items()}

    base = base or Path.cwd()
    journal_raw = data.pop("journal", {})
    jdir = Path(_take(journal_raw, "dir", str, "journal", "var/journal"))
    durability = _take(journal_raw, "durability", str, "journal", "fsync")
    if durability not in ("fsync", "none"):
        raise ConfigError(f"journal.durability: {durability!r} is not 'fsync' or 'none'")
    journal = JournalConfig(
        dir=jdir if jdir.is_absolute() else base / jdir,
        durability=durability,
        rotate_bytes=_take(journal_raw, "rotate_bytes", int, "journal", 64 * 1024 * 1024),
        rotate_daily=_take(journal_raw, "rotate_daily", bool, "journal", True),
    )
    _no_leftovers(journal_raw, "journal")

    api_raw = data.pop("api", {})
    tokens = _take(api_raw, "tokens_file", str, "api", None)
    origins = _take(api_raw, "allowed_origins", list, "api", [])
    bad = [
        o for o in origins if not isinstance(o, str) or not o.startswith(("http://", "https://"))
    ]
    if bad:
        raise ConfigError(f"api.allowed_origins: {bad[0]!r} is not an http(s):// origin")
    hosts = _take(api_raw, "allowed_hosts", list, "api", [])
    bad = [h for h in hosts if not isinstance(h, str) or not _HOST_NAME.match(h)]
    if bad:
        raise ConfigError(f"api.allowed_hosts: {bad[0]!r} is not a host name or IP address")
    tls_cert = _take(api_raw, "tls_cert", str, "api", None)
    tls_key = _take(api_raw, "tls_key", str, "api", None)
    if (tls_cert is None) != (tls_key is None):
        raise ConfigError("api.tls_cert and api.tls_key: set both or neither")
    idle = _take(api_raw, "console_idle_seconds", int, "api", 600)
    if not 1 <= idle <= 86400:
        raise ConfigError(f"api.console_idle_seconds: {idle} is outside 1..86400")
    api = ApiConfig(
        allowed_origins=tuple(o.rstrip("/") for o in origins),
        listen=_take(api_raw, "listen", str, "api", "127.0.0.1:8700"),
        tokens_file=None if tokens is None else base / tokens,
        allowed_hosts=tuple(h.lower().strip("[]") for h in hosts),
        tls_cert=None if tls_cert is None else base / tls_cert,
        tls_key=None if tls_key is None else base / tls_key,
        plain_http_behind_proxy=_take(api_raw, "plain_http_behind_proxy", bool, "api", False),
        console_idle_seconds=idle,
    )
    _no_leftovers(api_raw, "api")
    _no_leftovers(data, "config")
    return TableConfig(
        table_id=table_id,
        game=game,
        ruleset=ruleset,
        paigow_hands=paigow_hands,
        devices=devices,
        journal=journal,
        api=api,
        source=source,
    )


def load_config(path: Path | str | None = None) -> TableConfig:
    """Read a config file; None reads the embedded default."""
    file = default_config_path() if path is None else Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such config file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    return parse_config(data, source=str(file))
