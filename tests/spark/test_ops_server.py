"""The job's HTTP server: Prometheus metrics, queryable state (live, read-committed, from another
process too) and the bearer token off loopback, against a real job over a Redis Stream."""

from __future__ import annotations

import json
import os
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
from funke.savepoint import read
from funke.windows import TumblingEventTimeWindows
from tests.servers import ensure_redis

pytestmark = pytest.mark.spark
KEYS = ("k0", "k1", "k2")
N = 30  # entry i: key k(i % 3), v = i, event time i s: windows [0,10) and [10,20) close, [20,30) stays open


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


def _job(spark, tmp_path, stream, **http):
    env = fk.StreamEnvironment(app=f"ops-{uuid.uuid4().hex[:6]}", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"), settings_=settings(**http))
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("ts")
    events = env.from_source(fk.sources.redis_stream(stream, schema="k string, v bigint, ts timestamp"), wm)
    windows = events.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().uid("counts")
    closed = windows.sink_to(fk.sinks.collect(), uid="counts-out")
    totals = events.key_by("k").sum("v").uid("totals")
    rolling = totals.sink_to(fk.sinks.collect(), uid="totals-out")
    return env, closed, rolling


def _settled(handle, closed, rolling, rows: int) -> None:
    """Wait until both queries have read ``rows`` entries, the window query has emitted the two closed
    windows per key, and it is idle with every planned batch committed (Spark reports no progress for
    a batch without data, so the checkpoint and the query's status tell)."""
    deadline = time.monotonic() + 120
    st = next(st for st in handle.states if st.sink.uid == "counts-out")
    offsets = handle.checkpoints.root + "/counts-out/offsets"
    while True:
        handle._raise_if_failed()
        planned = max((int(p) for p in os.listdir(offsets) if p.isdigit()), default=-1) if os.path.isdir(offsets) else -1
        idle = not st.query.status["isTriggerActive"] and handle.checkpoints.last_committed(st.sink.uid) == planned >= 0
        # a sink gets its rows before the listener hears of the batch: wait for both queries' progress too
        reported = all(q.input_rows == rows for q in handle.states if q.sink.uid in ("counts-out", "totals-out"))
        if len(closed.rows) == 6 and len(rolling.rows) == rows and reported and idle:
            return
        assert time.monotonic() < deadline, f"not settled: {len(closed.rows)} windows, {len(rolling.rows)} totals, {st.query.status}"
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
    env, closed, rolling = _job(spark, tmp_path, stream, operator_metrics=True)
    handle = env.execute()
    try:
        _settled(handle, closed, rolling, N)
        base = handle.http_address
        assert base.startswith("http://127.0.0.1:")

        # the dashboard in a real browser: every operator in the graph, the job list, the figures
        first = _browse(chromium, base + "/", tmp_path / "profile")
        uids = {n["uid"] for n in handle.plan_graph}
        assert len(uids) >= 7
        for uid in uids:
            assert f'data-uid="{uid}"' in first, f"operator {uid} is not in the dashboard's graph"
        assert _figure(first, "input_rows") == f"{2 * N}"
        assert 'class="status running"' in first
        assert f'<tr data-job="{handle.name}" class="this"><td>{handle.name}</td><td>running</td>' in first

        # three more entries (i = 30, 31, 32): a batch with data, whose progress carries the watermark 24 s
        r = redis.Redis.from_url(ensure_redis())
        for i in range(N, N + 3):
            r.xadd(stream, {"k": KEYS[i % 3], "v": i, "ts": f"2024-01-01T00:00:{i:02d}Z"})
        _settled(handle, closed, rolling, N + 3)
        assert _figure(_browse(chromium, base + "/", tmp_path / "profile"), "input_rows") == f"{2 * (N + 3)}"  # the numbers move

        # Prometheus text, parsed with prometheus-client's own parser
        status, body = _get(base + "/metrics")
        assert status == 200
        families = {f.name: f for f in text_string_to_metric_families(body.decode())}
        rows_in = {s.labels["query"]: s.value for s in families["funke_input_rows"].samples if s.name == "funke_input_rows_total"}
        assert rows_in == {"counts-out": N + 3, "totals-out": N + 3, "dead-letters": 0}  # the dead-letter query has not started
        by_operator = {(s.labels["query"], s.labels["operator"], s.labels["direction"]): s.value
                       for s in families["funke_operator_rows"].samples if s.name == "funke_operator_rows_total"}  # fmt: skip
        source_uid = next(n["uid"] for n in handle.plan_graph if n["kind"] == "Watermark")
        assert by_operator[("counts-out", source_uid, "in")] == N + 3
        assert by_operator[("counts-out", "counts-out", "out")] == 6  # the closed windows
        assert by_operator[("totals-out", "totals-out", "out")] == N + 3
        # every operator between: the native window (operator_metrics on) and funke's rolling sum
        assert (by_operator[("counts-out", "counts", "in")], by_operator[("counts-out", "counts", "out")]) == (N + 3, 6)
        assert (by_operator[("totals-out", "totals", "in")], by_operator[("totals-out", "totals", "out")]) == (N + 3, N + 3)
        key_by = next(n["uid"] for n in handle.plan_graph if n["kind"] == "KeyBy" and "counts-out" in n["queries"])
        assert by_operator[("counts-out", key_by, "in")] == by_operator[("counts-out", key_by, "out")] == N + 3
        counts = {s.labels["query"]: s.value for s in families["funke_batch_duration_seconds"].samples if s.name.endswith("_count")}
        assert counts == {st.sink.uid: st.batches for st in handle.states}
        wm = {s.labels["query"]: s.value for s in families["funke_watermark_seconds"].samples}
        assert wm["counts-out"] == 1704067200 + 32 - 5  # 00:00:27Z: the max event time less 5 s, in the last batch
        assert wm["totals-out"] in (1704067200 + 29 - 5, 1704067200 + 32 - 5)  # its heartbeat batches go on: either
        assert next(iter(families["funke_job_running"].samples)).value == 1
        assert sum(s.value for s in families["funke_state_rows"].samples if s.labels["query"] == "counts-out") == 6  # [20,30), [30,40) per key

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

        # read-committed: equal to a savepoint's table of the same batch
        sp = read(handle.savepoint(str(tmp_path / "sps")).path)
        assert sp.batches["counts-out"] == native["batch"]
        saved = sp.table("counts")
        assert sorted(zip(saved["k"], saved["count"])) == sorted((r["k"], r["count"]) for k in KEYS for r in handle.state("counts").get(k))

        # the page's savepoint button posts here; the savepoint then shows in the page's table
        req = urllib.request.Request(f"{base}/jobs/{handle.name}/savepoints", method="POST")
        with urllib.request.urlopen(req, timeout=300) as response:
            posted = json.loads(response.read())["savepoint"]
        assert posted in _browse(chromium, base + "/", tmp_path / "profile")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "dashboard.png"
        _browse(chromium, base + "/", tmp_path / "profile", screenshot=shot)
        assert shot.stat().st_size > 10_000

        # from another process: funke state and funke list --json
        monkeypatch.setenv("FUNKE_HOME", str(env.settings.home))
        cli = [sys.executable, "-c", "from funke.cli.main import main; main()"]
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


def test_off_loopback_every_request_needs_the_token(spark, tmp_path, stream):
    env, closed, rolling = _job(spark, tmp_path, stream, http_host="0.0.0.0")
    handle = env.execute()
    try:
        _settled(handle, closed, rolling, N)
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
    finally:
        handle.stop()


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


def _browse(chromium: str, url: str, profile: Path, *, screenshot: Path | None = None) -> str:
    """The page's DOM after its scripts ran for 4 s of virtual time (and a screenshot, when asked)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=4000",
             "--window-size=1400,1400"]  # fmt: skip
    what = [f"--screenshot={screenshot}"] if screenshot is not None else ["--dump-dom"]
    done = subprocess.run([chromium, *flags, *what, url], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


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
