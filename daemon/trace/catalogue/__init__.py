"""The catalogue: each article and paragraph of the two Macau regulations, and each clause of the
Hong Kong ways (seed 003) that a rule set implements, with what it requires and its status.

Status:

- ``enforced``: a guard refuses what breaks it, or the system computes it (the rules engine).
  The suite fails when an enforced article has no guard or no test (tests/trace).
- ``recorded``: the table only records it (a dealer step it cannot observe).
- ``outside``: outside a table system (licensing, the law's own validity, people's conduct).
- ``missing``: a clause of 003 no rule set implements yet (issue 13 item 2).

`gap` says what an enforced article still lacks; `reason` gives the status's reason and the
decision taken where the text is silent or ambiguous. Guards are found in the source by the
article they cite (daemon/trace/guards.py); `also` names other citations whose guards enforce
this article too (their tests prove it too), `marks` the phrases by which the source names a
003 clause (the code cites 003 by its words, not by a number), `guards` guards named by
``module:qualname``.
"""

from __future__ import annotations

from daemon.trace.catalogue.article import STATUSES, Article
from daemon.trace.catalogue.hk import HK_ARTICLES
from daemon.trace.catalogue.paigow import PAIGOW_ARTICLES
from daemon.trace.catalogue.thirteen import THIRTEEN_ARTICLES

__all__ = ["ARTICLES", "BY_CITATION", "STATUSES", "Article"]

ARTICLES: tuple[Article, ...] = THIRTEEN_ARTICLES + PAIGOW_ARTICLES + HK_ARTICLES
BY_CITATION = {article.citation: article for article in ARTICLES}
