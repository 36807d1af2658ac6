"""The dealer console in a real browser: Debian's chromium, headless, driven by Playwright,
plays whole rounds through the page against a real HTTP server: once over the in-memory table
(holds, faults and the supervisor), once over the real table runtime with every device
simulated."""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import TOKENS, auth, dealt_on_disk, write_tokens
from playwright.sync_api import expect, sync_playwright
from server_process import fake_server, table_server

from daemon.rules import paigow
from daemon.rules.cards import DECK

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


def test_a_whole_thirteen_round_on_the_real_table_with_simulated_devices(
    real_table: str, tmp_path: Path
) -> None:
    """The real runtime, procedure and journal, every device simulated: the page plays a whole
    round of Thirteen; the test plays the people around the table (the dealer's hand drawing
    from the shoe, a bet after the dice, the clock passing five minutes)."""
    server = real_table

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(server + "/")
            sign_in(page, "dealer")
            phase = page.locator("#phase")
            expect(phase).to_contain_text("Equipment check")
            expect(phase).to_contain_text("設備檢查")

            page.click("[data-action=open_table]")
            expect(phase).to_contain_text("Hand shuffle")
            page.click("[data-action=confirm_hand_shuffle]")
            expect(phase).to_contain_text("Cut")  # the simulated shuffler counted 52
            submit_form(
                page,
                "confirm_cut",
                {"by": "player", "player": "P1", "cards": "20", "one_hand": True},
            )
            expect(phase).to_contain_text("Shoe")
            page.click("[data-action=load_shoe]")
            expect(phase).to_contain_text("Betting")

            for player, seat, amount in (("P1", "1", "300"), ("P2", "2", "200")):
                submit_form(
                    page,
                    "place_bet",
                    {
                        "player": player,
                        "seat": seat,
                        "amount": amount,
                        "units": "1",
                        "seated": True,
                    },
                )
                expect(page.locator(f".seat[data-seat='{seat}'] .bets")).to_contain_text(
                    f"{player} {amount}"
                )
            submit_form(page, "shake_dice", {"player": "P1"})
            expect(page.locator("#dice .die")).to_have_count(4)
            expect(phase).to_contain_text("Dealing")

            late_bet = httpx.post(
                server + "/api/actions/place_bet",
                json={
                    "payload": {
                        "player": "P3",
                        "seat": 3,
                        "amount": 100,
                        "units": 1,
                        "seated": True,
                    }
                },
                headers=auth("dealer"),
            )
            assert late_bet.status_code == 409
            expect(page.locator("#violations li")).to_contain_text("place_bet")

            # The dealer's hand draws the 52 cards from the simulated shoe.
            for _ in range(52):
                assert httpx.post(server + "/_sim/control", json={"op": "draw"}).json()["ok"]
            for n in range(4):
                expect(page.locator(f".seat[data-seat='{n}'] .card")).to_have_count(13)
            expect(phase).to_contain_text("Banker arranges")

            def rows(seat: int) -> dict[str, str | bool]:
                # The cards in the dealer's hands: the API serves them to no one in play.
                cards = dealt_on_disk(tmp_path / "journal", seat)
                return {
                    "head": " ".join(cards[:3]),
                    "middle": " ".join(cards[3:8]),
                    "tail": " ".join(cards[8:]),
                }

            submit_form(page, "arrange_banker", rows(0))
            expect(phase).to_contain_text("Banker arranged")
            page.click("[data-action=open_banker]")
            expect(phase).to_contain_text("Players arrange")
            expect(page.locator("#countdown")).to_have_text(re.compile(r"^0[45]:[0-5]\d$"))
            # The biggest form open: still one 1280x800 screen, the faults panel on it.
            page.click("[data-action=enter_arrangement]")
            assert page.evaluate("document.documentElement.scrollHeight") <= 800
            for panel in ("#faults", "#action-form button[type=submit]"):
                box = page.locator(panel).bounding_box()
                assert box is not None and box["y"] + min(box["height"], 20) <= 800, panel
            submit_form(page, "enter_arrangement", {"seat": "1", **rows(1)})
            expect(page.locator("#toast")).to_contain_text("Enter arrangement")
            # An arranged hand is shown in its three rows, the banker's too.
            for arranged in ("0", "1"):
                hand = page.locator(f".seat[data-seat='{arranged}'] .arrangement .row")
                expect(hand).to_have_count(3)
            tail = page.locator(".seat[data-seat='1'] .row[data-row=tail] .card")
            expect(tail).to_have_count(5)

            # Seat 2 is still arranging when the table's clock passes the five minutes.
            httpx.post(server + "/_sim/jump", params={"seconds": 301})
            expect(page.locator("#bell")).to_be_visible()
            expect(page.locator(".seat[data-seat='2'].late")).to_have_count(1)
            expect(phase).to_contain_text("Settling")

            page.click("[data-action=settle_round]")
            expect(phase).to_contain_text("Round over")
            expect(page.locator(".seat[data-seat='2'] .settlement")).to_contain_text("-200")
            expect(page.locator(".seat[data-seat='1'] .settlement")).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / "console-thirteen-round.png"))

            journal = httpx.get(
                server + "/api/journal",
                params={"event": "table.input", "limit": 1000},
                headers=auth("surveillance"),
            ).json()["events"]
            operator = [e for e in journal if e["payload"]["actor"].startswith("dealer")]
            assert {e["payload"]["actor"] for e in operator} == {"dealer:lei.dealer"}
            assert [e["payload"]["action"] for e in operator][-2:] == [
                "enter_arrangement",
                "settle_round",
            ]
            assert errors == []
        finally:
            browser.close()


