// The floor page: every table as a tile, the live alert list, three charts, and the Integrity
// view (docs/integrity.md), the charts drawn by Chart.js (vendored: static/vendor/README.md).
// No build step, no framework, nothing from another host; text goes in through textContent only.
"use strict";

const STATES = { playing: "進行中", held: "暫停", tilted: "故障", stopped: "停止" };
const GAMES = { thirteen: "十三張", paigow: "牌九" };
const KINDS = {
  gap: "缺行 gap", fork: "分叉 fork", broken_link: "斷鏈 broken link", malformed: "格式錯 malformed",
  // The integrity update's (docs/integrity.md): one open alert per table, kind and subject.
  dice_bias: "骰子偏差 dice bias", shuffle_bias: "洗牌偏差 shuffle bias",
  reader_misreads: "讀牌錯誤 reader misreads", hold_outlier: "贏率異常 hold outlier",
};
const PALETTE = ["#e0b84f", "#d9342b", "#7ee2a8", "#6cb4ee", "#c38de0", "#f0a020", "#9fd3c7", "#ff8fa3"];
const MAX_ALERTS = 200;

const $ = (id) => document.getElementById(id);
const state = {
  token: sessionStorage.getItem("tabled.floor.token") || "",
  tables: [],
  ws: null,
  retry: 500,
  refreshTimer: null,
  renderTimer: null,
  // Violations, faults and overrides the live view pushed before the history stored them
  // (`provisional`), by item key: [kind, row, when first seen], shown until the stored one
  // comes, or hidden once unproven for `hideAfter` ms.
  provisional: new Map(),
  // Tables whose tile is provisional: when the page first saw it so (ms).
  provisionalSince: new Map(),
  tilesTimer: null,
  unprovenHidden: 0,
  // Anyone who may publish on a table's subjects can make the live view show a line no signed
  // head proves: what stays unproven this long is hidden ([floor] provisional_hide_seconds).
  hideAfter: 1000 * (Number(document.body.dataset.provisionalHideSeconds) || 10),
  chartsTimer: null,
  drilled: null,
  role: null,
  alertsTimer: null,
  alertsAsked: 0,
  charts: {},  // container id -> its Chart
  integrityTimer: null,
  view: "floor",
};

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

async function api(path, send) {
  const init = { headers: { Authorization: "Bearer " + state.token } };
  if (send !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(send);
  }
  const response = await fetch(path, init);
  let body = null;
  try { body = await response.json(); } catch (_) { body = null; }
  return { status: response.status, body };
}

function hhmmss(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toISOString().slice(11, 19);
}

// --- sign in ------------------------------------------------------------------------------

function showLogin(message) {
  $("floor").classList.add("hidden");
  $("filters").classList.add("hidden");
  $("views").classList.add("hidden");
  $("logout").classList.add("hidden");
  $("login").classList.remove("hidden");
  $("login-error").textContent = message || "";
  $("token").focus();
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  state.token = $("token").value.trim();
  sessionStorage.setItem("tabled.floor.token", state.token);
  start();
});

// Signing out forgets the person: token, name, role and everything shown with their rights.
$("logout").addEventListener("click", () => {
  sessionStorage.removeItem("tabled.floor.token");
  state.token = "";
  state.role = null;
  state.tables = [];
  state.drilled = null;
  if (state.ws) state.ws.close();
  $("token").value = "";
  $("actor").textContent = "";
  $("alerts").replaceChildren();
  $("tiles").replaceChildren();
  state.provisional.clear();
  state.provisionalSince.clear();
  state.unprovenHidden = 0;
  noteHidden();
  showLogin("");
});

async function start() {
  const { status, body } = await api("/api/tables");
  if (status !== 200) {
    const message = status === 401 ? "令牌無效 Token not recognised" : (body && body.message) || "HTTP " + status;
    showLogin(message);
    return;
  }
  $("login").classList.add("hidden");
  $("floor").classList.remove("hidden");
  $("views").classList.remove("hidden");
  if (state.view === "floor") $("filters").classList.remove("hidden");
  $("logout").classList.remove("hidden");
  state.tables = body;
  renderFilters();
  renderAlertTables();
  renderTiles();
  await loadAlerts();
  loadCharts();
  connect();
}

// --- tiles --------------------------------------------------------------------------------

function renderFilters() {
  for (const [id, key, labels] of [["f-pit", "pit", {}], ["f-game", "game", GAMES]]) {
    const select = $(id);
    const have = new Set([...select.options].map((o) => o.value));
    for (const value of [...new Set(state.tables.map((t) => t[key]).filter(Boolean))].sort()) {
      if (have.has(value)) continue;
      const option = el("option", null, labels[value] ? labels[value] + " " + value : value);
      option.value = value;
      select.append(option);
    }
  }
}

for (const id of ["f-pit", "f-game", "f-state"]) $(id).addEventListener("change", renderTiles);
$("f-hours").addEventListener("change", () => loadCharts());

function shown(t) {
  const pit = $("f-pit").value, game = $("f-game").value, st = $("f-state").value;
  if (pit && t.pit !== pit) return false;
  if (game && t.game !== game) return false;
  if (st === "chain") return t.chain !== "ok";
  if (st && (unproven(t) || t.state !== st)) return false;
  return true;
}

