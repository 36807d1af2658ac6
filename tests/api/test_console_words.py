"""Issue 23 item 3: the console speaks both languages everywhere. A dealer's page on a real table
of each game walks every phase, action (the people's, the devices', the clock's), journal event
and refusal the game declares, through the console's own words (the same functions that draw the
screen), and finds no label left untranslated: each says something in Chinese and in English,
and neither is the internal name ("CUT", "deck.cut", "confirm_cut refused in phase CUT")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from test_console_training import CHROMIUM, CHROMIUM_ARGS, open_tab, wait_ready
from training_support import PAIGOW, tabled_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]

# Runs in the page: every name the game data gives, said by the console's own functions.
WALK = r"""() => {
  const bad = [];
  const cjk = /[\u3400-\u9fff]/;
  const latin = /[A-Za-z]/;
  const said = (what, name, zh, en) => {
    zh = String(zh || ""); en = String(en || "");
    // An internal name ("deck.cut", "confirm_cut") is no English; "HOLD" or "win" is.
    const internal = /[._]/.test(name) && (en === name || en.includes(name));
    if (!cjk.test(zh) || !latin.test(en) || zh === name || internal ||
        /refused in phase/.test(zh + en)) {
      bad.push(`${what} ${name}: ${zh} | ${en}`);
    }
  };
  const phases = Object.keys(state.words.phases);
  for (const phase of phases) said("phase", phase, ...phaseNames(phase));
  const actions = Object.keys(state.words.inputs);
  for (const action of actions) {
    said("action", action, ...actionNames(action));
    const article = state.words.inputs[action].article;
    const words = articleWords(article);
    said("article", article, words && words.zh, words && words.en);
    // A refusal of it, as the journal panel and the Violations list say it.
    said("refusal", action, ...eventSentence(
      { event: "table.violation", payload: { action, article, reason: "not legal now" } }));
    const listed = violationText({ seq: 1, action, article, phase: phases[0], reason: "x" });
    if (!cjk.test(listed) || listed.includes(`${action} `)) bad.push(`violation ${listed}`);
  }
  const events = Object.keys(state.events);
  for (const name of events) said("event", name, ...eventSentence({ event: name, payload: {} }));
  for (const [key, pair] of Object.entries(state.words.results)) {
    said("result", key, pair.zh, pair.en);
  }
  return { bad, phases: phases.length, actions: actions.length, events: events.length };
}"""


@pytest.mark.parametrize("game", ["thirteen", "paigow"])
def test_every_phase_action_event_and_refusal_is_said_in_both_languages(
    tmp_path: Path, game: str
) -> None:
    config = PAIGOW if game == "paigow" else None
    with tabled_run(tmp_path, config) as url, sync_playwright() as pw:
        wait_ready(url)
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        errors: list[str] = []
        try:
            dealer = open_tab(browser, url, "dealer", errors)
            dealer.wait_for_function("Object.keys(state.words.phases).length > 0")
            walked = dealer.evaluate(WALK)
            assert walked["phases"] >= 12 and walked["actions"] >= 25, walked
            assert walked["events"] >= 20, f"the game data serves no events: {walked}"
            assert walked["bad"] == [], walked["bad"]
            assert errors == []
        finally:
            browser.close()
