// The dealer console: renders the table's state pushed over /api/events and offers only the
// actions the table says are legal now. No build step, no framework; text goes in through
// textContent only (bettor names and payloads come from people).
"use strict";

const PHASES = {
  idle: ["待開局", "Idle"],
  equipment_check: ["設備檢查", "Equipment check"],
  hand_shuffle: ["人手洗牌", "Hand shuffle"],
  machine_shuffle: ["洗牌機洗牌", "Machine shuffle"],
  cut: ["切牌", "Cut"],
  betting: ["下注", "Betting"],
  shaking: ["搖骰", "Dice"],
  dealing: ["發牌", "Dealing"],
  banker_arranging: ["莊家排牌", "Banker arranges"],
  arranging: ["玩家排牌", "Players arrange"],
  opening: ["開牌", "Opening"],
  settling: ["結算", "Settling"],
  settled: ["已結算", "Settled"],
  hold: ["暫停", "Hold"],
  tilt: ["故障", "Tilt"],
};
const SUITS = { S: ["♠", false], H: ["♥", true], D: ["♦", true], C: ["♣", false] };
const RESULTS = {
  win: "贏 win", lose: "輸 lose", push: "和 push", foul: "犯規 foul", late: "逾時 late",
  banker: "莊勝 banker wins", player: "閒勝 player wins", tie: "和 tie",
};

const JOURNAL_SHOWN = 60;
// An integer with this few values (a seat, a door) is chosen from a list, not typed.
const MAX_CHOICES = 10;

