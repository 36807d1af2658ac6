// The dealer console: renders the table's state pushed over /api/events and offers only the
// actions the table says are legal now. No build step, no framework; text goes in through
// textContent only (bettor names and payloads come from people). Every word of the game (its
// phases, actions, events, articles, tiles) comes from the table's game data, read at sign-in
// (/api/actions, /api/console): the console keeps no table of its own.
"use strict";

const SUITS = { S: ["♠", false], H: ["♥", true], D: ["♦", true], C: ["♣", false] };

const JOURNAL_SHOWN = 60;
// An integer with this few values (a seat, a door) is chosen from a list, not typed.
const MAX_CHOICES = 10;
// The rows a hand is placed into, and how many each holds (Thirteen Art. 7; Pai Gow Art. 6(1)).
const THIRTEEN_ROWS = [["head", 3], ["middle", 5], ["tail", 5]];
const PAIGOW_ROWS = [["front", 2], ["back", 2]];
// The actions whose payload is a hand placed into rows: picked by tapping, not typed.
const PLACING = {
  enter_arrangement: THIRTEEN_ROWS, correct_arrangement: THIRTEEN_ROWS,
  open_hand: PAIGOW_ROWS, reset_hand: PAIGOW_ROWS,
};
// Thirteen's actions placing an open hand's own cards (a supervisor's correction among them).
const CARD_PLACING = ["enter_arrangement", "correct_arrangement"];

const $ = (id) => document.getElementById(id);
// What one person's session holds; signing out puts every key back to this.
const freshState = () => ({
  token: "",
  catalog: {},
  // The game's journal events by name, with their labels (/api/actions `events`).
  events: {},
  // The game's words (/api/console `words`): phases, inputs, articles, roles, results.
  words: { phases: {}, inputs: {}, articles: {}, roles: {}, results: {}, training_ops: {} },
  // Pai Gow's tile set (Table I), for the tile pictures and the picker.
  tiles: [],
  legal: [],
  snapshot: null,
  offsetMs: 0,
  lastSeq: null,
  ws: null,
  retry: 500,
  busy: false,
  rangDeadline: null,
  // While the push connection is live it alone delivers state, in journal order; a reply to
  // an HTTP read could arrive after a newer push and show the table as it was.
  wsLive: false,
  // After an accepted action the buttons wait for the state it led to, so a second tap cannot
  // ask for a step that was legal only before it.
  awaitingPush: null,  // the seq of the accepted action whose state is awaited
  stateSeq: 0,  // the last journal line the pushed state applied shows
  // Violations seen in the pushed journal, shown even before the table's state lists them.
  pushedViolations: [],
  // The console signs its person out after this long without a touch or a key (the daemon's
  // `[api] console_idle_seconds`, learnt at sign-in).
  idleSeconds: 600,
  lastActivity: Date.now(),
  // The table's currency (`[table] currency`, served by /api/console) for every amount shown.
  currency: "MOP",
  // Training mode: every device simulated and the person a trainer (or admin).
  training: false,
  // The phase an answer on the toast was about: a new phase clears it.
  toastPhase: null,
  // The hand being placed into rows (the placer's form): its action, seat, rows and the row
  // the next tap fills.
  placing: null,
});
const state = freshState();
state.token = sessionStorage.getItem("tabled.token") || "";
// Each sign-in and sign-out starts a new session; an answer that arrives for an older one
// (a slow journal read, a state read) is dropped, so it never shows the previous person's view.
let session = 0;
// The parts of the page a session fills in, as they were before anyone signed in.
const pristine = [];

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function bilingual(zh, en) {
  const span = el("span");
  span.append(el("span", "zh", zh), " ", el("span", "en", en));
  return span;
}

function requestId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return Date.now().toString(36) + Math.random().toString(36).slice(2);
}

// --- the game's words ---

// A phase's name in both languages: the game data's, or the one the table's view carries.
function phaseNames(phase) {
  const known = state.words.phases[phase];
  if (known) return [known.zh, known.en];
  const snapshot = state.snapshot;
  if (snapshot && snapshot.phase === phase && snapshot.phase_label) {
    return [snapshot.phase_label.zh, snapshot.phase_label.en];
  }
  return [phase || "", phase || ""];
}

// An action's (or a device's, the clock's input's) name in both languages.
function actionNames(action) {
  const spec = state.catalog[action];
  if (spec && spec.label) return [spec.label.zh, spec.label.en];
  const input = state.words.inputs[action];
  if (input) return [input.zh, input.en];
  return [action || "", action || ""];
}

// An article's short text ("Portaria 51/89/M Art. 2(d)": zh the regulation's words, en the
// gloss); a citation naming several takes its first.
function articleWords(citation) {
  const articles = state.words.articles || {};
  if (!citation) return null;
  if (articles[citation]) return articles[citation];
  const m = /^(.*? Art\. )([^,]+)/.exec(citation);
  return m ? articles[m[1] + m[2].trim()] || null : null;
}

function labelOf(table, key) {
  const found = (state.words[table] || {})[key];
  return found ? [found.zh, found.en] : [key || "", key || ""];
}
// A request to the table. The table out of reach is an answer too (status 0), said in words,
// never a "TypeError: Failed to fetch".
async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + state.token }, options.headers || {});
  let response;
  try {
    response = await fetch(path, Object.assign({}, options, { headers }));
  } catch (_) {
    return { status: 0, body: { error: "offline",
      message: "無法連線到枱 · the table cannot be reached (offline)" } };
  }
  let body = null;
  try { body = await response.json(); } catch (_) { body = null; }
  return { status: response.status, body };
}

// --- sign in / out ---

function showLogin(message) {
  $("login").classList.remove("hidden");
  $("console").classList.add("hidden");
  $("logout").classList.add("hidden");
  $("login-error").textContent = message || "";
  $("token").focus();
}

async function signIn(token) {
  const mine = ++session;
  state.token = token;
  const r = await api("/api/actions");
  if (mine !== session) return;
  if (r.status !== 200) {
    state.token = "";
    sessionStorage.removeItem("tabled.token");
    const why = (r.body && r.body.message) || "HTTP " + r.status;
    showLogin(r.status === 401 ? "令牌無效 · " + why :
      r.status === 429 ? "嘗試太多，請稍後再試 · " + why : "無法登入 · " + why);
    return;
  }
  sessionStorage.setItem("tabled.token", token);
  $("token").value = "";
  state.catalog = Object.fromEntries(r.body.catalog.map((spec) => [spec.name, spec]));
  // The game's journal events with their labels, as the game declares them.
  const events = r.body.events || [];
  state.events = Array.isArray(events) ?
    Object.fromEntries(events.map((e) => [e.name, e])) : events;
  if (Number.isFinite(r.body.console_idle_seconds)) state.idleSeconds = r.body.console_idle_seconds;
  state.lastActivity = Date.now();
  $("login").classList.add("hidden");
  $("console").classList.remove("hidden");
  $("logout").classList.remove("hidden");
  // Whatever changes the journal panel's height (a form, a list above it) refits its lines.
  if (journalResized) {
    journalResized.disconnect();
    journalResized.observe($("events"));
  }
  connect();
  loadConsole(mine);
  // Whoever signs in also sees what led here: the recent journal goes below the live events
  // (read beside the push connection, so a long journal never delays it).
  if (state.lastSeq === null) loadHistory();
  const s = await api("/api/state");
  if (mine !== session) return;
  if (s.status === 200 && !state.wsLive) applyState(s.body.state, s.body.legal);
}

// Signing out (the button, or the idle timeout) leaves nothing of the person behind: not their
// token (in the field, the tab's storage or the push connection), not their name in the header,
// not the table as they saw it, the journal lines, an open form or a message. The next person
// starts from the page as it was before anyone signed in.
function signOut(message) {
  session++;
  sessionStorage.removeItem("tabled.token");
  const ws = state.ws;
  Object.assign(state, freshState());
  if (ws) {
    ws.onmessage = null;
    ws.onclose = null;
    ws.close();
  }
  for (const [node, copy] of pristine) {
    const fresh = copy.cloneNode(true);
    node.current.replaceWith(fresh);
    node.current = fresh;
  }
  $("token").value = "";
  $("idle-warning").classList.add("hidden");
  setLink(false);
  showLogin(message);
}

