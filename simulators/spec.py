"""What to simulate: a device, its seed, faults, speed, table world and bus address, read from a
`sim://` URL (`sim://dice_shaker?seed=7&fault=die_tilted&speed=0&world=T01&address=1`), and the
options a model declares for its honest faults of randomness (`sim://dice_shaker?bias=6:0.19`,
`sim://shuffler?model=riffle&riffles=5`, `sim://shoe_reader?misread=200`: each model's
`OPTIONS`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from urllib.parse import parse_qs, urlsplit

from drivers.clock import Clock
from drivers.kinds import find, load_class
from simulators.base import DeviceModel, Output
from simulators.world import TableWorld, get_world

QUERY_KEYS = frozenset({"seed", "fault", "speed", "world", "address"})


@dataclass(frozen=True)
class SimSpec:
    device: str
    seed: int | None = None
    faults: tuple[str, ...] = ()
    speed: float = 0.0  # 0: answer at once; 1: real device timings
    world: str = "default"
    address: int = 1
    options: tuple[tuple[str, str], ...] = ()  # the model's own options, checked by it

    def with_faults(self, *faults: str) -> SimSpec:
        return replace(self, faults=self.faults + faults)

    @property
    def role(self) -> str:
        """The table device the simulated kind is (its name in the world: the shoe, the
        shuffler...); the kind's own name when no kind of that name is registered."""
        try:
            return find(self.device).role
        except LookupError:
            return self.device


def model_class(kind: str) -> type[DeviceModel]:
    """The simulator of device kind `kind` (drivers.kinds); LookupError of one line if the
    kind is unknown or has none."""
    return load_class(kind, "simulator", DeviceModel)


def parse_sim_url(url: str) -> SimSpec:
    """Parse a `sim://` URL; ValueError naming the problem if it is not one we understand."""
    parts = urlsplit(url)
    if parts.scheme != "sim" or not parts.netloc:
        raise ValueError(f"expected sim://DEVICE[?seed=N&fault=NAME&speed=F], got {url!r}")
    query = parse_qs(parts.query, keep_blank_values=True)
    extra = set(query) - QUERY_KEYS
    declared: frozenset[str] = frozenset()
    if extra:
        try:
            declared = model_class(parts.netloc).OPTIONS
        except LookupError:
            declared = frozenset()
    unknown = extra - declared
    if unknown:
        raise ValueError(f"{url}: unknown option(s) {', '.join(sorted(unknown))}")

    def last(key: str) -> str | None:
        values = query.get(key)
        return values[-1] if values else None

    try:
        seed = last("seed")
        speed = last("speed")
        address = last("address")
        spec = SimSpec(
            device=parts.netloc,
            seed=None if seed is None else int(seed),
            faults=tuple(
                name for value in query.get("fault", []) for name in value.split(",") if name
            ),
            speed=0.0 if speed is None else float(speed),
            world=last("world") or "default",
            address=1 if address is None else int(address),
            options=tuple(sorted((key, query[key][-1]) for key in extra)),
        )
        if spec.options:
            model_class(spec.device).parse_options(dict(spec.options))
    except ValueError as exc:
        raise ValueError(f"{url}: {exc}") from None
    if not check_speed(spec.speed) or not 0 < spec.address < 0x80:
        raise ValueError(f"{url}: speed must be a finite number >= 0 and address 1-127")
    return spec


def check_speed(speed: float) -> bool:
    """A timing factor: 0 (instant) or a finite positive number (nan or inf would stall or
    crash a device's timers)."""
    return math.isfinite(speed) and speed >= 0


def create_model(
    spec: SimSpec, scheduler: Clock, output: Output, world: TableWorld | None = None
) -> DeviceModel:
    """A model for `spec`; LookupError for an unknown kind, UnknownFault for a bad fault."""
    cls = model_class(spec.device)
    return cls(
        world=world or get_world(spec.world),
        scheduler=scheduler,
        output=output,
        seed=spec.seed,
        faults=spec.faults,
        speed=spec.speed,
        address=spec.address,
        options=dict(spec.options),
    )
