"""The games this table plays, by the name a table's configuration gives (`[table] game`): each
one's whole declaration (`daemon.procedures.spec.Game`), its procedure class included."""

from __future__ import annotations

from daemon.procedures.base import Procedure
from daemon.procedures.paigow import GAME as PAIGOW
from daemon.procedures.spec import Game
from daemon.procedures.thirteen import GAME as THIRTEEN

GAMES: dict[str, Game[Procedure]] = {THIRTEEN.name: THIRTEEN, PAIGOW.name: PAIGOW}
