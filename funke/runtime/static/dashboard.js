// funke's dashboard: polls /jobs/<job> once a second and redraws. No framework: the DOM and uPlot.
"use strict";
const $ = (id) => document.getElementById(id);
const fmt = (n) => (n === null || n === undefined) ? "–" : (typeof n === "number" ? n.toLocaleString("en") : String(n));
const charts = {};
let graphDrawn = false;
const lagSeries = { t: [], lag: [] };

function figure(key, label, value) {
  return `<div class="figure" data-key="${key}"><div class="v">${fmt(value)}</div><div class="k">${label}</div></div>`;
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
      const el = document.createElement("div");
      el.className = `node ${n.path}`;
      el.id = `node-${n.uid}`;
      el.dataset.uid = n.uid;
      el.title = n.why;
      el.innerHTML = `<div class="label"></div><div class="uid">${n.uid}</div><div class="path">${n.path}</div><div class="rate">– rows/s</div>`;
      el.querySelector(".label").textContent = n.label;
      div.appendChild(el);
    }
    box.appendChild(div);
  }
  const svg = $("edges"), origin = box.getBoundingClientRect();
  svg.innerHTML = "";
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
  // Each query's rows/s in its last micro-batch; a node shows the sum over the queries it runs in.
  const r = {};
  for (const q of queries) {
    const n = q.batch_ms.length;
    r[q.uid] = n && q.batch_ms[n - 1] > 0 ? Math.round(q.batch_rows[n - 1] / (q.batch_ms[n - 1] / 1000)) : 0;
  }
  return r;
}

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
  $("figures").innerHTML = [
    figure("input_rows", "rows in", m.input_rows), figure("output_rows", "rows out", m.output_rows),
    figure("batches", "micro-batches", m.batches), figure("rows_per_s", "rows/s (overall)", m.rows_per_s),
    figure("watermark", "watermark", m.watermark), figure("late_rows_dropped", "late rows", m.late_rows_dropped),
    figure("dead_letters", "dead letters", m.dead_letters), figure("batch_ms_p50", "batch p50 ms", m.batch_ms_p50),
  ].join("");
  if (!graphDrawn) drawGraph(job.graph);
  const r = rates(job.queries);
  for (const n of job.graph) {
    const el = $(`node-${n.uid}`);
    if (el) el.querySelector(".rate").textContent = `${fmt(n.queries.reduce((s, q) => s + (r[q] || 0), 0))} rows/s`;
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
  $("jobs").querySelector("tbody").innerHTML = job.jobs.map((j) => {
    const link = j.http ? `<a href="${j.http}/">${j.http}</a>` : "–";
    return `<tr data-job="${j.name}"${j.name === JOB ? ' class="this"' : ""}><td>${j.name}</td><td>${j.status}</td><td>${link}</td></tr>`;
  }).join("");
  if (job.spark_ui) { $("spark-ui").href = job.spark_ui; $("spark-ui").hidden = false; }
  const rows = job.savepoints.map((s) => `<tr><td>${s.path}</td><td>${s.taken}</td><td>${Object.entries(s.batches).map(([k, v]) => `${k}: ${v}`).join(", ")}</td><td>${(s.size_bytes / 1e6).toFixed(1)} MB</td><td>${s.took_ms} ms</td></tr>`);
  $("savepoints").querySelector("tbody").innerHTML = rows.join("");
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
