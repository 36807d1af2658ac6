"""Training mode in a real browser (Debian's chromium, Playwright): `tabled run --http` on a
shipped config, every device simulated in-process; a dealer, a supervisor and a trainer signed
in on three browser contexts play a whole round of each game through the pages alone, with
clicks and typing only. The trainer's TRAINING panel is the dealer's hand on the shoe, the
shuffler's and the shaker's outcomes, and the simulated "physical table": each hand as its
player holds it, which the trainer (who plays the players) reads there and the dealer places
once the hand is opened. No helper here reads the journal or asks the API for a card.
Screenshots go to tests/artifacts/; the screens are measured at 1280x800 and 1024x768."""

from __future__ import annotations

import itertools
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright
from training_support import PAIGOW, PEOPLE, auth, tabled_run

from daemon.procedures.paigow.settle import wrongly_set
from daemon.rules import thirteen as rules13
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
SCREENS = ({"width": 1280, "height": 800}, {"width": 1024, "height": 768})

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]


def open_tab(browser: Any, url: str, role: str, errors: list[str]) -> Any:
    """A person's own browser context (no shared storage), signed in on the console."""
    context = browser.new_context(viewport=SCREENS[0])
    page = context.new_page()
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


def held(trainer: Any, seat: int) -> dict[str, list[str]]:
    """A hand as its player holds it, read off the trainer's simulated physical table."""
    node = trainer.locator(f"#physical .physical-seat[data-seat='{seat}']")
    expect(node.locator(".row")).not_to_have_count(0)
    rows: dict[str, list[str]] = {}
    for row in node.locator(".row").all():
        codes = row.locator(".cards > [data-code]").evaluate_all(
            "nodes => nodes.map(n => n.dataset.code)"
        )
        rows[str(row.get_attribute("data-row"))] = codes
    return rows


def place(
    dealer: Any, action: str, seat: int, rows: dict[str, list[str]], typed: str | None = None
) -> None:
    """The dealer places an open hand into its rows by tapping its cards (or tiles); `typed`,
    a card of it typed by its code instead (a card the reader missed)."""
    dealer.click(f"#actions [data-action={action}]")
    form = dealer.locator("#action-form.placer")
    expect(form).to_be_visible()
    form.locator(f".seat-pick [data-seat='{seat}']").click()
    expect(form.locator(f".seat-pick [data-seat='{seat}']")).to_have_class(re.compile("chosen"))
    for key, codes in rows.items():
        form.locator(f".target[data-row={key}]").click()
        placed = form.locator(f".target[data-row={key}] .cards > [data-code]")
        for count, code in enumerate(codes, start=1):
            if code == typed:
                form.locator("input[data-place=typed]").fill(code)
                form.locator("button[data-place=add]").click()
            else:
                form.locator(f".source .pick[data-code='{code}']").first.click()
            expect(placed).to_have_count(count)
        try:
            expect(placed).to_have_count(len(codes))
        except AssertionError:
            picks = form.locator(".source .pick").evaluate_all(
                "ps => ps.map(p => p.dataset.code + (p.disabled ? '-' : '+'))"
            )
            raise AssertionError(f"{seat} {key} {codes}: picks {picks}") from None
    form.locator("button[type=submit]").click()


# The settled table in view: the page, the seats' area and each seat's panel, the strip above
# them; each one's content taller than its box (it scrolls, or its end is cut off).
SCROLLED = """() => { const out = [];
  const tall = (e, what) => { if (e && e.scrollHeight > e.clientHeight + 1)
    out.push(`${what} ${e.scrollHeight}>${e.clientHeight}`); };
  tall(document.documentElement, 'page');
  tall(document.getElementById('seats'), '#seats');
  tall(document.getElementById('strip'), '#strip');
  for (const seat of document.querySelectorAll('#seats .seat'))
    tall(seat, `seat ${seat.dataset.seat}`);
  return out; }"""


