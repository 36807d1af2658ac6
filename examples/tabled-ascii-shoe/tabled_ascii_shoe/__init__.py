"""The ACME CS-100 card shoe reader for tabled: a shoe reader that speaks plain ASCII lines
(`wire`), its driver (`driver`) and its simulator (`simulator`).

`KIND` is the registry row the `tabled.devices` entry point names (pyproject.toml). It holds
the classes as `module:Class` text, so listing the kinds imports nothing more than this file.
The CS-100 fills the table's shoe reader role: the table's procedure talks to it as to any
shoe reader (`card_read` inputs, `arm`/`disarm` commands), through the shoe's own adapter.
"""

from __future__ import annotations

from drivers.kinds import DeviceKind

KIND = DeviceKind(
    name="ascii_shoe",
    role="shoe_reader",
    driver="tabled_ascii_shoe.driver:AsciiShoeDriver",
    adapter="drivers.shoe_reader.adapter:ShoeReaderAdapter",
    simulator="tabled_ascii_shoe.simulator:AsciiShoeModel",
    baudrates=(9600, 19200),
    options={"line_end": ("crlf", "lf")},
)
