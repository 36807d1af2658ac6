"""A list's sentences remembered by what they read (`sentences.said_memo`): the same sentence as
`sentence` for every row, whatever the rows share, and `SAID_KEYS` names every payload key the
sentence reads."""

from __future__ import annotations

import inspect
import re
from typing import Any

from daemon.floor import sentences
from daemon.floor.sentences import SAID_KEYS, said_memo, sentence


def test_said_keys_are_what_the_sentence_reads() -> None:
    read = set(re.findall(r'payload\.get\("([a-z_]+)"\)', inspect.getsource(sentences._details)))
    read |= set(re.findall(r'\("([a-z_]+)", "第', inspect.getsource(sentences._details)))
    read |= {"card", "tile", "cards", "tiles"}  # read in a loop over these names
    assert read == set(SAID_KEYS)


def test_the_remembered_sentence_is_the_sentence() -> None:
    memo: dict[Any, dict[str, str]] = {}
    rows = [
        {"table": "T1", "seq": i, "article": f"Art. {i % 3}", "action": "close_bets",
         "phase": "BETTING", "reason": "late" if i % 2 else "a bet after the dice",
         "seat": i % 4 or None, "dice": [3, 4] if i % 5 == 0 else None}
        for i in range(40)
    ]  # fmt: skip
    for game in ("thirteen", "paigow", None):
        for event in ("table.violation", "table.tilted", "table.input"):
            for row in rows:
                assert said_memo(memo, game, event, row) == sentence(game, event, row)
    assert 0 < len(memo) < 3 * 2 * 40  # remembered, and shared between rows
    said = said_memo(memo, None, "table.violation", rows[1])
    said["en"] = "changed"
    assert said_memo(memo, None, "table.violation", rows[1]) == sentence(
        None, "table.violation", rows[1]
    )
