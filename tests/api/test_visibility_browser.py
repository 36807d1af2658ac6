"""The dealer console in chromium never shows a card it was not allowed: while the banker and
then the players arrange on the real table (devices simulated), the page's text and markup hold
none of the cards still face down, written either way (the API's `Qh` or the page's `Q♥`); the
banker's hand appears when the banker opens it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from api_support import write_tokens
from playwright.sync_api import expect, sync_playwright
from server_process import table_server
from test_console_browser import CHROMIUM, launch, sign_in
from test_visibility import shown
from test_visibility_api import Served, seats_on_disk

from daemon.rules.cards import parse_card

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]


@pytest.fixture
def thirteen(tmp_path: Path) -> Iterator[Served]:
    with table_server(write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal") as url:
        yield Served(url, tmp_path / "journal")


SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


def written(cards: Iterable[str]) -> set[str]:
    """Each card as the API names it and as the page draws it (`Td`, `10♦`)."""
    out = set()
    for card in cards:
        name = str(parse_card(card))
        rank = "10" if name[0] == "T" else name[:-1]
        out |= {name, rank + SUIT_SYMBOLS[name[-1]]}
    return out


def page_shows(page: object, cards: Iterable[str]) -> set[str]:
    text = page.inner_text("body") + page.content()  # type: ignore[attr-defined]
    found = shown(text, written(cards) - {c for c in written(cards) if not c.isascii()})
    return found | {c for c in written(cards) if not c.isascii() and c in text}


@pytest.mark.article("51/89/M", "2(d)")
def test_the_console_shows_no_face_down_card_while_the_hands_are_arranged(
    thirteen: Served,
) -> None:
    t = thirteen
    t.deal_thirteen(seats=(1,))
    hands = seats_on_disk(t.journal, range(4))
    everything = [c for cards in hands.values() for c in cards]
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            pages = {}
            for role in ("dealer", "supervisor"):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(t.url + "/")
                sign_in(page, role)
                pages[role] = page
            for page in pages.values():
                expect(page.locator("#phase")).to_contain_text("Banker arranges")
                expect(page.locator(".seat .card.back")).to_have_count(52)
                assert page_shows(page, everything) == set()
            t.act("arrange_banker")
            t.act("open_banker")
            for page in pages.values():
                expect(page.locator("#phase")).to_contain_text("Players arrange")
                expect(page.locator(".seat[data-seat='0'] .card.back")).to_have_count(0)
                expect(page.locator(".seat .card.back")).to_have_count(39)
                assert page_shows(page, hands[1] + hands[2] + hands[3]) == set()
                drawn = {c for c in written(hands[0]) if not c.isascii()}  # as the page draws
                assert page_shows(page, hands[0]) >= drawn
            pages["dealer"].screenshot(
                path=str(Path(__file__).resolve().parents[1] / "artifacts" / "console-hidden.png")
            )
        finally:
            browser.close()