// Whoever is signed in has touched the screen or a key within the idle time, or is signed out.
function checkIdle() {
  if (!state.token || $("console").classList.contains("hidden")) return;
  const idle = (Date.now() - state.lastActivity) / 1000;
  const left = Math.ceil(state.idleSeconds - idle);
  const warning = $("idle-warning");
  if (left <= 0) {
    signOut(`閒置 ${state.idleSeconds} 秒，已登出 · Signed out after ${state.idleSeconds} s idle`);
    return;
  }
  const warn = left <= Math.min(30, Math.ceil(state.idleSeconds / 3));
  warning.classList.toggle("hidden", !warn);
  if (warn) warning.textContent = `${left} s · 觸摸以保持登入 touch to stay signed in`;
}

// --- the push connection ---

function connect() {
  state.wsLive = false;
  if (state.ws) state.ws.close();
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(scheme + "//" + location.host + "/api/events");
  state.ws = ws;
  // batch: the events queued for this console come in one message (a busy table sends fewer).
  ws.onopen = () =>
    ws.send(JSON.stringify({ token: state.token, after: state.lastSeq, batch: true }));
  ws.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.type === "hello") {
      state.wsLive = true;
      setLink(true);
      state.retry = 500;
      const [rzh, ren] = labelOf("roles", data.role);
      $("actor").replaceChildren(el("span", "name", data.actor),
        el("span", "role muted", rzh + " " + ren));
      $("actor").title = data.actor + " · " + data.role;
    } else if (data.type === "state") {
      // What the state shows, ordered against the events: a daemon's state names the last
      // journal line it shows (`seq`), and may come before that line's event (an action's
      // answer publishes the state at once, its events go with the hub's next batch) or after
      // newer events (then it is not the last word: the table publishes again, and the buttons
      // wait for that). A state without `seq` (a table that does not publish) is read as it is
      // when sent, after every event sent before it.
      state.stateSeq = typeof data.seq === "number" ? data.seq : state.lastSeq || 0;
      if (state.awaitingPush !== null && state.stateSeq >= state.awaitingPush) {
        state.awaitingPush = null;
      }
      applyState(data.state, data.legal);
    } else if (data.type === "events") {
      for (const event of data.events) addEvent(event);
    } else if (data.type === "event") {
      addEvent(data.event);
    } else if (data.type === "error") {
      toast(data.message, true);
      if (data.error === "unauthorized") signOut(data.message);
    }
  };
  ws.onclose = () => {
    if (state.ws === ws) state.wsLive = false;
    setLink(false);
    if (state.ws !== ws || !state.token) return;
    setTimeout(() => { if (state.ws === ws) connect(); }, state.retry);
    state.retry = Math.min(state.retry * 2, 8000);
  };
}

// The push feed is the console's eyes: without it the page may show a table that has moved
// on, so a clear banner says so and every action waits until the feed is back.
function setLink(up) {
  const link = $("link");
  link.className = "link " + (up ? "up" : "down");
  link.replaceChildren(up ? bilingual("連線", "live") : bilingual("離線", "offline"));
  const signedIn = Boolean(state.token) && !$("console").classList.contains("hidden");
  $("offline-banner").classList.toggle("hidden", up || !signedIn);
  document.body.classList.toggle("offline", !up && signedIn);
  if (!signedIn) return;
  renderActions();
  for (const control of $("console").querySelectorAll("#training button, #training select, #training input")) {
    control.disabled = !up || control.dataset.off === "1";
  }
}

// --- rendering ---

function applyState(snapshot, legal) {
  state.snapshot = snapshot;
  state.legal = legal || [];
  if (typeof snapshot.server_time === "number") {
    state.offsetMs = snapshot.server_time * 1000 - Date.now();
  }
  $("table-id").textContent = snapshot.table || "—";
  $("game").textContent = snapshot.game === "paigow" ? "牌九 Pai Gow" : "十三張 Thirteen";
  document.body.dataset.game = snapshot.game || "";
  $("round").textContent = snapshot.round ?? "—";
  const names = (snapshot.phase_label && [snapshot.phase_label.zh, snapshot.phase_label.en]) ||
    phaseNames(snapshot.phase);
  // An answer about the phase before is stale once the table has moved on.
  if (state.toastPhase !== null && state.toastPhase !== snapshot.phase) hideToast();
  $("phase").replaceChildren(bilingual(names[0], names[1]));
  $("phase").dataset.phase = snapshot.phase || "";
  $("next").replaceChildren(
    bilingual(snapshot.next_zh || "", snapshot.next ? "Next: " + snapshot.next : ""));
  renderHold(snapshot.hold);
  renderDice(snapshot.dice, snapshot.dice_total);
  renderProgress(snapshot.progress);
  // Pai Gow has no arrangement time: the five minutes are Thirteen's (Art. 2(d)).
  $("timer-panel").classList.toggle("hidden", snapshot.game === "paigow");
  renderSeats(snapshot.seats || [], snapshot);
  renderBanker(snapshot.banker, snapshot);
  renderList("violations", violations(snapshot), violationText);
  renderList("faults", snapshot.faults || [], faultText,
    (f) => (f.cleared ? "cleared" : f.healthy ? "healthy" : ""));
  renderOverride(snapshot.override);
  renderDevices(snapshot.devices || {});
  renderActions();
  // The placer is drawn again only when what it offers changed: a push that changes nothing
  // of it must not swallow a tap landing while the form is rebuilt.
  if (state.placing && placerKey() !== state.placing.key) renderPlacer();
  tick();
  fitJournal();
  if (state.training) refreshTraining();
}

// Each device's link, as the table sees it: a device down shows before anyone acts.
function renderDevices(devices) {
  $("devices").replaceChildren(...Object.entries(devices).map(([name, link]) => {
    const chip = el("span", "device " + (link === "up" ? "up" : "down"),
      (link === "up" ? "● " : "✕ ") + name.replace("_", " "));
    chip.dataset.device = name;
    chip.title = name + ": " + link;
    return chip;
  }));
}

function faultText(f) {
  const seq = typeof f.seq === "number" ? `#${f.seq} ` : "";
  // Healthy again is not cleared: play stays stopped until a supervisor clears it.
  const healthy = f.healthy && !f.cleared ? " · 已恢復 healthy, 待主任解除 supervisor to clear" : "";
  return `${seq}${f.device || ""}: ${f.fault || ""}${healthy}`;
}

// A dealer's proposal (e.g. a misread card entered by hand) waiting for a supervisor; a
// supervisor's (a void, a placed hand corrected, a device replaced) waiting for a second one.
function renderOverride(pending) {
  const box = $("override");
  if (!pending) { box.classList.add("hidden"); box.replaceChildren(); return; }
  const label = saidOnce(pending.label || { zh: pending.kind, en: pending.kind });
  const second = /^supervisor\b/.test(String(pending.proposed_by || ""));
  box.replaceChildren(second ? bilingual("待另一位主任批准", "Awaiting a second supervisor:") :
    bilingual("待主任批准", "Awaiting a supervisor:"), " ",
    bilingual(label.zh, label.en), el("div", "muted",
      "提出 proposed by " + (pending.proposed_by || "?") + (pending.note ? " · " + pending.note : "") +
      (pending.reason ? " · " + pending.reason : "")));
  if (pending.kind === "correct_arrangement" && pending.rows && pending.placed) {
    // What changes: the rows as placed, and as proposed.
    for (const [which, zh, en] of [["placed", "原排", "placed"], ["rows", "更正為", "proposed"]]) {
      const line = el("div", "correction " + which);
      line.append(bilingual(zh, en + ":"));
      for (const [key] of THIRTEEN_ROWS) {
        line.append(" ", bilingual(ROW_NAMES[key][0], ROW_NAMES[key][1]), " ",
          el("span", "mono", (pending[which][key] || []).join(" ")));
      }
      box.append(line);
    }
  }
  box.classList.remove("hidden");
}

// A label whose two languages end with the same details ("人手輸入牌 Jd (card #2, seat 2)",
// "Enter card by hand Jd (card #2, seat 2)") says them once, after the English.
function saidOnce(label) {
  const zh = String(label.zh || "");
  const en = String(label.en || "");
  let n = 0;
  while (n < zh.length && n < en.length && zh[zh.length - 1 - n] === en[en.length - 1 - n]) n++;
  const common = zh.slice(zh.length - n);
  const cut = common.indexOf(" ");  // the shared part from a word's start
  if (cut < 0 || common.length - cut < 3 || zh.length - common.length + cut <= 0) return { zh, en };
  return { zh: zh.slice(0, zh.length - common.length + cut), en };
}

