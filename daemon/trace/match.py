"""Which guards and which tests belong to an article of the catalogue.

An article's guards are the units of the source citing it (or one of its `also`), carrying one of
its `marks`, or named by it; its tests are those marked with it or with one of its `also`. The
report (`daemon.trace.report`), the journal's evidence (`daemon.trace.evidence`) and the proof
read them from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from daemon.trace.catalogue import Article
from daemon.trace.cites import covers
from daemon.trace.guards import Unit
from daemon.trace.marks import MarkedTest

WHOLE = re.compile(r".* Art\. \d+")


def guards_of(article: Article, units: Sequence[Unit]) -> tuple[str, ...]:
    """The guards of `article`: units citing it (or one of its `also`), units whose text
    carries one of its `marks`, and the units it names."""
    found = [
        unit.path
        for unit in units
        if any(covers(article.citation, cited) for cited in unit.citations)
        or any(_also(also, cited) for also in article.also for cited in unit.citations)
        or any(mark in unit.text for mark in article.marks)
        or unit.path in article.guards
    ]
    return tuple(dict.fromkeys(found))


def _also(also: str, cited: str) -> bool:
    """A whole article in `also` (``Art. 1``) means a citation of the whole article, not of
    each of its paragraphs; a paragraph (``Art. 9 II``) takes in what is inside it."""
    return cited == also if WHOLE.fullmatch(also) else covers(also, cited)


def tests_of(article: Article, tests: Iterable[MarkedTest]) -> tuple[str, ...]:
    """The tests marked with `article` (or a paragraph inside it), and those of each of its
    `also`: an article enforced by another's guards is proven by that one's tests too, so the
    proof disables those guards against both."""
    return tuple(
        t.nodeid
        for t in tests
        if any(covers(article.citation, cited) for cited in t.citations)
        or any(_also(also, cited) for also in article.also for cited in t.citations)
    )
