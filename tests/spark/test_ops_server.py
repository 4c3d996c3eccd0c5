"""The job's HTTP server: Prometheus metrics, queryable state (live, read-committed, from another
process too) and the bearer token off loopback, against a real job over a Redis Stream."""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

import funke as fk
from funke.config import settings
from funke.runtime.progress import RATE_BATCHES
from funke.savepoints import read
from funke.savepoints.registry import Registry
from funke.windows import TumblingEventTimeWindows
from tests.servers import ensure_redis
from tests.spark.helpers import RunningTotal

pytestmark = pytest.mark.spark
KEYS = ("k0", "k1", "k2")
N = 30  # entry i: key k(i % 3), v = i, event time i s: windows [0,10) and [10,20) close, [20,30) stays open
BOLD = "<b>kept</b>"  # an operator uid that is markup: the dashboard shows it as text


@pytest.fixture
def stream():
    r = redis.Redis.from_url(ensure_redis())
    key = f"funke-ops:{uuid.uuid4().hex}"
    p = r.pipeline(transaction=False)
    for i in range(N):
        p.xadd(key, {"k": KEYS[i % 3], "v": i, "ts": f"2024-01-01T00:00:{i:02d}Z"})
    p.execute()
    yield key
    r.delete(key)


def _job(spark, tmp_path, stream, *, more: bool = False, checkpoint: str | None = None, **http):
    """The native window ("counts") and funke's rolling sum ("totals"); with ``more`` also a general-path
    window with a late side output ("gcounts") and a keyed process function's value state ("running-total")."""
    env = fk.StreamEnvironment(app=f"ops-{uuid.uuid4().hex[:6]}", spark=spark, checkpoint_dir=checkpoint or str(tmp_path / "ckpt"), settings_=settings(**http))
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("ts")
    events = env.from_source(fk.sources.redis_stream(stream, schema="k string, v bigint, ts timestamp"), wm)
    windows = events.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().uid("counts")
    sinks = {"counts-out": windows.sink_to(fk.sinks.collect(), uid="counts-out")}
    totals = events.key_by("k").sum("v").uid("totals")
    sinks["totals-out"] = totals.sink_to(fk.sinks.collect(), uid="totals-out")
    if more:
        late = fk.OutputTag("late")
        general = events.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).side_output_late_data(late).count().uid("gcounts")
        sinks["gcounts-out"] = general.sink_to(fk.sinks.collect(), uid="gcounts-out")
        sinks["late-out"] = general.get_side_output(late).sink_to(fk.sinks.collect(), uid="late-out")
        kept = events.filter(fk.col("v") >= 0, uid=BOLD)
        running = kept.key_by("k").process(RunningTotal(), output_schema="key string, n bigint", uid="running-total")
        sinks["running-out"] = running.sink_to(fk.sinks.collect(), uid="running-out")
    return env, sinks


def _settled(handle, sinks, rows: int, expect: dict[str, int]) -> None:
    """Wait until every query has read ``rows`` entries, each sink in ``expect`` holds its number of rows,
    and the window query is idle with every planned batch committed (Spark reports no progress for a
    batch without data, so the checkpoint and the query's status tell)."""
    deadline = time.monotonic() + 240
    st = next(st for st in handle.states if st.sink.uid == "counts-out")
    offsets = handle.checkpoints.local_root() + "/counts-out/offsets"
    while True:
        handle._raise_if_failed()
        planned = max((int(p) for p in os.listdir(offsets) if p.isdigit()), default=-1) if os.path.isdir(offsets) else -1
        idle = not st.query.status["isTriggerActive"] and handle.checkpoints.last_committed(st.sink.uid) == planned >= 0
        # a sink gets its rows before the listener hears of the batch: wait for every query's progress too
        read = {q.sink.uid: q.input_rows for q in handle.states if not q.plan.lazy}
        got = {uid: len(sinks[uid].rows) for uid in expect}
        if got == expect and set(read.values()) == {rows} and idle:
            return
        assert time.monotonic() < deadline, f"not settled: {got} of {expect}, read {read} of {rows}, {st.query.status}"
        time.sleep(0.1)


