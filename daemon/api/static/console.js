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
  shoe_loading: ["入牌靴", "Shoe"],
  banker_arranged: ["莊家已排牌", "Banker arranged"],
  players_arranging: ["玩家排牌", "Players arrange"],
  round_over: ["本局完", "Round over"],
  bank_offer: ["坐莊", "Bank offer"],
  shuffle: ["洗牌", "Shuffle"],
};
const phaseNames = (phase) => PHASES[String(phase || "").toLowerCase()] || [phase || "", phase || ""];
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
    const why = (r.body && r.body.message) || "HTTP " + r.status;
    showLogin(r.status === 401 ? "令牌無效 · " + why :
      r.status === 429 ? "嘗試太多，請稍後再試 · " + why : "無法登入 · " + why);
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
      const roles = { dealer: "荷官", supervisor: "主任", surveillance: "監控", admin: "管理" };
      $("actor").replaceChildren(el("span", "name", data.actor),
        el("span", "role muted", (roles[data.role] || "") + " " + data.role));
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
    phaseNames(snapshot.phase);
  // An answer about the phase before is stale once the table has moved on.
  if (state.toastPhase !== null && state.toastPhase !== snapshot.phase) hideToast();
  $("phase").replaceChildren(bilingual(names[0], names[1]));
  $("phase").dataset.phase = snapshot.phase || "";
  $("next").replaceChildren(
    bilingual(snapshot.next_zh || "", snapshot.next ? "Next: " + snapshot.next : ""));
  renderHold(snapshot.hold);
  renderDice(snapshot.dice, snapshot.dice_total);
  // Pai Gow has no arrangement time: the five minutes are Thirteen's (Art. 2(d)).
  $("timer-panel").classList.toggle("hidden", snapshot.game === "paigow");
  renderSeats(snapshot.seats || [], snapshot.game);
  renderBanker(snapshot.banker, snapshot);
  renderList("violations", violations(snapshot), violationText);
  renderList("faults", snapshot.faults || [], faultText,
    (f) => (f.cleared ? "cleared" : f.healthy ? "healthy" : ""));
  renderOverride(snapshot.override);
  renderDevices(snapshot.devices || {});
  renderActions();
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

