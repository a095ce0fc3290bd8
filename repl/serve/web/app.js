// flowq serve's page: plain JavaScript, no build step.
"use strict";
const $ = (id) => document.getElementById(id);
let explorer = { tx: "", addr: "", block: "" };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

function link(template, key, value, text) {
  if (!template) return null;
  return el("a", { href: template.replace("{" + key + "}", value), target: "_blank", rel: "noopener", class: "explorer" }, text || "explorer");
}

async function rows(statements) {
  const resp = await fetch("api/rows", { method: "POST", body: statements });
  const text = await resp.text();
  if (!resp.ok) { try { return [{ error: JSON.parse(text).error }]; } catch (e) { return [{ error: text }]; } }
  return text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

// render writes the answer of /api/rows into box: tables, texts, errors.
function render(box, answer, errBox) {
  box.replaceChildren();
  let table = null, body = null, cols = [];
  for (const o of answer) {
    if (o.columns) {
      cols = o.columns;
      const head = el("tr", {}, ...cols.map((c, i) => el("th", { onclick: () => sortBy(table, i) }, c)));
      body = el("tbody");
      table = el("table", { class: "result" }, el("thead", {}, head), body);
      box.append(table);
    } else if (o.row) {
      body.append(el("tr", {}, ...o.row.map((cell, i) => cellFor(cols[i], cell[0], cell[1]))));
    } else if (o.text !== undefined) {
      box.append(el("pre", { class: "text" }, o.text));
    } else if (o.error) {
      if (errBox) { errBox.textContent = o.error; errBox.hidden = false; } else box.append(el("pre", { class: "error" }, o.error));
    } else if (o.done !== undefined) {
      const t = $("timing");
      if (t && box === $("results")) t.textContent = o.done + " rows, " + o.ms + " ms";
    }
  }
}

function cellFor(col, value, human) {
  const td = el("td", { title: value, "data-value": value }, human);
  td.addEventListener("dblclick", () => {
    navigator.clipboard && navigator.clipboard.writeText(value);
    td.classList.add("copied"); setTimeout(() => td.classList.remove("copied"), 600);
  });
  const hash = /^0x[0-9a-f]{64}$/.test(value), addr = /^0x[0-9a-f]{40}$/.test(value);
  if (hash && (col === "tx" || col === "example" || col === "a" || col === "b" || col === "front" || col === "back")) {
    td.replaceChildren(el("a", { href: "#tx=" + value, class: "tx" }, human));
  } else if (addr && (col === "bot" || col === "sender" || col === "key")) {
    td.replaceChildren(el("a", { href: "#bot=" + value, class: "bot" }, human));
  }
  return td;
}

function sortKey(v) {
  const n = v.replace(/^[^:]*:/, "");
  return n !== "" && /^[+-]?\d+(\.\d+)?$/.test(n) ? Number(n) : null;
}

function sortBy(table, i) {
  const th = table.tHead.rows[0].cells[i];
  const dir = th.classList.contains("asc") ? -1 : 1;
  for (const h of table.tHead.rows[0].cells) h.classList.remove("asc", "desc");
  th.classList.add(dir === 1 ? "asc" : "desc");
  const body = table.tBodies[0];
  const trs = Array.from(body.rows);
  trs.sort((a, b) => {
    const x = a.cells[i].dataset.value, y = b.cells[i].dataset.value;
    const nx = sortKey(x), ny = sortKey(y);
    if (nx !== null && ny !== null) return dir * (nx - ny);
    return dir * x.localeCompare(y);
  });
  body.append(...trs);
}

// --- the query box, with the REPL's completion ---
let compTimer = null;
async function complete() {
  const q = $("query"), list = $("completions");
  const text = q.value.slice(0, q.selectionStart);
  const resp = await fetch("api/complete?text=" + encodeURIComponent(text));
  const { prefix, words } = await resp.json();
  list.replaceChildren();
  if (!words || !words.length || text.trim() === "") { list.hidden = true; return; }
  words.slice(0, 40).forEach((w, i) => list.append(el("li", { class: i === 0 ? "sel" : "", "data-prefix": prefix, onmousedown: (e) => { e.preventDefault(); accept(w, prefix); } }, w)));
  list.hidden = false;
}

function accept(word, prefix) {
  const q = $("query"), at = q.selectionStart;
  const before = q.value.slice(0, at - prefix.length), after = q.value.slice(at);
  q.value = before + word + " " + after;
  q.selectionStart = q.selectionEnd = (before + word + " ").length;
  $("completions").hidden = true;
  q.focus();
}

function moveSel(d) {
  const items = Array.from($("completions").children);
  let i = items.findIndex((li) => li.classList.contains("sel"));
  if (i >= 0) items[i].classList.remove("sel");
  i = (i + d + items.length) % items.length;
  items[i].classList.add("sel");
}

async function runQuery() {
  const q = $("query").value;
  $("error").hidden = true;
  $("completions").hidden = true;
  $("timing").textContent = "running…";
  if (location.hash !== "#q=" + encodeURIComponent(q)) history.replaceState(null, "", "#q=" + encodeURIComponent(q));
  render($("results"), await rows(q), $("error"));
}

// --- a transaction ---
async function showTx(hash) {
  const v = $("tx-view");
  v.replaceChildren(el("p", {}, "loading " + hash + "…"));
  const resp = await fetch("tx/" + hash);
  const o = await resp.json();
  if (!resp.ok) { v.replaceChildren(el("pre", { class: "error", id: "tx-error" }, o.error)); return; }
  const a = o.analysis;
  const profit = a.profit || {};
  const facts = el("dl", { class: "facts" },
    el("dt", {}, "tx"), el("dd", {}, a.tx, " ", link(explorer.tx, "tx", a.tx)),
    el("dt", {}, "block"), el("dd", {}, String(a.block ?? "unknown"), " ", a.block != null ? link(explorer.block, "block", a.block) : null),
    el("dt", {}, "verdict"), el("dd", { id: "verdict", class: "verdict-" + a.verdict }, a.verdict + (a.tier ? " (" + a.tier + ")" : "")),
    el("dt", {}, "reasons"), el("dd", { id: "reasons" }, (a.reasons || []).join(", ") || "none"),
    el("dt", {}, "path"), el("dd", {}, a.path || "-"),
    el("dt", {}, "bot"), el("dd", {}, el("a", { href: "#bot=" + o.bot }, o.bot), " ", link(explorer.addr, "addr", o.bot)),
    el("dt", {}, "gross"), el("dd", {}, JSON.stringify(profit.gross ?? null)),
    el("dt", {}, "net"), el("dd", {}, JSON.stringify(profit.net ?? null)),
    el("dt", {}, "cycles"), el("dd", { id: "cycles" }, String(a.cycles ?? 0)));
  const graph = el("div", { id: "graph" }, "drawing…"), tree = el("div", { id: "tree" }, "drawing…");
  const steps = el("ol", { id: "steps" }, ...(o.steps || []).map((s) => el("li", {}, s)));
  v.replaceChildren(el("h2", {}, "Transaction"), facts,
    el("h3", {}, "Transfer graph and reduced tree"), el("div", { class: "pictures" }, graph, tree),
    el("h3", {}, "Analysis"), el("pre", { class: "text", id: "analysis" }, o.text),
    el("h3", {}, "Rewrite steps (" + (o.steps || []).length + ")"), steps);
  for (const [box, view] of [[graph, "graph"], [tree, "tree"]]) {
    const r = await fetch("draw/" + hash + "?view=" + view + "&format=svg");
    box.innerHTML = r.ok ? await r.text() : "";
    if (!r.ok) box.append(el("pre", { class: "error" }, (await r.json()).error));
  }
}

// --- a bot ---
async function showBot(addr) {
  const v = $("bot-view");
  const part = (title, id) => { const d = el("div", { id }); v.append(el("h3", {}, title), d); return d; };
  v.replaceChildren(el("h2", {}, "Bot ", addr, " ", link(explorer.addr, "addr", addr)));
  const shapes = part("Shapes", "bot-shapes"), families = part("Families", "bot-families"),
    blocks = part("Transactions over blocks", "bot-blocks"), anomalies = part("Anomalies", "bot-anomalies");
  render(shapes, await rows("count by shape where bot = " + addr));
  render(families, await rows("count by family where bot = " + addr));
  render(blocks, await rows("find where bot = " + addr + " order by block asc limit 200"));
  render(anomalies, await rows("anomalies for bot " + addr));
}

function route() {
  const h = decodeURIComponent(location.hash.slice(1));
  $("query-view").hidden = h.startsWith("tx=") || h.startsWith("bot=");
  $("tx-view").hidden = !h.startsWith("tx=");
  $("bot-view").hidden = !h.startsWith("bot=");
  if (h.startsWith("tx=")) showTx(h.slice(3));
  else if (h.startsWith("bot=")) showBot(h.slice(4));
  else if (h.startsWith("q=")) { $("query").value = h.slice(2); runQuery(); }
}

window.addEventListener("hashchange", route);
$("query-form").addEventListener("submit", (e) => { e.preventDefault(); runQuery(); });
$("query").addEventListener("input", () => { clearTimeout(compTimer); compTimer = setTimeout(complete, 120); });
$("query").addEventListener("keydown", (e) => {
  const list = $("completions");
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runQuery(); return; }
  if (list.hidden) { if (e.key === "Tab") { e.preventDefault(); complete(); } return; }
  if (e.key === "Escape") list.hidden = true;
  else if (e.key === "ArrowDown" || e.key === "ArrowUp") { e.preventDefault(); moveSel(e.key === "ArrowDown" ? 1 : -1); }
  else if (e.key === "Tab" || e.key === "Enter") {
    const sel = list.querySelector("li.sel");
    if (sel) { e.preventDefault(); accept(sel.textContent, sel.dataset.prefix); }
  }
});
fetch("status").then((r) => r.json()).then((s) => {
  explorer = { tx: s.explorer, addr: s.addr_explorer, block: s.block_explorer };
  $("status").textContent = s.index + " · " + s.txs + " transactions · flowq " + s.version;
  route();
});
