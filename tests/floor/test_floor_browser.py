"""The floor page in Debian's chromium (Playwright): tiles, live alerts, filters, drill-down
with redaction, the charts (Chart.js canvases, each saying its bars in words, as a screen reader
reads them); screenshots at 1920x1080 and 1280x800 in tests/artifacts/."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright

from daemon.floor.localservers import NatsServer, PostgresCluster
from daemon.floor.synthetic import SyntheticTable, interleave
from tests.floor.floor_support import FloorEnv, FloorProcess, floor_config, write_tokens

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium",
    ),
]

TABLES = [f"T{i:02d}" for i in range(1, 13)]


@pytest.fixture
def floor(pg: PostgresCluster, tmp_path: Path) -> Iterator[tuple[FloorEnv, FloorProcess, Any]]:
    broker = NatsServer().start()
    dsn = pg.create_database("floor_page")
    tokens = write_tokens(tmp_path / "tokens.toml")
    config = floor_config(tmp_path / "floor.toml", dsn, broker.url, tmp_path / "tokens.toml")
    env = FloorEnv(pg, broker, dsn, tmp_path, tokens, config)
    tables = {
        t: SyntheticTable(t, seed=i, lines_per_round=60, violation_share=0.5, tilt_share=0.3)
        for i, t in enumerate(TABLES)
    }
    lines = {t: s.lines(60 * 4 + 20 + 7 * i) for i, (t, s) in enumerate(tables.items())}
    # Seq 101 of T05 withheld: a gap. Its shipper's head a second covers the lines before it.
    t05_after = lines["T05"][101:]
    lines["T05"] = lines["T05"][:100]
    try:  # a setup that fails leaves no floor or broker running
        process = env.start_floor()
        asyncio.run(env.publish(interleave(list(lines.values()))))
        asyncio.run(env.publish(t05_after))
        lines["T05"] += t05_after
        asyncio.run(env.wait_committed(process, {t: len(x) for t, x in lines.items()}))
        yield env, process, tables
    finally:
        for started in env.floors:
            started.stop()
        broker.destroy()


def test_floor_page(floor: tuple[FloorEnv, FloorProcess, Any]) -> None:
    env, process, tables = floor
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(process.url + "/")
            page.fill("#token", "wrong")
            page.click("#login button[type=submit]")
            expect(page.locator("#login-error")).to_contain_text("Token not recognised")
            page.fill("#token", env.tokens["pit"])
            page.click("#login button[type=submit]")
            expect(page.locator("#link")).to_contain_text("live")
            expect(page.locator(".tile")).to_have_count(len(TABLES))
            expect(page.locator(".tile.chain-bad")).to_have_count(1)  # T05
            expect(page.locator('.tile[data-table="T05"]')).to_contain_text("gap @101")
            gap = page.locator("#alerts li.chain").first
            expect(gap).to_contain_text("T05 seq 101")
            # The pit is not given the alert's hashes (lines of a round in play).
            expect(gap).not_to_contain_text("received ")
            expect(page.locator("#alerts li.violation").first).to_contain_text("Portaria")
            for chart in ("violations", "faults", "rounds"):
                # Its bars said, waited for: the charts draw after their own fetch.
                expect(page.locator(f"#chart-{chart} canvas li").first).to_be_attached()
                box = page.locator(f"#chart-{chart} canvas").bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 100, box
            assert not errors, errors
            page.screenshot(path=str(ARTIFACTS / "floor-1920x1080.png"))

            # The charts' range: beyond a day each bar names its day too.
            bar = page.locator("#chart-rounds canvas li").first
            expect(bar).to_have_text(re.compile(r" · \d\dh: \d+$"))
            page.select_option("#f-hours", "168")
            expect(bar).to_have_text(re.compile(r" · \d\d-\d\d \d\dh: \d+$"))
            page.select_option("#f-hours", "1")
            expect(bar).to_have_text(re.compile(r" · \d\dh: \d+$"))
            page.select_option("#f-hours", "24")

            # Filters: pit B is T03 only (tests' config); the chain filter is T05 alone.
            page.select_option("#f-pit", "Pit B")
            expect(page.locator(".tile")).to_have_count(1)
            page.select_option("#f-pit", "")
            page.select_option("#f-state", "chain")
            expect(page.locator(".tile")).to_have_count(1)
            page.select_option("#f-state", "")

            # Live: T07 skips a line; its tile turns red and the gap is listed, no reload.
            # T07 (the 7th table) shipped 60 * 4 + 20 + 7 * 6 = 302 lines; the next three are
            # seqs 303-305, and 303 is withheld: the page shows seq 305 and the gap at 303.
            more = tables["T07"].lines(3)[1:]
            with ThreadPoolExecutor(1) as pool:  # Playwright's sync API owns this thread's loop
                pool.submit(asyncio.run, env.publish(more)).result()
            tile = page.locator('.tile[data-table="T07"]')
            expect(tile).to_contain_text("seq 305")
            expect(tile).to_have_class(re.compile("chain-bad"))
            expect(page.locator("#alerts li.chain").first).to_contain_text("T07 seq 303")

            # The pit boss takes the new gap in hand from the page: who and what stay on it.
            fresh = page.locator("#alerts li.chain").first
            fresh.locator(".ack input").fill("called the table's IT; T07 held")
            fresh.locator(".ack button").click()
            expect(fresh).to_contain_text("acknowledged · pit.person")
            expect(fresh).to_contain_text("called the table's IT; T07 held")
            expect(fresh).to_have_class(re.compile("acknowledged"))

            # Violations and tilts: filtered to those nobody has taken in hand yet, one is
            # acknowledged with a note and leaves that list; shown again with who and what.
            page.select_option("#a-kind", "violation")
            page.check("#a-open")
            expect(page.locator("#alerts li:not(.violation)")).to_have_count(0)
            first = page.locator("#alerts li.violation").first
            said = first.locator(".said.en").inner_text()
            assert "Portaria" in said and "in Betting" in said and "{" not in said, said
            expect(first.locator(".said.zh")).to_contain_text("於下注")
            key = first.get_attribute("data-key")
            open_count = page.locator("#alerts li.violation").count()
            first.locator(".ack input").fill("spoke to the dealer about closing bets")
            first.locator(".ack button").click()
            expect(page.locator(f'#alerts li[data-key="{key}"]')).to_have_count(0)
            page.uncheck("#a-open")
            taken = page.locator(f'#alerts li[data-key="{key}"]')
            expect(taken).to_contain_text("acknowledged · pit.person")
            expect(taken).to_contain_text("spoke to the dealer about closing bets")
            page.check("#a-open")
            expect(page.locator("#alerts li.violation")).to_have_count(min(open_count - 1, 49))
            page.select_option("#a-kind", "tilt")
            tilt = page.locator("#alerts li.fault.tilt").first
            expect(tilt.locator(".said.en")).to_contain_text("shoe reader")
            expect(tilt.locator(".said.zh")).to_contain_text("牌靴")
            tilt_key = tilt.get_attribute("data-key")
            tilt.locator(".ack input").fill("reader cleaned, checked by S1")
            tilt.locator(".ack button").click()
            expect(page.locator(f'#alerts li[data-key="{tilt_key}"]')).to_have_count(0)
            page.uncheck("#a-open")
            page.select_option("#a-kind", "")
            page.select_option("#a-table", "T02")
            # Every kind, T02's only: what the list shows once its answer is drawn.
            expect(page.locator("#alerts li:not([data-key*=':T02:'])")).to_have_count(0)
            expect(page.locator("#alerts li.violation[data-key*=':T02:']").first).to_be_attached()
            expect(page.locator("#alerts li.fault[data-key*=':T02:']").first).to_be_attached()
            page.select_option("#a-table", "")

            # Drill-down: each line a sentence in both languages, not an event name and JSON;
            # the round in play's cards are hidden from the pit.
            page.click('.tile[data-table="T02"]')
            expect(page.locator("#drill")).to_be_visible()
            expect(page.locator("#drill-events li.redacted").first).to_contain_text("hidden")
            expect(page.locator("#drill-rounds li").first).to_contain_text("open")
            lines = page.locator("#drill-events li").all_inner_texts()
            assert lines and not any("{" in line for line in lines), lines[:5]
            dealt = page.locator('#drill-events li[data-event="card.dealt"]').first
            expect(dealt.locator(".said.en")).to_contain_text("face down")
            expect(dealt.locator(".said.zh")).to_contain_text("暗牌")

            page.set_viewport_size({"width": 1280, "height": 800})
            page.screenshot(path=str(ARTIFACTS / "floor-drill-1280x800.png"))
            page.click("#drill-close")
            expect(page.locator(".tile")).to_have_count(len(TABLES))
            # Nothing spills past the screen at the smaller size.
            assert page.evaluate("document.documentElement.scrollHeight") <= 800
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            page.screenshot(path=str(ARTIFACTS / "floor-1280x800.png"))

            # Signing out forgets the person: no token left to sign straight back in with.
            page.click("#logout")
            expect(page.locator("#login")).to_be_visible()
            assert page.input_value("#token") == ""
            expect(page.locator("#actor")).to_have_text("")
            expect(page.locator("#alerts li")).to_have_count(0)
        finally:
            browser.close()