// A tile the live view has shown provisional for longer than `hideAfter` with its newest line
// proven by no signed head (`proven`: the live view checked one): what its unproven lines say
// (state, phase, round, reason) is hidden, not shown as the table's.
function unproven(t) {
  const since = state.provisionalSince.get(t.table);
  return t.provisional && !t.proven && since !== undefined && Date.now() - since >= state.hideAfter;
}

function unprovenTile(t) {
  const node = el("div", "tile unproven");
  node.dataset.table = t.table;
  const h = el("h3");
  h.append(el("span", null, t.table), el("span", "game", (GAMES[t.game] || "") + " " + (t.game || "?")));
  node.append(h, el("div", "phase", "—"));
  node.append(el("div", "live-note", `未證實 unproven · hidden after ${state.hideAfter / 1000} s without a signed head`));
  node.append(el("div", "row muted", `seq ${t.last_seq} stored`));
  return node;
}

function tile(t) {
  if (unproven(t)) return unprovenTile(t);
  const bad = t.chain !== "ok";
  const node = el("div", "tile " + t.state + (bad ? " chain-bad" : "") + (t.provisional ? " provisional" : ""));
  node.setAttribute("role", "button");
  node.tabIndex = 0;
  node.addEventListener("keydown", (e) => { if (e.key === "Enter") drill(t.table); });
  node.dataset.table = t.table;
  const h = el("h3");
  h.append(el("span", null, t.table), el("span", "game", (GAMES[t.game] || "") + " " + (t.game || "?")));
  node.append(h);
  const phase = el("div", "phase");
  // The phase by its name in the game's data (the API's `phase_said`), as the console says it.
  const said = t.phase_said || {};
  phase.append(bilingual(said.zh || "—", said.en || t.phase || "—"));
  phase.title = t.phase || "";
  node.append(phase);
  const row1 = el("div", "row");
  const badge = el("span", "badge " + t.state);
  badge.append(bilingual(STATES[t.state] || t.state, t.state));
  row1.append(el("span", null, "局 Round " + (t.round || "—")), badge);
  node.append(row1);
  if (t.reason) node.append(el("div", "reason", t.reason));
  if (t.pending_overrides) node.append(el("div", "reason", "待批 pending overrides: " + t.pending_overrides));
  const row2 = el("div", "row muted");
  const lag = t.lag_seconds == null ? "—" : t.lag_seconds.toFixed(1) + " s";
  row2.append(el("span", null, "seq " + Math.max(t.live_seq || 0, t.last_seq)), el("span", null, "延遲 lag " + lag));
  node.append(row2);
  // The live view's state while the history catches up (docs/floor-service.md, "The live view").
  if (t.provisional) {
    const signed = t.proven ? " · 已簽 signed" : "";
    node.append(el("div", "live-note", `暫定 provisional · stored to seq ${t.last_seq}${signed}`));
  }
  const chain = el("div", "chain " + (bad ? "bad" : "ok"));
  chain.append(bad ? bilingual("鏈警報", KINDS[t.chain.kind] + " @" + t.chain.seq) : bilingual("鏈完整", "chain ok"));
  node.append(chain);
  node.addEventListener("click", () => drill(t.table));
  return node;
}

// When each tile turned provisional; a render again when the first of them is due to hide.
function trackProvisional() {
  const now = Date.now();
  let due = Infinity;
  for (const t of state.tables) {
    if (!t.provisional) { state.provisionalSince.delete(t.table); continue; }
    if (!state.provisionalSince.has(t.table)) state.provisionalSince.set(t.table, now);
    const at = state.provisionalSince.get(t.table) + state.hideAfter;
    if (at > now) due = Math.min(due, at);
  }
  clearTimeout(state.tilesTimer);
  state.tilesTimer = due === Infinity ? null : setTimeout(renderTiles, due - now + 50);
}

function renderTiles() {
  trackProvisional();
  const visible = state.tables.filter(shown);
  $("tiles").replaceChildren(...visible.map(tile));
  const alerts = state.tables.filter((t) => t.chain !== "ok").length;
  const stopped = state.tables.filter((t) => !unproven(t) && (t.state === "held" || t.state === "tilted")).length;
  $("counts").textContent = `${state.tables.length} 桌 tables · ${stopped} 暫停/故障 held/tilted · ${alerts} 鏈警報 chain alerts`;
}

async function refreshTables() {
  state.refreshTimer = null;
  const { status, body } = await api("/api/tables");
  if (status === 200) {
    state.tables = body;
    renderFilters();
    renderAlertTables();
    renderTiles();
  }
}

// A `live` push: each table's newest state from the live view, drawn at once (10 a second at
// most); the history's own state comes back with the next refresh.
function liveTiles(tables) {
  for (const [name, live] of Object.entries(tables)) {
    const t = state.tables.find((x) => x.table === name);
    if (!t) state.tables.push({ contiguous_seq: 0, pending_overrides: 0, chain: "ok", ...live });
    else if (live.live_seq > t.last_seq) Object.assign(t, live, { last_seq: Math.max(t.last_seq, live.last_seq) });
  }
  state.tables.sort((a, b) => (a.table < b.table ? -1 : 1));
  if (!state.renderTimer) {
    state.renderTimer = setTimeout(() => {
      state.renderTimer = null;
      renderFilters();
      renderAlertTables();
      renderTiles();
    }, 100);
  }
}

