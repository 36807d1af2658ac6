// The floor page: every table as a tile, the live alert list, three charts drawn as inline SVG.
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
  chartsTimer: null,
  drilled: null,
  role: null,
  alertsTimer: null,
  alertsAsked: 0,
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
  $("filters").classList.remove("hidden");
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
$("f-hours").addEventListener("change", () => {
  clearTimeout(state.chartsTimer);
  loadCharts();
});

function shown(t) {
  const pit = $("f-pit").value, game = $("f-game").value, st = $("f-state").value;
  if (pit && t.pit !== pit) return false;
  if (game && t.game !== game) return false;
  if (st === "chain") return t.chain !== "ok";
  if (st && t.state !== st) return false;
  return true;
}

function tile(t) {
  const bad = t.chain !== "ok";
  const node = el("div", "tile " + t.state + (bad ? " chain-bad" : ""));
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
  row2.append(el("span", null, "seq " + t.last_seq), el("span", null, "延遲 lag " + lag));
  node.append(row2);
  const chain = el("div", "chain " + (bad ? "bad" : "ok"));
  chain.append(bad ? bilingual("鏈警報", KINDS[t.chain.kind] + " @" + t.chain.seq) : bilingual("鏈完整", "chain ok"));
  node.append(chain);
  node.addEventListener("click", () => drill(t.table));
  return node;
}

function renderTiles() {
  const visible = state.tables.filter(shown);
  $("tiles").replaceChildren(...visible.map(tile));
  const alerts = state.tables.filter((t) => t.chain !== "ok").length;
  const stopped = state.tables.filter((t) => t.state === "held" || t.state === "tilted").length;
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

function itemKey(kind, row) {
  return kind === "chain" ? `chain:${row.id}` : `${kind}:${row.table}:${row.seq}`;
}

function alertItem(kind, row) {
  const li = el("li", kind === "fault" ? "fault " + (row.kind || "") : kind);
  li.dataset.key = itemKey(kind, row);
  li.append(el("span", "when", hhmmss(row.ts || row.detected_at)));
  if (kind === "chain") {
    li.dataset.alert = row.id;
    if (row.resolved_at) li.classList.add("resolved");
    li.append(el("span", null, `${row.table} seq ${row.seq}${row.gap_to && row.gap_to !== row.seq ? "–" + row.gap_to : ""} · ${KINDS[row.kind] || row.kind}`));
    const found = row.details || {};
    if (found.verdict) {
      li.classList.add("integrity");
      li.append(el("span", "what", found.subject || ""), el("span", "said en", found.verdict));
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
  if (ACK_PATH[kind]) ackPart(li, row, kind);
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

function pushAlert(kind, row) {
  if (!wanted(kind, row)) return;
  const list = $("alerts");
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
  for (const [kind, row] of rows) pushAlert(kind, row);
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
    } else if (msg.type === "violation" || msg.type === "fault") {
      scheduleAlerts();
    } else if (msg.type === "override") {
      pushAlert(msg.type, msg[msg.type]);
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
  if (!quiet) $("drill").classList.remove("hidden");
}

$("drill-close").addEventListener("click", () => { state.drilled = null; $("drill").classList.add("hidden"); });

// --- charts (inline SVG) ------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// Stacked bars: one bar per x key, one colour per series; a legend of series under the axis.
function stackedBars(container, rows, xKey, seriesKey, xLabel) {
  if (!rows.length) { container.replaceChildren(el("div", "empty", "尚無資料 no data yet")); return; }
  const xs = [...new Set(rows.map((r) => r[xKey]))].sort();
  const series = [...new Set(rows.map((r) => r[seriesKey]))].sort();
  const totals = Object.fromEntries(xs.map((x) => [x, 0]));
  for (const r of rows) totals[r[xKey]] += r.n;
  const max = Math.max(1, ...Object.values(totals));
  const W = 400, H = 200, left = 28, bottom = 22, legend = Math.min(series.length, 4) * 12 + 4;
  const plotH = H - bottom - legend, bw = Math.min(48, (W - left - 4) / xs.length);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
  svg.append(svgEl("line", { x1: left, y1: plotH, x2: W, y2: plotH, stroke: "#a9c2b5" }));
  svg.append(svgEl("text", { x: 2, y: 10 }, max), svgEl("text", { x: 2, y: plotH }, 0));
  const base = Object.fromEntries(xs.map((x) => [x, 0]));
  for (const r of rows) {
    const i = xs.indexOf(r[xKey]), color = PALETTE[series.indexOf(r[seriesKey]) % PALETTE.length];
    const h = (r.n / max) * (plotH - 12);
    base[r[xKey]] += h;
    const rect = svgEl("rect", { x: left + i * bw + 1, y: plotH - base[r[xKey]], width: Math.max(1, bw - 2), height: h, fill: color });
    rect.append(svgEl("title", {}, `${r[seriesKey]} · ${xLabel(r[xKey])}: ${r.n}`));
    svg.append(rect);
  }
  const step = Math.ceil(xs.length / 8);
  xs.forEach((x, i) => { if (i % step === 0) svg.append(svgEl("text", { x: left + i * bw + 2, y: plotH + 12 }, xLabel(x))); });
  series.slice(0, 4).forEach((s, i) => {
    svg.append(svgEl("rect", { x: left, y: plotH + 16 + i * 12, width: 8, height: 8, fill: PALETTE[i % PALETTE.length] }));
    svg.append(svgEl("text", { x: left + 12, y: plotH + 24 + i * 12 }, s + (i === 3 && series.length > 4 ? ` (+${series.length - 4})` : "")));
  });
  container.replaceChildren(svg);
}

// An hour's bar: its hour within a day's range, its day and hour beyond (UTC, as the lines).
const hourLabel = (iso) => {
  const when = new Date(iso).toISOString();
  const hour = when.slice(11, 13) + "h";
  return Number($("f-hours").value) > 24 ? `${when.slice(5, 10)} ${hour}` : hour;
};

// The charts cover the range the pit chose (the last N hours before the newest line).
async function loadCharts() {
  state.chartsTimer = null;
  const hours = $("f-hours").value;
  const { status, body } = await api(`/api/charts?hours=${encodeURIComponent(hours)}`);
  if (status !== 200 || $("f-hours").value !== hours) return;  // a newer choice is on its way
  stackedBars($("chart-violations"), body.violations_per_article_hour, "hour", "article", hourLabel);
  stackedBars($("chart-faults"), body.faults_per_model, "model", "kind", (m) => m);
  stackedBars($("chart-rounds"), body.rounds_per_table_hour, "hour", "table", hourLabel);
}

// --- boot ---------------------------------------------------------------------------------

if (state.token) start(); else showLogin("");
