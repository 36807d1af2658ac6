"""The games this table plays, by the name a table's configuration gives (`[table] game`)."""

from __future__ import annotations

from daemon.procedures.paigow.game import GAME as PAIGOW
from daemon.procedures.spec import Game
from daemon.procedures.thirteen.game import GAME as THIRTEEN

GAMES: dict[str, Game] = {THIRTEEN.name: THIRTEEN, PAIGOW.name: PAIGOW}