const $ = (id) => document.getElementById(id);
// What one person's session holds; signing out puts every key back to this.
const freshState = () => ({
  token: "",
  catalog: {},
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
  stateSeq: 0,  // the last event seq seen when a pushed state was applied
  // Violations seen in the pushed journal, shown even before the table's state lists them.
  pushedViolations: [],
  // The console signs its person out after this long without a touch or a key (the daemon's
  // `[api] console_idle_seconds`, learnt at sign-in).
  idleSeconds: 600,
  lastActivity: Date.now(),
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

async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + state.token }, options.headers || {});
  const response = await fetch(path, Object.assign({}, options, { headers }));
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
    showLogin((r.body && r.body.message) || "HTTP " + r.status);
    return;
  }
  sessionStorage.setItem("tabled.token", token);
  $("token").value = "";
  state.catalog = Object.fromEntries(r.body.catalog.map((spec) => [spec.name, spec]));
  if (Number.isFinite(r.body.console_idle_seconds)) state.idleSeconds = r.body.console_idle_seconds;
  state.lastActivity = Date.now();
  $("login").classList.add("hidden");
  $("console").classList.remove("hidden");
  $("logout").classList.remove("hidden");
  connect();
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
  ws.onopen = () => ws.send(JSON.stringify({ token: state.token, after: state.lastSeq }));
  ws.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.type === "hello") {
      state.wsLive = true;
      setLink(true);
      state.retry = 500;
      const roles = { dealer: "荷官", supervisor: "主任", surveillance: "監控", admin: "管理" };
      $("actor").replaceChildren(el("span", "name", data.actor),
        el("span", "role muted", (roles[data.role] || "") + " " + data.role));
      $("actor").title = data.actor + " · " + data.role;
    } else if (data.type === "state") {
      state.stateSeq = state.lastSeq || 0;
      if (state.awaitingPush !== null && state.stateSeq >= state.awaitingPush) {
        state.awaitingPush = null;
      }
      applyState(data.state, data.legal);
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

function setLink(up) {
  const link = $("link");
  link.className = "link " + (up ? "up" : "down");
  link.replaceChildren(up ? bilingual("連線", "live") : bilingual("離線", "offline"));
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
  $("round").textContent = snapshot.round ?? "—";
  const names = (snapshot.phase_label && [snapshot.phase_label.zh, snapshot.phase_label.en]) ||
    PHASES[snapshot.phase] || [snapshot.phase, snapshot.phase];
  $("phase").replaceChildren(bilingual(names[0], names[1]));
  $("phase").dataset.phase = snapshot.phase || "";
  $("next").replaceChildren(
    bilingual(snapshot.next_zh || "", snapshot.next ? "Next: " + snapshot.next : ""));
  renderHold(snapshot.hold);
  renderDice(snapshot.dice, snapshot.dice_total);
  renderSeats(snapshot.seats || [], snapshot.game);
  renderBanker(snapshot.banker, snapshot);
  renderList("violations", violations(snapshot), violationText);
  renderList("faults", snapshot.faults || [], faultText,
    (f) => (f.cleared ? "cleared" : f.healthy ? "healthy" : ""));
  renderOverride(snapshot.override);
  renderDevices(snapshot.devices || {});
  renderActions();
  tick();
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

// A dealer's proposal (e.g. a misread card entered by hand) waiting for a supervisor.
function renderOverride(pending) {
  const box = $("override");
  if (!pending) { box.classList.add("hidden"); box.replaceChildren(); return; }
  const label = pending.label || { zh: pending.kind, en: pending.kind };
  box.replaceChildren(bilingual("待主任批准", "Awaiting a supervisor:"), " ",
    bilingual(label.zh, label.en), el("div", "muted",
      "提出 proposed by " + (pending.proposed_by || "?") + (pending.note ? " · " + pending.note : "")));
  box.classList.remove("hidden");
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

// A card or tile the game has not opened is served as "hidden": drawn as its back.
function hiddenCardNode() {
  const node = el("span", "card back", "🂠");
  node.title = "面朝下 face down";
  return node;
}

function cardNode(text) {
  if (text === "hidden") return hiddenCardNode();
  const m = /^(10|[2-9TJQKA])([SHDC])$/i.exec(text);
  if (!m) return el("span", "card tile", text);
  const [symbol, red] = SUITS[m[2].toUpperCase()];
  return el("span", red ? "card red" : "card", (m[1] === "T" ? "10" : m[1]) + symbol);
}

function cardsNode(list) {
  const cards = el("div", "cards");
  cards.append(...(list || []).map(cardNode));
  return cards;
}

// Once a hand is arranged (Thirteen: head, middle, tail; Pai Gow: front, back) it is shown
// in its rows, so the settlement can be read against it.
const ROWS = [
  ["head", "頭道", "Head"], ["front", "前手", "Front"], ["middle", "中道", "Middle"],
  ["tail", "尾道", "Tail"], ["back", "後手", "Back"],
];

function arrangementNode(arrangement, dealt) {
  const rows = ROWS.filter(([key]) => Array.isArray(arrangement[key]));
  if (!rows.length) return cardsNode(dealt);
  const box = el("div", "arrangement");
  for (const [key, zh, en] of rows) {
    const row = el("div", "row");
    row.dataset.row = key;
    row.append(el("span", "row-label", zh + " " + en), cardsNode(arrangement[key]));
    box.append(row);
  }
  return box;
}

function seatNode(seat) {
  const node = el("div", "seat");
  node.dataset.seat = seat.seat;
  if (seat.holder) node.classList.add("holder-set");
  if (seat.late) node.classList.add("late");
  const title = el("h3");
  title.append(bilingual(seat.name_zh || `第${seat.seat}門`, seat.name || "Seat " + seat.seat));
  const staked = (seat.bets || []).reduce((sum, b) => sum + (b.amount || 0), 0);
  title.append(el("span", "muted", staked ? "$" + staked.toLocaleString() : ""));
  const bets = el("div", "bets");
  for (const bet of seat.bets || []) {
    const cls = bet.bettor === seat.holder ? "holder" : "";
    bets.append(el("span", cls, `${bet.bettor} ${bet.amount}`), "  ");
  }
  node.append(title, bets, seat.arrangement ? arrangementNode(seat.arrangement, seat.cards) :
    cardsNode(seat.cards));
  if (seat.settlement) {
    const s = seat.settlement;
    const text = `${RESULTS[s.result] || s.result} ${s.amount > 0 ? "+" : ""}${s.amount ?? ""}`;
    node.append(el("div", "settlement " + s.result, text));
  }
  if (seat.late) node.append(el("div", "late-note", "逾時 not done at the bell"));
  return node;
}

function renderSeats(seats, game) {
  const box = $("seats");
  box.classList.toggle("eight", seats.length > 4);
  box.replaceChildren(...seats.map(seatNode));
}

function renderBanker(banker, snapshot) {
  const box = $("banker");
  if (banker) {
    box.replaceChildren(el("div", "label", "莊家 Banker"));
    const cards = el("div", "cards");
    cards.append(...(banker.cards || []).map(cardNode));
    box.append(cards);
    return;
  }
  // The banker sits among the seats: this panel sums up the round instead.
  box.replaceChildren(el("div", "label", "本局 This round"));
  const seats = snapshot.seats || [];
  const staked = seats.reduce(
    (sum, seat) => sum + (seat.bets || []).reduce((s, b) => s + (b.amount || 0), 0), 0);
  const bettors = seats.reduce((n, seat) => n + (seat.bets || []).length, 0);
  box.append(el("div", "summary", `投注 Bets: ${bettors} · $${staked.toLocaleString()}`));
  const settled = snapshot.settlements || [];
  if (settled.length) {
    const net = settled.reduce((sum, s) => sum + (Number(s.amount) || 0), 0);
    box.append(el("div", "summary",
      `結算 Settled: ${settled.length} · 玩家淨額 players net ${net > 0 ? "+" : ""}${net}`));
  }
}

function renderList(id, items, text, cls) {
  $(id).replaceChildren(...items.slice().reverse().map((item) => {
    const li = el("li", cls ? cls(item) : "", text(item));
    return li;
  }));
}

function violationText(v) {
  return `#${v.seq} ${v.article || ""} · ${v.action || ""} @ ${v.phase || ""} · ${v.actor || ""}`;
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
      actor: p.actor || event.actor,
    });
    state.pushedViolations = state.pushedViolations.slice(-10);
    if (state.snapshot) {
      renderList("violations", violations(state.snapshot), violationText);
    }
  }
  const list = $("events");
  list.prepend(eventNode(event));
  while (list.children.length > JOURNAL_SHOWN) list.lastChild.remove();
}