def measured(page: Any, name: str, settled: bool = True) -> None:
    """The page at each screen size: nothing past the right edge (scrollWidth, and every
    element's box), the settled table whole with nothing to scroll (issue 23: at 1024x768 the
    settlement scrolled), and at 1280x800 the journal's last line whole. A screenshot of each."""
    for screen in SCREENS:
        page.set_viewport_size(screen)
        page.wait_for_timeout(100)  # a resize's layout
        if settled:
            assert page.evaluate(SCROLLED) == [], (name, screen, page.evaluate(SCROLLED))
        width, beyond = page.evaluate(
            """() => { const w = window.innerWidth; const out = [];
            for (const e of document.querySelectorAll('body *')) {
              const r = e.getBoundingClientRect();
              if (r.width > 0 && r.height > 0 && r.right > w + 1)
                out.push(`${e.tagName}#${e.id}.${e.className} right=${Math.round(r.right)}`);
            }
            return [document.documentElement.scrollWidth, out.slice(0, 8)]; }"""
        )
        assert width <= screen["width"] and beyond == [], (name, screen, width, beyond)
        for always in ("#logout", "#link"):
            box = page.locator(always).bounding_box()
            assert box is not None and box["x"] + box["width"] <= screen["width"], (always, box)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{screen['width']}x{screen['height']}.png"))
    page.set_viewport_size(SCREENS[0])
    page.wait_for_timeout(100)  # the resize's layout, and the journal fitted to it
    clipped = page.evaluate(
        """() => { const list = document.getElementById('events');
        const bottom = list.getBoundingClientRect().bottom;
        return [...list.children].filter(li => { const r = li.getBoundingClientRect();
          return getComputedStyle(li).visibility !== 'hidden' &&
            r.top < bottom && r.bottom > bottom + 0.5; }).length; }"""
    )
    assert clipped == 0


def fouled(rows: dict[str, list[str]]) -> dict[str, list[str]]:
    """The player's own mistake: the hand set with its strongest cards in front (a foul under
    Art. 7), as a player sets it upside down."""
    cards = [*rows["head"], *rows["middle"], *rows["tail"]]
    for head in itertools.combinations(cards, 3):
        rest = [c for c in cards if c not in head]
        for middle in (rest[:5], rest[5:]):
            tail = [c for c in rest if c not in middle]
            if rules13.is_foul(" ".join(head), " ".join(middle), " ".join(tail)):
                return {"head": list(head), "middle": middle, "tail": tail}
    raise AssertionError(f"no foul found for {rows}")


def correct_placement(
    browser: Any, url: str, errors: list[str], pages: tuple[Any, Any], rows: dict[str, Any]
) -> None:
    """Seat 1's placed hand, a card of the middle and one of the tail swapped by a supervisor
    and approved by a second one: the dealer is never offered it, the proposer never decides."""
    dealer, supervisor = pages
    expect(dealer.locator("#actions [data-action=correct_arrangement]")).to_have_count(0)
    middle, tail = rows["middle"][0], rows["tail"][0]
    supervisor.click("#actions [data-action=correct_arrangement]")
    form = supervisor.locator("#action-form.placer")
    form.locator(".seat-pick [data-seat='1']").click()
    # The hand as placed; take the two cards back and tap each into the other row.
    for key, code in (("middle", middle), ("tail", tail)):
        placed = form.locator(f".target[data-row={key}] .cards > [data-code='{code}']")
        expect(placed).to_have_count(1)
        placed.click()
        expect(placed).to_have_count(0)
    for code in (middle, tail):
        form.locator(f".source .pick[data-code='{code}']").click()
    expect(form.locator(f".target[data-row=tail] [data-code='{middle}']")).to_have_count(1)
    form.locator("[name=__reason]").fill("dealer tapped two cards into the wrong rows")
    form.locator("button[type=submit]").click()
    second = open_tab(browser, url, "supervisor2", errors)
    override = second.locator("#override")
    expect(override).to_contain_text("待另一位主任批准")
    expect(override).to_contain_text("Awaiting a second supervisor")
    expect(override).to_contain_text("Correct a placed hand (seat 1)")
    # The settlement waits for the decision; the proposer does not decide.
    expect(dealer.locator("#actions [data-action=settle_round]")).to_have_count(0)
    submit_form(supervisor, "approve_override", {"__reason": "mine"})
    expect(supervisor.locator("#refusal")).to_contain_text("does not decide")
    expect(supervisor.locator("#refusal")).to_contain_text("提出者不可自行決定")
    # The Violations list says the reason in both languages too.
    expect(dealer.locator("#violations")).to_contain_text("提出者不可自行決定")
    submit_form(second, "approve_override", {"__reason": "seen on camera"})
    expect(override).to_be_hidden()
    row = dealer.locator(".seat[data-seat='1'] .row[data-row=middle]")
    expect(row.locator(f"[data-code='{tail}']")).to_have_count(1)
    expect(dealer.locator("#events")).to_contain_text("已更正排牌")
    second.context.close()