def _get(url: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_metrics_queryable_state_and_dashboard_of_a_running_job(spark, tmp_path, stream, monkeypatch, chromium):
    """One running job (a Spark job start is the slow part) for the metrics, the state, the CLI and the dashboard."""
    from pyspark import SparkContext

    env, sinks = _job(spark, tmp_path, stream, operator_metrics=True, more=True)
    closed = {"counts-out": 6, "totals-out": N, "gcounts-out": 6}  # two closed windows per key, a total per entry
    handle = env.execute()
    try:
        _settled(handle, sinks, N, closed)
        base = handle.http_address
        assert base.startswith("http://127.0.0.1:")

        # three more entries (i = 30, 31, 32), one late (event time 1 s, after the watermark passed 20 s) and
        # one without an event time: a batch with data, a late row and a dead letter
        r = redis.Redis.from_url(ensure_redis())
        for i in range(N, N + 3):
            r.xadd(stream, {"k": KEYS[i % 3], "v": i, "ts": f"2024-01-01T00:00:{i:02d}Z"})
        r.xadd(stream, {"k": "k2", "v": 100, "ts": "2024-01-01T00:00:01Z"})
        r.xadd(stream, {"k": "k1", "v": 200})  # no event time
        _settled(handle, sinks, N + 4, {**closed, "totals-out": N + 4, "late-out": 1})  # the dead letter is not read on
        assert [(x["k"], x["v"]) for x in sinks["late-out"].rows] == [("k2", 100)]

        # the dashboard in a real browser: every operator in the graph (the uid that is markup as text) with
        # its own rows/s, the plan fitted to the width, lag against event time, the jobs that run or ended
        # within the hour, backpressure, the checkpoint history, the figures, and Spark's UI link. The
        # suite's session runs without Spark's UI (spark.ui.enabled is fixed when a SparkContext starts, and
        # a second session costs a minute), so SparkContext says where its UI would be: the page's data
        # endpoint carries what Spark says and the page links it.
        monkeypatch.setattr(SparkContext, "uiWebUrl", property(lambda self: "http://127.0.0.1:4040"))
        registry = Registry(env.settings.home)
        ended, old = f"ended-{uuid.uuid4().hex[:6]}", f"old-{uuid.uuid4().hex[:6]}"
        for name in (ended, old):
            registry.job_started(name, checkpoint=str(tmp_path / name), fingerprint="f")
            registry.job_ended(name, "finished")
        with sqlite3.connect(registry.path) as db:  # ended yesterday: the table leaves it out
            db.execute("UPDATE jobs SET updated_at = ? WHERE name = ?", (time.time() - 86_400, old))
        status, body = _get(f"{base}/jobs/{handle.name}")
        data = json.loads(body)
        assert data["spark_ui"] == "http://127.0.0.1:4040"
        dom = _browse(chromium, base + "/", tmp_path / "profile")
        uids = {n["uid"] for n in handle.plan_graph}
        assert len(uids) >= 12 and BOLD in uids
        for uid in uids - {BOLD}:
            assert f'data-uid="{uid}"' in dom, f"operator {uid} is not in the dashboard's graph"
        assert '<div class="uid">&lt;b&gt;kept&lt;/b&gt;</div>' in dom and "<b>kept</b>" not in dom.replace('data-uid="<b>kept</b>"', "")
        # each node's own rate (operator metrics are on: every one is measured), per query in its title: the native
        # window of counts-out gives 6 windows for the 34 entries it took, so its rows/s out are 6/34 of its rows/s
        # in over the same batches (main showed every node the query's rate of rows read)
        (counts_out,) = [q for q in data["queries"] if q["uid"] == "counts-out"]
        assert counts_out["batches"] <= RATE_BATCHES, counts_out
        # (a newer Chromium writes < and > in attributes as entities: the uid is read back unescaped)
        shown = {html.unescape(uid): (title, text) for uid, title, text in re.findall(r'data-uid="([^"]+)" title="([^"]*)"><div class="label">[^<]*</div><div class="uid">[^<]*</div><div class="path">[^<]*</div><div class="rate[^"]*">([^<]*)</div>', dom)}
        assert set(shown) == uids, set(uids) - set(shown)
        # (gcounts' Spark query feeds gcounts-out and the late rows' side output: each counted by its tag)
        unmeasured = {uid: text for uid, (_, text) in shown.items() if not (text.endswith("rows/s out") or "rows/s out (" in text)}
        assert not unmeasured, unmeasured
        (late_title, late_rate) = shown["late-out"]
        assert re.search(r"gcounts-out: in ([\d.e-]+), out \1 rows/s", late_title), shown["late-out"]
        (rate_in, rate_out) = map(float, re.search(r"counts-out: in ([\d.e-]+), out ([\d.e-]+) rows/s", shown["counts"][0]).groups())
        assert rate_out / rate_in == pytest.approx(6 / (N + 4), rel=1e-9), shown["counts"]
        assert data["operators"]["counts"]["queries"]["counts-out"]["out"] > 0
        # the plan fits the page's width, at 1400 px and at 800 px (the sinks are on screen)
        assert re.search(r'<div id="graph" class="graph" data-scale="[\d.]+" data-overflow-px="0"', dom), re.search(r'<div id="graph"[^>]*>', dom)
        narrow = _browse(chromium, base + "/", tmp_path / "profile", width=800)
        fitted = re.search(r'<div id="graph" class="graph" data-scale="([\d.]+)" data-overflow-px="(\d+)"', narrow)
        assert fitted and fitted.group(2) == "0" and float(fitted.group(1)) < 1, fitted and fitted.group(0)
        # watermark lag against the job's own event time (data from 2024: against the wall clock it was ~9e7 s)
        assert 5 <= data["event_time_lag_s"] <= 40, data["event_time_lag_s"]
        assert 5 <= float(_figure(dom, "event_time_lag_s")) <= 40
        assert "largest event time seen minus the watermark (s)" in dom
        # the job table: this job with its Spark UI, a job that ended within the hour marked ended, yesterday's not listed
        assert re.search(rf'<tr data-job="{handle.name}" class="this"><td>{handle.name}</td><td class="job-status">running</td>.*?<a href="http://127.0.0.1:4040">Spark UI</a></td></tr>', dom)
        assert re.search(rf'<tr data-job="{ended}" class="ended"><td>{ended}</td><td class="job-status">ended: finished at ', dom)
        assert old not in dom and re.search(r"\d+ older ended job\(s\) not shown: funke list shows every one", dom)
        assert '<a href="http://127.0.0.1:4040" id="spark-ui">Spark UI</a>' in dom or re.search(r'<a id="spark-ui" href="http://127.0.0.1:4040"', dom), dom[:3000]
        # backpressure: Redis says counts-out's last batch ended at the stream's last entry; the checkpoint history
        assert re.search(r'<tr data-source="[^"]+" data-query="counts-out"[^>]*>.*?<td class="behind">0 entries</td>', dom), data["sources"]
        last = handle.checkpoints.last_committed("counts-out")
        assert f'<tr data-query="counts-out" data-batch="{data["checkpoints"][0]["batch"]}">' in dom or any(
            c["query"] == "counts-out" and c["batch"] == last for c in data["checkpoints"]
        )
        assert any(c["query"] == "counts-out" and c["state_bytes"] > 0 for c in data["checkpoints"])
        assert int(_figure(dom, "input_rows").replace(",", "")) >= 4 * (N + 4)
        assert 'class="status running"' in dom

        # queryable state, native window aggregation: k0's open windows [20, 30) (i = 21, 24, 27) and [30, 40) (i = 30)
        status, body = _get(f"{base}/jobs/{handle.name}/state/counts?key=k0")
        assert status == 200, body
        native = json.loads(body)
        got = sorted((r["k"], r["window_start"][:19], r["count"]) for r in native["rows"])
        assert got == [("k0", "2024-01-01T00:00:20", 3), ("k0", "2024-01-01T00:00:30", 1)]
        status, body = _get(f"{base}/jobs/{handle.name}/state/counts")
        assert sorted(json.loads(body)["keys"]) == list(KEYS)

        # general path (rolling sum): k1's total is 1 + 4 + ... + 31
        totals = handle.state("totals")
        assert sorted(totals.keys()) == list(KEYS)
        (k1,) = totals.get("k1")
        assert (k1["key"], k1["scope"]) == ('"k1"', "rolling")
        # Flink's rolling sum: the key's first element with the running sum (timestamps carried as epoch µs)
        assert json.loads(k1["value"]) == {"k": "k1", "v": sum(range(1, N + 3, 3)), "ts": 1704067201000000}

        # general-path window: k0's open windows [20, 30) and [30, 40), their counts 3 and 1
        gwin = handle.state("gcounts")
        assert sorted(gwin.keys()) == list(KEYS)
        k0_windows = gwin.get("k0")
        assert k0_windows and {r["key"] for r in k0_windows} == {'"k0"'}
        # a keyed process function's value state "n": k1's entries 1, 4, ..., 31 (the dead letter never reaches it)
        running = handle.state("running-total")
        assert sorted(running.keys()) == list(KEYS)
        (n1,) = running.get("k1")
        assert (n1["scope"], n1["state"], n1["kind"], json.loads(n1["value"])) == ("user", "n", "value", 11)

        # read-committed: equal to a savepoint's table of the same batch
        sp = read(handle.savepoint(str(tmp_path / "sps")).path)
        assert sp.batches["counts-out"] == native["batch"]
        saved = sp.table("counts")
        assert sorted(zip(saved["k"], saved["count"])) == sorted((r["k"], r["count"]) for k in KEYS for r in handle.state("counts").get(k))

        # from another process: funke state for the general-path window and the process function's value
        # state, each equal to the savepoint's table of the same batch (a savepoint is taken again when a
        # batch without data committed in between)
        monkeypatch.setenv("FUNKE_HOME", str(env.settings.home))
        cli = [sys.executable, "-c", "from funke.cli.main import main; main()"]
        # a query can commit a batch between the read and the savepoint: try again until they meet (on a
        # slow machine more tries fit before the deadline; a count of tries failed there)
        for uid, query, key in (("gcounts", "gcounts-out", "k0"), ("running-total", "running-out", "k1")):
            deadline, tries = time.monotonic() + 600, []
            while True:
                got = subprocess.run([*cli, "state", handle.name, uid, key, "--json"], capture_output=True, text=True, timeout=300, check=False)
                assert got.returncode == 0, got.stderr
                answer = json.loads(got.stdout)
                at = read(handle.savepoint(str(tmp_path / "sps")).path)
                if at.batches[query] == answer["batch"]:
                    break
                tries.append((answer["batch"], at.batches[query]))
                if time.monotonic() > deadline:
                    pytest.fail(f"{query} committed a batch between every read and savepoint (read, savepoint batches: {tries})")
            table = at.table(uid)
            saved = json.loads(table[table["key"] == json.dumps(key)].to_json(orient="records", date_format="iso", date_unit="ms"))
            assert answer["rows"] and _rows(answer["rows"]) == _rows(saved), (answer["rows"], saved)

        # Prometheus text after the savepoints, parsed with prometheus-client's own parser: every family the issue lists
        status, body = _get(base + "/metrics")
        assert status == 200
        families = {f.name: f for f in text_string_to_metric_families(body.decode())}
        rows_in = {s.labels["query"]: s.value for s in families["funke_input_rows"].samples if s.name == "funke_input_rows_total"}
        assert rows_in == {q: N + 4 for q in ("counts-out", "totals-out", "gcounts-out", "running-out")} | {"dead-letters": rows_in["dead-letters"]}
        by_operator = {(s.labels["query"], s.labels["operator"], s.labels["direction"]): s.value
                       for s in families["funke_operator_rows"].samples if s.name == "funke_operator_rows_total"}  # fmt: skip
        source_uid = next(n["uid"] for n in handle.plan_graph if n["kind"] == "Watermark")
        assert by_operator[("counts-out", source_uid, "in")] == N + 4
        assert by_operator[("counts-out", "counts-out", "out")] == 6  # the closed windows
        assert by_operator[("totals-out", "totals-out", "out")] == N + 4
        # every operator between: the native window (operator_metrics on), funke's rolling sum, general window, process function
        assert (by_operator[("counts-out", "counts", "in")], by_operator[("counts-out", "counts", "out")]) == (N + 4, 6)
        assert (by_operator[("totals-out", "totals", "in")], by_operator[("totals-out", "totals", "out")]) == (N + 4, N + 4)
        assert (by_operator[("gcounts-out", "gcounts", "in")], by_operator[("gcounts-out", "gcounts", "out")]) == (N + 4, 6)
        assert (by_operator[("running-out", BOLD, "out")], by_operator[("running-out", "running-total", "in")]) == (N + 4, N + 4)
        key_by = next(n["uid"] for n in handle.plan_graph if n["kind"] == "KeyBy" and "counts-out" in n["queries"])
        assert by_operator[("counts-out", key_by, "in")] == by_operator[("counts-out", key_by, "out")] == N + 4
        batches = {st.sink.uid: st.batches for st in handle.states}
        for family in ("funke_batch_duration_seconds", "funke_checkpoint_duration_seconds"):
            hist = _histograms(families[family])
            assert set(hist) == set(batches), family
            for query, (buckets, count, total) in hist.items():
                assert count == batches[query] > 0 and buckets[-1] == ("+Inf", count) and total > 0, (family, query)
                assert [n for _, n in buckets] == sorted(n for _, n in buckets) and len(buckets) > 5
        (savepoints,) = _histograms(families["funke_savepoint_duration_seconds"]).values()
        assert savepoints[1] >= 3 and savepoints[2] > 0  # the savepoints taken above
        wm = {s.labels["query"]: s.value for s in families["funke_watermark_seconds"].samples}
        assert wm["counts-out"] == 1704067200 + 32 - 5  # 00:00:27Z: the max event time less 5 s, in the last batch
        assert wm["totals-out"] in (1704067200 + 29 - 5, 1704067200 + 32 - 5)  # its heartbeat batches go on: either
        lag = {s.labels["query"]: s.value for s in families["funke_watermark_lag_seconds"].samples}
        assert time.time() - wm["counts-out"] - 60 < lag["counts-out"] <= time.time() - wm["counts-out"]
        behind = {s.labels["query"]: s.value for s in families["funke_event_time_lag_seconds"].samples}
        # the largest event time seen (00:00:32) minus the watermark of the last batch Spark reported: 00:00:27, or
        # 00:00:24 when the batch without data that moved it to 27 s was not reported (against the wall clock: ~9e7 s)
        assert behind["counts-out"] in (32 - 27, 32 - 24), behind
        late = {s.labels["query"]: s.value for s in families["funke_late_rows_dropped"].samples if s.name.endswith("_total")}
        assert late["counts-out"] == 1  # Spark's window drops the late entry; funke's sends it to its side output
        dead = {s.labels["query"]: s.value for s in families["funke_dead_letters"].samples if s.name.endswith("_total")}
        assert all(dead[q] == 1 for q in ("counts-out", "totals-out", "gcounts-out", "running-out")), dead  # each query reads the source
        assert next(iter(families["funke_job_running"].samples)).value == 1
        state_rows = {(s.labels["query"], s.labels["operator"]): s.value for s in families["funke_state_rows"].samples}
        state_bytes = {(s.labels["query"], s.labels["operator"]): s.value for s in families["funke_state_bytes"].samples}
        assert state_rows[("counts-out", "counts")] == 6  # [20,30), [30,40) per key
        assert set(state_bytes) == set(state_rows) and state_bytes[("counts-out", "counts")] > 0
        assert {("totals-out", "totals"), ("gcounts-out", "gcounts"), ("running-out", "running-total")} <= set(state_rows)

        # the page's savepoint button posts here; the savepoint then shows in the page's table
        req = urllib.request.Request(f"{base}/jobs/{handle.name}/savepoints", method="POST")
        with urllib.request.urlopen(req, timeout=300) as response:
            posted = json.loads(response.read())["savepoint"]
        assert posted in _browse(chromium, base + "/", tmp_path / "profile")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "dashboard.png"
        _browse(chromium, base + "/", tmp_path / "profile", screenshot=shot)
        _assert_drawn(shot, 1400, 1400)

        # from another process: funke state and funke list --json
        got = subprocess.run([*cli, "state", handle.name, "counts", "k0", "--json"], capture_output=True, text=True, timeout=300, check=False)
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout)["rows"] == native["rows"]
        listed = subprocess.run([*cli, "list", "--json"], capture_output=True, text=True, timeout=120, check=False)
        assert {j["name"]: j["http"] for j in json.loads(listed.stdout)}[handle.name] == base
        missing = subprocess.run([*cli, "state", handle.name, "nope"], capture_output=True, text=True, timeout=300, check=False)
        assert missing.returncode == 1 and "has no stateful operator 'nope'" in " ".join(missing.stderr.split())
    finally:
        handle.stop()
    assert _refused(base)  # the server ends with the job