def test_a_pai_gow_round_shows_eight_hands_and_the_tiles(tmp_path: Path) -> None:
    """The Pai Gow table (config/paigow.toml, its dice shaker simulated): eight hands on the
    page, the banker's, the tiles as the hands are set, the settlement."""
    config = Path(__file__).resolve().parents[2] / "config" / "paigow.toml"
    tiles = [str(t) for t in paigow.TILE_SET]
    random.Random(11).shuffle(tiles)

    def setting(group: list[str]) -> dict[str, str | bool]:
        front, back = paigow.set_hand(paigow.parse_tiles(" ".join(group)))
        return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}

    with (
        table_server(write_tokens(tmp_path / "tokens.toml"), tmp_path / "journal", config) as url,
        sync_playwright() as pw,
    ):
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url + "/")
            sign_in(page, "dealer")
            phase = page.locator("#phase")
            expect(page.locator("#game")).to_contain_text("Pai Gow")
            expect(page.locator(".seat")).to_have_count(8)
            page.click("[data-action=open_table]")
            expect(phase).to_contain_text("Bank offer")
            submit_form(page, "take_bank", {"player": "B", "seat": "0"})
            expect(page.locator(".seat[data-seat='0'] h3")).to_contain_text("Banker")
            submit_form(page, "confirm_tile_shuffle", {"new_set": False})
            submit_form(page, "move_stacks", {"by": "player", "player": "P1", "one_hand": True})
            submit_form(page, "move_stacks", {"by": "banker", "player": "B", "one_hand": True})
            submit_form(page, "place_bet", {"player": "P1", "seat": "1", "amount": "100"})
            expect(page.locator(".seat[data-seat='1'] .bets")).to_contain_text("P1 100")
            submit_form(page, "place_stake", {"amount": "1000"})
            submit_form(page, "shake_dice", {"player": "B"})
            expect(page.locator("#dice .die")).to_have_count(4)
            expect(phase).to_contain_text("Dealing")
            page.click("[data-action=confirm_deal]")
            submit_form(page, "set_hand", {"seat": "1", **setting(tiles[4:8])})
            # A hand set lies face down until the croupier opens them all (Art. 6(2)).
            expect(page.locator(".seat[data-seat='1'] .card.back")).to_have_count(4)
            expect(page.locator(".seat[data-seat='1'] .arrangement .row")).to_have_count(2)
            submit_form(page, "set_banker", setting(tiles[0:4]))
            expect(page.locator(".seat[data-seat='0'] .card.back")).to_have_count(4)
            page.click("[data-action=open_hands]")
            expect(page.locator(".seat[data-seat='0'] .card.tile")).to_have_count(4)
            expect(page.locator(".seat[data-seat='1'] .card.tile")).to_have_count(4)
            page.click("[data-action=settle_round]")
            expect(phase).to_contain_text("Round over")
            expect(page.locator(".seat[data-seat='1'] .settlement")).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / "console-paigow-round.png"))
        finally:
            browser.close()