function scheduleRefresh() {
  if (!state.refreshTimer) state.refreshTimer = setTimeout(refreshTables, 500);
  if (!state.chartsTimer) state.chartsTimer = setTimeout(loadCharts, 5000);
}

// --- alerts -------------------------------------------------------------------------------

// Violations and device faults say what happened in words (`said`, from the game's data);
// each kind of item is acknowledged the same way, at its own address.
const ACK_PATH = {
  chain: (row) => `/api/alerts/${row.id}/acknowledge`,
  violation: (row) => `/api/violations/${encodeURIComponent(row.table)}/${row.seq}/acknowledge`,
  fault: (row) => `/api/faults/${encodeURIComponent(row.table)}/${row.seq}/acknowledge`,
};

function provisionalNote(row) {
  return "暫定 provisional · not stored yet" + (row.proven ? " · 已簽 signed" : "");
}

function itemKey(kind, row) {
  return kind === "chain" ? `chain:${row.id}` : `${kind}:${row.table}:${row.seq}`;
}

function alertItem(kind, row) {
  const li = el("li", (kind === "fault" ? "fault " + (row.kind || "") : kind) + (row.provisional ? " provisional" : ""));
  li.dataset.key = itemKey(kind, row);
  li.append(el("span", "when", hhmmss(row.ts || row.detected_at)));
  if (kind === "chain") {
    li.dataset.alert = row.id;
    if (row.resolved_at) li.classList.add("resolved");
    li.append(el("span", null, `${row.table} seq ${row.seq}${row.gap_to && row.gap_to !== row.seq ? "–" + row.gap_to : ""} · ${KINDS[row.kind] || row.kind}`));
    const found = row.details || {};
    if (found.verdict) {
      li.classList.add("integrity");
      li.append(" ", el("span", "what", found.subject || ""), el("span", "said en", found.verdict));
      if (found.power) li.append(el("span", "muted", found.power));
    }
    if (row.expected_hash) li.append(el("span", "hash mono", "expected " + row.expected_hash));
    if (row.actual_hash) li.append(el("span", "hash mono", "received " + row.actual_hash));
  } else if (kind === "violation" || kind === "fault") {
    const said = row.said || {};
    const head = kind === "violation" ? "違規 violation" : row.kind === "tilt" ? "故障 tilt" : "暫停 hold";
    li.append(el("span", "what", `${row.table} #${row.seq} ${head}`));
    li.append(el("span", "said zh", said.zh || ""), el("span", "said en", said.en || ""));
    const who = kind === "violation" ? row.actor : [row.model, row.serial].filter(Boolean).join(" ");
    if (who) li.append(el("span", "muted", who));
  } else {
    li.append(el("span", null, `${row.table} 覆核 override ${row.status} · ${row.kind || ""} · ${row.decided_by || row.proposed_by || ""}`));
  }
  // A provisional item is not stored yet: it is taken in hand once the history has it.
  if (row.provisional) li.append(el("span", "live-note", provisionalNote(row)));
  else if (ACK_PATH[kind]) ackPart(li, row, kind);
  return li;
}

// Acknowledging a chain alert, a violation or a tilt: a person says they have it in hand, with
// a note. It stays what it was (a fork is never resolved by a click); it shows who took it and
// what they said.
const ACKNOWLEDGERS = ["pit", "surveillance", "admin"];

function ackPart(li, row, kind) {
  li.querySelector(".ack")?.remove();
  const box = el("div", "ack");
  if (row.acknowledged_at) {
    li.classList.add("acknowledged");
    box.append(bilingual("已接手", "acknowledged"), ` · ${row.acknowledged_by} ${hhmmss(row.acknowledged_at)} · `, el("q", null, row.ack_note));
  } else if (!row.resolved_at && ACKNOWLEDGERS.includes(state.role)) {
    const note = el("input");
    note.placeholder = "處理 what are you doing about it?";
    note.maxLength = 500;
    note.setAttribute("aria-label", "acknowledgement note");
    const button = el("button", null, "接手 Acknowledge");
    const problem = el("span", "error");
    button.addEventListener("click", async (e) => {
      e.stopPropagation();
      const { status, body } = await api(ACK_PATH[kind](row), { note: note.value });
      if (status === 200) {
        ackPart(li, body, kind);
        if ($("a-open").checked) li.remove();
      } else problem.textContent = (body && body.message) || `error ${status}`;
    });
    box.append(note, button, problem);
  }
  li.append(box);
}

// The alert list's filters: a kind, a table, and "not yet acknowledged" (asked of the API, so
// older ones beyond the newest fifty show too).
function alertFilter() {
  return { kind: $("a-kind").value, table: $("a-table").value, open: $("a-open").checked };
}

function wanted(kind, row) {
  const f = alertFilter();
  const as = kind === "fault" ? row.kind : kind;
  if (f.kind && f.kind !== as) return false;
  if (f.table && row.table !== f.table) return false;
  if (f.open && (row.acknowledged_at || row.resolved_at)) return false;
  return true;
}