function renderHold(hold) {
  const banner = $("hold-banner");
  if (!hold) { banner.classList.add("hidden"); return; }
  banner.className = hold.kind === "hold" ? "hold" : "";
  const [zh, en] = hold.kind === "hold" ? ["暫停", "HOLD"] : ["故障停機", "TILT"];
  banner.replaceChildren(bilingual(zh, en), " — " + (hold.reason || ""),
    " · ", bilingual("待主任處理", "supervisor to clear"));
}

function renderDice(dice, total) {
  const box = $("dice");
  box.replaceChildren(...(dice || []).map((d) => el("span", "die", d)));
  $("dice-total").textContent = dice ? "總數 Total " + (total ?? dice.reduce((a, b) => a + b, 0)) : "";
}

// How far the deal is: "已發 37/52 · dealt 37/52" (cards read), "已派 3/8 門 · doors 3/8".
function renderProgress(progress) {
  const box = $("progress");
  if (!progress) { box.replaceChildren(); return; }
  const of = `${progress.done}/${progress.total}`;
  box.replaceChildren(progress.kind === "doors" ?
    bilingual(`已派 ${of} 門`, `doors ${of}`) : bilingual(`已發 ${of}`, `dealt ${of}`));
  box.dataset.done = progress.done;
  box.classList.toggle("complete", progress.done >= progress.total);
}

// An amount in the table's currency: "1,000 MOP", signed "+300 MOP" / "-200 MOP".
function money(amount, signed) {
  const n = Number(amount) || 0;
  const sign = n < 0 ? "-" : signed && n > 0 ? "+" : "";
  return `${sign}${Math.abs(n).toLocaleString("en")} ${state.currency}`;
}

// A card code, a tile ("6-6"), or anything else: a face-down card (the API serves a hidden
// card as a marker, not its code), drawn as its back.
function cardNode(text) {
  const code = typeof text === "string" ? text : "";
  if (/^[1-6]-[1-6]$/.test(code)) return tileNode(code);
  const m = /^(10|[2-9TJQKA])([SHDC])$/i.exec(code);
  if (!m) {
    const back = el("span", "card back", "");
    back.title = "面朝下 face down";
    return back;
  }
  const [symbol, red] = SUITS[m[2].toUpperCase()];
  const card = el("span", red ? "card red" : "card", (m[1] === "T" ? "10" : m[1]) + symbol);
  card.dataset.code = code;
  return card;
}

// Where the pips of a half lie on its 3x3 grid (1 to 6), as a tile shows them.
const PIPS = {
  1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8],
};

// A Pai Gow tile drawn from the tile data: its two halves' pips (1 and 4 in red, as the tiles
// are painted) and its Table I name under it (天牌 Heaven).
function tileNode(face, withName = true) {
  const [low, high] = face.split("-").map(Number);
  const known = state.tiles.find((t) => t.face === face);
  const box = el("span", "tile-box");
  const tile = el("span", "card tile");
  tile.dataset.code = face;
  for (const half of [high, low]) {
    const h = el("span", "half");
    for (let i = 0; i < 9; i++) {
      const cell = el("span", "cell");
      if (PIPS[half].includes(i)) cell.classList.add(...(half === 1 || half === 4 ? ["pip", "red"] : ["pip"]));
      h.append(cell);
    }
    tile.append(h);
  }
  const name = known ? known.name : { zh: face, en: face };
  tile.title = `${name.zh} ${name.en} (${face})`;
  box.append(tile);
  if (withName) box.append(el("span", "tile-name", name.zh));
  box.dataset.code = face;
  return box;
}

function cardsNode(list) {
  const cards = el("div", "cards");
  cards.append(...(list || []).map((c) => cardNode(c)));
  return cards;
}

// Once a hand is placed (Thirteen: head, middle, tail; Pai Gow: front, back) it is shown in
// its rows, so the settlement can be read against it.
const ROW_NAMES = {
  head: ["頭道", "Head"], middle: ["中道", "Middle"], tail: ["尾道", "Tail"],
  front: ["前手", "Front"], back: ["後手", "Back"],
};

// A hand in its rows; once settled (Thirteen), each row says beside its cards what the hand
// in it is and who won it (`verdicts`: the row's settled words, by row).
function arrangementNode(arrangement, dealt, verdicts) {
  const rows = Object.keys(ROW_NAMES).filter((key) => Array.isArray(arrangement[key]));
  if (!rows.length) return cardsNode(dealt);
  const box = el("div", "arrangement");
  for (const key of rows) {
    const row = el("div", "row");
    row.dataset.row = key;
    const label = el("span", "row-label");
    label.append(bilingual(ROW_NAMES[key][0], ROW_NAMES[key][1]));
    row.append(label, cardsNode(arrangement[key]));
    if (verdicts && verdicts[key]) row.append(verdicts[key]);
    box.append(row);
  }
  return box;
}

// What a settled Thirteen row says beside its cards: the hand's name, and (a player's seat)
// who won the row against the banker's. `row` is the settlement's (explain.thirteen_detail).
function verdictNode(row, banker) {
  const box = el("span", "why verdict");
  box.dataset.row = row.row;
  const hand = banker ? row.banker : row.player;
  const name = el("span", "hand");
  name.append(bilingual(hand.zh, hand.en));
  box.append(name);
  if (!banker) {
    const won = el("span", "winner " + (row.winner.en || ""));
    won.append(bilingual(row.winner.zh + "勝", row.winner.en + " wins"));
    box.append(won);
  }
  return box;
}

// The settled rows' words by row for each Thirteen seat: a player's from its own settlement,
// the banker's from any player's (the banker's hand is the same against each).
function verdicts(seat, seats) {
  const own = seat.detail && !seat.detail.late && (seat.detail.rows || []).length ? seat.detail : null;
  const isBanker = seat.name === "Banker" || seat.name_zh === "莊家";
  const source = own || (isBanker ? seats.map((s) => s.detail).find(
    (d) => d && !d.late && (d.rows || []).length) : null);
  if (!source) return null;
  return Object.fromEntries(source.rows.map((row) => [row.row, verdictNode(row, !own)]));
}

// Where a hand is, in a chip: dealt, arranged face down, open (its cards to place), placed.
function statusChips(seat, game) {
  const chips = el("div", "chips");
  const chip = (cls, zh, en) => { const c = el("span", "chip " + cls); c.append(bilingual(zh, en)); chips.append(c); };
  const snapshot = state.snapshot || {};
  if (game === "paigow") {
    // Art. 2(2): the door the dice name takes the first four tiles.
    if (seat.seat === snapshot.first_hand) chip("first", "先取牌", "dealt first");
    if (seat.dealt) chip("dealt", "已派", "dealt");
    if (seat.arranged && !seat.open) chip("set", "已配牌", "set");
    if (seat.open) chip("open", "已開", "open");
    if (seat.wrongly_set) chip("reset", "需重新配牌", "to re-set");
  } else {
    if (seat.arranged && !seat.open) chip("set", "已排牌", "arranged");
    if (seat.open && !seat.arrangement) chip("open", "已開，待排入", "open: place its cards");
  }
  return chips;
}

// A settled Pai Gow door's pairs, each said beside its tiles by its Table II class: "天牌四 4
// points" (the table's row kept for a tap or hover).
function pairVerdicts(seat) {
  const detail = seat.detail;
  if (!detail) return null;
  const out = {};
  for (const key of ["front", "back"]) {
    const cls = detail[key + "_class"];
    if (!cls) continue;
    const box = el("span", "why verdict");
    box.dataset.row = key;
    box.title = `${ROW_NAMES[key][1]}: ${cls.zh} ${cls.en}`;
    const short = String(cls.en || "").replace(/ \(Table II row \d+\)$/, "");
    box.append(el("span", "zh", cls.zh), el("span", "en", short));
    out[key] = box;
  }
  return Object.keys(out).length ? out : null;
}

