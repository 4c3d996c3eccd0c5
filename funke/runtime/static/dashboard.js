// funke's dashboard: polls /jobs/<job> once a second and redraws. No framework: the DOM and uPlot.
"use strict";
const $ = (id) => document.getElementById(id);
const fmt = (n) => (n === null || n === undefined) ? "–" : (typeof n === "number" ? n.toLocaleString("en") : String(n));
const charts = {};
let graphDrawn = false;
const lagSeries = { t: [], lag: [] };

// Every text from the job (uids, paths, job names, savepoint paths) goes in as a text node or an
// attribute value, never as markup: a uid may hold "<b>".
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

function figure(key, label, value) {
  return el("div", { class: "figure", "data-key": key }, el("div", { class: "v" }, fmt(value)), el("div", { class: "k" }, label));
}

function drawGraph(graph) {
  // Columns by depth (longest path from a source), nodes top to bottom in plan order.
  const depth = {};
  for (const n of graph) depth[n.uid] = n.inputs.length ? Math.max(...n.inputs.map((i) => depth[i] + 1)) : 0;
  const columns = [];
  for (const n of graph) (columns[depth[n.uid]] ||= []).push(n);
  const box = $("graph");
  box.querySelectorAll(".column").forEach((c) => c.remove());
  for (const col of columns) {
    const div = document.createElement("div");
    div.className = "column";
    for (const n of col) {
      const node = el("div", { class: "node", id: `node-${n.uid}`, "data-uid": n.uid, title: n.why || "" },
        el("div", { class: "label" }, n.label), el("div", { class: "uid" }, n.uid),
        el("div", { class: "path" }, n.path), el("div", { class: "rate" }, "– rows/s"));
      node.classList.add(String(n.path).replace(/[^A-Za-z0-9_-]/g, "_"));
      div.appendChild(node);
    }
    box.appendChild(div);
  }
  const svg = $("edges"), origin = box.getBoundingClientRect();
  svg.replaceChildren();
  for (const n of graph) for (const i of n.inputs) {
    const a = $(`node-${i}`).getBoundingClientRect(), b = $(`node-${n.uid}`).getBoundingClientRect();
    const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
    line.setAttribute("x1", a.right - origin.left); line.setAttribute("y1", a.top + a.height / 2 - origin.top);
    line.setAttribute("x2", b.left - origin.left); line.setAttribute("y2", b.top + b.height / 2 - origin.top);
    line.setAttribute("stroke", "#9aa3b5"); line.setAttribute("stroke-width", "2");
    svg.appendChild(line);
  }
  graphDrawn = true;
}

function chart(id, title, xs, ys, { time = false, x = "micro-batch" } = {}) {
  const data = [xs, ys];
  if (!charts[id]) {
    const el = $(id);
    const opts = {
      width: Math.max(360, el.clientWidth || 380), height: 180,
      scales: { x: { time } },
      series: [{ label: time ? "time" : x }, { label: title, stroke: "#3558c8", width: 2 }],
      axes: [{}, { size: 100 }],
    };
    charts[id] = new uPlot(opts, data, el);
  } else {
    charts[id].setData(data);
  }
}

function rates(queries) {
  // Each query's rows/s over the last minute (the server's rows_per_s); a node shows the sum over the queries it runs in.
  const r = {};
  for (const q of queries) r[q.uid] = q.rows_per_s || 0;
  return r;
}

const rate = (x) => x.toLocaleString("en", { maximumFractionDigits: x < 10 ? 2 : 0 });

async function poll() {
  try {
    const res = await fetch(`/jobs/${encodeURIComponent(JOB)}`);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const job = await res.json();
    render(job);
  } catch (e) {
    $("status").textContent = `unreachable (${e.message})`;
    $("status").className = "status ended";
  }
}

function render(job) {
  const m = job.metrics;
  $("status").textContent = job.running ? "running" : "ended";
  $("status").className = `status ${job.running ? "running" : "ended"}`;
  $("figures").replaceChildren(
    figure("input_rows", "rows in", m.input_rows), figure("output_rows", "rows out", m.output_rows),
    figure("batches", "micro-batches", m.batches), figure("rows_per_s", "rows/s (overall)", m.rows_per_s),
    figure("watermark", "watermark", m.watermark), figure("late_rows_dropped", "late rows", m.late_rows_dropped),
    figure("dead_letters", "dead letters", m.dead_letters), figure("batch_ms_p50", "batch p50 ms", m.batch_ms_p50),
  );
  if (!graphDrawn) drawGraph(job.graph);
  const r = rates(job.queries);
  for (const n of job.graph) {
    const el = $(`node-${n.uid}`);
    if (el) el.querySelector(".rate").textContent = `${rate(n.queries.reduce((s, q) => s + (r[q] || 0), 0))} rows/s`;
  }
  const main = job.queries.reduce((a, b) => (b.batch_ms.length > a.batch_ms.length ? b : a), job.queries[0]);
  if (main && main.batch_ms.length) {
    const xs = main.batch_ms.map((_, i) => i);
    chart("chart-throughput", "rows/s", xs, main.batch_rows.map((rows, i) => (main.batch_ms[i] ? rows / (main.batch_ms[i] / 1000) : 0)));
    chart("chart-batch", "ms", xs, main.batch_ms);
  }
  if (job.watermark_lag_s !== null && job.watermark_lag_s !== undefined) {
    lagSeries.t.push(job.now); lagSeries.lag.push(job.watermark_lag_s);
    if (lagSeries.t.length > 300) { lagSeries.t.shift(); lagSeries.lag.shift(); }
    chart("chart-lag", "lag s", lagSeries.t, lagSeries.lag, { time: true });
  }
  $("jobs").querySelector("tbody").replaceChildren(...job.jobs.map((j) => {
    const link = j.http && /^https?:\/\//.test(j.http) ? el("a", { href: `${j.http}/` }, j.http) : "–";
    const row = el("tr", { "data-job": j.name }, el("td", {}, j.name), el("td", {}, j.status), el("td", {}, link));
    if (j.name === JOB) row.className = "this";
    return row;
  }));
  if (job.spark_ui && /^https?:\/\//.test(job.spark_ui)) { $("spark-ui").href = job.spark_ui; $("spark-ui").hidden = false; }
  $("savepoints").querySelector("tbody").replaceChildren(...job.savepoints.map((s) => el("tr", {},
    el("td", {}, s.path), el("td", {}, s.taken), el("td", {}, Object.entries(s.batches).map(([k, v]) => `${k}: ${v}`).join(", ")),
    el("td", {}, `${(s.size_bytes / 1e6).toFixed(1)} MB`), el("td", {}, `${s.took_ms} ms`))));
}

$("take-savepoint").addEventListener("click", async () => {
  $("savepoint-status").textContent = "taking…";
  const res = await fetch(`/jobs/${encodeURIComponent(JOB)}/savepoints`, { method: "POST" });
  const body = await res.json();
  $("savepoint-status").textContent = res.ok ? `taken: ${body.savepoint}` : `failed: ${body.error}`;
  poll();
});

poll();
setInterval(poll, 1000);
