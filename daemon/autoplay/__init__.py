"""Scripted rounds on a simulated table: `tabled run --autoplay N`.

A scripted dealer, players and pit supervisor play N whole rounds through the same `Table` the
operator API drives, against simulated devices (`sim://` ports in this process, or `tabled sim`
devices reached through its control channel). Players bet and arrange mostly the house way;
some arrange a foul hand, some are still arranging when the bell rings. A configurable share of
rounds meets an injected device fault (through the simulators' control channel: a jammed or
miscounting shuffler, an open lid, a die out of the cup three times, a shoe taken out mid-deal,
a misread card, a cable pulled), which the supervisor clears the way a pit does: the device is
put right, it reports healthy, then the HOLD or TILT is cleared (or the deal voided). Another
share meets attempted violations (a bet after the dice, the wrong player shaking, a short
cut...), each of which the procedure must refuse and journal.

Nothing is settled here: the table decides every outcome and journals it; the autoplay only
acts and counts. It ends with a summary: rounds, outcomes, violations by article, faults by
device, seconds per round.

The arrangement timer is the table's: for a late player the script jumps the table's clock
(`SimulationClock`) over the five minutes instead of waiting them out, and the table's own
timer fires the bell. The device links keep real time.

One job a module: `script` (the round loop: `Autoplay`), `base` (acting and waiting, the shared
state), `thirteen` and `paigow` (the scripted dealer of each game), `players` (how the players
arrange and set their hands), `supervisor` (the pit clearing a HOLD or TILT), `faults` (what is
injected, and where), `control` (the simulators' control channel), `summary` (what is printed).
`tabled run` imports this package only with `--autoplay`.
"""

from __future__ import annotations

from daemon.autoplay.base import AutoplayError
from daemon.autoplay.control import InProcessControl, SimControl, SocketControl, control_for
from daemon.autoplay.players import bad_setting, foul_rows, good_setting, house_way13
from daemon.autoplay.script import Autoplay
from daemon.autoplay.summary import Summary
from daemon.table import TableError
from drivers.clock import SimulationClock

__all__ = [
    "Autoplay",
    "AutoplayError",
    "InProcessControl",
    "SimControl",
    "SimulationClock",
    "SocketControl",
    "Summary",
    "TableError",
    "bad_setting",
    "control_for",
    "foul_rows",
    "good_setting",
    "house_way13",
]