const INTEGRITY = new Set(["dice_bias", "shuffle_bias", "reader_misreads", "hold_outlier"]);

function pushAlert(kind, row) {
  // An integrity alert opened or resolved: the Integrity view's flags follow (once a second).
  if (state.view === "integrity" && INTEGRITY.has(row.kind)) {
    clearTimeout(state.integrityTimer);
    state.integrityTimer = setTimeout(loadIntegrity, 1000);
  }
  if (!wanted(kind, row)) return;
  const list = $("alerts");
  // The same item again (the stored one after the provisional one, or an integrity alert a
  // later pass updated): the newer one replaces it, on top.
  list.querySelector(`li[data-key="${CSS.escape(itemKey(kind, row))}"]`)?.remove();
  list.prepend(alertItem(kind, row));
  while (list.children.length > MAX_ALERTS) list.lastChild.remove();
}

async function loadAlerts() {
  // Filters changed quickly ask again before the first answers arrive: only the last asking
  // draws the list (an earlier, slower answer would put back what the filter now hides).
  const asking = ++state.alertsAsked;
  const f = alertFilter();
  const query = (extra) => {
    const q = new URLSearchParams({ limit: "50", ...extra });
    if (f.table) q.set("table", f.table);
    return q.toString();
  };
  const open = f.open ? { acknowledged: "false" } : {};
  const asks = [];
  if (!f.kind || f.kind === "chain") asks.push(["chain", api("/api/alerts?" + query({}))]);
  if (!f.kind || f.kind === "violation") asks.push(["violation", api("/api/violations?" + query(open))]);
  if (!f.kind || f.kind === "tilt" || f.kind === "hold") {
    const kind = f.kind ? { kind: f.kind } : {};
    asks.push(["fault", api("/api/faults?" + query({ ...open, ...kind }))]);
  }
  if (!f.kind || f.kind === "override") asks.push(["override", api("/api/overrides?" + query({}))]);
  const rows = [];
  for (const [kind, ask] of asks) {
    const r = await ask;
    if (r.status === 200) for (const row of r.body) rows.push([kind, row, row.ts || row.detected_at]);
  }
  if (asking !== state.alertsAsked) return;
  // Chain alerts first (they are what the floor exists to catch), then the newest of the rest.
  rows.sort((a, b) => (a[0] === "chain") - (b[0] === "chain") || (a[2] < b[2] ? -1 : 1));
  $("alerts").replaceChildren();
  for (const [kind, row] of rows) {
    pushAlert(kind, row);
    state.provisional.delete(itemKey(kind, row));
  }
  for (const [kind, row] of state.provisional.values()) pushAlert(kind, row);
  noteHidden();
}

function renderAlertTables() {
  const select = $("a-table");
  const have = new Set([...select.options].map((o) => o.value));
  for (const t of state.tables) {
    if (have.has(t.table)) continue;
    const option = el("option", null, t.table);
    option.value = t.table;
    select.append(option);
  }
}

for (const id of ["a-kind", "a-table", "a-open"]) $(id).addEventListener("change", loadAlerts);

// A violation or fault pushed by the feed: the list is read again (debounced), so it comes
// with its sentence and its acknowledgement.
function scheduleAlerts() {
  if (!state.alertsTimer) state.alertsTimer = setTimeout(() => { state.alertsTimer = null; loadAlerts(); }, 1000);
}

// A provisional item no stored one replaced within `hideAfter`: taken off the list, counted.
function hideUnproven(key, since) {
  const seen = state.provisional.get(key);
  if (!seen || seen[2] !== since || seen[1].proven) return;  // stored, signed, or signed out
  state.provisional.delete(key);
  $("alerts").querySelector(`li[data-key="${CSS.escape(key)}"]`)?.remove();
  state.unprovenHidden += 1;
  noteHidden();
}

function noteHidden() {
  const note = $("unproven");
  note.classList.toggle("hidden", state.unprovenHidden === 0);
  note.textContent = `${state.unprovenHidden} 項未證實已隱藏 unproven live items hidden ` +
    `(no signed head within ${state.hideAfter / 1000} s)`;
}

// --- push ---------------------------------------------------------------------------------

