"""Traceability as data: each article, where it is enforced, which test proves it.

- `catalogue`: the articles and paragraphs of Portaria 51/89/M (Thirteen cards) and 15/90/M
  (Taiwan Pai Gow), and the clauses of the Hong Kong ways (seed 003) the rule sets implement,
  each with the Chinese text, a gloss and a status (enforced, recorded, outside).
- `cites`: reading citations ("Portaria 51/89/M Art. 2(a)", "Art. 7-11", "Art. 2(2)(3)") in text.
- `guards`: the guards found in the source by the articles they cite (no import of the code).
- `marks`: the tests marked `@pytest.mark.article(...)`, found in a source checkout's tests/.
- `match`: which guards and which tests belong to an article.
- `evidence`: what evidences an article in a journal (its actions, events and violations).
- `report`: article -> text -> guards -> tests -> status, as Markdown or JSON (`tabled trace`).
- `prove`: each guard disabled in turn against its article's tests (`tabled trace --prove`);
  `proofdoc`: the proof's results, as data and text.
"""