def _rows(rows: list[dict]) -> list[tuple]:
    """State rows compared by what they hold (the bucket a row sits in is Spark's partitioning)."""
    return sorted((r["key"], r["scope"], r["state"], r["kind"], str(r["namespace"]), r["value"]) for r in rows)


def _histograms(family) -> dict[str, tuple[list[tuple[str, float]], float, float]]:
    """A parsed histogram family: query (or job) -> (cumulative buckets, count, sum)."""
    out: dict[str, tuple[list, float, float]] = {}
    for s in family.samples:
        label = s.labels.get("query", s.labels["job"])
        buckets, count, total = out.get(label, ([], 0.0, 0.0))
        if s.name.endswith("_bucket"):
            buckets.append((s.labels["le"], s.value))
        elif s.name.endswith("_count"):
            count = s.value
        elif s.name.endswith("_sum"):
            total = s.value
        out[label] = (buckets, count, total)
    return out


def test_off_loopback_every_request_needs_the_token(spark, tmp_path, stream, monkeypatch):
    """Also: queryable state of a job whose checkpoint root is a ``file://`` URI, read as a local path and
    through Hadoop's filesystem (the route ``hdfs://`` and ``s3a://`` roots take)."""
    env, sinks = _job(spark, tmp_path, stream, checkpoint=f"file://{tmp_path}/ckpt", http_host="0.0.0.0")
    handle = env.execute()
    try:
        _settled(handle, sinks, N, {"counts-out": 6, "totals-out": N})
        port = handle.http_address.rsplit(":", 1)[1]
        base = f"http://127.0.0.1:{port}"
        token_file = env.settings.home / "jobs" / handle.name / "http.token"
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        token = token_file.read_text().strip()
        for path in ("/metrics", f"/jobs/{handle.name}", f"/jobs/{handle.name}/state/counts?key=k0"):
            assert _get(base + path) == (401, b"")
            assert _get(base + path, token="not-" + token) == (401, b"")
        status, body = _get(f"{base}/jobs/{handle.name}/state/counts?key=k0", token=token)
        assert status == 200 and json.loads(body)["rows"][0]["count"] == 3
        local = (handle.state("totals").get("k1"), handle.state("counts").keys())
        assert json.loads(local[0][0]["value"])["v"] == sum(range(1, N, 3)) and sorted(local[1]) == list(KEYS)
        # operator metrics off: the native window's rows in are not measured (the page says so), its rows out are
        # what its sink wrote; funke's own rolling sum counts both
        status, body = _get(f"{base}/jobs/{handle.name}", token=token)
        ops = json.loads(body)["operators"]
        assert ops["counts"]["in"] is None and ops["counts"]["out"] == ops["counts-out"]["in"]
        assert ops["totals"]["in"] is not None and ops["totals"]["out"] is not None
        monkeypatch.setattr(handle.checkpoints, "uri", True)  # as an hdfs:// root: listed and read by Hadoop
        assert (handle.state("totals").get("k1"), handle.state("counts").keys()) == local
        # a filesystem Hadoop has no client for: the reason, not "no micro-batch yet"
        monkeypatch.setattr(handle.checkpoints, "root", "nosuchfs://somewhere/ckpt")
        with pytest.raises(fk.errors.PlanError, match=r"cannot read the checkpoint at nosuchfs://somewhere/ckpt/\S+ for queryable state: .*nosuchfs"):
            handle.state("counts").keys()
        monkeypatch.undo()
    finally:
        handle.stop()