// A dealer's proposal (e.g. a misread card entered by hand) waiting for a supervisor.
function renderOverride(pending) {
  const box = $("override");
  if (!pending) { box.classList.add("hidden"); box.replaceChildren(); return; }
  const label = saidOnce(pending.label || { zh: pending.kind, en: pending.kind });
  box.replaceChildren(bilingual("待主任批准", "Awaiting a supervisor:"), " ",
    bilingual(label.zh, label.en), el("div", "muted",
      "提出 proposed by " + (pending.proposed_by || "?") + (pending.note ? " · " + pending.note : "")));
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
  if (/^[1-6]-[1-6]$/.test(code)) return el("span", "card tile", code);
  const m = /^(10|[2-9TJQKA])([SHDC])$/i.exec(code);
  if (!m) {
    const back = el("span", "card back", "");
    back.title = "面朝下 face down";
    return back;
  }
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
  title.append(el("span", "muted", staked ? money(staked) : ""));
  const bets = el("div", "bets");
  for (const bet of seat.bets || []) {
    const cls = bet.bettor === seat.holder ? "holder" : "";
    bets.append(el("span", cls, `${bet.bettor} ${bet.amount}`), "  ");
  }
  node.append(title, bets, seat.arrangement ? arrangementNode(seat.arrangement, seat.cards) :
    cardsNode(seat.cards));
  if (seat.settlement) {
    const s = seat.settlement;
    const text = `${RESULTS[s.result] || s.result} ${s.amount == null ? "" : money(s.amount, true)}`;
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
  // The banker sits among the seats: this panel names who holds the bank (Pai Gow) and sums
  // up the round.
  box.replaceChildren(el("div", "label", "本局 This round"));
  const seats = snapshot.seats || [];
  const bank = seats.find((seat) => seat.name === "Banker" || seat.name_zh === "莊家");
  if (snapshot.game === "paigow") {
    const holder = el("div", "summary bank-holder");
    holder.append(bilingual("莊家", "Banker:"), " ",
      el("strong", "", bank && bank.holder ? bank.holder : "—"));
    box.append(holder);
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
}

function renderList(id, items, text, cls) {
  $(id).replaceChildren(...items.slice().reverse().map((item) => {
    const li = el("li", cls ? cls(item) : "", text(item));
    return li;
  }));
}

// "#12 拒絕 下注 Place bet · 發牌 Dealing · Art. 2(c) · lei.dealer"
function violationText(v) {
  const [zh, en] = actionNames(v.action);
  const [pzh, pen] = phaseNames(v.phase);
  return `#${v.seq} 拒絕 ${zh} ${en} · ${pzh} ${pen} · ${v.article || ""} · ${v.actor || ""}`;
}

function actionNames(action) {
  const spec = state.catalog[action];
  if (spec && spec.label) return [spec.label.zh, spec.label.en];
  return DEVICE_INPUTS[action] || [action || "", action || ""];
}

// Inputs from the devices and the table itself (the catalogue lists the people's actions).
const DEVICE_INPUTS = {
  card_read: ["讀牌", "card read"], dice_landed: ["骰子結果", "dice landed"],
  shuffle_completed: ["洗牌機完成", "shuffle done"], device_identified: ["設備已識別", "device identified"],
  timer_expired: ["時間到", "time up"], recovered: ["重啟恢復", "restarted"],
  device_fault: ["設備故障", "device fault"], device_healthy: ["設備恢復", "device healthy"],
  device_lost: ["設備斷線", "device lost"],
};

const TRAINING_OPS = {
  shuffle: ["洗牌", "shuffle"], shake: ["搖骰", "shake"], draw: ["抽牌", "draw a card"],
  deal: ["發完本局", "deal the round"], ring: ["試鐘", "ring the bell"], door: ["門/蓋", "door"],
  power: ["電源", "power"], by_hand: ["人手操作", "by hand"], inject: ["加入故障", "fault on"],
  clear: ["清除故障", "fault off"],
};

// Each journal event as a short sentence in the dealer's two languages: [zh, en].
function eventSentence(event) {
  const p = event.payload || {};
  const seat = p.seat ?? p.door ?? "";
  const who = p.player || p.bettor || "";
  const simple = {
    "table.started": ["枱開始運作", "table started"], "table.stopped": ["枱停止運作", "table stopped"],
    "table.opened": ["開枱", "table opened"], "table.resumed": ["恢復進行", "play resumes"],
    "table.recovered": ["重啟後恢復", "recovered after a restart"],
    "table.recovery": ["重啟恢復", "restart replayed"], "table.checkpoint": ["檢查點", "checkpoint"],
    "round.started": ["新一局", "round started"], "round.settled": ["本局已結算", "round settled"],
    "round.voided": ["本局作廢", "round void"], "bets.closed": ["停止下注", "bets closed"],
    "bets.returned": ["退回投注", "bets returned"], "deck.hand_shuffled": ["人手洗牌", "hand shuffled"],
    "deck.machine_shuffled": ["洗牌機洗牌", "machine shuffled"], "deck.cut": ["切牌", "cut"],
    "shoe.loaded": ["牌已入靴", "shoe loaded"], "banker.opened": ["莊家開牌", "banker opened"],
    "arrangement.banker": ["莊家排牌", "banker arranged"], "timer.expired": ["時間到", "time up"],
    "override.proposed": ["提出更正，待主任", "correction proposed"],
    "override.approved": ["主任批准更正", "correction approved"],
    "override.rejected": ["主任拒絕更正", "correction rejected"],
    "deal.corrected": ["更正錯發", "misdeal corrected"], "deal.voided": ["發牌作廢", "deal void"],
    "stake.placed": ["莊家本金", "banker's stake"], "stacks.moved": ["移牌疊", "stacks moved"],
    "tiles.shuffled": ["洗牌九", "tiles shuffled"], "tiles.dealt": ["派牌九", "tiles dealt"],
    "hands.opened": ["開牌", "hands opened"], "hand.reset": ["重新排牌", "hand reset"],
    "bank.passed": ["莊家轉手", "bank passed"], "bank.declined": ["不坐莊", "bank declined"],
    "bank.extended": ["繼續坐莊", "bank kept"], "tiles.shown_face_up": ["牌面朝上", "tiles face up"],
    "tile.face_up": ["牌面朝上", "a tile face up"], "api.auth_refused": ["令牌被拒", "bad tokens refused"],
    "api.input_refused": ["輸入被拒", "bad requests refused"],
  };
  switch (event.event) {
    case "table.input": {
      const [zh, en] = actionNames(p.action);
      return [zh, en];
    }
    case "table.violation": {
      const [zh, en] = actionNames(p.action);
      return [`違規拒絕：${zh}`, `refused: ${en} (${p.article || ""})`];
    }
    case "table.tilted":
      return [`故障停機：${p.device || ""}`, `TILT: ${p.device || ""} ${p.fault || p.reason || ""}`];
    case "table.held": return ["暫停", `HOLD: ${p.reason || ""}`];
    case "bet.placed":
      return [`${who} 下注第${seat}門 ${money(p.amount)}`,
        `${who} bets ${money(p.amount)} on seat ${seat}`];
    case "bet.withdrawn": return [`${who} 撤注`, `${who} withdraws`];
    case "bet.moved": return [`${who} 移注`, `${who} moves a bet`];
    case "card.dealt":
      return [`發牌至第${seat}門${p.face_up ? "（面朝上）" : ""}`,
        `card to seat ${seat}${p.face_up ? ", face up" : ""}`];
    case "dice.landed": {
      const dice = (p.dice || []).join(" ");
      return [`骰子 ${dice}`, `dice ${dice}`];
    }
    case "dice.invalid": return ["骰子無效，再搖", `invalid throw (${p.reason || ""}), again`];
    case "arrangement.entered": return [`第${seat}門排牌`, `seat ${seat} arranged`];
    case "hand.set": return [`第${seat}門排牌`, `hand ${seat} set`];
    case "bank.taken": return [`${who} 坐莊`, `${who} takes the bank`];
    case "device.identified": return [`設備已識別：${p.device || ""}`, `${p.device || ""} identified`];
    case "device.healthy": return [`設備恢復：${p.device || ""}`, `${p.device || ""} healthy`];
    case "device.link_degraded": return [`連線不穩：${p.device || ""}`, `${p.device || ""} link degraded`];
    case "device.restarted": return [`設備重啟：${p.device || ""}`, `${p.device || ""} restarted`];
    case "api.forbidden": return ["越權被拒", `refused: ${p.action || ""} for ${p.role || ""}`];
    case "feed.conflict":
      return [`數據衝突：第${p.seq}行已被他人佔用`,
        `feed conflict: line ${p.seq}'s id was taken on the broker; sent on the conflict subject`];
    case "training.control": {
      const [zh, en] = TRAINING_OPS[p.op] || [p.op, p.op];
      const what = [p.device, p.fault].filter(Boolean).join(" ");
      const failed = p.ok === false ? " ✕" : "";
      return [`訓練：${zh}${failed}`, `training: ${en}${what ? " " + what : ""}${failed}`];
    }
    default: {
      // A table that journals each action under its own name ("table.clear_hold").
      const action = /^table\.(.+)$/.exec(event.event || "");
      if (action && state.catalog[action[1]]) return actionNames(action[1]);
      return simple[event.event] || ["事件", event.event || ""];
    }
  }
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

function renderActions() {
  const box = $("actions");
  const form = $("action-form");
  const offered = state.legal.filter(worthOffering);
  if (form.dataset.action && !offered.includes(form.dataset.action)) closeForm();
  box.replaceChildren(...offered.map((name) => {
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
  $("training-devices").replaceChildren(
    ...(data.devices || []).map((device) => simDevice(device, chosen[device.name])));
  panel.classList.remove("hidden");
}

function simButton(label, request, cls, disabled) {
  const button = el("button", cls || "");
  button.type = "button";
  button.dataset.sim = request.op + (request.fault ? ":" + request.fault : "");
  if (request.device) button.dataset.device = request.device;
  button.append(bilingual(label.zh, label.en));
  button.disabled = Boolean(disabled);
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
