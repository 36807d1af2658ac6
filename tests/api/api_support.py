"""Shared by the API tests: the people's tokens and how they authenticate."""

from __future__ import annotations

import json
from pathlib import Path

from daemon.api.tokens import token_entry

# Fixed test tokens: what people would have been given by `tabled token`.
TOKENS = {
    "dealer": ("lei.dealer", "dealer-token-0123456789abcdefghijklmnopqrstuv"),
    "supervisor": ("wong.supervisor", "supervisor-token-0123456789abcdefghijklmnop"),
    "surveillance": ("ho.surveillance", "surveillance-token-0123456789abcdefghijklm"),
    "admin": ("it.admin", "admin-token-0123456789abcdefghijklmnopqrstuvw"),
}


def write_tokens(path: Path) -> Path:
    path.write_text(
        "\n".join(token_entry(actor, role, token) for role, (actor, token) in TOKENS.items()),
        encoding="utf-8",
    )
    path.chmod(0o600)  # the daemon refuses a tokens file others may read
    return path


def auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role][1]}"}


def dealt_on_disk(journal_dir: Path, seat: int) -> list[str]:
    """The cards of `seat` in the deal now, as the journal on disk holds them: what the dealer's
    hands hold at the table, which no person is served through the API while the round is in
    play (daemon/procedures/visibility.py)."""
    records = [
        json.loads(line)
        for path in sorted(journal_dir.glob("journal-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    cards: list[str] = []
    for record in records:
        if record["event"] in ("deal.voided", "round.started"):
            cards = []
        elif record["event"] == "card.dealt" and record["payload"]["seat"] == seat:
            cards.append(record["payload"]["card"])
    return cards