function seatNode(seat, game, seats) {
  const node = el("div", "seat");
  node.dataset.seat = seat.seat;
  if (seat.holder) node.classList.add("holder-set");
  if (seat.late) node.classList.add("late");
  if (seat.open) node.classList.add("open");
  const title = el("h3");
  title.append(bilingual(seat.name_zh || `第${seat.seat}門`, seat.name || "Seat " + seat.seat));
  const staked = (seat.bets || []).reduce((sum, b) => sum + (b.amount || 0), 0);
  title.append(el("span", "muted", staked ? money(staked) : ""));
  const bets = el("div", "bets");
  for (const bet of seat.bets || []) {
    const cls = bet.bettor === seat.holder ? "holder" : "";
    bets.append(el("span", cls, `${bet.bettor} ${bet.amount}`), "  ");
  }
  const said = game === "paigow" ? pairVerdicts(seat) : verdicts(seat, seats);
  if (seat.settlement || said) node.classList.add("settled");
  node.append(title, bets, statusChips(seat, game),
    seat.arrangement ? arrangementNode(seat.arrangement, seat.cards, said) : cardsNode(seat.cards));
  if (seat.settlement) {
    const s = seat.settlement;
    const [zh, en] = labelOf("results", s.result);
    const text = `${zh} ${en} ${s.amount == null ? "" : money(s.amount, true)}`;
    node.append(el("div", "settlement " + s.result, text));
  }
  if (seat.detail) node.append(detailNode(seat.detail, game));
  if (seat.late) node.append(el("div", "late-note", "逾時 not done at the bell"));
  return node;
}

// Why a settled seat won or lost. Thirteen: a foul (相公), each row's winner and the two
// hands' names; Pai Gow: the pairs' classes, a re-set by the house, the commission.
function detailNode(detail, game) {
  const box = el("div", "detail");
  if (game === "paigow") {
    // Each pair's class is said beside its tiles (`pairVerdicts`).
    if (detail.corrected) {
      const line = el("div", "why corrected");
      line.title = "Art. 6(2)";
      line.append(bilingual("莊荷重新配牌", "re-set by the house"));
      box.append(line);
    }
    if (Number(detail.commission)) {
      box.append(el("div", "why", `抽水 commission ${money(detail.commission)}`));
    }
    return box;
  }
  if (detail.late) return box;
  if (detail.foul) {
    const line = el("div", "why foul");
    line.append(bilingual(detail.foul.zh, detail.foul.en));
    box.append(line);
  }
  if (detail.special) {
    const line = el("div", "why special");
    line.append(bilingual(detail.special.zh, detail.special.en));
    box.append(line);
  }
  // Each row's hand and winner are said beside its cards (`verdictNode`).
  return box;
}

function renderSeats(seats, snapshot) {
  const box = $("seats");
  box.classList.toggle("eight", seats.length > 4);
  box.replaceChildren(...seats.map((seat) => seatNode(seat, snapshot.game, seats)));
}

function renderBanker(banker, snapshot) {
  const box = $("banker");
  if (banker) {
    box.replaceChildren(el("div", "label", "莊家 Banker"));
    const cards = el("div", "cards");
    cards.append(...(banker.cards || []).map((c) => cardNode(c)));
    box.append(cards);
    return;
  }
  // The banker sits among the seats: this panel names who holds the bank (Pai Gow) and sums
  // up the round.
  box.replaceChildren(el("div", "label", "本局 This round"));
  const seats = snapshot.seats || [];
  const bank = seats.find((seat) => seat.name === "Banker" || seat.name_zh === "莊家");
  if (snapshot.game === "paigow") {
    const holder = el("div", "summary bank-holder");
    holder.append(bilingual("莊家", "Banker:"), " ",
      el("strong", "", bank && bank.holder ? bank.holder : "—"));
    if (typeof snapshot.stake === "number") {
      holder.append(" · ", bilingual("本金", "stake"), " " + money(snapshot.stake));
    }
    box.append(holder);
    const co = snapshot.co_bankers || [];
    if (co.length) {
      const line = el("div", "summary co-bankers");
      line.append(bilingual("幫莊", "co-banking:"), " " +
        co.map((c) => `${c.player || (c.house ? "house" : "?")} ${money(c.amount)}`).join(", "));
      box.append(line);
    }
  }
  const staked = seats.reduce(
    (sum, seat) => sum + (seat.bets || []).reduce((s, b) => s + (b.amount || 0), 0), 0);
  const bettors = seats.reduce((n, seat) => n + (seat.bets || []).length, 0);
  box.append(el("div", "summary", `投注 Bets: ${bettors} · ${money(staked)}`));
  const settled = snapshot.settlements || [];
  if (settled.length) {
    const net = settled.reduce((sum, s) => sum + (Number(s.amount) || 0), 0);
    box.append(el("div", "summary",
      `結算 Settled: ${settled.length} · 玩家淨額 players net ${money(net, true)}`));
  }
  const result = snapshot.bank;
  if (result && result.carried !== undefined && result.carried !== null) {
    const line = el("div", "summary bank-result");
    line.append(bilingual("莊家", "Bank:"), ` ${money(result.result, true)} · `,
      bilingual("抽水", "commission"), ` ${money(result.commission)} · `,
      bilingual("新莊本", "new bank"), " ", el("strong", "", money(result.carried)));
    box.append(line);
  }
}

function renderList(id, items, text, cls) {
  $(id).replaceChildren(...items.slice().reverse().map((item) => {
    const li = el("li", cls ? cls(item) : "", text(item));
    return li;
  }));
}

// "#12 拒絕 下注 Place bet · 發牌 Dealing · Art. 2(c) 摇完骰子後不再接受投注 · the bets closed... · lei.dealer"
function violationText(v) {
  const [zh, en] = actionNames(v.action);
  const [pzh, pen] = phaseNames(v.phase);
  const words = articleWords(v.article);
  const why = [v.reason_zh || (words ? words.zh : ""), v.reason || ""].filter(Boolean).join(" · ");
  return `#${v.seq} 拒絕 ${zh} ${en} · ${pzh} ${pen} · ${v.article || ""}` +
    `${why ? " · " + why : ""} · ${v.actor || ""}`;
}
// --- the journal, in words ---

// An event's name in both languages, as the game declares it.
function eventNames(name) {
  const known = state.events[name];
  if (known) return [known.label_zh || known.zh, known.label_en || known.en];
  return null;
}

// What an event's payload says beyond its name, in both languages: the seat or door, who,
// how much, the dice, the reason. Cards and tiles show only as the table serves them.
function eventDetails(p) {
  const zh = [];
  const en = [];
  const seat = p.seat ?? p.door;
  if (typeof seat === "number") { zh.push(`第${seat}門`); en.push(`seat ${seat}`); }
  const who = p.player || p.bettor || p.holder;
  if (who && typeof who === "string") { zh.push(who); en.push(who); }
  if (typeof p.amount === "number") { zh.push(money(p.amount)); en.push(money(p.amount)); }
  if (Array.isArray(p.dice)) { const d = p.dice.join(" "); zh.push(`骰 ${d}`); en.push(`dice ${d}`); }
  if (p.face_up === true) { zh.push("面朝上"); en.push("face up"); }
  // A journal line's number (a feed conflict names the line whose id was taken).
  if (typeof p.seq === "number") { zh.push(`第${p.seq}行`); en.push(`line ${p.seq}`); }
  if (p.rearranged === true || p.again === true) { zh.push("重新"); en.push("again"); }
  if (typeof p.device === "string") { zh.push(p.device); en.push(p.device); }
  const why = p.reason || p.fault;
  if (typeof why === "string" && why) en.push(why);
  return [zh.join(" "), en.join(" ")];
}

// Each journal event as a short sentence in the dealer's two languages: [zh, en]. The name is
// the game's label for the event (or, for a journaled input, the action's); the details are
// the payload's. An event the game data does not name shows its raw name: a walk of every
// event finds it (tests/api/test_console_words.py).
function eventSentence(event) {
  const p = event.payload || {};
  let names = null;
  if (event.event === "table.input") {
    // An input says its action; one naming none, the event's own name.
    names = p.action ? actionNames(p.action) : eventNames(event.event);
  } else if (event.event === "table.violation") {
    const [zh, en] = actionNames(p.action);
    const words = articleWords(p.article);
    return [`違規拒絕：${zh}${p.reason_zh ? "：" + p.reason_zh : words ? "（" + words.zh + "）" : ""}`,
      `refused: ${en} (${p.article || ""})${p.reason ? ": " + p.reason : ""}`];
  } else if (event.event === "training.control") {
    const [zh, en] = labelOf("training_ops", p.op);
    const what = [p.device, p.fault].filter(Boolean).join(" ");
    const failed = p.ok === false ? " ✕" : "";
    return [`訓練：${zh}${failed}`, `training: ${en}${what ? " " + what : ""}${failed}`];
  } else {
    names = eventNames(event.event);
    // A table that journals each action under its own name ("table.clear_hold").
    const action = /^table\.(.+)$/.exec(event.event || "");
    if (!names && action && (state.catalog[action[1]] || state.words.inputs[action[1]])) {
      names = actionNames(action[1]);
    }
  }
  // An event the game data does not name shows its raw name (a walk of every event finds it:
  // tests/api/test_console_words.py), with its details still said.
  if (!names) names = [event.event || "", event.event || ""];
  const [dzh, den] = event.event === "table.input" ? ["", ""] : eventDetails(p);
  return [names[0] + (dzh ? " " + dzh : ""), names[1] + (den ? " " + den : "")];
}

