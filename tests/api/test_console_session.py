"""The console at a shared table, in Debian's chromium: Sign out leaves nothing of the person
behind (token, name, the table as they saw it, an open form), so Sign in cannot sign them back
in; and a console left alone signs its person out after the daemon's idle time (Playwright's
clock moves the page's time, so the test waits for nothing)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import TOKENS, write_tokens
from playwright.sync_api import expect, sync_playwright
from server_process import fake_server
from test_console_browser import CHROMIUM, launch, sign_in, submit_form
from test_doors_process import tabled_run, write_config

pytestmark = [pytest.mark.browser]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with fake_server(write_tokens(tmp_path / "tokens.toml")) as url:
        yield url


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_sign_out_clears_the_person_and_sign_in_does_not_bring_them_back(server: str) -> None:
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(server + "/")
            sign_in(page, "dealer")
            expect(page.locator("#actor")).to_contain_text("lei.dealer")
            page.click("[data-action=open_round]")
            expect(page.locator("#phase")).to_contain_text("Betting")
            submit_form(page, "place_bet", {"seat": "2", "amount": "500", "bettor": "陳大文"})
            expect(page.locator(".seat[data-seat='2'] .bets")).to_contain_text("陳大文")
            # A form half filled in, then the dealer walks away after signing out.
            page.click("[data-action=place_bet]")
            page.fill("#action-form input[name=bettor]", "P9")
            expect(page.locator("#events li").first).to_be_visible()

            page.click("#logout")

            expect(page.locator("#login")).to_be_visible()
            expect(page.locator("#console")).to_be_hidden()
            assert page.input_value("#token") == ""
            expect(page.locator("#actor")).to_have_text("")
            expect(page.locator("#table-id")).to_have_text("—")
            expect(page.locator("#phase")).to_have_text("—")
            expect(page.locator("#round")).to_have_text("—")
            for cached in ("#events li", "#seats .seat", "#action-form input", "#actions button"):
                expect(page.locator(cached)).to_have_count(0)
            assert page.evaluate("sessionStorage.getItem('tabled.token')") is None
            expect(page.locator("#link")).to_contain_text("offline")

            # Sign in with the field as it was left: the browser asks for a token; forced past
            # that, the API refuses an empty one. Nobody is signed in.
            page.click("#login button[type=submit]")
            page.evaluate("document.getElementById('login').dispatchEvent(new Event('submit'))")
            expect(page.locator("#login-error")).to_contain_text("no token")
            expect(page.locator("#console")).to_be_hidden()
            expect(page.locator("#actor")).to_have_text("")

            # The next person sees their own name, and the table as it is now.
            sign_in(page, "supervisor")
            expect(page.locator("#actor")).to_contain_text("wong.supervisor")
            expect(page.locator("#actor")).not_to_contain_text("lei.dealer")
            expect(page.locator(".seat[data-seat='2'] .bets")).to_contain_text("陳大文")
            expect(page.locator("#action-form")).to_be_hidden()
        finally:
            browser.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_an_idle_console_signs_its_person_out_after_the_configured_time(tmp_path: Path) -> None:
    config = write_config(tmp_path, console_idle_seconds=120)
    with tabled_run(config) as url, sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.clock.install()
            page.goto(url + "/")
            sign_in(page, "dealer")
            expect(page.locator("#actor")).to_contain_text(TOKENS["dealer"][0])

            page.clock.run_for(100_000)
            expect(page.locator("#actor")).to_contain_text(TOKENS["dealer"][0])
            # 20 s left, less what the page's own (unpaused) clock ran while it was read.
            expect(page.locator("#idle-warning")).to_have_text(re.compile(r"^(20|1\d) s · "))
            # A touch (here a key) starts the idle time again.
            page.keyboard.press("Shift")
            page.clock.run_for(100_000)
            expect(page.locator("#console")).to_be_visible()
            expect(page.locator("#actor")).to_contain_text(TOKENS["dealer"][0])

            page.clock.run_for(21_000)
            expect(page.locator("#login")).to_be_visible()
            expect(page.locator("#login-error")).to_contain_text("120 s idle")
            expect(page.locator("#actor")).to_have_text("")
            expect(page.locator("#idle-warning")).to_be_hidden()
            assert page.input_value("#token") == ""
            assert page.evaluate("sessionStorage.getItem('tabled.token')") is None
        finally:
            browser.close()
