"""The table's configuration: one TOML file, `config/table.toml` by default.

`load_config(None)` reads the embedded default (every device simulated); a path reads that file.
The file is checked by pydantic against the dataclasses below (daemon/configfile.py: one
validator for every config file): a wrong type, an unknown key, a value out of range, a rule set
the game does not have or a missing device the game's regulation names is a `ConfigError` of one
line naming the key (``table.ruleset: ...``), so a typo in a table PC's config stops the daemon
at start-up instead of running with a default, and `load_config` refuses everything `tabled run`
would refuse.

Each section of the file is a field of `TableConfig` of the same name, except ``[table]``, whose
keys are `TableConfig`'s own (``id`` is `table_id`). A new section is one new field, e.g.
``feed: FeedConfig | None = None`` with `FeedConfig` a pydantic dataclass: `[feed]` is then
read, checked and refused like the others. Built in code, a section checks what it is given too
(a relative path stays as given there).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Self

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
from pydantic.dataclasses import dataclass

from daemon.configfile import (
    SECTION,
    ConfigError,
    Name,
    Where,
    read,
    refused,
    relative_to_base,
    unknown_key,
    unknown_sections,
)
from daemon.rules.paigow import RULESETS as PAIGOW_RULESETS
from daemon.rules.thirteen import RULESETS as THIRTEEN_RULESETS
from daemon.rules.thirteen import RulesError, ruleset
from daemon.shipper.config import TOKEN_PATTERN, FeedConfig
from drivers import kinds as device_kinds
from drivers.transport import real_line

__all__ = ["ConfigError"]  # raised by load_config; defined with the other files' (configfile)

DEVICE_NAMES = device_kinds.ROLES  # a device's name is its role at the table
BAUDRATES = device_kinds.BAUDRATES  # the range the devices' RS-232 links use
GAMES = ("thirteen", "paigow")
# A DNS name or an IP address (IPv6 with or without brackets), no scheme, port or path.
_HOST_NAME = re.compile(
    r"^(\[[0-9A-Fa-f:.]+\]"  # [IPv6]
    r"|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"  # IPv6
    r"|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)$"  # a DNS name or IPv4
)
# The equipment each game's regulation names (Thirteen Art. 1: shuffler, shoe, dice; Pai Gow:
# the dice): a table without one of them enabled does not start.
REQUIRED_DEVICES = {
    "thirteen": ("shuffler", "shoe_reader", "dice_shaker"),
    "paigow": ("dice_shaker",),
}
DEFAULT_RULESETS = {"thirteen": "macau-1989", "paigow": "macau-1990"}


def parse_listen(listen: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:8700` for IPv6) -> (host, port); ValueError naming what is wrong."""
    host, sep, port_text = listen.rpartition(":")
    if not sep or not host:
        raise ValueError(f"listen address {listen!r}: expected HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"listen address {listen!r}: port must be 0-65535")
    return host, int(port_text)


@dataclass(frozen=True, config=SECTION)
class ApprovedFirmware:
    """One device build the casino has approved: the identity a device must report to be used."""

    make: Name
    model: Name
    firmware: Name
    # The hex SHA-256 the device reports, as the drivers compare it ("sha256:..." never matches).
    firmware_hash: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


@dataclass(frozen=True, config=SECTION)
class DeviceConfig:
    """`[devices.NAME]`: the table's device NAME (its role: the shuffler, the shoe reader...),
    the kind of device that fills it (drivers.kinds: a built-in kind is named after its role;
    a plug-in's kind is named by `kind = "..."`), its port and the builds approved for it."""

    name: Literal["shuffler", "dice_shaker", "shoe_reader", "timer_bell"]
    port: Name  # a pyserial URL or a device path
    baudrate: Literal[9600, 19200, 38400, 57600, 115200] = 115200
    address: StrictInt = 1
    enabled: StrictBool = True
    approved: tuple[ApprovedFirmware, ...] = ()
    kind: StrictStr = ""  # "": the built-in kind of the device's name
    options: dict[StrictStr, Any] = dataclasses.field(default_factory=dict)  # the kind's own
    # A plug-in's kind: the digest of the package the casino approved (drivers.kinds.
    # package_digest; `tabled devices --kinds` shows the installed one's). Checked before
    # anything of the package is imported.
    package_sha256: Annotated[StrictStr, Field(pattern=r"^([0-9a-f]{64})?$")] = ""

    @field_validator("address")
    @classmethod
    def _address(cls, value: int) -> int:
        if not 1 <= value <= 127:
            raise ValueError(f"{value} is outside 1..127 (the frame's ADDR)")
        return value

    @model_validator(mode="after")
    def _a_kind_that_fills_this_role(self) -> Self:
        if not self.kind:
            object.__setattr__(self, "kind", self.name)
        problem = device_kinds.package_problem(self.kind, self.package_sha256)
        if problem is not None:
            raise ValueError(problem)
        try:
            kind = device_kinds.find(self.kind)
        except LookupError as exc:
            raise ValueError(f"kind: {exc}") from None
        if kind.role != self.name:
            raise ValueError(
                f"kind: a {self.kind} ({kind.origin}) is a {kind.role}, not a {self.name}"
            )
        if self.baudrate not in kind.baudrates:
            speeds = ", ".join(map(str, kind.baudrates))
            raise ValueError(f"baudrate: a {self.kind} runs at {speeds}, not {self.baudrate}")
        for key, value in self.options.items():
            kind.check_option(key, value)
        if self.port.startswith("sim://"):
            simulated = self.port.removeprefix("sim://").partition("?")[0]
            if simulated != self.kind:
                raise ValueError(f"port {self.port!r} simulates a {simulated}, not a {self.kind}")
        return self


@dataclass(frozen=True, config=SECTION)
class JournalConfig:
    dir: Path = Path("var/journal")
    # "fsync": every commit point is on disk before it is acknowledged (the only setting for a
    # live table). "none": no fsync, for simulation and benchmarks only.
    durability: Literal["fsync", "none"] = "fsync"
    rotate_bytes: Annotated[StrictInt, Field(gt=0)] = 64 * 1024 * 1024
    rotate_daily: StrictBool = True

    # A relative path in a file resolves against the working directory.
    _dir = field_validator("dir")(relative_to_base)


@dataclass(frozen=True, config=SECTION)
class ApiConfig:
    listen: StrictStr = "127.0.0.1:8700"
    tokens_file: Path | None = None
    # Browser origins besides the console's own that may open the push feed, e.g. a
    # surveillance page on another host: "https://surveillance.example".
    allowed_origins: tuple[StrictStr, ...] = ()
    # Names besides the loopback ones and `listen`'s host that the API answers to (its Host
    # header), e.g. "table07.pit.casino.example"; any other name is refused (DNS rebinding).
    # Lower case, an IPv6 address without its brackets; no scheme, no port.
    allowed_hosts: tuple[StrictStr, ...] = ()
    # TLS served by the daemon itself (PEM files, both or neither); required to listen beyond
    # loopback unless `plain_http_behind_proxy` says a TLS-terminating proxy on the PC is in front.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    plain_http_behind_proxy: StrictBool = False
    # The console signs its person out after this long without a touch or a key: longer than
    # the five-minute arrangement, so a dealer waiting on the players is not signed out at the bell.
    console_idle_seconds: StrictInt = 600
    # The user `tabled run` starts its API process as when it runs as root (daemon.api.user):
    # unprivileged, and with no access to the journal's folder for writing nor to the tokens or
    # key files for reading. Not root's; it must exist (`useradd --system tabled-api`). A POSIX
    # user name (useradd's): lower case, digits, '_' and '-'.
    user: Annotated[StrictStr, Field(pattern=r"^[a-z_][a-z0-9_-]{0,31}$")] = "tabled-api"

    _files = field_validator("tokens_file", "tls_cert", "tls_key")(relative_to_base)

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        parse_listen(value)
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            if not origin.startswith(("http://", "https://")):
                raise ValueError(f"{origin!r} is not an http(s):// origin")
        return tuple(origin.rstrip("/") for origin in value)

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for host in value:
            if not _HOST_NAME.match(host):
                raise ValueError(f"{host!r} is not a host name or IP address (no scheme, no port)")
        return tuple(host.lower().strip("[]") for host in value)

    @field_validator("console_idle_seconds")
    @classmethod
    def _idle(cls, value: int) -> int:
        if not 1 <= value <= 86400:
            raise ValueError(f"{value} is outside 1..86400")
        return value

    @model_validator(mode="after")
    def _tls_pair(self) -> Self:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert: set both tls_cert and tls_key, or neither")
        return self

    def resolved(self, base: Path) -> Self:
        """The same section with its relative file paths made absolute against `base`."""
        changes = {
            key: base / value
            for key in ("tokens_file", "tls_cert", "tls_key")
            if (value := getattr(self, key)) is not None and not value.is_absolute()
        }
        return dataclasses.replace(self, **changes) if changes else self


def _rulesets(game: str) -> dict[str, str]:
    """The rule sets a table of `game` can play, by name, with how each scores: every Thirteen
    one is played at the table, against the banker or each seat against each (hk-points,
    hk-four)."""
    if game == "thirteen":
        return {name: rules.scoring for name, rules in THIRTEEN_RULESETS.items()}
    return {name: "banker" for name in PAIGOW_RULESETS}


@dataclass(frozen=True, config=SECTION)
class TableConfig:
    table_id: StrictStr = "T01"
    game: Literal["thirteen", "paigow"] = "thirteen"
    ruleset: StrictStr = "macau-1989"
    paigow_hands: StrictInt = 8
    # Bets in table units (Thirteen Art. 11 「一注、二注或三注」; docs/rules.md): the money of one
    # unit, its currency (ISO 4217, shown by the console), and the table's minimum and maximum
    # bet in that money (the house's; none set: one unit, and no maximum but the rule set's).
    unit: StrictInt = 100
    currency: StrictStr = "MOP"
    min_bet: StrictInt | None = None
    max_bet: StrictInt | None = None
    # Thirteen, where houses could differ (docs/procedures.md): who shakes when the highest
    # bettor is standing (Art. 2(b) 「投注额最高的闲家」).
    shaker: Literal["seated-first", "highest"] = "seated-first"
    # Thirteen: whether the five minutes of Art. 2(d) run on while the table is held.
    timer_in_hold: Literal["paused", "running"] = "paused"
    devices: dict[str, DeviceConfig] = dataclasses.field(default_factory=dict)
    journal: JournalConfig = dataclasses.field(default_factory=JournalConfig)
    api: ApiConfig = dataclasses.field(default_factory=ApiConfig)
    feed: FeedConfig | None = None  # [feed]: ship the journal to NATS JetStream (docs/floor.md)
    # The table's Ed25519 signing key (`tabled keys init`, docs/security.md); unset: `table.key`
    # beside the tokens file. A table with a [feed] does not start without it.
    key_file: Path | None = None
    # [rules]: the rule set's settings changed, e.g. `equal_rows_foul = false`, `stakes = "pot"`
    # (Thirteen; the fields of daemon.rules.thirteen.RuleSet, docs/rules.md).
    rules: dict[StrictStr, Any] = dataclasses.field(default_factory=dict)
    source: str = "<defaults>"

    _key_file = field_validator("key_file")(relative_to_base)

    @field_validator("feed")
    @classmethod
    def _feed_paths(cls, value: FeedConfig | None, info: ValidationInfo) -> FeedConfig | None:
        # The credentials and TLS files are relative to the folder the config is read from.
        base = info.context.get("base") if isinstance(info.context, dict) else None
        return value.resolved(Path(base)) if value is not None and base is not None else value

    @field_validator("table_id")
    @classmethod
    def _table_id(cls, value: str) -> str:
        # It names the journal's lines and the files an auditor reads: no spaces, no slashes.
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", value):
            raise ValueError(
                f"{value!r}: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        return value

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Z]{3}", value):
            raise ValueError(f"{value!r} is not an ISO 4217 code (three capital letters: MOP)")
        return value

    @field_validator("devices", mode="before")
    @classmethod
    def _device_names(cls, value: Any) -> Any:
        # A device's name is its key: `[devices.shuffler]` is the shuffler.
        if not isinstance(value, dict):
            return value
        named: dict[Any, Any] = {}
        for key, device in value.items():
            if key not in DEVICE_NAMES:
                said = unknown_key(key, DEVICE_NAMES, "device")
                raise ValueError(f"{key}: {said} (known: {', '.join(DEVICE_NAMES)})")
            if isinstance(device, dict):
                if "name" in device:
                    raise ValueError(f"{key}.name: unknown key (the name is the section's)")
                named[key] = {"name": key, **device}
            else:
                named[key] = device
        return named

    @model_validator(mode="after")
    def _a_table_this_game_can_run(self, info: ValidationInfo) -> Self:
        if self.paigow_hands not in (4, 8):
            raise ValueError(f"table.paigow_hands: {self.paigow_hands} (Art. 2(4) allows 8 or 4)")
        known = _rulesets(self.game)
        if self.ruleset not in known:
            raise ValueError(
                f"table.ruleset: {self.ruleset!r} is not a {self.game} rule set "
                f"(known: {', '.join(known)})"
            )
        _check_stakes(self)
        _check_rules(self)
        enabled = {name for name, device in self.devices.items() if device.enabled}
        partial = isinstance(info.context, dict) and info.context.get("partial", False)
        if partial and not enabled:
            raise ValueError("devices: no [devices.NAME] section is enabled")
        missing = [name for name in REQUIRED_DEVICES[self.game] if name not in enabled]
        if missing and not partial:
            sections = ", ".join(f"[devices.{name}]" for name in missing)
            raise ValueError(f"devices: a {self.game} table needs {sections}, enabled")
        # A live table takes no build unchecked; `tabled devices` (partial) probes the line
        # to learn the build to approve.
        live = self.journal.durability == "fsync" and not partial
        for name, device in sorted(self.devices.items()):
            if live and device.enabled and not device.approved and real_line(device.port):
                raise ValueError(
                    f'devices.{name}.approved: a live table (journal durability "fsync") '
                    f"takes a device on a real line ({device.port}) only if its build is "
                    f"approved: list the approved builds ([[devices.{name}.approved]]; "
                    "`tabled devices` shows what is on the line)"
                )
        if self.feed is not None and not TOKEN_PATTERN.match(self.table_id):
            raise ValueError(
                f"table.id: {self.table_id!r} cannot be a NATS subject token "
                "(letters, digits, - and _), and [feed] names the subjects after it"
            )
        return self

    def signing_key_path(self) -> Path:
        """Where the table's signing key is: `[table] key_file`, else `table.key` beside the
        tokens file (`var/table.key` without one)."""
        if self.key_file is not None:
            return self.key_file
        tokens = self.api.tokens_file
        return (tokens.parent if tokens is not None else Path("var")) / "table.key"


def _check_stakes(config: TableConfig) -> None:
    """The unit and the limits: positive, whole units, the minimum not above the maximum."""
    if config.unit < 1:
        raise ValueError(f"table.unit: {config.unit} (the money of one unit is at least 1)")
    for key in ("min_bet", "max_bet"):
        value = getattr(config, key)
        if value is not None and (value < config.unit or value % config.unit):
            raise ValueError(
                f"table.{key}: {value} is not a whole number of units of {config.unit}"
            )
    low = config.min_bet if config.min_bet is not None else config.unit
    if config.max_bet is not None and config.max_bet < low:
        raise ValueError(f"table.max_bet: {config.max_bet} is below the minimum {low}")


def _check_rules(config: TableConfig) -> None:
    """[rules]: settings of the Thirteen rule set, each checked by the rules engine."""
    if config.game == "thirteen" and not config.rules:
        named = THIRTEEN_RULESETS[config.ruleset]
        _check_points_stakes(config, named.scoring, named.stakes)
        return
    if not config.rules:
        return
    if config.game != "thirteen":
        raise ValueError("rules: a paigow table takes its rule set by name only")
    try:
        rules = ruleset(config.ruleset, **config.rules)
    except RulesError as exc:
        raise ValueError(f"rules: {exc}") from None
    _check_points_stakes(config, rules.scoring, rules.stakes)


def _check_points_stakes(config: TableConfig, scoring: str, stakes: str) -> None:
    """Money per point (003 way 3, 「1分×元」): a seat is taken with one unit, so a minimum
    above it would refuse every seat."""
    if scoring != "banker" and stakes == "per-point" and (config.min_bet or 0) > config.unit:
        raise ValueError(
            f"table.min_bet: {config.min_bet} is above one unit ({config.unit}); with money per "
            "point a seat is taken with one unit"
        )


# The keys of `[table]`, and the file's sections besides it: every other field of TableConfig.
TABLE_KEYS = {
    "id": "table_id",
    "game": "game",
    "ruleset": "ruleset",
    "paigow_hands": "paigow_hands",
    "unit": "unit",
    "currency": "currency",
    "min_bet": "min_bet",
    "max_bet": "max_bet",
    "shaker": "shaker",
    "timer_in_hold": "timer_in_hold",
    "key_file": "key_file",
}
SECTIONS = tuple(
    f.name
    for f in dataclasses.fields(TableConfig)
    if f.name not in {*TABLE_KEYS.values(), "source"}
)
_TABLE = TypeAdapter(TableConfig)
# The keys each place of the file takes, for an unknown key's "did you mean".
_KNOWN: dict[str, type[Any]] = {
    "journal": JournalConfig,
    "api": ApiConfig,
    "feed": FeedConfig,
    "approved": ApprovedFirmware,
}


def _known(place: Where) -> list[str]:
    if place[:1] == ("devices",):
        device: type[Any] = ApprovedFirmware if "approved" in place else DeviceConfig
        return [f.name for f in dataclasses.fields(device) if f.name != "name"]
    section = _KNOWN.get(str(place[0])) if place else None
    return [f.name for f in dataclasses.fields(section)] if section is not None else []


def _in_the_file(where: Where) -> Where:
    """TableConfig's own fields are the file's `[table]` keys (`table_id` is `table.id`)."""
    if where and where[0] in TABLE_KEYS.values():
        return ("table", next(k for k, v in TABLE_KEYS.items() if v == where[0]), *where[1:])
    return where


def parse_config(
    data: dict[str, Any],
    source: str = "<memory>",
    base: Path | None = None,
    *,
    partial: bool = False,
) -> TableConfig:
    """Build a TableConfig from parsed TOML. Relative paths resolve against `base` (the cwd).

    `partial`: the devices may be some of those the game needs (at least one), for the tools
    that serve or probe devices (`tabled sim`, `tabled devices`), not a table.
    """
    table = data.get("table", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: table: expected a table ([table]), got {table!r}")
    problems = [
        f"table.{key}: {unknown_key(key, TABLE_KEYS)}" for key in table if key not in TABLE_KEYS
    ]
    problems += unknown_sections(
        {k: v for k, v in data.items() if k != "table"}, ("table", *SECTIONS)
    )
    if problems:
        raise ConfigError(f"{source}: {'; '.join(problems)}")
    fields = {TABLE_KEYS[key]: value for key, value in table.items()}
    if "ruleset" not in fields and isinstance(fields.get("game"), str):
        fields["ruleset"] = DEFAULT_RULESETS.get(fields["game"], "")
    fields.update((key, value) for key, value in data.items() if key != "table")
    context = {"base": base or Path.cwd(), "partial": partial}
    try:
        return _TABLE.validate_python({**fields, "source": source}, context=context)
    except ValidationError as exc:
        raise refused(source, exc, _known, _in_the_file) from None


def default_config_path() -> Path:
    """The embedded default: packaged as `daemon/_config/table.toml`, else the source tree's."""
    packaged = Path(__file__).parent / "_config" / "table.toml"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parent.parent / "config" / "table.toml"


def load_config(path: Path | str | None = None, *, partial: bool = False) -> TableConfig:
    """Read a config file; None reads the embedded default. `partial`: see `parse_config`."""
    file = default_config_path() if path is None else Path(path)
    return parse_config(read(file), source=str(file), partial=partial)
