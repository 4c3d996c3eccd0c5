// funke's dashboard: polls /jobs/<job> once a second and redraws. No framework: the DOM and uPlot.
"use strict";
const $ = (id) => document.getElementById(id);
const fmt = (n) => (n === null || n === undefined) ? "–" : (typeof n === "number" ? n.toLocaleString("en") : String(n));
const rate = (x) => x.toLocaleString("en", { maximumFractionDigits: x < 10 ? 2 : 0 });
const bytes = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : b >= 1e3 ? `${(b / 1e3).toFixed(1)} kB` : `${b} B`);
const charts = {};
let graphDrawn = false;
let lastGraph = null;

// Every text from the job (uids, paths, job names, savepoint paths, traces) goes in as a text node or
// an attribute value, never as markup: a uid may hold "<b>".
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("data-")) node.dataset[k.slice(5).replace(/-(.)/g, (_, c) => c.toUpperCase())] = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : String(c));
  return node;
}

const link = (url, text) => (url && /^https?:\/\//.test(url) ? el("a", { href: url }, text || url) : "–");

function figure(key, label, value) {
  return el("div", { class: "figure", "data-key": key }, el("div", { class: "v" }, fmt(value)), el("div", { class: "k" }, label));
}

// -- the plan graph, fitted to the page's width --------------------------------------------------

function drawGraph(graph) {
  // Columns by depth (longest path from a source), nodes top to bottom in plan order.
  const depth = {};
  for (const n of graph) depth[n.uid] = n.inputs.length ? Math.max(...n.inputs.map((i) => depth[i] + 1)) : 0;
  const columns = [];
  for (const n of graph) (columns[depth[n.uid]] ||= []).push(n);
  const inner = $("graph-inner");
  inner.querySelectorAll(".column").forEach((c) => c.remove());
  for (const col of columns) {
    const div = el("div", { class: "column" });
    for (const n of col) {
      const node = el("div", { class: "node", id: `node-${n.uid}`, "data-uid": n.uid, title: n.why || "" },
        el("div", { class: "label" }, n.label), el("div", { class: "uid" }, n.uid),
        el("div", { class: "path" }, n.path), el("div", { class: "rate" }, "–"));
      node.classList.add(String(n.path).replace(/[^A-Za-z0-9_-]/g, "_"));
      div.appendChild(node);
    }
    inner.appendChild(div);
  }
  lastGraph = graph;
  fitGraph();
  graphDrawn = true;
}

// The columns share the width; when even their narrowest does not fit, the whole plan is scaled down
// so that the sinks stay on screen. #graph says how it went: data-scale, and data-overflow-px, the
// pixels of the rightmost node past the box (0 when everything is in view).
function fitGraph() {
  const box = $("graph"), inner = $("graph-inner");
  inner.style.transform = ""; inner.style.width = ""; box.style.height = "";
  const room = box.clientWidth - 24;  // the box's padding
  const needed = inner.scrollWidth;
  const scale = needed > room ? room / needed : 1;
  if (scale < 1) {
    inner.style.width = `${needed}px`;
    inner.style.transform = `scale(${scale})`;
    box.style.height = `${inner.offsetHeight * scale + 26}px`;
  }
  box.dataset.scale = scale.toFixed(3);
  drawEdges(scale);
  const right = box.getBoundingClientRect().right;
  const past = Math.max(0, ...[...inner.querySelectorAll(".node")].map((n) => n.getBoundingClientRect().right - right));
  box.dataset.overflowPx = String(Math.ceil(past));
}

function drawEdges(scale) {
  const svg = $("edges"), origin = $("graph-inner").getBoundingClientRect();
  svg.replaceChildren();
  for (const n of lastGraph || []) for (const i of n.inputs) {
    const a = $(`node-${i}`).getBoundingClientRect(), b = $(`node-${n.uid}`).getBoundingClientRect();
    const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
    line.setAttribute("x1", (a.right - origin.left) / scale); line.setAttribute("y1", (a.top + a.height / 2 - origin.top) / scale);
    line.setAttribute("x2", (b.left - origin.left) / scale); line.setAttribute("y2", (b.top + b.height / 2 - origin.top) / scale);
    line.setAttribute("stroke", "#9aa3b5"); line.setAttribute("stroke-width", "2");
    svg.appendChild(line);
  }
}

window.addEventListener("resize", () => { if (lastGraph) fitGraph(); });

// A node shows the rows/s out of it that funke measured (summed over the queries it runs in), or says
// that nothing counts it: never another node's figure.
function showRates(graph, operators) {
  for (const n of graph) {
    const node = $(`node-${n.uid}`);
    if (!node) continue;
    const op = operators[n.uid] || {};
    const box = node.querySelector(".rate");
    const many = n.queries.length > 1 ? ` (${n.queries.length} queries)` : "";
    if (op.out !== null && op.out !== undefined) {
      box.textContent = `${rate(op.out)} rows/s out${many}`;
      box.className = "rate";
    } else if (op.in !== null && op.in !== undefined) {
      box.textContent = `${rate(op.in)} rows/s in; out not measured`;
      box.className = "rate partial";
    } else {
      box.textContent = "not measured";
      box.className = "rate unmeasured";
    }
    const parts = Object.entries(op.queries || {}).map(([q, r]) => `${q}: in ${r.in ?? "–"}, out ${r.out ?? "–"} rows/s`);
    node.title = [n.why || "", ...parts].filter(Boolean).join("\n");
  }
}

// -- charts ---------------------------------------------------------------------------------------

function chart(id, title, xs, ys, { time = false, x = "micro-batch" } = {}) {
  const data = [xs, ys];
  const box = $(id);
  const width = Math.max(280, (box.clientWidth || 380) - 4);
  if (!charts[id]) {
    const opts = {
      width, height: 180,
      scales: { x: { time } },
      series: [{ label: time ? "time" : x }, { label: title, stroke: "#3558c8", width: 2 }],
      axes: [{}, { size: 70 }],
    };
    charts[id] = new uPlot(opts, data, box);
  } else {
    if (charts[id].width !== width) charts[id].setSize({ width, height: 180 });
    charts[id].setData(data);
  }
}

function drawCharts(job) {
  // The query with the most micro-batches stands for the job in the charts (each query has its own).
  const main = job.queries.reduce((a, b) => (b.batch_ms.length > a.batch_ms.length ? b : a), job.queries[0]);
  if (main && main.batch_ms.length) {
    const xs = main.batch_ms.map((_, i) => i);
    chart("chart-throughput", "rows/s", xs, main.batch_rows.map((rows, i) => (main.batch_ms[i] ? rows / (main.batch_ms[i] / 1000) : 0)));
    chart("chart-batch", "ms", xs, main.batch_ms);
  }
  $("lag-label").textContent = job.lag.label;
  const series = main ? job.lag.series[main.uid] || [] : [];
  if (series.length) chart("chart-lag", "lag s", series.map((p) => p[0]), series.map((p) => p[1]), { time: true });
}

// -- tables ---------------------------------------------------------------------------------------

function drawJobs(job) {
  $("jobs").querySelector("tbody").replaceChildren(...job.jobs.map((j) => {
    const status = j.running ? j.status : `ended: ${j.status}${j.ended ? ` at ${j.ended}` : ""}`;
    const row = el("tr", { "data-job": j.name }, el("td", {}, j.name), el("td", { class: "job-status" }, status),
      el("td", {}, j.started || "–"), el("td", {}, link(j.http ? `${j.http}/` : null, j.http)), el("td", {}, link(j.spark_ui, "Spark UI")));
    row.className = [j.this ? "this" : "", j.running ? "" : "ended"].filter(Boolean).join(" ");
    return row;
  }));
  $("older-jobs").textContent = job.older_jobs ? `${job.older_jobs} older ended job(s) not shown: funke list shows every one` : "";
}

function drawSources(sources) {
  $("sources").querySelector("tbody").replaceChildren(...sources.map((s) => {
    const busy = s.busy === null ? "–" : `${Math.round(s.busy * 100)}%`;
    const behind = s.behind === null ? "not known" : `${fmt(s.behind)} ${s.behind_unit}`;
    const row = el("tr", { "data-source": s.source, "data-query": s.query }, el("td", {}, s.query), el("td", { title: s.label }, s.label),
      el("td", {}, s.input_rows_per_s === null ? "–" : rate(s.input_rows_per_s)),
      el("td", {}, s.processing_rows_per_s === null ? "–" : rate(s.processing_rows_per_s)),
      el("td", { class: "busy" }, busy), el("td", { class: "behind" }, behind));
    if (s.busy !== null && s.busy >= 0.8) row.className = "high";
    return row;
  }));
}

function drawExceptions(exceptions) {
  const box = $("exceptions");
  if (!exceptions.length) { box.replaceChildren(el("p", { class: "none" }, "none")); return; }
  box.replaceChildren(...exceptions.map((e) => el("div", { class: `exception ${e.action === "the job failed" ? "failed" : "restart"}` },
    el("div", { class: "when" }, `${new Date(e.time * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC · ${e.query || "job"} · ${e.action}`),
    el("div", { class: "headline" }, e.headline),
    el("details", {}, el("summary", {}, "trace"), el("pre", {}, e.trace)))));
}

function drawCheckpoints(rows) {
  $("checkpoints").querySelector("tbody").replaceChildren(...rows.map((c) => el("tr", { "data-query": c.query, "data-batch": c.batch },
    el("td", {}, c.query), el("td", {}, c.batch), el("td", {}, c.time), el("td", {}, `${fmt(c.duration_ms)} ms`),
    el("td", {}, `${fmt(c.checkpoint_ms)} ms`), el("td", {}, fmt(c.rows)), el("td", {}, fmt(c.state_rows)), el("td", {}, bytes(c.state_bytes)))));
}

function drawSavepoints(rows) {
  $("savepoints").querySelector("tbody").replaceChildren(...rows.map((s) => el("tr", {},
    el("td", {}, s.path), el("td", {}, s.taken), el("td", {}, Object.entries(s.batches).map(([k, v]) => `${k}: ${v}`).join(", ")),
    el("td", {}, bytes(s.size_bytes)), el("td", {}, `${s.took_ms} ms`))));
}

// -- the page -------------------------------------------------------------------------------------

async function poll() {
  try {
    const res = await fetch(`/jobs/${encodeURIComponent(JOB)}`);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    render(await res.json());
  } catch (e) {
    $("status").textContent = `unreachable (${e.message})`;
    $("status").className = "status ended";
  }
}

function render(job) {
  const m = job.metrics;
  $("status").textContent = job.status;
  $("status").className = `status ${job.status}`;
  $("figures").replaceChildren(
    figure("input_rows", "rows in", m.input_rows), figure("output_rows", "rows out", m.output_rows),
    figure("batches", "micro-batches", m.batches), figure("rows_per_s_now", "rows/s now (last 10 batches)", m.rows_per_s_now),
    figure("rows_per_s", "rows/s overall", m.rows_per_s), figure("watermark", "watermark", m.watermark),
    figure("event_time_lag_s", "watermark lag (s, event time)", job.event_time_lag_s),
    figure("late_rows_dropped", "late rows", m.late_rows_dropped), figure("dead_letters", "dead letters", m.dead_letters),
    figure("batch_ms_p50", "batch p50 ms", m.batch_ms_p50), figure("restarts", "restarts", m.restarts),
  );
  if (!graphDrawn) drawGraph(job.graph);
  showRates(job.graph, job.operators);
  drawCharts(job);
  drawJobs(job);
  drawSources(job.sources);
  drawExceptions(job.exceptions);
  drawCheckpoints(job.checkpoints);
  drawSavepoints(job.savepoints);
  if (job.spark_ui && /^https?:\/\//.test(job.spark_ui)) { $("spark-ui").href = job.spark_ui; $("spark-ui").hidden = false; }
  else $("spark-ui").hidden = true;
}

$("json").href = `/jobs/${encodeURIComponent(JOB)}`;
$("take-savepoint").addEventListener("click", async () => {
  $("savepoint-status").textContent = "taking…";
  const res = await fetch(`/jobs/${encodeURIComponent(JOB)}/savepoints`, { method: "POST" });
  const body = await res.json();
  $("savepoint-status").textContent = res.ok ? `taken: ${body.savepoint}` : `failed: ${body.error}`;
  poll();
});

poll();
setInterval(poll, 1000);
