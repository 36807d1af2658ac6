"""The dealer console in a real browser: Debian's chromium, headless, driven by Playwright,
plays a whole round through the page against a real HTTP server (the in-memory table for now;
the end-to-end suite runs the same page against the simulators)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_support import TOKENS, auth, write_tokens
from playwright.sync_api import expect, sync_playwright
from server_process import fake_server

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with fake_server(write_tokens(tmp_path / "tokens.toml")) as url:
        yield url


def test_a_whole_round_through_the_console(server: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(server + "/")

            def buttons() -> list[str]:
                return sorted(
                    page.locator("#actions button").evaluate_all(
                        "bs => bs.map(b => b.dataset.action)"
                    )
                )

            def legal(role: str) -> list[str]:
                r = httpx.get(server + "/api/state", headers=auth(role))
                return sorted(r.json()["legal"])

            # A wrong token is refused on the page; the dealer's is accepted.
            page.fill("#token", "wrong-token")
            page.click("#login button[type=submit]")
            expect(page.locator("#login-error")).to_contain_text("not recognised")
            page.fill("#token", TOKENS["dealer"][1])
            page.click("#login button[type=submit]")
            expect(page.locator("#link")).to_contain_text("live")
            expect(page.locator("#actor")).to_contain_text("lei.dealer")
            expect(page.locator("#phase")).to_contain_text("Idle")
            assert buttons() == legal("dealer") == ["open_round"]
            expect(page.locator("body")).to_contain_text("開局")

            page.click("[data-action=open_round]")
            expect(page.locator("#phase")).to_contain_text("Betting")
            expect(page.locator("#phase")).to_contain_text("下注")
            expect(page.locator("#actions [data-action=shake_dice]")).to_be_visible()
            assert buttons() == legal("dealer") == ["place_bet", "shake_dice"]

            for seat, amount, bettor in ((2, 500, "陳大文"), (3, 800, "P2"), (3, 200, "P3")):
                page.click("[data-action=place_bet]")
                page.fill("#action-form input[name=seat]", str(seat))
                page.fill("#action-form input[name=amount]", str(amount))
                page.fill("#action-form input[name=bettor]", bettor)
                page.click("#action-form button[type=submit]")
                expect(page.locator(f".seat[data-seat='{seat}'] .bets")).to_contain_text(
                    f"{bettor} {amount}"
                )
            expect(page.locator(".seat[data-seat='3'] .bets .holder")).to_have_text("P2 800")

            page.click("[data-action=shake_dice]")
            expect(page.locator("#dice .die")).to_have_count(4)
            assert buttons() == ["deal"]

            # A bet after the shake, from another client: refused, and highlighted here.
            refused = httpx.post(
                server + "/api/actions/place_bet",
                json={"payload": {"seat": 1, "amount": 100, "bettor": "late"}},
                headers=auth("dealer"),
            )
            assert refused.status_code == 409
            expect(page.locator("#violations li")).to_contain_text("Art. 2(b)")
            expect(page.locator("#events li.violation")).to_have_count(1)

            page.click("[data-action=deal]")
            for seat in range(1, 5):
                expect(page.locator(f".seat[data-seat='{seat}'] .card")).to_have_count(13)
            expect(page.locator("#countdown")).to_have_text(re.compile(r"^0[45]:[0-5]\d$"))
            expect(page.locator("#bell")).to_be_hidden()

            # The table's clock passes the five minutes: the bell rings on the console.
            httpx.post(server + "/_fake/advance", params={"seconds": 301})
            expect(page.locator("#bell")).to_be_visible()
            expect(page.locator("#countdown")).to_have_text("00:00")
            expect(page.locator(".seat.late")).to_have_count(4)

            page.click("[data-action=arrangements_done]")
            page.click("[data-action=settle]")
            expect(page.locator("#phase")).to_contain_text("Settled")
            expect(page.locator(".seat .settlement.late").first).to_be_visible()
            expect(page.locator(".seat[data-seat='2'] .settlement")).to_contain_text("-500")
            page.screenshot(path=str(ARTIFACTS / "console-settled.png"))

            size = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            assert size[0] <= 1280
            assert size[1] <= 800

            # A device fault: TILT on the page, and the dealer is offered nothing.
            httpx.post(server + "/_fake/fault", params={"device": "shuffler"})
            expect(page.locator("#hold-banner")).to_contain_text("shuffler")
            expect(page.locator("#hold-banner")).to_contain_text("TILT")
            expect(page.locator("#faults li")).to_contain_text("shuffler")
            expect(page.locator("#actions button")).to_have_count(0)
            page.screenshot(path=str(ARTIFACTS / "console-tilt.png"))

            # The supervisor signs in and clears it, with a reason.
            page.click("#logout")
            page.fill("#token", TOKENS["supervisor"][1])
            page.click("#login button[type=submit]")
            expect(page.locator("#actor")).to_contain_text("wong.supervisor")
            expect(page.locator("#actions [data-action=clear_hold]")).to_be_visible()
            page.click("[data-action=clear_hold]")
            page.fill("#action-form input[name=__reason]", "jam cleared, 52 counted")
            page.click("#action-form button[type=submit]")
            expect(page.locator("#hold-banner")).to_be_hidden()
            expect(page.locator("#events")).to_contain_text("table.clear_hold · wong.supervisor")

            journal = httpx.get(
                server + "/api/journal",
                params={"event": "table.clear_hold"},
                headers=auth("surveillance"),
            ).json()["events"]
            assert journal[0]["payload"]["reason"] == "jam cleared, 52 counted"
            # The wrong token's 401 is the only failed request the page may have made.
            assert [e for e in errors if "status of 401" not in e] == []
        finally:
            browser.close()
