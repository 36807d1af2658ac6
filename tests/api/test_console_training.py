"""Training mode in a real browser (Debian's chromium, Playwright): `tabled run --http` on a
shipped config, every device simulated in-process; a dealer, a supervisor and a trainer signed
in on three tabs play a whole round from the pages alone (the trainer's TRAINING panel is the
dealer's hand on the shoe, the shuffler's and the shaker's outcomes), and the console's rough
edges are checked where a person sees them. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright
from training_support import PAIGOW, PEOPLE, auth, tabled_run

from daemon.rules import paigow
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
SCREEN = {"width": 1280, "height": 800}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]


def open_tab(browser: Any, url: str, role: str, errors: list[str]) -> Any:
    page = browser.new_page(viewport=SCREEN)
    page.on("pageerror", lambda exc: errors.append(f"{role}: {exc}"))
    page.goto(url + "/")
    page.fill("#token", PEOPLE[role][1])
    page.click("#login button[type=submit]")
    expect(page.locator("#link")).to_contain_text("live")
    expect(page.locator("#actor")).to_contain_text(PEOPLE[role][0])
    return page


def submit_form(page: Any, action: str, fields: dict[str, str | bool]) -> None:
    page.click(f"#actions [data-action={action}]")
    for name, value in fields.items():
        selector = f"#action-form [name={name}]"
        if isinstance(value, bool):
            page.set_checked(selector, value)
        elif page.locator(selector).evaluate("e => e.tagName") == "SELECT":
            page.select_option(selector, value)
        else:
            page.fill(selector, value)
    page.click("#action-form button[type=submit]")


def sim(page: Any, control: str, device: str | None = None) -> None:
    """The trainer presses a control on the TRAINING panel and sees it done."""
    where = f"[data-device={device}]" if device else ""
    page.click(f"#training button[data-sim='{control}']{where}")
    expect(page.locator("#training-result")).to_contain_text("✓")


def by_hand(trainer: Any) -> None:
    """The trainer ticks "by hand" and sees it done. A panel refresh already on its way may
    redraw the box as it was for a moment (Playwright's check() calls that a failed click):
    what the trainer sees is the control confirmed, then the box ticked."""
    trainer.click("#by-hand")
    expect(trainer.locator("#training-result")).to_contain_text("✓ 洗牌及搖骰等待訓練員")
    expect(trainer.locator("#by-hand")).to_be_checked()


def wait_ready(url: str) -> None:
    """The simulated devices are identified: the dealer may open the table."""
    deadline = time.monotonic() + 60  # a hang guard: a request's round trip is the wait
    while True:
        body = http.get(url + "/api/state", headers=auth("dealer")).json()
        if "open_table" in body["legal"]:
            return
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"the devices did not come up: {body['state'].get('devices')}")


def journal(workdir: Path, event: str) -> list[dict[str, Any]]:
    """What the journal on disk says (it knows every card; the pages may not show them)."""
    lines = []
    for path in sorted((workdir / "var").glob("journal*/*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["event"] == event:
                lines.append(record)
    return lines


def no_overflow(page: Any) -> None:
    """One 1280x800 screen; the journal's last line in view, whole."""
    size = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    assert size[0] <= 1280 and size[1] <= 800, size
    box = page.locator("#events").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800, box
    clipped = page.evaluate(
        """() => { const list = document.getElementById('events');
        const bottom = list.getBoundingClientRect().bottom;
        return [...list.children].filter(li => { const r = li.getBoundingClientRect();
          return getComputedStyle(li).visibility !== 'hidden' &&
            r.top < bottom && r.bottom > bottom + 0.5; }).length; }"""
    )
    assert clipped == 0
    expect(page.locator("#events li:not(.beyond)").first).to_be_visible()


def test_a_trainer_dealer_and_supervisor_play_a_thirteen_round_from_the_browser(
    tmp_path: Path,
) -> None:
    with tabled_run(tmp_path) as url, sync_playwright() as pw:
        wait_ready(url)
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        errors: list[str] = []
        try:
            trainer = open_tab(browser, url, "trainer", errors)
            dealer = open_tab(browser, url, "dealer", errors)
            supervisor = open_tab(browser, url, "supervisor", errors)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)

            # Only the trainer has the panel; everyone sees the table is a training one.
            expect(trainer.locator("#training")).to_be_visible()
            expect(trainer.locator("#training h2")).to_contain_text("TRAINING")
            expect(trainer.locator("#training h2")).to_contain_text("訓練")
            for page in (dealer, supervisor):
                expect(page.locator("#training-badge")).to_be_visible()
                expect(page.locator("#training")).to_be_hidden()
            expect(trainer.locator("#training .sim-device")).to_have_count(4)

            # The shuffler and the shaker wait for the trainer.
            by_hand(trainer)
            phase = dealer.locator("#phase")
            dealer.click("#actions [data-action=open_table]")
            expect(phase).to_contain_text("Hand shuffle")
            dealer.click("#actions [data-action=confirm_hand_shuffle]")
            expect(phase).to_contain_text("Machine shuffle")
            # A stale confirmation goes with its phase.
            expect(dealer.locator("#toast")).to_contain_text("Hand shuffle done")
            status = trainer.locator("[data-status=shuffler]")
            expect(status).to_contain_text("waiting for you")
            # The trainer shuffles with a card missing: the count is wrong, TILT.
            trainer.select_option("#training select[data-device=shuffler]", "wrong_count")
            sim(trainer, "shuffle", "shuffler")
            expect(phase).to_contain_text("TILT")
            expect(dealer.locator("#toast")).to_be_hidden()
            expect(dealer.locator("#hold-banner")).to_be_visible()
            submit_form(supervisor, "clear_tilt", {"__reason": "deck recounted, new deck"})
            expect(phase).to_contain_text("Hand shuffle")
            dealer.click("#actions [data-action=confirm_hand_shuffle]")
            expect(status).to_contain_text("waiting for you")
            sim(trainer, "shuffle")
            expect(phase).to_contain_text("Cut")

            submit_form(
                dealer,
                "confirm_cut",
                {"by": "player", "player": "P1", "cards": "20", "one_hand": True},
            )
            dealer.click("#actions [data-action=load_shoe]")
            expect(phase).to_contain_text("Betting")
            for player, seat, amount in (("P1", "1", "300"), ("P2", "2", "200")):
                submit_form(
                    dealer,
                    "place_bet",
                    {
                        "player": player,
                        "seat": seat,
                        "amount": amount,
                        "units": str(int(amount) // 100),  # Art. 11: units of 100 MOP
                        "seated": True,
                    },
                )
                expect(dealer.locator(f".seat[data-seat='{seat}'] .bets")).to_contain_text(
                    f"{player} {amount}"
                )
            # Money in the table's currency (MOP by default), never "$".
            expect(dealer.locator(".seat[data-seat='1'] h3")).to_contain_text("300 MOP")
            expect(dealer.locator("#banker")).to_contain_text("500 MOP")
            assert "$" not in dealer.locator("#console").inner_text()
            submit_form(dealer, "shake_dice", {"player": "P1"})
            expect(phase).to_contain_text("Dice")
            # The trainer tilts a die: an invalid throw, the table shakes again; then it lands.
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake:die_tilted")
            expect(trainer.locator("#events")).to_contain_text("invalid throw")
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake")
            expect(phase).to_contain_text("Dealing")
            expect(dealer.locator("#dice .die")).to_have_count(4)

            # A bet after the dice, from another client: refused; said in both languages.
            late = http.post(
                url + "/api/actions/place_bet",
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
            assert late.status_code == 409
            violation = dealer.locator("#violations li").first
            expect(violation).to_contain_text("拒絕 下注 Place bet")
            expect(violation).to_contain_text("發牌 Dealing")

            # Nothing dealt yet: nothing to correct. One card drawn: a misdeal can be corrected.
            expect(dealer.locator("#actions [data-action=correct_misdeal]")).to_have_count(0)
            sim(trainer, "draw")
            expect(dealer.locator(".seat .card")).to_have_count(1)
            # The trainer's touch is in the journal, said as a person reads it.
            expect(dealer.locator("#events li.training").first).to_have_text(
                re.compile(r"訓練：抽牌 · training: draw a card · chan\.trainer$")
            )
            expect(dealer.locator("#actions [data-action=correct_misdeal]")).to_be_visible()
            sim(trainer, "deal")
            expect(phase).to_contain_text("Banker arranges")
            expect(dealer.locator(".seat .card")).to_have_count(52)

            dealt = journal(tmp_path, "card.dealt")
            assert len(dealt) == 52

            def rows(seat: int) -> dict[str, str | bool]:
                cards = [d["payload"]["card"] for d in dealt if d["payload"]["seat"] == seat]
                return {
                    "head": " ".join(cards[:3]),
                    "middle": " ".join(cards[3:8]),
                    "tail": " ".join(cards[8:]),
                }

            dealer.click("#actions [data-action=arrange_banker]")
            expect(phase).to_contain_text("Banker arranged")
            dealer.click("#actions [data-action=open_banker]")
            expect(phase).to_contain_text("Players arrange")
            expect(dealer.locator("#timer-panel")).to_be_visible()
            submit_form(dealer, "enter_arrangement", {"seat": "0", **rows(0)})
            expect(dealer.locator("#toast")).to_contain_text("Place the open hand")
            submit_form(dealer, "player_arranged", {"seat": "1"})
            submit_form(dealer, "player_arranged", {"seat": "2"})
            expect(phase).to_contain_text("Settling")
            for seat in ("1", "2"):
                submit_form(dealer, "open_hand", {"seat": seat})
                submit_form(dealer, "enter_arrangement", {"seat": seat, **rows(int(seat))})
            dealer.click("#actions [data-action=settle_round]")
            expect(phase).to_contain_text("Round over")
            for seat in ("1", "2"):
                expect(dealer.locator(f".seat[data-seat='{seat}'] .settlement")).to_contain_text(
                    re.compile(r"[+-]\d[\d,]* MOP")
                )

            # The journal panel speaks: each event a short sentence in both languages.
            events = dealer.locator("#events")
            expect(events).to_contain_text("結算 · Settle · lei.dealer")
            expect(events).to_contain_text("發牌至第1門 · card to seat 1")
            expect(events).to_contain_text("本局已結算 · round settled")
            assert "table.input" not in events.inner_text()
            dealer.screenshot(path=str(ARTIFACTS / "training-thirteen-dealer.png"))
            trainer.screenshot(path=str(ARTIFACTS / "training-thirteen-trainer.png"))
            no_overflow(dealer)
            no_overflow(trainer)

            # Every control the trainer used is journaled as an operator action.
            controls = journal(tmp_path, "training.control")
            assert [c["payload"]["op"] for c in controls] == [
                "by_hand",
                "shuffle",
                "shuffle",
                "shake",
                "shake",
                "draw",
                "deal",
            ]
            assert {c["actor"] for c in controls} == {"trainer:chan.trainer"}
            assert controls[1]["payload"]["fault"] == "wrong_count"
            # The dealer's and the supervisor's pages never asked for the trainer's panel.
            assert journal(tmp_path, "api.forbidden") == []
            assert errors == []
        finally:
            browser.close()


def test_a_trainer_dealer_and_supervisor_play_a_pai_gow_round_from_the_browser(
    tmp_path: Path,
) -> None:
    tiles = [str(t) for t in paigow.TILE_SET]
    random.Random(11).shuffle(tiles)

    def setting(group: list[str]) -> dict[str, str | bool]:
        front, back = paigow.set_hand(paigow.parse_tiles(" ".join(group)))
        return {"front": " ".join(map(str, front)), "back": " ".join(map(str, back))}

    with tabled_run(tmp_path, PAIGOW) as url, sync_playwright() as pw:
        wait_ready(url)
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        errors: list[str] = []
        try:
            trainer = open_tab(browser, url, "trainer", errors)
            dealer = open_tab(browser, url, "dealer", errors)
            supervisor = open_tab(browser, url, "supervisor", errors)
            phase = dealer.locator("#phase")
            expect(dealer.locator("#game")).to_contain_text("Pai Gow")
            # Pai Gow's table has only the dice shaker; no arrangement timer on its page.
            expect(trainer.locator("#training .sim-device")).to_have_count(1)
            expect(dealer.locator("#timer-panel")).to_be_hidden()
            expect(dealer.locator("#countdown")).to_be_hidden()

            dealer.click("#actions [data-action=open_table]")
            expect(phase).to_contain_text("Bank offer")
            submit_form(dealer, "take_bank", {"player": "B", "seat": "0"})
            # The banker panel names who holds the bank.
            expect(dealer.locator("#banker .bank-holder")).to_contain_text("B")
            expect(dealer.locator("#banker .bank-holder")).to_contain_text("莊家")
            submit_form(dealer, "confirm_tile_shuffle", {"new_set": False})
            submit_form(dealer, "move_stacks", {"by": "player", "player": "P1", "one_hand": True})
            submit_form(dealer, "move_stacks", {"by": "banker", "player": "B", "one_hand": True})
            submit_form(dealer, "place_bet", {"player": "P1", "seat": "1", "amount": "100"})
            submit_form(dealer, "place_stake", {"amount": "1000"})

            # The shaker's reader fails: TILT; the trainer mends it, the supervisor clears it.
            trainer.select_option("#training select[data-device=dice_shaker]", "reader_lost")
            sim(trainer, "inject", "dice_shaker")
            expect(phase).to_contain_text("TILT")
            sim(trainer, "clear", "dice_shaker")
            expect(supervisor.locator("#actions [data-action=clear_tilt]")).to_be_visible()
            submit_form(supervisor, "clear_tilt", {"__reason": "reader reseated"})
            expect(phase).to_contain_text("Betting")

            by_hand(trainer)
            # Art. 5(3): the head tiles out first, then the dice.
            dealer.click("#actions [data-action=head_tiles_out]")
            submit_form(dealer, "shake_dice", {"player": "B"})
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake:die_out_of_cup")
            expect(trainer.locator("#events")).to_contain_text("invalid throw")
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake")
            expect(dealer.locator("#dice .die")).to_have_count(4)
            expect(phase).to_contain_text("Dealing")
            # Art. 2(3): the stacks are dealt counter-clockwise from the door the dice name.
            state = http.get(url + "/api/state", headers=auth("dealer")).json()["state"]
            first = (state["dice_total"] - 1) % 8
            for turn in range(8):
                submit_form(dealer, "deal_hand", {"seat": str((first + turn) % 8)})
            # Art. 6(1)-(2): the door sets face down, then the banker; the croupier opens the
            # hands, the banker's first, and only then are the tiles known to the system.
            submit_form(dealer, "set_hand", {"seat": "1"})
            dealer.click("#actions [data-action=set_banker]")
            submit_form(dealer, "open_hand", {"seat": "0", **setting(tiles[0:4])})
            submit_form(dealer, "open_hand", {"seat": "1", **setting(tiles[4:8])})
            expect(dealer.locator(".seat[data-seat='1'] .card.tile")).to_have_count(4)
            dealer.click("#actions [data-action=settle_round]")
            expect(phase).to_contain_text("Round over")
            expect(dealer.locator(".seat[data-seat='1'] .settlement")).to_contain_text("MOP")
            expect(dealer.locator("#timer-panel")).to_be_hidden()
            dealer.screenshot(path=str(ARTIFACTS / "training-paigow-dealer.png"))
            trainer.screenshot(path=str(ARTIFACTS / "training-paigow-trainer.png"))
            no_overflow(dealer)
            no_overflow(trainer)
            # No shoe at this table: nothing to handle there; refused, and journaled too.
            no_shoe = http.post(
                url + "/api/training/inject",
                json={"device": "shoe_reader", "fault": "misread"},
                headers=auth("trainer"),
            )
            assert no_shoe.status_code == 409 and "not at this table" in no_shoe.text
            controls = journal(tmp_path, "training.control")
            assert [(c["payload"]["op"], c["payload"]["ok"]) for c in controls] == [
                ("inject", True),
                ("clear", True),
                ("by_hand", True),
                ("shake", True),
                ("shake", True),
                ("inject", False),
            ]
            assert errors == []
        finally:
            browser.close()