function violations(snapshot) {
  const bySeq = new Map();
  for (const v of [...state.pushedViolations, ...(snapshot.violations || [])]) {
    bySeq.set(v.seq ?? JSON.stringify(v), v);
  }
  return [...bySeq.values()].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0)).slice(-10);
}

function addEvent(event) {
  if (typeof event.seq === "number") {
    if (state.lastSeq !== null && event.seq <= state.lastSeq) return;
    state.lastSeq = event.seq;
  }
  if (event.event === "table.violation") {
    const p = event.payload || {};
    state.pushedViolations.push({
      seq: event.seq, article: p.article, action: p.action, phase: p.phase,
      actor: p.actor || event.actor, reason: p.reason, reason_zh: p.reason_zh,
    });
    state.pushedViolations = state.pushedViolations.slice(-10);
    if (state.snapshot) {
      renderList("violations", violations(state.snapshot), violationText);
    }
  }
  if (!shownInJournal(event)) return;
  const list = $("events");
  list.prepend(eventNode(event));
  while (list.children.length > JOURNAL_SHOWN) list.lastChild.remove();
  fitJournal();
}

// The journal shows whole lines only, newest first: a line that would be cut at the panel's
// bottom is not shown (the journal itself keeps everything).
let fitting = false;
const journalResized = window.ResizeObserver ? new ResizeObserver(() => fitJournal()) : null;
function fitJournal() {
  if (fitting) return;
  fitting = true;
  // After the current batch of changes (a microtask: a background tab gets no animation frames).
  queueMicrotask(() => {
    fitting = false;
    const list = $("events");
    const bottom = list.getBoundingClientRect().bottom;
    for (const li of list.children) {
      li.classList.toggle("beyond", li.getBoundingClientRect().bottom > bottom + 0.5);
    }
  });
}

// A device's (or the clock's) input is said by the fact the procedure journals right after it
// ("card to seat 2" after the card read): the panel shows the fact only.
function shownInJournal(event) {
  if (event.event !== "table.input") return true;
  const actor = String((event.payload || {}).actor || event.actor || "");
  return !/^(device|system)\b/.test(actor);
}

function eventNode(event) {
  let cls = "";
  if (event.event === "table.violation") cls = "violation";
  else if (/fault|tilt|hold|conflict/.test(event.event)) cls = "fault";
  else if (event.event === "training.control") cls = "training";
  const time = (event.ts || event.time || "").slice(11, 19);
  const who = event.actor ? " · " + String(event.actor).replace(/^(dealer|supervisor|trainer|admin):/, "") : "";
  const [zh, en] = eventSentence(event);
  const li = el("li", cls, `#${event.seq} ${time} ${zh} · ${en}${who}`);
  li.dataset.seq = event.seq;
  li.dataset.event = event.event;
  li.title = event.event;
  return li;
}

async function loadHistory() {
  const mine = session;
  const r = await api("/api/journal?limit=" + JOURNAL_SHOWN);
  if (r.status !== 200 || mine !== session) return;
  const list = $("events");
  const shown = [...list.children].map((li) => Number(li.dataset.seq)).filter(Number.isFinite);
  // Only what is older than every event already pushed, newest first under them.
  const below = shown.length ? Math.min(...shown) : Infinity;
  const older = r.body.events.filter((e) => typeof e.seq === "number" && e.seq < below &&
    shownInJournal(e));
  for (const event of older.reverse()) {
    if (list.children.length >= JOURNAL_SHOWN) break;
    list.append(eventNode(event));
  }
  fitJournal();
  if (state.lastSeq === null && older.length) state.lastSeq = older[0].seq;
}

// --- actions: only the legal ones, as buttons ---

function offline() {
  return !state.wsLive;
}

function renderActions() {
  const box = $("actions");
  const form = $("action-form");
  const offered = state.legal.filter(worthOffering);
  if (form.dataset.action && !offered.includes(form.dataset.action)) closeForm();
  // A refusal stays beside the action that caused it while the table stays in that phase.
  let kept = $("refusal");
  if (kept && kept.dataset.phase !== ((state.snapshot || {}).phase || "")) {
    kept.remove();
    kept = null;
  }
  const waiting = state.busy || state.awaitingPush !== null || offline();
  box.replaceChildren(...offered.map((name) => {
    const spec = state.catalog[name] || { name, label: { zh: name, en: name }, params: {} };
    const button = el("button", spec.requires_reason ? "supervisor" : "");
    button.type = "button";
    button.dataset.action = name;
    button.append(bilingual(spec.label.zh, spec.label.en));
    button.disabled = waiting;
    button.addEventListener("click", () => choose(spec));
    return button;
  }));
  if (kept && !form.contains(kept)) {
    const button = box.querySelector(`[data-action="${kept.dataset.action}"]`);
    if (button) button.after(kept);
    else box.append(kept);
  }
  for (const control of form.querySelectorAll("button, input, select")) {
    if (control.type === "submit" || control.dataset.place !== undefined) {
      control.disabled = waiting || control.dataset.none === "1";
    }
  }
}

// A legal action the dealer could not mean now is not offered: a misdeal is corrected only once
// a card has been dealt this round.
function worthOffering(name) {
  if (name !== "correct_misdeal") return true;
  const snapshot = state.snapshot || {};
  const dealt = (snapshot.shoe || []).length ||
    (snapshot.seats || []).some((seat) => (seat.cards || []).length) ||
    (snapshot.banker && (snapshot.banker.cards || []).length);
  return Boolean(dealt);
}

function choose(spec) {
  clearRefusal();
  // A hand placed into rows (its params name them) is tapped in, not typed.
  const rows = PLACING[spec.name];
  if (rows && spec.params && rows.every(([key]) => spec.params[key])) { openPlacer(spec); return; }
  const params = Object.entries(spec.params || {});
  const free = spec.payload_checked === false;
  if (!params.length && !spec.requires_reason && !free) { send(spec, {}, null); return; }
  state.placing = null;
  const form = $("action-form");
  form.classList.remove("placer");
  form.dataset.action = spec.name;
  form.replaceChildren();
  for (const [name, p] of params) {
    const label = el("label");
    label.append(bilingual(p.label.zh, p.label.en));
    const few = p.kind === "int" && p.minimum !== null && p.maximum !== null &&
      p.maximum - p.minimum < MAX_CHOICES;
    const choices = few ?
      Array.from({ length: p.maximum - p.minimum + 1 }, (_, i) => String(p.minimum + i)) :
      p.choices || [];
    const input = el(choices.length ? "select" : "input");
    input.name = name;
    input.dataset.kind = p.kind;
    if (choices.length) {
      // No seat is chosen for the dealer: a required list must be picked from, never assumed.
      if (few) {
        const none = el("option", "", "—");
        none.value = "";
        input.append(none);
      }
      for (const choice of choices) {
        const option = el("option", "", choice);
        option.value = choice;
        input.append(option);
      }
    } else if (p.kind === "int") {
      input.type = "number";
      input.inputMode = "numeric";
      if (p.minimum !== null) input.min = p.minimum;
      if (p.maximum !== null) input.max = p.maximum;
    } else if (p.kind === "bool") {
      input.type = "checkbox";
    } else {
      input.type = "text";
      // For lists the bounds count items (checked by the API), not characters.
      if (p.kind === "str" && p.max_length) input.maxLength = p.max_length;
      if (p.kind.startsWith("list")) input.classList.add("wide");
    }
    input.required = p.required && p.kind !== "bool";
    label.append(input);
    form.append(label);
  }
  if (free) {
    const label = el("label");
    label.append(bilingual("參數 (JSON)", "Payload (JSON)"));
    const input = el("input", "wide");
    input.name = "__payload";
    input.value = "{}";
    label.append(input);
    form.append(label);
  }
  if (spec.requires_reason) {
    const label = el("label");
    label.append(bilingual("原因", "Reason (journaled)"));
    const input = el("input", "wide");
    input.name = "__reason";
    input.required = true;
    input.minLength = 3;
    label.append(input);
    form.append(label);
  }
  formButtons(form, spec);
  form.onsubmit = (e) => {
    e.preventDefault();
    const payload = {};
    let reason = null;
    for (const input of form.querySelectorAll("input, select")) {
      if (input.name === "__reason") { reason = input.value; continue; }
      if (input.name === "__payload") {
        try { Object.assign(payload, JSON.parse(input.value || "{}")); }
        catch (err) { toast("JSON: " + err.message, true); return; }
        continue;
      }
      const kind = input.dataset.kind;
      if (!input.name) continue;
      if (kind === "bool") payload[input.name] = input.checked;
      else if (input.value === "") continue;
      else if (kind === "int") payload[input.name] = Number(input.value);
      else if (kind === "list[int]") payload[input.name] = input.value.split(/[ ,]+/).filter(Boolean).map(Number);
      else if (kind === "list[str]") payload[input.name] = input.value.split(/[ ,]+/).filter(Boolean);
      else payload[input.name] = input.value;
    }
    send(spec, payload, reason);
  };
  form.classList.remove("hidden");
  renderActions();
  const first = form.querySelector("input");
  if (first) first.focus();
}

