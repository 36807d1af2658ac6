"""An article of the catalogue: its citation, its text, what it requires and its status; and
the citations' spelling by regulation (`_m` Thirteen, `_p` Pai Gow, `_hk` the Hong Kong ways)."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.trace.cites import GAME_OF, HK, PAIGOW, THIRTEEN, canonical

STATUSES = ("enforced", "recorded", "outside", "missing")


@dataclass(frozen=True)
class Article:
    citation: str
    text: str
    gloss: str
    status: str
    reason: str = ""
    gap: str = ""
    also: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()

    @property
    def regulation(self) -> str:
        return next(r for r in (THIRTEEN, PAIGOW, HK) if self.citation.startswith(r + " "))

    @property
    def game(self) -> str:
        return GAME_OF[self.regulation]


def _m(paragraph: str) -> str:
    return canonical("51/89/M", paragraph)


def _p(paragraph: str) -> str:
    return canonical("15/90/M", paragraph)


def _hk(clause: str) -> str:
    return canonical("003", clause)