function setLink(up) {
  const link = $("link");
  link.className = "link " + (up ? "up" : "down");
  link.replaceChildren(up ? bilingual("即時", "live") : bilingual("離線", "offline"));
}

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/feed");
  state.ws = ws;
  ws.onopen = () => ws.send(JSON.stringify({ token: state.token }));
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type === "hello") {
      setLink(true);
      state.retry = 500;
      $("actor").textContent = `${msg.actor} (${msg.role})`;
      if (state.role !== msg.role) {
        state.role = msg.role;
        loadAlerts();
      }
    } else if (msg.type === "alert") {
      pushAlert("chain", msg.alert);
      scheduleRefresh();
    } else if (msg.type === "acknowledged") {
      const kind = msg.kind === "violation" || msg.kind === "fault" ? msg.kind : "chain";
      const row = msg[msg.kind || "alert"];
      const li = document.querySelector(`#alerts li[data-key="${CSS.escape(itemKey(kind, row))}"]`);
      if (li) {
        if ($("a-open").checked) li.remove();
        else ackPart(li, row, kind);
      }
    } else if (msg.type === "resolved") {
      const li = document.querySelector(`#alerts li[data-alert="${msg.alert.id}"]`);
      if (li) li.classList.add("resolved");
      scheduleRefresh();
    } else if ((msg.type === "violation" || msg.type === "fault" || msg.type === "override") && msg.provisional) {
      const row = { ...msg[msg.type], provisional: true, proven: Boolean(msg.proven) };
      const key = itemKey(msg.type, row);
      const seen = state.provisional.get(key);
      const since = seen ? seen[2] : Date.now();
      if (seen && seen[1].proven) row.proven = true;
      if (!row.proven && Date.now() - since >= state.hideAfter) return;  // hidden already
      state.provisional.set(key, [msg.type, row, since]);
      while (state.provisional.size > MAX_ALERTS) state.provisional.delete(state.provisional.keys().next().value);
      pushAlert(msg.type, row);
      setTimeout(() => hideUnproven(key, since), since + state.hideAfter - Date.now());
    } else if (msg.type === "violation" || msg.type === "fault") {
      state.provisional.delete(itemKey(msg.type, msg[msg.type]));
      scheduleAlerts();
    } else if (msg.type === "override") {
      state.provisional.delete(itemKey(msg.type, msg[msg.type]));
      pushAlert(msg.type, msg[msg.type]);
    } else if (msg.type === "proven") {
      // A signed head of the table proved these lines: their items stay until stored.
      for (const [key, [kind, row]] of state.provisional) {
        if (row.table !== msg.table || row.seq < msg.from_seq || row.seq > msg.to_seq) continue;
        row.proven = true;
        const note = $("alerts").querySelector(`li[data-key="${CSS.escape(key)}"] .live-note`);
        if (note) note.textContent = provisionalNote(row);
      }
    } else if (msg.type === "live") {
      liveTiles(msg.tables);
    } else if (msg.type === "batch") {
      scheduleRefresh();
      if (state.drilled && msg.tables[state.drilled]) drill(state.drilled, true);
    } else if (msg.type === "error") {
      showLogin(msg.message);
    }
  };
  ws.onclose = () => {
    setLink(false);
    if (state.ws !== ws || !state.token) return;
    setTimeout(connect, state.retry);
    state.retry = Math.min(state.retry * 2, 8000);
  };
}

// --- drill-down ---------------------------------------------------------------------------

async function drill(table, quiet) {
  const { status, body } = await api("/api/tables/" + encodeURIComponent(table) + "?events=80");
  if (status !== 200) return;
  state.drilled = table;
  const t = body.table;
  $("drill-title").textContent = `${t.table} · ${GAMES[t.game] || ""} ${t.game || ""} · ${t.pit || ""}`;
  const summary = $("drill-summary");
  summary.replaceChildren(
    el("span", null, `階段 ${(t.phase_said || {}).zh || "—"} phase ${(t.phase_said || {}).en || t.phase || "—"}`),
    el("span", null, "狀態 state " + t.state + (t.reason ? " (" + t.reason + ")" : "")),
    el("span", null, "seq " + t.last_seq + " / 連續 contiguous " + t.contiguous_seq),
    el("span", t.chain === "ok" ? "chain ok" : "chain bad", t.chain === "ok" ? "鏈完整 chain ok" : "鏈警報 " + t.chain.kind + " @" + t.chain.seq),
  );
  $("drill-rounds").replaceChildren(...body.rounds.map((r) =>
    el("li", null, `局 ${r.round} · ${r.status} · seq ${r.first_seq}–${r.last_seq} · ${hhmmss(r.started_at)}`)));
  // Each line as a sentence in both languages (`said`, from the game's data); its event name
  // is the tooltip, and the exact line is the API's, for admin and audit.
  $("drill-events").replaceChildren(...body.events.map((e) => {
    const said = e.said || {};
    const li = el("li", e.redacted ? "redacted" : null);
    li.title = e.event;
    li.dataset.event = e.event;
    const who = String(e.actor || "").replace(/^(dealer|supervisor|device|system):/, "");
    li.append(el("span", "mono muted", `#${e.seq} ${hhmmss(e.ts)}`),
      el("span", "said zh", said.zh || e.event), el("span", "said en", said.en || ""),
      el("span", "muted", who),
      el("span", "muted", e.redacted ? "（未結算，牌已隱藏）cards hidden until the round is settled" : ""));
    return li;
  }));
  if (!quiet) {
    $("drill").classList.remove("hidden");
    drillChart(table);
  }
}

$("drill-close").addEventListener("click", () => {
  state.drilled = null;
  $("drill").classList.add("hidden");
  drawChart($("chart-drill"), {}, "", []);
});

// --- charts (Chart.js) ----------------------------------------------------------------------

Chart.defaults.color = "#a9c2b5";
Chart.defaults.borderColor = "rgba(169, 194, 181, 0.25)";
Chart.defaults.font.size = 11;
Chart.defaults.animation = false;
Chart.defaults.maintainAspectRatio = false;