function formButtons(form, spec) {
  const submit = el("button", "primary");
  submit.type = "submit";
  submit.append(bilingual("確認", "Confirm " + spec.label.en));
  const cancel = el("button", "small");
  cancel.type = "button";
  cancel.append(bilingual("取消", "Cancel"));
  cancel.addEventListener("click", closeForm);
  form.append(submit, cancel);
}

function closeForm() {
  const form = $("action-form");
  form.classList.add("hidden");
  form.classList.remove("placer");
  form.replaceChildren();
  delete form.dataset.action;
  state.placing = null;
}

// --- placing an open hand into rows, by tapping its cards (or tiles) ---

// The seats whose hand the action places: Thirteen's open hands; Pai Gow's dealt doors (to
// open: not yet open; to re-set: open).
function placeableSeats(name) {
  const seats = (state.snapshot || {}).seats || [];
  if (name === "enter_arrangement") return seats.filter((s) => s.open && !s.late);
  // A placed open hand is final: only a supervisor's correction places it again.
  if (name === "correct_arrangement") return seats.filter((s) => s.open && s.arrangement);
  if (name === "reset_hand") return seats.filter((s) => s.open && s.wrongly_set);
  return seats.filter((s) => s.dealt && !s.open && ((s.bets || []).length || s.name === "Banker"));
}

function seatCards(seatNo) {
  const seat = ((state.snapshot || {}).seats || []).find((s) => s.seat === seatNo);
  return seat ? seat : null;
}

function openPlacer(spec) {
  const seats = placeableSeats(spec.name);
  // The next hand to place: one not placed yet, else the first.
  const next = seats.find((s) => !s.arrangement) || seats[0];
  const rows = PLACING[spec.name];
  state.placing = {
    spec, seat: next ? next.seat : null, active: rows[0][0],
    rows: Object.fromEntries(rows.map(([key]) => [key, []])),
  };
  if (next) placedRows(next);
  renderPlacer();
}

// A correction starts from the hand as it is placed: the supervisor takes back what is in the
// wrong row and taps it into the right one.
function placedRows(seat) {
  const p = state.placing;
  if (p.spec.name !== "correct_arrangement" || !seat.arrangement) return;
  for (const [key] of PLACING[p.spec.name]) p.rows[key] = [...(seat.arrangement[key] || [])];
}

// What is left to place: Thirteen's open hand less what is placed; Pai Gow's tile set less the
// tiles placed and those of the other open hands (one set: a face's copies are counted).
function placerSource() {
  const p = state.placing;
  const placed = Object.values(p.rows).flat();
  if (CARD_PLACING.includes(p.spec.name)) {
    const seat = seatCards(p.seat);
    const cards = seat ? (seat.cards || []).filter((c) => /^(10|[2-9TJQKA])[shdc]$/i.test(c)) : [];
    return cards.map((code) => ({ code, left: placed.includes(code) ? 0 : 1 }));
  }
  if (p.spec.name === "reset_hand") {
    // A re-set pairs the same four tiles again (Art. 6(2)): exactly those are offered.
    const seat = seatCards(p.seat);
    const four = seat && seat.arrangement ? [...seat.arrangement.front, ...seat.arrangement.back] : [];
    const left = [...four];
    for (const code of placed) { const i = left.indexOf(code); if (i >= 0) left.splice(i, 1); }
    return [...new Set(four)].map((code) => ({ code, left: left.filter((c) => c === code).length }));
  }
  const used = [];
  for (const s of (state.snapshot || {}).seats || []) {
    if (s.seat === p.seat || !s.arrangement) continue;
    for (const key of ["front", "back"]) used.push(...(s.arrangement[key] || []));
  }
  return state.tiles.map((t) => {
    const taken = used.filter((u) => u === t.face).length + placed.filter((u) => u === t.face).length;
    return { code: t.face, left: Math.max(0, t.copies - taken) };
  });
}

// What the placer shows that comes from the table: the seats it may place and their cards.
function placerKey() {
  const p = state.placing;
  const seats = placeableSeats(p.spec.name);
  const others = ((state.snapshot || {}).seats || []).map((s) => s.arrangement || null);
  return JSON.stringify([seats.map((s) => [s.seat, s.cards, s.arrangement]), others]);
}

function renderPlacer() {
  const p = state.placing;
  p.key = placerKey();
  const form = $("action-form");
  const spec = p.spec;
  const kept = $("refusal");
  form.dataset.action = spec.name;
  form.replaceChildren();
  if (kept && kept.dataset.action === spec.name) form.append(kept);
  form.classList.remove("hidden");
  form.classList.add("placer");
  const rowsSpec = PLACING[spec.name];
  // Which hand: the seats this action may place, as buttons.
  const seatPick = el("div", "seat-pick");
  seatPick.append(bilingual("門", CARD_PLACING.includes(spec.name) ? "Seat:" : "Door:"));
  for (const s of placeableSeats(spec.name)) {
    const b = el("button", "small" + (s.seat === p.seat ? " chosen" : ""));
    b.type = "button";
    b.dataset.place = "seat";
    b.dataset.seat = s.seat;
    b.append(bilingual(s.name_zh || `第${s.seat}門`, s.name || `Seat ${s.seat}`));
    b.addEventListener("click", () => {
      p.seat = s.seat;
      for (const [key] of rowsSpec) p.rows[key] = [];
      p.active = rowsSpec[0][0];
      placedRows(s);
      renderPlacer();
    });
    seatPick.append(b);
  }
  form.append(seatPick);
  if (p.seat === null) {
    form.append(el("div", "muted", "沒有可排入的牌 · no open hand to place"));
    formButtons(form, spec);
    form.onsubmit = (e) => e.preventDefault();
    return;
  }
  // The rows: tap a row to fill it next; tap a placed card to take it back.
  const targets = el("div", "targets");
  for (const [key, size] of rowsSpec) {
    const row = el("div", "target" + (p.active === key ? " active" : ""));
    row.dataset.row = key;
    row.dataset.place = "row";
    const head = el("span", "row-label");
    head.append(bilingual(ROW_NAMES[key][0], `${ROW_NAMES[key][1]} ${p.rows[key].length}/${size}`));
    row.append(head);
    const cards = el("span", "cards");
    p.rows[key].forEach((code, i) => {
      const node = cardNode(code);
      node.classList.add("placed");
      node.addEventListener("click", (e) => {
        e.stopPropagation();
        p.rows[key].splice(i, 1);
        p.active = key;
        renderPlacer();
      });
      cards.append(node);
    });
    row.append(cards);
    row.addEventListener("click", () => { p.active = key; renderPlacer(); });
    targets.append(row);
  }
  form.append(targets);
  // The open cards (or the tile set) to tap.
  const source = el("div", "source");
  for (const item of placerSource()) {
    const pick = el("button", "pick");
    pick.type = "button";
    pick.dataset.place = "pick";
    pick.dataset.code = item.code;
    pick.append(cardNode(item.code));
    if (item.left <= 0) pick.dataset.none = "1";
    pick.disabled = item.left <= 0 || offline();
    pick.addEventListener("click", () => place(item.code));
    source.append(pick);
  }
  form.append(source);
  // A card the reader missed (or a tile) typed by its code, into the active row.
  const typed = el("label", "typed");
  typed.append(bilingual("或輸入", "or type a code"));
  const input = el("input");
  input.name = "";
  input.dataset.place = "typed";
  input.placeholder = CARD_PLACING.includes(spec.name) ? "As Td 9h" : "6-6 4-5";
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    for (const code of input.value.split(/[ ,]+/).filter(Boolean)) place(code, true);
  });
  typed.append(input);
  const add = el("button", "small");
  add.type = "button";
  add.dataset.place = "add";
  add.append(bilingual("加入", "Add"));
  add.addEventListener("click", () => {
    for (const code of input.value.split(/[ ,]+/).filter(Boolean)) place(code, true);
  });
  typed.append(add);
  form.append(typed);
  // A supervisor's step is journaled with its reason (kept across the placer's redraws).
  let reason = null;
  if (spec.requires_reason) {
    const label = el("label");
    label.append(bilingual("原因", "Reason (journaled)"));
    reason = el("input", "wide");
    reason.name = "__reason";
    reason.required = true;
    reason.minLength = 3;
    reason.value = p.reason || "";
    reason.addEventListener("input", () => { p.reason = reason.value; });
    label.append(reason);
    form.append(label);
  }
  formButtons(form, spec);
  form.onsubmit = (e) => {
    e.preventDefault();
    const payload = { seat: p.seat };
    for (const [key] of rowsSpec) {
      payload[key] = CARD_PLACING.includes(spec.name) ? [...p.rows[key]] : p.rows[key].join(" ");
    }
    send(spec, payload, reason ? reason.value : null);
  };
  renderActions();
}

