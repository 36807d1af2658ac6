"""Integrity analytics: is each device honest, and does each game pay what its rules say?

Read from a table's journal folder (`source.read_journal`, streaming), the statistics per device
serial live one module a device: `dice` (faces, runs, serial correlation, repeats, and the
CUSUM monitor of `cusum`, whose false-alarm rate and power are computed exactly), `shuffle`
(card by position, rising sequences, a guessing game, the equivalent number of riffles),
`reader` (misread and manual-entry rates, per dealer) and `hold` (actual hold against the rule
set's house advantage, as a z-score). `verdict` turns each into the words and the JSON of
`tabled audit` (`cli`); docs/integrity.md says what each test assumes and what was measured.

numpy and scipy are imported here and only here: the daemon never imports this package.
"""