// One chart in `container`, made again each time: its canvas says what it draws in words (the
// canvas's fallback, a list a screen reader reads, `lines`), as the bars' titles did.
function drawChart(container, config, summary, lines) {
  const id = container.id;
  if (state.charts[id]) { state.charts[id].destroy(); delete state.charts[id]; }
  if (!lines.length) { container.replaceChildren(el("div", "empty", "尚無資料 no data yet")); return; }
  const canvas = el("canvas");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", summary);
  const list = el("ul", "said-chart");
  for (const line of lines) list.append(el("li", null, line));
  canvas.append(list);
  container.replaceChildren(canvas);
  state.charts[id] = new Chart(canvas, config);
}

// Stacked bars: one bar per x key, one colour per series, the legend under the axis.
function stackedBars(container, rows, xKey, seriesKey, xLabel) {
  const xs = [...new Set(rows.map((r) => r[xKey]))].sort();
  const series = [...new Set(rows.map((r) => r[seriesKey]))].sort();
  const datasets = series.map((name, i) => {
    const counts = Object.fromEntries(xs.map((x) => [x, 0]));
    for (const r of rows) if (r[seriesKey] === name) counts[r[xKey]] += r.n;
    return { label: name, data: xs.map((x) => counts[x]), backgroundColor: PALETTE[i % PALETTE.length] };
  });
  drawChart(container, {
    type: "bar",
    data: { labels: xs.map(xLabel), datasets },
    options: {
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 8, font: { size: 10 } } } },
    },
  }, `${series.length} series over ${xs.length} bars`, rows.map((r) => `${r[seriesKey]} · ${xLabel(r[xKey])}: ${r.n}`));
}

// A bar's label: its hour within a day's range, its day and hour up to 48 h, its day beyond
// (UTC, as the lines).
function barLabel(body) {
  const hours = Number($("f-hours").value);
  return (iso) => {
    const when = new Date(iso).toISOString();
    const day = when.slice(5, 10), hour = when.slice(11, 13) + "h";
    if (body.bar === "day") return day;
    return hours > 24 ? `${day} ${hour}` : hour;
  };
}

const NO_PIT = "no pit";

// Every bar of the range (an hour or a day from `since` up to `until`), so an hour nobody played
// is drawn at zero, not left out of the line.
function allBars(body) {
  const step = body.bar === "day" ? 86400000 : 3600000;
  const out = [];
  for (let t = Date.parse(body.since); t < Date.parse(body.until); t += step) out.push(t);
  return out;
}

// Rounds started per bar: the floor's total (its own axis, on the right) and one line per pit,
// what a floor manager reads; the bars a pit had no round are zero.
function roundsChart(container, body) {
  const label = barLabel(body);
  const xs = allBars(body);
  const at = new Map(xs.map((x, i) => [x, i]));
  const on = (rows) => {
    const data = xs.map(() => 0);
    for (const r of rows) data[at.get(Date.parse(r.hour))] = r.n;
    return data;
  };
  const pits = [...new Set(body.rounds_per_pit_hour.map((r) => r.pit))].sort((a, b) =>
    (a === NO_PIT) - (b === NO_PIT) || a.localeCompare(b, undefined, { numeric: true }));
  const datasets = [{
    label: "樓面 floor", data: on(body.rounds_per_hour), yAxisID: "floor",
    borderColor: "#f4efe1", backgroundColor: "#f4efe1", borderWidth: 3, pointRadius: 0, order: 0,
  }];
  pits.forEach((pit, i) => {
    const data = on(body.rounds_per_pit_hour.filter((r) => r.pit === pit));
    datasets.push({ label: pit, data, yAxisID: "pit", borderColor: PALETTE[i % PALETTE.length],
      backgroundColor: PALETTE[i % PALETTE.length], borderWidth: 1.5, pointRadius: xs.length > 1 ? 0 : 3 });
  });
  const lines = body.rounds_per_hour.map((r) => `樓面 floor · ${label(r.hour)}: ${r.n}`);
  for (const r of body.rounds_per_pit_hour) lines.push(`${r.pit} · ${label(r.hour)}: ${r.n}`);
  drawChart(container, {
    type: "line",
    data: { labels: xs.map((t) => label(new Date(t).toISOString())), datasets },
    options: {
      interaction: { mode: "index", intersect: false },
      scales: {
        pit: { position: "left", beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "pit" } },
        floor: { position: "right", beginAtZero: true, ticks: { precision: 0 }, grid: { drawOnChartArea: false },
          title: { display: true, text: "floor" } },
      },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 8, font: { size: 10 } } } },
    },
  }, `rounds per ${body.bar}: the floor and ${pits.length} pits over ${xs.length} ${body.bar}s`, lines);
}

// The charts cover the range the pit chose (the hours, or days, up to the newest line's).
async function loadCharts() {
  clearTimeout(state.chartsTimer);
  state.chartsTimer = null;
  if (state.drilled) drillChart(state.drilled);
  const hours = $("f-hours").value;
  const { status, body } = await api(`/api/charts?hours=${encodeURIComponent(hours)}`);
  if (status !== 200 || $("f-hours").value !== hours) return;  // a newer choice is on its way
  const label = barLabel(body);
  stackedBars($("chart-violations"), body.violations_per_article_hour, "hour", "article", label);
  stackedBars($("chart-faults"), body.faults_per_model, "model", "kind", (m) => m);
  roundsChart($("chart-rounds"), body);
}

