"""The dealer console in a real browser: Debian's chromium, headless, driven by Playwright,
plays through the page against a real HTTP server: a whole round over the in-memory table
(holds, faults and the supervisor), a tilt mid-deal on the real table runtime with every device
simulated. Whole rounds of both games on `tabled run --http`, with the trainer's panel, are in
test_console_training.py."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import TOKENS, auth, write_tokens
from playwright.sync_api import expect, sync_playwright
from server_process import fake_server, table_server

from daemon.rules.cards import DECK
from tests.loopback_http import http

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
    # CI installs chromium (.ci/run), so there a missing browser is a failure, not a skip.
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with fake_server(write_tokens(tmp_path / "tokens.toml")) as url:
        yield url


@pytest.fixture
def real_table(tmp_path: Path) -> Iterator[str]:
    with table_server(write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal") as url:
        yield url


def launch(pw: Any) -> Any:
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def sign_in(page: Any, role: str) -> None:
    page.fill("#token", TOKENS[role][1])
    page.click("#login button[type=submit]")
    expect(page.locator("#link")).to_contain_text("live")


def submit_form(page: Any, action: str, fields: dict[str, str | bool]) -> None:
    page.click(f"[data-action={action}]")
    for name, value in fields.items():
        selector = f"#action-form [name={name}]"
        if isinstance(value, bool):
            page.set_checked(selector, value)
        elif page.locator(selector).evaluate("e => e.tagName") == "SELECT":
            page.select_option(selector, value)
        else:
            page.fill(selector, value)
    page.click("#action-form button[type=submit]")


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
                r = http.get(server + "/api/state", headers=auth(role))
                return sorted(r.json()["legal"])

            # A wrong token is refused on the page; the dealer's is accepted.
            page.fill("#token", "wrong-token")
            page.click("#login button[type=submit]")
            expect(page.locator("#login-error")).to_contain_text("not recognised")
            expect(page.locator("#login-error")).to_contain_text("令牌無效")
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
                # A seat is picked from the four, never typed (and none is preselected).
                assert page.input_value("#action-form select[name=seat]") == ""
                page.select_option("#action-form select[name=seat]", str(seat))
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
            refused = http.post(
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
            http.post(server + "/_fake/advance", params={"seconds": 301})
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
            http.post(server + "/_fake/fault", params={"device": "shuffler"})
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
            cleared = "解除暫停 · Clear hold jam cleared, 52 counted · wong.supervisor"
            expect(page.locator("#events")).to_contain_text(cleared)

            journal = http.get(
                server + "/api/journal",
                params={"event": "table.clear_hold"},
                headers=auth("surveillance"),
            ).json()["events"]
            assert journal[0]["payload"]["reason"] == "jam cleared, 52 counted"
            # A card the API hides (a marker, not a code) is drawn as its back.
            drawn = page.evaluate(
                "['AS', '10H', '6-6', 'hidden', null, {hidden: true}]"
                ".map(c => cardNode(c).className)"
            )
            assert drawn == ["card", "card red", "tile-box", "card back", "card back", "card back"]
            # The wrong token's 401 is the only failed request the page may have made.
            assert [e for e in errors if "status of 401" not in e] == []
        finally:
            browser.close()


def test_a_tilt_mid_deal_on_the_real_table_and_who_signs_in_then(real_table: str) -> None:
    """The shoe reader misses a card mid-deal on the real table: TILT; the fault is named
    without inventions; whoever signs in mid-round sees the journal that led there; the
    supervisor's longer name keeps the header on one line; the supervisor clears it; the
    dealer enters the missed card and the supervisor approves the override."""
    server = real_table

    def control(**request: str) -> dict[str, Any]:
        reply: dict[str, Any] = http.post(server + "/_sim/control", json=request).json()
        assert reply["ok"], reply
        return reply

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(server + "/")
            sign_in(page, "dealer")
            phase = page.locator("#phase")
            page.click("[data-action=open_table]")
            expect(phase).to_contain_text("Hand shuffle")
            page.click("[data-action=confirm_hand_shuffle]")
            expect(phase).to_contain_text("Cut")
            submit_form(
                page,
                "confirm_cut",
                {"by": "player", "player": "P1", "cards": "15", "one_hand": True},
            )
            expect(phase).to_contain_text("Shoe")
            page.click("[data-action=load_shoe]")
            expect(phase).to_contain_text("Betting")
            bet: dict[str, str | bool] = {"player": "P1", "seat": "1", "amount": "300"}
            bet |= {"units": "3", "seated": True}
            submit_form(page, "place_bet", bet)
            submit_form(page, "shake_dice", {"player": "P1"})
            expect(phase).to_contain_text("Dealing")
            control(op="draw")
            # The first card shown as read before the fault is set, so the misread is the
            # second card's (CI once saw the proposed missed card refused as already dealt;
            # its cause is not established).
            expect(page.locator("#progress")).to_contain_text("dealt 1/52")
            control(op="inject", device="shoe_reader", fault="misread")
            drawn = control(op="draw")["drawn"]  # the card that went past unread
            missed = str(DECK[(drawn["rank"] - 2) * 4 + drawn["suit"]])
            expect(page.locator("#hold-banner")).to_contain_text("TILT")
            faults = page.locator("#faults li")
            expect(faults).to_contain_text("shoe_reader: misread")
            expect(faults).not_to_contain_text("undefined")
            expect(page.locator("#actions button")).to_have_count(0)
            # Every device's link is in view; a cable pulled shows on its name at once.
            expect(page.locator("#devices .device.up")).to_have_count(4)
            control(op="unplug", device="timer_bell")
            expect(page.locator("#devices .device.down")).to_have_text("✕ timer bell")
            control(op="plug", device="timer_bell")

            # The supervisor signs in on a fresh page: the journal so far is there at once.
            supervisor = browser.new_page(viewport={"width": 1280, "height": 800})
            supervisor.goto(server + "/")
            sign_in(supervisor, "supervisor")
            expect(supervisor.locator("#events")).to_contain_text("seat 1 P1 300 MOP")
            expect(supervisor.locator("#events")).to_contain_text("shoe_reader misread")
            for button in ("#logout", "#link"):
                assert supervisor.locator(button).bounding_box()["height"] < 45, button
            # Who is signed in, and as what, both in view.
            expect(supervisor.locator("#actor .role")).to_contain_text("supervisor")
            role_box = supervisor.locator("#actor .role").bounding_box()
            assert role_box is not None and role_box["x"] + role_box["width"] <= 1280
            submit_form(supervisor, "clear_tilt", {"__reason": "reader lens cleaned"})
            expect(supervisor.locator("#hold-banner")).to_be_hidden()
            expect(page.locator("#hold-banner")).to_be_hidden()

            # The dealer enters the missed card by hand; only the supervisor decides it. The card
            # is dealt face down (Art. 2(b)): no console shows it, the supervisor checks it on
            # camera (issue 21).
            submit_form(page, "propose_card", {"card": missed})
            expect(supervisor.locator("#override")).to_contain_text("dealer:lei.dealer")
            expect(page.locator("#override")).not_to_contain_text(missed)
            assert supervisor.locator("#override").inner_text().count(missed) == 0
            supervisor.screenshot(path=str(ARTIFACTS / "console-override-real.png"))
            submit_form(supervisor, "approve_override", {"__reason": "seen on camera 3"})
            expect(page.locator("#override")).to_be_hidden()
            expect(page.locator(".seat .card")).to_have_count(2)
            approved = http.get(
                server + "/api/journal",
                params={"event": "override.approved"},
                headers=auth("surveillance"),
            ).json()["events"]
            assert approved[0]["payload"]["reason"] == "seen on camera 3"
            assert errors == []
        finally:
            browser.close()


def test_the_dealer_proposes_an_override_and_only_a_supervisor_decides_it(server: str) -> None:
    """A card the reader missed: the dealer enters it; the page shows the proposal, who made
    it, and offers the dealer nothing more; the supervisor approves it with a reason."""
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(server + "/")
            sign_in(page, "dealer")
            page.click("[data-action=open_round]")
            page.click("[data-action=shake_dice]")
            expect(page.locator("#phase")).to_contain_text("Dealing")
            http.post(server + "/_fake/misread", params={"seat": 2})
            submit_form(page, "propose_card", {"card": "QH"})
            override = page.locator("#override")
            expect(override).to_contain_text("Awaiting a supervisor")
            expect(override).not_to_contain_text("QH")  # entered face down: not shown (issue 21)
            expect(override).to_contain_text("lei.dealer")
            expect(page.locator("#actions button")).to_have_count(0)
            page.screenshot(path=str(ARTIFACTS / "console-override-pending.png"))

            page.click("#logout")
            sign_in(page, "supervisor")
            expect(page.locator("#actions [data-action=reject_override]")).to_be_visible()
            submit_form(page, "approve_override", {"__reason": "seen on camera 3"})
            expect(override).to_be_hidden()
            # Dealt face down: drawn as its back, for the supervisor too (issue 21).
            expect(page.locator(".seat[data-seat='2'] .card.back")).to_have_count(1)
            expect(page.locator(".seat[data-seat='2']")).not_to_contain_text("Q♥")
            journal = http.get(
                server + "/api/journal",
                params={"event": "table.approve_override"},
                headers=auth("surveillance"),
            ).json()["events"]
            assert journal[0]["actor"] == "wong.supervisor"
            assert journal[0]["payload"]["reason"] == "seen on camera 3"
        finally:
            browser.close()