def test_a_tilt_mid_deal_on_the_real_table_and_who_signs_in_then(real_table: str) -> None:
    """The shoe reader misses a card mid-deal on the real table: TILT; the fault is named
    without inventions; whoever signs in mid-round sees the journal that led there; the
    supervisor's longer name keeps the header on one line; the supervisor clears it; the
    dealer enters the missed card and the supervisor approves the override."""
    server = real_table

    def control(**request: str) -> dict[str, Any]:
        reply: dict[str, Any] = httpx.post(server + "/_sim/control", json=request).json()
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
            bet |= {"units": "1", "seated": True}
            submit_form(page, "place_bet", bet)
            submit_form(page, "shake_dice", {"player": "P1"})
            expect(phase).to_contain_text("Dealing")
            control(op="draw")
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
            expect(supervisor.locator("#events")).to_contain_text("bet.placed")
            expect(supervisor.locator("#events")).to_contain_text("table.tilted")
            for button in ("#logout", "#link"):
                assert supervisor.locator(button).bounding_box()["height"] < 45, button
            # Who is signed in, and as what, both in view.
            expect(supervisor.locator("#actor .role")).to_contain_text("supervisor")
            role_box = supervisor.locator("#actor .role").bounding_box()
            assert role_box is not None and role_box["x"] + role_box["width"] <= 1280
            submit_form(supervisor, "clear_tilt", {"__reason": "reader lens cleaned"})
            expect(supervisor.locator("#hold-banner")).to_be_hidden()
            expect(page.locator("#hold-banner")).to_be_hidden()

            # The dealer enters the missed card by hand; only the supervisor decides it.
            submit_form(page, "propose_card", {"card": missed})
            expect(page.locator("#override")).to_contain_text(missed)
            expect(supervisor.locator("#override")).to_contain_text("dealer:lei.dealer")
            submit_form(supervisor, "approve_override", {"__reason": "seen on camera 3"})
            expect(page.locator("#override")).to_be_hidden()
            expect(page.locator(".seat .card")).to_have_count(2)
            approved = httpx.get(
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
            httpx.post(server + "/_fake/misread", params={"seat": 2})
            submit_form(page, "propose_card", {"card": "QH"})
            override = page.locator("#override")
            expect(override).to_contain_text("Awaiting a supervisor")
            expect(override).to_contain_text("QH")
            expect(override).to_contain_text("lei.dealer")
            expect(page.locator("#actions button")).to_have_count(0)
            page.screenshot(path=str(ARTIFACTS / "console-override-pending.png"))

            page.click("#logout")
            sign_in(page, "supervisor")
            expect(page.locator("#actions [data-action=reject_override]")).to_be_visible()
            submit_form(page, "approve_override", {"__reason": "seen on camera 3"})
            expect(override).to_be_hidden()
            expect(page.locator(".seat[data-seat='2'] .card")).to_have_text("Q♥")
            journal = httpx.get(
                server + "/api/journal",
                params={"event": "table.approve_override"},
                headers=auth("surveillance"),
            ).json()["events"]
            assert journal[0]["actor"] == "wong.supervisor"
            assert journal[0]["payload"]["reason"] == "seen on camera 3"
        finally:
            browser.close()