// The drill-down's chart: the one table's rounds per bar over the same range.
async function drillChart(table) {
  const hours = $("f-hours").value;
  const { status, body } = await api(
    `/api/tables/${encodeURIComponent(table)}/charts?hours=${encodeURIComponent(hours)}`);
  if (status !== 200 || state.drilled !== table || $("f-hours").value !== hours) return;
  const label = barLabel(body);
  const rows = body.rounds_per_hour;
  const xs = allBars(body);
  const n = new Map(rows.map((r) => [Date.parse(r.hour), r.n]));
  drawChart($("chart-drill"), {
    type: "bar",
    data: { labels: xs.map((t) => label(new Date(t).toISOString())),
      datasets: [{ label: table, data: xs.map((t) => n.get(t) || 0), backgroundColor: PALETTE[0] }] },
    options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } }, plugins: { legend: { display: false } } },
  }, `${table}: rounds per ${body.bar} over ${xs.length} ${body.bar}s`,
  rows.map((r) => `${table} · ${label(r.hour)}: ${r.n}`));
}

// --- the Integrity view ----------------------------------------------------------------------

function showView(view) {
  state.view = view;
  $("left").classList.toggle("hidden", view !== "floor");
  $("filters").classList.toggle("hidden", view !== "floor");
  $("integrity").classList.toggle("hidden", view !== "integrity");
  for (const [id, name] of [["v-floor", "floor"], ["v-integrity", "integrity"]]) {
    $(id).classList.toggle("on", view === name);
    $(id).setAttribute("aria-pressed", String(view === name));
  }
  if (view === "integrity") loadIntegrity();
}
$("v-floor").addEventListener("click", () => showView("floor"));
$("v-integrity").addEventListener("click", () => showView("integrity"));

// A picker of what was audited: flagged first (⚠), then by table; keeps the choice it had.
function fillPicker(select, rows, label) {
  const before = select.value;
  const sorted = [...rows].sort((a, b) => (b.flagged - a.flagged) || label(a).localeCompare(label(b)));
  select.replaceChildren(...sorted.map((r) => {
    const option = el("option", null, (r.flagged ? "⚠ " : "") + label(r));
    option.value = r.serial === undefined ? r.table : `${r.table}\t${r.serial}`;
    if (r.flagged) option.className = "flagged";
    return option;
  }));
  if ([...select.options].some((o) => o.value === before)) select.value = before;
}

function picked(select) {
  const [table, serial] = select.value.split("\t");
  return `table=${encodeURIComponent(table)}` + (serial === undefined ? "" : `&serial=${encodeURIComponent(serial)}`);
}

// Shown, the view is read again every 10 s (the passes' sums grow) and at once on an
// integrity alert from the feed.
async function loadIntegrity() {
  clearTimeout(state.integrityTimer);
  state.integrityTimer = null;
  if (state.view !== "integrity" || !state.token) return;
  state.integrityTimer = setTimeout(loadIntegrity, 10000);
  const { status, body } = await api("/api/integrity");
  if (status !== 200) { $("i-note").textContent = (body && body.message) || "HTTP " + status; return; }
  const flagged = [...body.dice, ...body.shuffle, ...body.hold].filter((r) => r.flagged).length;
  $("i-note").textContent = `${body.dice.length} 骰盅 shakers · ${body.shuffle.length} 洗牌機 shufflers · ` +
    `${body.hold.length} 枱 tables with hold · ${flagged} ⚠ flagged (open integrity alerts)`;
  fillPicker($("i-dice"), body.dice, (r) => `${r.table} ${r.serial} (${r.samples} throws)`);
  fillPicker($("i-shuffle"), body.shuffle, (r) => `${r.table} ${r.serial} (${r.samples} decks)`);
  fillPicker($("i-hold"), body.hold, (r) => r.table);
  await Promise.all([drawDice(), drawShuffle(), drawHold()]);
}

async function drawDice() {
  if (!$("i-dice").value) return drawChart($("chart-dice"), {}, "", []);
  const { status, body } = await api("/api/integrity/dice?" + picked($("i-dice")));
  if (status !== 200) return;
  const faces = [1, 2, 3, 4, 5, 6];
  const out = (n) => (n > body.high ? "above the band" : n < body.low ? "below the band" : "within the band");
  drawChart($("chart-dice"), {
    data: {
      labels: faces.map(String),
      datasets: [
        { type: "bar", label: "faces", data: body.faces, order: 2,
          backgroundColor: body.faces.map((n) => (n > body.high || n < body.low ? "#d9342b" : "#6cb4ee")) },
        { type: "line", label: "99 % band (fair)", data: faces.map(() => body.low), borderColor: "#7ee2a8",
          borderDash: [4, 3], pointRadius: 0, fill: false, order: 1 },
        { type: "line", label: "", data: faces.map(() => body.high), borderColor: "#7ee2a8", borderDash: [4, 3],
          pointRadius: 0, fill: "-1", backgroundColor: "rgba(126, 226, 168, 0.15)", order: 1 },
        { type: "line", label: "expected", data: faces.map(() => body.expected), borderColor: "#e0b84f",
          pointRadius: 0, order: 0 },
      ],
    },
    options: { scales: { y: { beginAtZero: true } },
      plugins: { legend: { position: "bottom", labels: { filter: (item) => item.text !== "" } } } },
  }, `${body.serial}: faces of ${body.throws} throws`,
  body.faces.map((n, i) => `face ${i + 1}: ${n} (fair ${Math.round(body.low)}–${Math.round(body.high)}) ${out(n)}`));
}