function eventNode(event) {
  let cls = "";
  if (event.event === "table.violation") cls = "violation";
  else if (/fault|tilt|hold/.test(event.event)) cls = "fault";
  const time = (event.ts || event.time || "").slice(11, 19);
  const who = event.actor ? " · " + event.actor : "";
  const li = el("li", cls, `#${event.seq} ${time} ${event.event}${who}`);
  li.dataset.seq = event.seq;
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
  const older = r.body.events.filter((e) => typeof e.seq === "number" && e.seq < below);
  for (const event of older.reverse()) {
    if (list.children.length >= JOURNAL_SHOWN) break;
    list.append(eventNode(event));
  }
  if (state.lastSeq === null && older.length) state.lastSeq = older[0].seq;
}

// --- actions: only the legal ones, as buttons ---

function renderActions() {
  const box = $("actions");
  const form = $("action-form");
  if (form.dataset.action && !state.legal.includes(form.dataset.action)) closeForm();
  box.replaceChildren(...state.legal.map((name) => {
    const spec = state.catalog[name] || { name, label: { zh: name, en: name }, params: {} };
    const button = el("button", spec.requires_reason ? "supervisor" : "");
    button.type = "button";
    button.dataset.action = name;
    button.append(bilingual(spec.label.zh, spec.label.en));
    button.disabled = state.busy || state.awaitingPush !== null;
    button.addEventListener("click", () => choose(spec));
    return button;
  }));
}

function choose(spec) {
  const params = Object.entries(spec.params || {});
  const free = spec.payload_checked === false;
  if (!params.length && !spec.requires_reason && !free) { send(spec, {}, null); return; }
  const form = $("action-form");
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
  const submit = el("button", "primary");
  submit.type = "submit";
  submit.append(bilingual("確認", "Confirm " + spec.label.en));
  const cancel = el("button", "small");
  cancel.type = "button";
  cancel.append(bilingual("取消", "Cancel"));
  cancel.addEventListener("click", closeForm);
  form.append(submit, cancel);
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
  const first = form.querySelector("input");
  if (first) first.focus();
}

function closeForm() {
  const form = $("action-form");
  form.classList.add("hidden");
  form.replaceChildren();
  delete form.dataset.action;
}

async function send(spec, payload, reason) {
  state.busy = true;
  renderActions();
  const body = { payload, request_id: requestId() };
  if (reason !== null) body.reason = reason;
  try {
    const r = await api("/api/actions/" + encodeURIComponent(spec.name), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status === 200) {
      toast("✓ " + spec.label.zh + " " + spec.label.en, false);
      closeForm();
      const seq = r.body && r.body.seq;
      if (state.wsLive && typeof seq === "number" && state.stateSeq < seq) {
        state.awaitingPush = seq;
        setTimeout(() => {
          if (state.awaitingPush === seq) { state.awaitingPush = null; renderActions(); }
        }, 3000);
      }
    } else {
      toast((r.body && r.body.message) || "HTTP " + r.status, true);
      if (r.status === 401) signOut(r.body && r.body.message);
    }
  } catch (err) {
    toast("網絡錯誤 network error: " + err, true);
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

function toast(text, bad) {
  const box = $("toast");
  box.textContent = text;
  box.className = bad ? "bad" : "";
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
  if (state.token) signIn(state.token);
  else showLogin("");
});