// A card (or tile) into the active row; a full row passes the tap on to the next with room.
function place(code, typed) {
  const p = state.placing;
  const rowsSpec = PLACING[p.spec.name];
  const size = Object.fromEntries(rowsSpec);
  let target = p.active;
  if (p.rows[target].length >= size[target]) {
    const free = rowsSpec.find(([key, n]) => p.rows[key].length < n);
    if (!free) return;
    target = free[0];
  }
  p.rows[target].push(typed ? code.trim() : code);
  if (p.rows[target].length >= size[target]) {
    const free = rowsSpec.find(([key, n]) => p.rows[key].length < n);
    if (free) target = free[0];
  }
  p.active = target;
  renderPlacer();
}

// --- sending, and the table's answer beside the action ---

async function send(spec, payload, reason) {
  if (offline()) return;
  state.busy = true;
  renderActions();
  clearRefusal();
  const body = { payload, request_id: requestId() };
  if (reason !== null) body.reason = reason;
  try {
    const r = await api("/api/actions/" + encodeURIComponent(spec.name), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status === 200) {
      // The confirmation lasts while the table stays in the phase the action led to.
      toast("✓ " + spec.label.zh + " " + spec.label.en, false, r.body && r.body.phase);
      closeForm();
      const seq = r.body && r.body.seq;
      if (state.wsLive && typeof seq === "number" && state.stateSeq < seq) {
        state.awaitingPush = seq;
        setTimeout(() => {
          if (state.awaitingPush === seq) { state.awaitingPush = null; renderActions(); }
        }, 3000);
      }
    } else {
      showRefusal(spec, payload, r.body || {}, r.status);
      if (r.status === 401) signOut(r.body && r.body.message);
    }
  } finally {
    state.busy = false;
    if (!state.wsLive && state.token) {
      const mine = session;
      const s = await api("/api/state");
      if (s.status === 200 && mine === session) applyState(s.body.state, s.body.legal);
    }
    if (state.token) renderActions();
  }
}

// What the dealer entered, as they entered it: "seat 1 · head As Kd 9h · middle ...".
function entered(payload) {
  return Object.entries(payload).map(([key, value]) =>
    `${key} ${Array.isArray(value) ? value.join(" ") : value}`).join(" · ");
}

// A refusal, beside the action that caused it: what was refused and why in both languages (the
// article's own words, the table's reason), the article, and what the dealer entered.
function showRefusal(spec, payload, body, status) {
  clearRefusal();
  const v = body.violation || {};
  const box = el("div", "refusal");
  box.id = "refusal";
  box.setAttribute("role", "alert");
  box.dataset.action = spec.name;
  box.dataset.phase = (state.snapshot || {}).phase || "";
  const head = el("div", "refused");
  head.append(bilingual(`未能執行「${spec.label.zh}」`, `${spec.label.en}: not done`));
  box.append(head);
  const words = articleWords(v.article);
  const why = el("div", "why");
  if (status === 0) {
    why.append(bilingual("離線，請待連線恢復", "offline: wait for the feed to come back"));
  } else if (status === 429) {
    why.append(bilingual("拒絕太多次，請稍候", body.message || "too many refusals: wait a minute"));
  } else {
    // The table's reason in both languages (the procedure says each refusal in both).
    why.append(bilingual(v.reason_zh || (words ? words.zh : "輸入不符規則"),
      v.reason || (status === 422 ? body.message || "" : "not legal now")));
  }
  box.append(why);
  if (v.article) {
    // The article it keeps, in its own words.
    const art = el("div", "article muted");
    art.append(v.article, words ? ` 「${words.zh}」 — ${words.en}` : "");
    box.append(art);
  }
  const shown = entered(payload);
  if (shown) {
    const mine = el("div", "entered");
    mine.append(bilingual("你輸入", "You entered:"), " ", el("span", "mono", shown));
    box.append(mine);
  }
  const form = $("action-form");
  if (form.dataset.action === spec.name && !form.classList.contains("hidden")) {
    form.prepend(box);
  } else {
    const button = $("actions").querySelector(`[data-action="${spec.name}"]`);
    if (button) button.after(box);
    else $("actions").append(box);
  }
  box.scrollIntoView({ block: "nearest" });
}

function clearRefusal() {
  const old = $("refusal");
  if (old) old.remove();
}

function toast(text, bad, phase) {
  const box = $("toast");
  box.textContent = text;
  box.className = bad ? "bad" : "";
  state.toastPhase = phase || (state.snapshot ? state.snapshot.phase : null);
}

function hideToast() {
  const box = $("toast");
  box.textContent = "";
  box.className = "hidden";
  state.toastPhase = null;
}

// --- the console's settings and training mode ---

// The table's currency and whether it is a training table (every device simulated).
async function loadConsole(mine) {
  const r = await api("/api/console");
  if (mine !== session || r.status !== 200) return;
  if (typeof r.body.currency === "string" && r.body.currency) state.currency = r.body.currency;
  // The game's words and its tile set, for every label and tile picture the console shows.
  if (r.body.words) state.words = Object.assign(freshState().words, r.body.words);
  if (Array.isArray(r.body.tiles)) state.tiles = r.body.tiles;
  delete $("training").dataset.table;  // the physical table, drawn again with the tiles' names
  $("training-badge").classList.toggle("hidden", !r.body.training);
  if (state.snapshot) applyState(state.snapshot, state.legal);  // the amounts, in the currency
  if (r.body.trainer) {
    // The panel is the trainer's (and admin's) only.
    state.training = true;
    refreshTraining();
  }
}

let trainingRead = null;
let trainingAgain = false;
let byHandAsked = null; // the trainer's "by hand" choice on its way to the table

// The panel follows the table: read again after each pushed state (one read at a time).
async function refreshTraining() {
  if (trainingRead) { trainingAgain = true; return; }
  const mine = session;
  trainingRead = api("/api/training");
  let r;
  try { r = await trainingRead; } finally { trainingRead = null; }
  if (mine !== session) return;
  if (r.status !== 200) {
    state.training = false;
    $("training").classList.add("hidden");
    return;
  }
  renderTraining(r.body);
  if (trainingAgain) { trainingAgain = false; refreshTraining(); }
}

function renderTraining(data) {
  const panel = $("training");
  const chosen = {};
  for (const select of panel.querySelectorAll("select[data-device]")) {
    chosen[select.dataset.device] = select.value;
  }
  const byHand = $("by-hand");
  // A read begun before the trainer's click must not undo it: the box keeps what was asked
  // until the table reports it (or refuses it).
  const reported = Boolean(data.by_hand);
  if (byHandAsked === null || byHandAsked === reported) {
    byHandAsked = null;
    byHand.checked = reported;
  }
  byHand.onchange = () => {
    byHandAsked = byHand.checked;
    simControl({ op: "by_hand", on: byHand.checked },
      ["洗牌及搖骰等待訓練員", "shuffler and shaker wait for me"], () => { byHandAsked = null; });
  };
  // Drawn again only when something changed: a refresh per pushed state must not pull a
  // control from under the trainer's finger.
  const devices = JSON.stringify(data.devices || []);
  if (devices !== panel.dataset.devices || !$("training-devices").children.length) {
    panel.dataset.devices = devices;
    $("training-devices").replaceChildren(
      ...(data.devices || []).map((device) => simDevice(device, chosen[device.name])));
  }
  const table = JSON.stringify(data.table || null);
  if (table !== panel.dataset.table) {
    panel.dataset.table = table;
    renderPhysical(data.table);
  }
  panel.classList.remove("hidden");
  if (offline()) setLink(false);
}