// count / expected: blue under, white at one, red over (the report's colours).
function heatColour(v) {
  const t = Math.max(-1, Math.min(1, v - 1));
  const a = Math.round(255 * (1 - Math.abs(t)));
  return t > 0 ? `rgb(255, ${a}, ${a})` : `rgb(${a}, ${a}, 255)`;
}

async function drawShuffle() {
  if (!$("i-shuffle").value) {
    drawChart($("chart-heat"), {}, "", []);
    return drawChart($("chart-rising"), {}, "", []);
  }
  const { status, body } = await api("/api/integrity/shuffle?" + picked($("i-shuffle")));
  if (status !== 200) return;
  const cells = [];
  let top = { v: -1 };
  body.ratio.forEach((row, y) => row.forEach((v, x) => {
    cells.push({ x: x + 1, y: y + 1, v });
    if (v > top.v) top = { x: x + 1, y: y + 1, v };
  }));
  const quarters = (axis) => { axis.ticks = [1, 13, 26, 39, 52].map((value) => ({ value })); };
  const size = ({ chart }) => (chart.chartArea || { width: 0 }).width / 52;
  const high = ({ chart }) => (chart.chartArea || { height: 0 }).height / 52;
  drawChart($("chart-heat"), {
    type: "matrix",
    data: { datasets: [{ label: "count / expected", data: cells, width: size, height: high,
      backgroundColor: (c) => heatColour(c.raw ? c.raw.v : 1), borderWidth: 0 }] },
    options: {
      plugins: { legend: { display: false } },
      scales: {
        x: { type: "linear", min: 0.5, max: 52.5, offset: false, title: { display: true, text: "position dealt" }, afterBuildTicks: quarters },
        y: { type: "linear", min: 0.5, max: 52.5, reverse: true, offset: false, title: { display: true, text: "position in" }, afterBuildTicks: quarters },
      },
    },
  }, `${body.serial}: card × position of ${body.decks} decks`,
  [`${body.decks} decks; the largest cell ${top.v.toFixed(2)} × expected (in ${top.y}, dealt ${top.x})`]);
  const r = body.rising.map((_, i) => i + 1);
  const mean = body.rising.reduce((sum, n, i) => sum + n * (i + 1), 0) / Math.max(1, body.decks);
  drawChart($("chart-rising"), {
    data: {
      labels: r.map(String),
      datasets: [
        { type: "bar", label: "this shuffler", data: body.rising, backgroundColor: "#6cb4ee", order: 1 },
        { type: "line", label: "a random deck", data: body.random_rising, borderColor: "#d9342b", pointRadius: 0, order: 0 },
      ],
    },
    options: { scales: { x: { title: { display: true, text: "rising sequences a deck" }, ticks: { maxTicksLimit: 14 } } },
      plugins: { legend: { position: "bottom" } } },
  }, `${body.serial}: rising sequences of ${body.decks} decks`,
  [`mean ${mean.toFixed(2)} rising sequences a deck (a random deck 26.50)`]);
}

async function drawHold() {
  if (!$("i-hold").value) return drawChart($("chart-hold"), {}, "", []);
  const { status, body } = await api("/api/integrity/hold?" + picked($("i-hold")));
  if (status !== 200) return;
  const labels = body.points.map((p) => p.shift);
  const limit = (v) => ({ type: "line", label: v > 0 ? `±${body.limit}` : "", data: labels.map(() => v),
    borderColor: "#d9342b", borderDash: [5, 4], pointRadius: 0 });
  drawChart($("chart-hold"), {
    type: "line",
    data: { labels, datasets: [
      { label: "z of the hold", data: body.points.map((p) => p.z), borderColor: "#a9c2b5",
        pointBackgroundColor: body.points.map((p) => (p.flagged ? "#d9342b" : "#6cb4ee")), pointRadius: 3 },
      limit(body.limit), limit(-body.limit),
    ] },
    options: { scales: { x: { ticks: { maxTicksLimit: 8 } },
      y: { suggestedMin: -body.limit - 1, suggestedMax: body.limit + 1 } },
      plugins: { legend: { position: "bottom", labels: { filter: (item) => item.text !== "" } } } },
  }, `${body.table}: hold z per shift`,
  body.points.map((p) => `${p.shift}: z = ${p.z >= 0 ? "+" : ""}${p.z.toFixed(2)}${p.flagged ? " FLAGGED" : ""}`));
}

$("i-dice").addEventListener("change", drawDice);
$("i-shuffle").addEventListener("change", drawShuffle);
$("i-hold").addEventListener("change", drawHold);

// --- boot ---------------------------------------------------------------------------------

if (state.token) start(); else showLogin("");
