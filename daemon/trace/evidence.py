"""The journal lines that evidence an article: from the text to the guard, the test and the
lines a real table wrote.

An article is evidenced in a journal by three kinds of line:

- ``table.input``: an action the game declares citing the article (its entry in the game's
  action table, or one of its parameters, names it), taken at the table;
- the events those actions' procedure code emits (``self.emit("bank.taken", ...)`` in
  ``_apply_take_bank``) and the events the article's guards emit, kept to the events the game
  declares when it declares them (its event data);
- ``table.violation``: an input refused citing the article.

`tabled trace --article "15/90/M Art. 5(5)" --journal var/journal` prints them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.safetext import safe, safe_json
from daemon.trace.catalogue import BY_CITATION
from daemon.trace.cites import covers, find_citations
from daemon.trace.guards import Unit, scan
from daemon.trace.match import guards_of

INPUT, VIOLATION = "table.input", "table.violation"
_EMIT = re.compile(r"\bemit\(\s*[\"']([a-z_]+\.[a-z_.]+)[\"']")


@dataclass(frozen=True)
class Evidence:
    article: str
    actions: tuple[str, ...]
    events: tuple[str, ...]

    def matches(self, event: str, payload: dict[str, Any]) -> str | None:
        """Why a journal line evidences the article (input, event, violation), or None."""
        if event == INPUT and payload.get("action") in self.actions:
            return "input"
        if event in self.events:
            return "event"
        if event == VIOLATION:
            cited = find_citations(str(payload.get("article", "")))
            if any(covers(self.article, c) for c in cited):
                return "violation"
        return None

    def as_json(self) -> dict[str, Any]:
        return {"article": self.article, "actions": list(self.actions), "events": list(self.events)}


def _game_data(game: str) -> tuple[dict[str, Any], set[str] | None]:
    """The game's actions and the event names it declares (None: it declares none)."""
    from daemon.procedures.games import GAMES  # noqa: PLC0415 - the game data, when asked for

    declared = getattr(GAMES[game], "events", None)
    return dict(GAMES[game].actions), (None if declared is None else set(declared))


def evidence(citation: str, units: Sequence[Unit] | None = None) -> Evidence:
    """What evidences the catalogue article `citation` in a journal."""
    article = BY_CITATION[citation]
    units = scan() if units is None else units
    actions, declared = _game_data(article.game)
    cited = [
        name
        for name, action in actions.items()
        if any(
            covers(citation, c)
            for text in (action.article, *(p.article or "" for p in (action.params or {}).values()))
            for c in find_citations(text)
        )
    ]
    guards = set(guards_of(article, units))
    applies = {f"_apply_{name}" for name in cited}
    emitting = [
        unit
        for unit in units
        if unit.path in guards or unit.path.rsplit(".", 1)[-1] in applies
        if f"procedures.{article.game}." in unit.path or unit.path in guards
    ]
    events = [name for unit in emitting for name in _EMIT.findall(unit.text)]
    if declared is not None:
        events = [name for name in events if name in declared]
    return Evidence(citation, tuple(cited), tuple(dict.fromkeys(events)))


def found(evidence: Evidence, journal: Path) -> Iterable[dict[str, Any]]:
    """The lines of the journal folder (or file) that evidence the article, in order."""
    from daemon.journal.reader import replay  # noqa: PLC0415 - only this command reads one

    for record in replay(journal):
        payload = dict(record.payload)
        kind = evidence.matches(record.event, payload)
        if kind is not None:
            yield {
                "seq": record.seq,
                "ts": record.ts,
                "round": record.round_id,
                "kind": kind,
                "event": record.event,
                "actor": record.actor,
                "payload": payload,
            }


def print_evidence(citations: Sequence[str], journal: Path, *, as_json: bool = False) -> int:
    """`tabled trace --article A --journal DIR`: each article's evidence found there."""
    if not journal.exists():
        raise ValueError(f"{journal}: no such journal folder")
    units = scan()
    out: list[dict[str, Any]] = []
    for citation in citations:
        ev = evidence(citation, units)
        out.append({**ev.as_json(), "lines": list(found(ev, journal))})
    if as_json:
        sys.stdout.write(safe_json(json.dumps(out, ensure_ascii=False, indent=2)) + "\n")
        return 0
    for item in out:
        lines = item["lines"]
        kinds = {
            k: sum(1 for x in lines if x["kind"] == k) for k in ("input", "event", "violation")
        }
        print(f"# {item['article']} in {journal}")
        print(f"actions: {', '.join(item['actions']) or 'none'}")
        print(f"events: {', '.join(item['events']) or 'none'}")
        print(
            f"found: {len(lines)} lines ({kinds['input']} inputs, {kinds['event']} events, "
            f"{kinds['violation']} violations)"
        )
        for x in lines:
            body = json.dumps(x["payload"], ensure_ascii=False, sort_keys=True)
            print(safe(f"{x['seq']} {x['ts']} round {x['round']} {x['kind']} {x['event']} {body}"))
    return 0