def test_a_trainer_dealer_and_supervisor_play_a_thirteen_round_from_the_browser(
    tmp_path: Path,
) -> None:
    """Banker and three players, one of them fouled; every hand entered from its open cards."""
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

            # The dealer cuts though a player would: refused beside the Cut button, in both
            # languages, in words (the article's and the table's), with what was entered.
            submit_form(dealer, "confirm_cut", {"by": "dealer", "cards": "20", "one_hand": True})
            refusal = dealer.locator("#action-form #refusal")
            expect(refusal).to_contain_text("未能執行「切牌」")
            expect(refusal).to_contain_text("Cut: not done")
            expect(refusal).to_contain_text("the dealer cuts only when no player will")
            expect(refusal).to_contain_text("只有在無玩家願意割牌時才由荷官割牌")
            expect(refusal).to_contain_text("Art. 2(a)")
            expect(refusal).to_contain_text("割牌")  # the article's own words
            expect(refusal).to_contain_text("by dealer")
            expect(refusal).to_contain_text("cards 20")
            assert "refused in phase" not in refusal.inner_text()
            dealer.screenshot(path=str(ARTIFACTS / "training-thirteen-refusal.png"))
            dealer.fill("#action-form [name=cards]", "20")
            dealer.select_option("#action-form [name=by]", "player")
            dealer.fill("#action-form [name=player]", "P1")
            dealer.click("#action-form button[type=submit]")
            expect(phase).to_contain_text("Shoe")
            dealer.click("#actions [data-action=load_shoe]")
            expect(phase).to_contain_text("Betting")
            bets = (("P1", "1", "300"), ("P2", "2", "200"), ("P3", "3", "100"))
            for player, seat, amount in bets:
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
            expect(dealer.locator("#banker")).to_contain_text("600 MOP")
            assert "$" not in dealer.locator("#console").inner_text()
            # A full table: others bet beside the holders (Art. 5), standing.
            for player, seat in (("P4", "1"), ("P5", "3"), ("P6", "3")):
                submit_form(
                    dealer,
                    "place_bet",
                    {"player": player, "seat": seat, "amount": "100", "units": "1"},
                )
                expect(dealer.locator(f".seat[data-seat='{seat}'] .bets")).to_contain_text(
                    f"{player} 100"
                )
            submit_form(dealer, "shake_dice", {"player": "P1"})
            expect(phase).to_contain_text("Dice")
            # The trainer tilts a die: an invalid throw, the table shakes again; then it lands.
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake:die_tilted")
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake")
            expect(phase).to_contain_text("Dealing")
            expect(dealer.locator("#dice .die")).to_have_count(4)
            # The bets closed at the shake: no bet is offered any more.
            expect(dealer.locator("#actions [data-action=place_bet]")).to_have_count(0)

            # Nothing dealt yet: nothing to correct. One card drawn: a misdeal can be corrected.
            expect(dealer.locator("#actions [data-action=correct_misdeal]")).to_have_count(0)
            expect(dealer.locator("#progress")).to_contain_text("dealt 0/52")
            sim(trainer, "draw")
            expect(dealer.locator(".seat .card")).to_have_count(1)
            expect(dealer.locator("#progress")).to_contain_text("已發 1/52")
            expect(dealer.locator("#progress")).to_contain_text("dealt 1/52")
            # The trainer's touch is in the journal, said as a person reads it.
            expect(dealer.locator("#events li.training").first).to_have_text(
                re.compile(r"訓練：抽牌 · training: draw a card · chan\.trainer$")
            )
            expect(dealer.locator("#actions [data-action=correct_misdeal]")).to_be_visible()
            sim(trainer, "deal")
            expect(phase).to_contain_text("Banker arranges")
            expect(dealer.locator("#progress")).to_contain_text("dealt 52/52")
            # Dealt face down: every role sees 52 backs; the trainer's physical table is the
            # players' hands, marked as a simulation.
            for page in (dealer, supervisor, trainer):
                expect(page.locator("#seats .card.back")).to_have_count(52)
            expect(trainer.locator("#physical")).to_contain_text("training only")
            expect(trainer.locator("#physical")).to_contain_text("模擬實體枱面")
            expect(dealer.locator("#physical")).to_be_hidden()
            expect(trainer.locator("#physical .physical-seat")).to_have_count(4)

            # Art. 2(d): the banker arranges face down and says so; again until the opening.
            dealer.click("#actions [data-action=arrange_banker]")
            expect(phase).to_contain_text("Banker arranged")
            dealer.click("#actions [data-action=arrange_banker]")
            expect(dealer.locator("#toast")).to_contain_text("Banker arranged")
            dealer.click("#actions [data-action=open_banker]")
            expect(phase).to_contain_text("Players arrange")
            expect(dealer.locator("#timer-panel")).to_be_visible()
            # The banker's hand lies open: 13 cards face up on every screen.
            for page in (dealer, supervisor):
                expect(page.locator(".seat[data-seat='0'] .card[data-code]")).to_have_count(13)
                expect(page.locator("#seats .card.back")).to_have_count(39)
            banker = held(trainer, 0)
            # Placed by tapping; one card typed by its code, as for a card the reader missed.
            place(dealer, "enter_arrangement", 0, banker, typed=banker["tail"][-1])
            expect(dealer.locator(".seat[data-seat='0'] .row[data-row=head] .card")).to_have_count(
                3
            )
            # Placed, the banker's open hand is final (Art. 2(d)): the dealer's second placing
            # is refused beside the action, in both languages.
            place(dealer, "enter_arrangement", 0, banker)
            refusal = dealer.locator("#action-form #refusal")
            expect(refusal).to_contain_text("未能執行「排入三道」")
            expect(refusal).to_contain_text("placed and final")
            expect(refusal).to_contain_text("莊家已開的牌已排入三道，不可再改")
            expect(refusal).to_contain_text("Art. 2(d)")
            for seat in ("1", "2", "3"):
                submit_form(dealer, "player_arranged", {"seat": seat})
            expect(phase).to_contain_text("Settling")
            # Art. 8: each hand is opened against the banker's, then placed from its cards.
            for seat in (1, 2, 3):
                submit_form(dealer, "open_hand", {"seat": str(seat)})
                expect(dealer.locator(f".seat[data-seat='{seat}'] .card[data-code]")).to_have_count(
                    13
                )
                rows = held(trainer, seat)
                if seat == 2:
                    rows = fouled(rows)  # the player set it upside down
                place(dealer, "enter_arrangement", seat, rows)
                expect(
                    dealer.locator(f".seat[data-seat='{seat}'] .row[data-row=tail] .card")
                ).to_have_count(5)
            correct_placement(browser, url, errors, (dealer, supervisor), held(trainer, 1))
            dealer.click("#actions [data-action=settle_round]")
            expect(phase).to_contain_text("Round over")
            compared = 0
            for seat in ("1", "2", "3"):
                expect(dealer.locator(f".seat[data-seat='{seat}'] .settlement")).to_contain_text(
                    re.compile(r"[+-]\d[\d,]* MOP")
                )
                # Each row says beside its cards its hand's name and who won it; a special
                # hand (Art. 9 I, kept by a foul too) decides without comparing rows.
                rows_said = dealer.locator(f".seat[data-seat='{seat}'] .row .why[data-row]")
                special = dealer.locator(f".seat[data-seat='{seat}'] .detail .why.special")
                expect(rows_said).to_have_count(0 if special.count() else 3)
                compared += 0 if special.count() else 1
            foul = dealer.locator(".seat[data-seat='2'] .detail .why.foul")
            expect(foul).to_contain_text("相公")
            expect(foul).to_contain_text("fouled")
            # A fouled hand loses its two units, unless the shoe dealt it a special hand, which a
            # foul keeps (Art. 9 I) and which then wins by itself: the deal is the simulator's.
            if not dealer.locator(".seat[data-seat='2'] .detail .why.special").count():
                settled = dealer.locator(".seat[data-seat='2'] .settlement")
                expect(settled).to_contain_text("-200 MOP")
            head = dealer.locator(".seat[data-seat='1'] .row[data-row=head]")
            expect(head).to_contain_text("頭道")
            if dealer.locator(".seat[data-seat='1'] .row .why").count():
                expect(head.locator(".why")).to_contain_text(
                    re.compile(r"(banker|player|tie) wins")
                )
            # The banker's rows name its hands (the same against each seat).
            banker_said = dealer.locator(".seat[data-seat='0'] .row .why[data-row]")
            expect(banker_said).to_have_count(3 if compared else 0)

            # The journal panel speaks: each action a short sentence in both languages.
            events = dealer.locator("#events")
            expect(events).to_contain_text("結算 · Settle · lei.dealer")
            expect(events).to_contain_text("排入三道 · Place the open hand · lei.dealer")
            assert "table.input" not in events.inner_text()
            for page, name in ((dealer, "dealer"), (trainer, "trainer"), (supervisor, "sup")):
                measured(page, f"training-thirteen-{name}")
            assert errors == []
        finally:
            browser.close()