def test_a_failed_job_s_dashboard_shows_the_failure(spark, tmp_path, chromium):
    """After a failure the job's HTTP server goes on serving its dashboard, with the failure in the
    exceptions view: the headline the user was told and the trace behind it, until stop()."""

    def parse(row):
        if row["v"] == 2:
            raise ValueError(f"bad row {row['k']!r}")
        return row

    env = fk.StreamEnvironment(app=f"ops-fails-{uuid.uuid4().hex[:6]}", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"))
    rows = [{"k": f"k{i}", "v": i} for i in range(4)]
    env.from_collection(rows, "k string, v bigint").map(parse, output_schema="k string, v bigint").sink_to(fk.sinks.collect(), uid="parsed")
    handle = env.execute()
    try:
        with pytest.raises(fk.JobFailedError) as failed:
            handle.wait(300)
        headline = str(failed.value).splitlines()[0]
        status, body = _get(f"{handle.http_address}/jobs/{handle.name}")
        assert status == 200, body
        (exception,) = [e for e in json.loads(body)["exceptions"] if e["action"] == "the job failed"]  # (a restart may come first)
        assert (exception["headline"], exception["action"], exception["query"]) == (headline, "the job failed", "parsed")
        assert "ValueError: bad row 'k2'" in exception["trace"]
        dom = _browse(chromium, handle.http_address + "/", tmp_path / "profile")
        assert 'class="status failed">failed</span>' in dom
        shown = re.search(r'<div class="exception failed"><div class="when">[^<]*parsed · the job failed</div><div class="headline">([^<]*)</div>', dom)
        assert shown and html.unescape(shown.group(1)) == headline, dom[dom.find('id="exceptions"') :][:2000]
        assert "ValueError: bad row 'k2'" in html.unescape(dom[dom.find("<pre>") :])
    finally:
        handle.stop()
    assert _refused(handle.http.address)


def _refused(base: str) -> bool:
    try:
        urllib.request.urlopen(base + "/metrics", timeout=5)
    except (urllib.error.URLError, ConnectionError):
        return True
    return False


# -- the dashboard in a real browser --------------------------------------------------------------

ARTIFACTS = Path(os.environ.get("FUNKE_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's chromium, installed when missing (apt-get, as funke services installs its servers)."""
    import shutil

    from funke.services.base import ServiceError, apt_install

    if shutil.which("chromium") is None:
        try:
            apt_install("install chromium (the dashboard's browser test)", ["chromium"], lambda _: None)
        except ServiceError as e:
            pytest.fail(str(e))
    return shutil.which("chromium") or pytest.fail("chromium is not on PATH after apt-get install chromium")


def _browse(chromium: str, url: str, profile: Path, *, screenshot: Path | None = None, width: int = 1400) -> str:
    """The page's DOM after its scripts ran for 4 s of virtual time (and a screenshot, when asked)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=4000",
             f"--window-size={width},1400"]  # fmt: skip
    what = [f"--screenshot={screenshot}"] if screenshot is not None else ["--dump-dom"]
    done = subprocess.run([chromium, *flags, *what, url], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _assert_drawn(png: Path, width: int, height: int) -> None:
    """A screenshot of the page as drawn: a PNG of the window's size whose rows are not blank (a blank or
    half-drawn page repeats the same few rows; the dashboard has hundreds of different ones)."""
    import struct
    import zlib

    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    chunks, at = {}, 8
    while at < len(data):
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        chunks.setdefault(kind, []).append(data[at + 8 : at + 8 + size])
        at += 12 + size
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    assert (w, h) == (width, height) and depth == 8, (w, h, depth)
    pixels = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride = 1 + w * {2: 3, 6: 4}[color]
    assert len(pixels) == stride * h
    distinct = len({pixels[i * stride + 1 : (i + 1) * stride] for i in range(h)})
    assert distinct > 300, f"the screenshot has {distinct} different rows of pixels of {h}: a blank page?"


def _figure(dom: str, key: str) -> str:
    import re

    m = re.search(rf'data-key="{key}"><div class="v">([^<]*)</div>', dom)
    assert m, f"no figure {key} in the page"
    return m.group(1)


def test_the_state_bench_reads_state_during_ysb_and_checks_the_results(spark):
    from funke.bench.savepoint import run_state_bench

    r = run_state_bench(campaigns=100, events=400_000, rows_per_batch=40_000, reads=2, spark=spark)
    assert r["results_exact"], r["mismatches"]
    assert r["reads"] == 2 and r["keys"] == 100 and r["rows_per_key"] >= 1 and r["batches_during"] >= 1
    assert r["read_ms_max"] >= r["read_ms_median"] > 0
