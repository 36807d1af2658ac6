"""The floor page's Integrity view in Debian's chromium (Playwright), played through the page
only: two tables' journals shipped to a real floor with an integrity pass a second, one table's
shaker loaded (face 6 at 0.4 and more) and its shuffler two riffles; the view flags that shaker
and shuffler and draws the face histogram against fair dice's band, the card x position heat
map, the rising sequences against a random deck's and the hold's z per shift. Screenshots at
1920x1080 and 1280x800 in tests/artifacts/."""

from __future__ import annotations

import asyncio
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from daemon.config import JournalConfig
from daemon.floor.synthetic import journal_file_lines
from daemon.journal import Journal
from simulators.shuffler import riffle_shuffle
from tests.floor.floor_support import FloorEnv
from tests.floor.test_floor_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]

CARDS = [r + s for s in "shdc" for r in "A23456789TJQK"]


def _journal(folder: Path, table: str, loaded: bool, seed: int) -> None:
    """A table's journal: its devices, then rounds of a machine shuffle, a deal of 52, five
    throws and a settlement of three bets (rule set macau-1989)."""
    journal = Journal.open(JournalConfig(dir=folder, durability="none"), table)
    rng = random.Random(seed)
    put = journal.stage
    for device in ("shuffler", "dice_shaker", "shoe_reader"):
        payload = {"device": device, "serial": f"{table}-{device}"}
        put("device.identified", f"device:{device}", 0, payload, False)
    order = list(CARDS)
    for round_id in range(1, 61):
        order = riffle_shuffle(order, rng, 2) if loaded else rng.sample(order, 52)
        put("deck.machine_shuffled", "device:shuffler", round_id,
            {"count": 52, "mode": "random"}, False)  # fmt: skip
        put("shoe.loaded", "dealer:D1", round_id, {"redeal": False}, False)
        for _ in range(5):
            dice = [6 if loaded and rng.random() < 0.4 else rng.randint(1, 6) for _ in range(4)]
            put("dice.landed", "device:dice_shaker", round_id, {"dice": dice}, False)
        for index, card in enumerate(order, start=1):
            put("card.dealt", "device:shoe_reader", round_id,
                {"card": card, "seat": 0, "index": index, "face_up": False}, False)  # fmt: skip
        bets = []
        for seat in (1, 2, 3):
            won = rng.random() < 0.5
            bets.append({"seat": seat, "player": f"P{seat}", "amount": 100,
                         "outcome": "player" if won else "banker",
                         "net": "49.00" if won else "-100",
                         "rules": {"ruleset": "macau-1989", "bet": 1,
                                   "commission": "0"}})  # fmt: skip
        put("round.settled", "dealer:D1", round_id, {"settlement": bets}, False)
    journal.close()


def test_the_integrity_view_flags_the_loaded_shaker(env: FloorEnv, tmp_path: Path) -> None:
    env.config.write_text(env.config.read_text() + "[integrity]\nperiod_seconds = 1\n")
    lines = []
    for table, loaded, seed in (("T01", True, 1), ("T02", False, 2)):
        _journal(tmp_path / table, table, loaded, seed)
        lines += list(journal_file_lines(tmp_path / table))
    # T01's last 20 rounds come later, once the page shows its first alert (200 throws): its
    # journal is journal.opened, three devices, then 60 rounds of 60 lines.
    cut, end = 1 + 3 + 40 * 60, 1 + 3 + 60 * 60
    later = lines[cut:end]
    del lines[cut:end]
    floor = env.start_floor()
    asyncio.run(env.publish(lines))
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(floor.url + "/")
            page.fill("#token", env.tokens["surveillance"])
            page.click("#login button[type=submit]")
            expect(page.locator("#link")).to_contain_text("live")
            page.click("#v-integrity")
            expect(page.locator("#integrity")).to_be_visible()
            expect(page.locator("#tiles")).to_be_hidden()
            # The pass runs each second: the view follows its alerts as they come.
            shaker = page.locator("#i-dice option.flagged")
            expect(shaker).to_have_text("⚠ T01 T01-dice_shaker (200 throws)", timeout=180_000)
            bias = page.locator("#alerts li.integrity", has_text="T01-dice_shaker")
            expect(bias).to_have_count(1)
            expect(bias).to_contain_text("200 throws")
            # T01 plays on: the next pass updates the open alert, and the page redraws that
            # one alert in place with the newer figures (no second alert, no reload).
            with ThreadPoolExecutor(1) as pool:  # Playwright's sync API owns this loop
                pool.submit(asyncio.run, env.publish(later)).result()
            expect(bias).to_contain_text("300 throws", timeout=120_000)
            expect(bias).to_have_count(1)
            expect(shaker).to_have_text("⚠ T01 T01-dice_shaker (300 throws)", timeout=30_000)
            expect(page.locator("#i-dice option:not(.flagged)")).to_contain_text("T02-dice_shaker")
            # Flagged first, and chosen: its faces against fair dice's band, face 6 above it.
            expect(page.locator("#i-dice")).to_have_value("T01\tT01-dice_shaker")
            faces = page.locator("#chart-dice canvas li")
            expect(faces).to_have_count(6)
            expect(faces.nth(5)).to_contain_text("above the band")
            expect(faces.nth(0)).not_to_contain_text("above")
            # The fair table's shaker, picked: every face within the band.
            page.select_option("#i-dice", "T02\tT02-dice_shaker")
            expect(faces.nth(5)).to_contain_text("face 6:")
            expect(page.locator("#chart-dice canvas li", has_text="above")).to_have_count(0)

            # The two-riffle shuffler is flagged too; its heat map and rising sequences.
            expect(page.locator("#i-shuffle option.flagged")).to_contain_text("T01-shuffler")
            expect(page.locator("#chart-heat canvas li")).to_contain_text("decks; the largest")
            rising = page.locator("#chart-rising canvas li")
            expect(rising).to_contain_text("a random deck 26.50")
            assert float(rising.inner_text().split()[1]) < 10  # two riffles: few sequences
            # The hold's control chart: one point a shift, each with its z.
            expect(page.locator("#chart-hold canvas li").first).to_contain_text("z = ")
            for chart in ("dice", "heat", "rising", "hold"):
                box = page.locator(f"#chart-{chart} canvas").bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 100, chart
            # The alert list tells of it too, as the floor's other alerts.
            expect(page.locator("#alerts li", has_text="dice bias").first).to_be_attached()
            assert not errors, errors
            page.screenshot(path=str(ARTIFACTS / "floor-integrity-1920x1080.png"))
            page.set_viewport_size({"width": 1280, "height": 800})
            assert page.evaluate("document.documentElement.scrollHeight") <= 800
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            for picker in ("#i-dice", "#i-shuffle", "#i-hold"):  # each picker in its panel
                box = page.locator(picker).bounding_box()
                panel = page.locator(f"figure:has({picker})").bounding_box()
                assert box and panel and box["x"] + box["width"] <= panel["x"] + panel["width"]
            page.screenshot(path=str(ARTIFACTS / "floor-integrity-1280x800.png"))
            page.click("#v-floor")
            expect(page.locator("#tiles")).to_be_visible()
            expect(page.locator("#integrity")).to_be_hidden()
        finally:
            browser.close()
    assert floor.stop() == 0
