"""Issue 23 items 3 and 4 in a real browser: the table goes away under a dealer's console (a
clean stop of `tabled run`) and comes back on the same address. While it is away the console
says so in a banner and every action is disabled (nothing half-sent, no "Failed to fetch");
back, the actions come back by themselves. A clean stop between rounds restarts ready to play
(no HOLD); a stop inside a round restarts held, the reason said in words."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright
from test_console_training import CHROMIUM, CHROMIUM_ARGS, open_tab, submit_form, wait_ready
from training_support import tabled_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_offline_disables_every_action_and_a_restart_says_why_it_holds_or_not(
    tmp_path: Path,
) -> None:
    address = f"127.0.0.1:{free_port()}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        errors: list[str] = []
        try:
            with tabled_run(tmp_path, http=address) as url:
                wait_ready(url)
                dealer = open_tab(browser, url, "dealer", errors)
                dealer.click("#actions [data-action=open_table]")
                expect(dealer.locator("#phase")).to_contain_text("Hand shuffle")
                expect(dealer.locator("#offline-banner")).to_be_hidden()
            # The table stopped (cleanly, between rounds): the console is offline.
            banner = dealer.locator("#offline-banner")
            expect(banner).to_be_visible()
            expect(banner).to_contain_text("Offline")
            expect(banner).to_contain_text("離線")
            expect(dealer.locator("#link")).to_contain_text("offline")
            buttons = dealer.locator("#actions button")
            expect(buttons).not_to_have_count(0)
            expect(dealer.locator("#actions button:enabled")).to_have_count(0)
            dealer.screenshot(path=str(Path(__file__).parents[1] / "artifacts" / "offline.png"))

            with tabled_run(tmp_path, http=address) as url:
                # Back on the same address: the feed returns, the actions with it, and the
                # table plays on (a clean stop between rounds needs no supervisor).
                expect(banner).to_be_hidden(timeout=30_000)
                expect(dealer.locator("#link")).to_contain_text("live")
                expect(dealer.locator("#phase")).to_contain_text("Hand shuffle")
                expect(dealer.locator("#hold-banner")).to_be_hidden()
                expect(
                    dealer.locator("#actions [data-action=confirm_hand_shuffle]")
                ).to_be_enabled()
                expect(dealer.locator("#events")).to_contain_text(
                    "stopped cleanly between rounds: ready to play"
                )
                # Into a round: the trainer's shuffle is not needed, the machine shuffles.
                dealer.click("#actions [data-action=confirm_hand_shuffle]")
                expect(dealer.locator("#phase")).to_contain_text("Cut")
                submit_form(
                    dealer,
                    "confirm_cut",
                    {"by": "player", "player": "P1", "cards": "20", "one_hand": True},
                )
                dealer.click("#actions [data-action=load_shoe]")
                submit_form(
                    dealer,
                    "place_bet",
                    {"player": "P1", "seat": "1", "amount": "100", "units": "1", "seated": True},
                )
                expect(dealer.locator(".seat[data-seat='1'] .bets")).to_contain_text("P1 100")
            expect(banner).to_be_visible()
            with tabled_run(tmp_path, http=address):
                # Stopped inside a round: held for a supervisor, the reason in words.
                hold = dealer.locator("#hold-banner")
                expect(hold).to_be_visible(timeout=30_000)
                expect(hold).to_contain_text("the table was stopped inside a round (BETTING)")
                expect(hold).to_contain_text("a supervisor checks the table")
                assert "table: table" not in hold.inner_text()
                expect(dealer.locator("#actions button")).to_have_count(0)
            assert [e for e in errors if "Failed to fetch" in e] == []
        finally:
            browser.close()