def test_a_trainer_dealer_and_supervisor_play_a_pai_gow_round_from_the_browser(
    tmp_path: Path,
) -> None:
    """Eight doors, a co-banker, and a hand the croupier re-sets; every hand's tiles tapped
    from the tile pictures as the trainer's physical table shows them."""
    with tabled_run(tmp_path, PAIGOW) as url, sync_playwright() as pw:
        wait_ready(url)
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        errors: list[str] = []
        try:
            trainer = open_tab(browser, url, "trainer", errors)
            dealer = open_tab(browser, url, "dealer", errors)
            supervisor = open_tab(browser, url, "supervisor", errors)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            phase = dealer.locator("#phase")
            expect(dealer.locator("#game")).to_contain_text("Pai Gow")
            # Pai Gow's table has only the dice shaker; no arrangement timer on its page.
            expect(trainer.locator("#training .sim-device")).to_have_count(1)
            expect(dealer.locator("#timer-panel")).to_be_hidden()
            expect(dealer.locator("#countdown")).to_be_hidden()

            dealer.click("#actions [data-action=open_table]")
            expect(phase).to_contain_text("Bank offer")
            expect(phase).to_contain_text("做莊")
            submit_form(dealer, "take_bank", {"player": "B", "seat": "0"})
            # The banker panel names who holds the bank.
            expect(dealer.locator("#banker .bank-holder")).to_contain_text("B")
            expect(dealer.locator("#banker .bank-holder")).to_contain_text("莊家")
            submit_form(dealer, "confirm_tile_shuffle", {"new_set": False})
            submit_form(dealer, "move_stacks", {"by": "player", "player": "P1", "one_hand": True})
            submit_form(dealer, "move_stacks", {"by": "banker", "player": "B", "one_hand": True})
            for door in range(1, 8):
                submit_form(
                    dealer, "place_bet", {"player": f"P{door}", "seat": str(door), "amount": "100"}
                )
            submit_form(dealer, "place_stake", {"amount": "1000"})
            expect(dealer.locator("#banker .bank-holder")).to_contain_text("1,000 MOP")
            # Art. 5(5): a guest who bets on no door co-banks, after the main banker's stake.
            submit_form(dealer, "co_bank", {"player": "C", "amount": "300"})
            expect(dealer.locator("#banker .co-bankers")).to_contain_text("C 300 MOP")

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
            expect(trainer.locator("[data-status=dice_shaker]")).to_contain_text("waiting")
            sim(trainer, "shake")
            expect(dealer.locator("#dice .die")).to_have_count(4)
            expect(phase).to_contain_text("Dealing")
            # Art. 2(2)-(3): the dice total, read off the dealer's screen, names the first
            # hand counted from the banker; the stacks go counter-clockwise from it.
            total = int(re.sub(r"\D", "", dealer.locator("#dice-total").inner_text()))
            first = (total - 1) % 8
            expect(dealer.locator(f".seat[data-seat='{first}'] .chip.first")).to_be_visible()
            expect(dealer.locator("#progress")).to_contain_text("doors 0/8")
            for turn in range(8):
                submit_form(dealer, "deal_hand", {"seat": str((first + turn) % 8)})
                expect(dealer.locator("#progress")).to_contain_text(f"doors {turn + 1}/8")
            expect(dealer.locator("#progress")).to_contain_text("已派 8/8 門")
            assert errors == []
            expect(trainer.locator("#physical .physical-seat")).to_have_count(8)
            # Art. 6(1): the doors set face down, then the banker.
            for door in range(1, 8):
                submit_form(dealer, "set_hand", {"seat": str(door)})
            dealer.click("#actions [data-action=set_banker]")
            expect(phase).to_contain_text("Opening")

            # Art. 6(2): the croupier opens the banker's hand, then the doors from the first
            # hand; each hand's tiles are tapped from the tile pictures. One player pairs the
            # tiles wrongly (the back not the largest the tiles allow): the croupier re-sets it.
            order = [0, *[(first + step) % 8 for step in range(8) if (first + step) % 8 != 0]]
            wrong_door, wrong_rows = None, None
            for door in order:
                rows = held(trainer, door)
                if door != 0 and wrong_door is None:
                    tiles = rows["front"] + rows["back"]
                    for front in itertools.combinations(tiles, 2):
                        back = list(tiles)
                        for tile in front:
                            back.remove(tile)
                        setting = {"front": list(front), "back": back}
                        if wrongly_set(setting):
                            wrong_door, wrong_rows, correct = door, setting, rows
                            rows = setting
                            break
                place(dealer, "open_hand", door, rows)
                expect(
                    dealer.locator(f".seat[data-seat='{door}'] .card.tile[data-code]")
                ).to_have_count(4)
            assert wrong_door is not None and wrong_rows is not None
            expect(phase).to_contain_text("Opened")
            expect(dealer.locator(f".seat[data-seat='{wrong_door}'] .chip.reset")).to_be_visible()
            # Each tile is drawn with its Table I name.
            expect(dealer.locator(".seat[data-seat='0'] .tile-name")).to_have_count(4)
            # Settling first is refused beside Settle: the wrongly set hand must be re-set.
            dealer.click("#actions [data-action=settle_round]")
            refusal = dealer.locator("#refusal")
            expect(refusal).to_contain_text("未能執行「結算」")
            expect(refusal).to_contain_text(f"doors [{wrong_door}] must be re-set")
            expect(refusal).to_contain_text(f"第 [{wrong_door}] 門須由荷官重新配牌")
            place(dealer, "reset_hand", wrong_door, correct)
            expect(dealer.locator(f".seat[data-seat='{wrong_door}'] .chip.reset")).to_have_count(0)
            dealer.click("#actions [data-action=settle_round]")
            expect(phase).to_contain_text("Round over")
            for door in range(1, 8):
                expect(dealer.locator(f".seat[data-seat='{door}'] .settlement")).to_contain_text(
                    "MOP"
                )
                # Each pair's class beside its tiles.
                expect(
                    dealer.locator(f".seat[data-seat='{door}'] .row .why[data-row]")
                ).to_have_count(2)
            expect(
                dealer.locator(f".seat[data-seat='{wrong_door}'] .detail .corrected")
            ).to_contain_text("re-set by the house")
            bank = dealer.locator("#banker .bank-result")
            expect(bank).to_contain_text("commission")
            expect(bank).to_contain_text("new bank")
            expect(bank).to_contain_text("新莊本")
            expect(dealer.locator("#timer-panel")).to_be_hidden()
            for page, name in ((dealer, "dealer"), (trainer, "trainer"), (supervisor, "sup")):
                measured(page, f"training-paigow-{name}")
            # No shoe at this table: the trainer is offered no shoe control at all.
            expect(trainer.locator("#training [data-device=shoe_reader]")).to_have_count(0)
            assert errors == []
        finally:
            browser.close()