function simButton(label, request, cls, disabled) {
  const button = el("button", cls || "");
  button.type = "button";
  button.dataset.sim = request.op + (request.fault ? ":" + request.fault : "");
  if (request.device) button.dataset.device = request.device;
  button.append(bilingual(label.zh, label.en));
  button.disabled = Boolean(disabled);
  if (disabled) button.dataset.off = "1";
  button.addEventListener("click", () => simControl(request, [label.zh, label.en]));
  return button;
}

function simDevice(device, chosen) {
  const box = el("div", "sim-device");
  box.dataset.device = device.name;
  const head = el("div", "sim-head");
  head.append(bilingual(device.label.zh, device.label.en));
  const door = device.door && device.door.open ? DOORS_OPEN[device.name] : null;
  const status = [];
  if (!device.powered) status.push("關機 off");
  else if (!device.present) status.push("未連接 not connected");
  else if (device.waiting) status.push("等你操作 waiting for you");
  else if (device.busy) status.push("運作中 busy");
  if (door) status.push(door);
  for (const f of device.armed || []) status.push("下次 next: " + f);
  for (const f of device.conditions || []) {
    if (!device.door || f !== device.door.condition) status.push(f);
  }
  for (const f of device.latched || []) status.push("⚠ " + f);
  const shown = el("span", "sim-status", [...new Set(status)].join(" · "));
  shown.dataset.status = device.name;
  head.append(shown);
  const off = !device.powered || !device.present;
  const controls = el("div", "sim-controls");
  for (const c of device.controls || []) {
    const request = { op: c.op };
    if (c.fault) request.fault = c.fault;
    // A shuffle or a throw with nothing waiting for a person: only a fault can be armed.
    const idle = (c.op === "shuffle" || c.op === "shake") && !c.fault && !device.waiting;
    controls.append(simButton(c.label, request, c.fault ? "" : "sim-main", off || idle));
  }
  const faults = el("div", "sim-controls");
  const select = el("select");
  select.dataset.device = device.name;
  select.setAttribute("aria-label", device.label.en + " fault");
  for (const f of device.faults || []) {
    const option = el("option", "", `${f.label.zh} ${f.label.en}${f.kind === "one_shot" ? " (1×)" : ""}`);
    option.value = f.fault;
    option.dataset.kind = f.kind;
    select.append(option);
  }
  if (chosen) select.value = chosen;
  const pick = () => select.value;
  const faultButton = (op, label, cls) => {
    const button = el("button", cls || "");
    button.type = "button";
    button.dataset.sim = op;
    button.dataset.device = device.name;
    button.append(bilingual(label[0], label[1]));
    button.disabled = off;
    if (off) button.dataset.off = "1";
    button.addEventListener("click", () => {
      const request = { op, fault: pick() };
      if (op === "inject" || op === "clear") request.device = device.name;
      simControl(request, label);
    });
    return button;
  };
  faults.append(select);
  if (device.name === "shuffler") faults.append(faultButton("shuffle", ["帶故障洗牌", "Shuffle with it"]));
  faults.append(faultButton("inject", ["加入故障", "Fault on"]), faultButton("clear", ["清除", "Clear"]));
  const switches = el("div", "sim-controls");
  if (device.door) {
    const open = device.door.open;
    const label = device.door.label;
    switches.append(simButton(
      { zh: (open ? "關上 " : "打開 ") + label.zh, en: (open ? "Close: " : "Open: ") + label.en },
      { op: "door", device: device.name, open: !open }, "", off));
  }
  switches.append(simButton(
    device.powered ? { zh: "關機", en: "Power off" } : { zh: "開機", en: "Power on" },
    { op: "power", device: device.name, on: !device.powered }, ""));
  box.append(head, controls, faults, switches);
  return box;
}

// The simulated "physical table" (training only): each seat's cards or tiles as its player
// holds them, for the trainer who plays the players. Marked so nobody takes it for the table's
// own view: the dealer's screen never shows a hand before it is opened.
function renderPhysical(table) {
  const box = $("physical");
  if (!table || !(table.seats || []).length) { box.classList.add("hidden"); return; }
  box.classList.remove("hidden");
  const list = el("div", "physical-seats");
  for (const seat of table.seats) {
    const node = el("div", "physical-seat");
    node.dataset.seat = seat.seat;
    const name = seat.banker ? bilingual("莊家", "Banker") :
      bilingual(`第${seat.seat}門`, (table.game === "paigow" ? "Door " : "Seat ") + seat.seat);
    node.append(name);
    if (seat.rows) node.append(arrangementNode(seat.rows, []));
    else node.append(cardsNode(seat.cards || seat.tiles || []));
    list.append(node);
  }
  box.replaceChildren(el("div", "physical-note", "模擬實體枱面（僅訓練，玩家手上的牌）· " +
    "Simulated physical table — training only: the hands as the players hold them"), list);
}

const DOORS_OPEN = {
  shuffler: "蓋已打開 lid open", shoe_reader: "牌靴離座 shoe out", dice_shaker: "骰盅離座 shaker off",
};

async function simControl(request, label, refused) {
  const { op, ...body } = request;
  const result = $("training-result");
  const r = await api("/api/training/" + encodeURIComponent(op), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status === 200) {
    const armed = r.body && r.body.armed ? ` · 下次 next: ${r.body.armed}` : "";
    const dealt = r.body && typeof r.body.dealt === "number" ? ` · ${r.body.dealt}` : "";
    result.textContent = `✓ ${label[0]} ${label[1]}${armed}${dealt}`;
    result.className = "";
  } else {
    result.textContent = "✕ " + label[0] + " " + label[1] + ": " +
      ((r.body && r.body.message) || "HTTP " + r.status);
    result.className = "bad";
    if (refused) refused();
  }
  refreshTraining();
}

// --- the five-minute countdown, by the table's clock ---

function tick() {
  const timer = state.snapshot && state.snapshot.timer;
  const countdown = $("countdown");
  const bell = $("bell");
  if (!timer || (typeof timer.deadline !== "number" && typeof timer.remaining !== "number")) {
    countdown.textContent = "--:--";
    countdown.className = "";
    bell.classList.add("hidden");
    return;
  }
  const now = (Date.now() + state.offsetMs) / 1000;
  // Without a deadline the timer is paused (the table is held): show what is left, still.
  const left = timer.rang ? 0 :
    typeof timer.deadline === "number" ? Math.max(0, timer.deadline - now) : timer.remaining;
  const whole = Math.ceil(left);
  countdown.textContent =
    String(Math.floor(whole / 60)).padStart(2, "0") + ":" + String(whole % 60).padStart(2, "0");
  countdown.className = left === 0 ? "expired" : left <= 30 ? "urgent" : "";
  bell.classList.toggle("hidden", !timer.rang);
  if (timer.rang && state.rangDeadline !== timer.deadline) {
    state.rangDeadline = timer.deadline;
    chime();
  }
}

// The bell device rings at the table; the console chimes too, for a dealer facing away.
function chime() {
  try {
    const Audio = window.AudioContext || window.webkitAudioContext;
    if (!Audio) return;
    const ctx = new Audio();
    const gain = ctx.createGain();
    gain.connect(ctx.destination);
    gain.gain.setValueAtTime(0.3, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 1.5);
    const tone = ctx.createOscillator();
    tone.frequency.value = 880;
    tone.connect(gain);
    tone.start();
    tone.stop(ctx.currentTime + 1.5);
  } catch (_) {
    // No audio device: the flashing bell on screen remains.
  }
}

// --- start ---

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", (e) => {
    e.preventDefault();
    signIn($("token").value.trim());
  });
  for (const node of [$("console"), $("hold-banner"), $("actor"),
    document.querySelector("#top .ident"), document.querySelector("#top .phase-box")]) {
    pristine.push([{ current: node }, node.cloneNode(true)]);
  }
  $("logout").addEventListener("click", () => signOut(""));
  for (const kind of ["pointerdown", "keydown", "touchstart", "wheel"]) {
    document.addEventListener(kind, () => { state.lastActivity = Date.now(); },
      { capture: true, passive: true });
  }
  setInterval(() => { tick(); checkIdle(); }, 250);
  window.addEventListener("resize", fitJournal);
  if (state.token) signIn(state.token);
  else showLogin("");
});
