"""The checks of the real-time benches, without Spark or a broker: every output record accounted for
(``funke bench latency --mode realtime``, ``funke bench chaos --mode realtime``)."""

from __future__ import annotations

import numpy as np

from funke.bench import chaos_realtime
from funke.bench import latency_realtime as lr

T0_US = 1_700_000_000_000_000  # a whole second


def produced(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Record i produced at T0 + i ms (kinds cycle view, click, purchase)."""
    ids = np.arange(n)
    return ids, T0_US + ids * 1000


def test_filter_map_every_kept_id_once_and_latency_from_produce_to_consume():
    ids, us = produced(9)
    kept = [i for i in range(9) if i % 3 != 2]
    rows = [(int(us[i]) + 5_000, {"id": i, "produced_us": int(us[i]), "kind": "VIEW"}) for i in kept]
    got = lr.check(lr.FUNKE_RT, "filter/map", rows, ids, us, measured_from=0)
    assert (got["expected"], got["received"], got["missing"], got["duplicates"]) == (6, 6, 0, 0)
    assert set(got["samples_ms"]) == {5.0}
    lossy = lr.check(lr.PLAIN_RT, "filter/map", rows[1:] + rows[-1:], ids, us, measured_from=0)
    assert (lossy["missing"], lossy["duplicates"]) == (1, 1)


def test_rolling_count_every_id_and_counts_one_to_n_per_kind():
    ids, us = produced(6)
    seen: dict[str, int] = {}
    rows = []
    for i in range(6):
        kind = lr.lk.KINDS[i % 3]
        seen[kind] = seen.get(kind, 0) + 1
        rows.append((int(us[i]) + 1_000, {"id": i, "produced_us": int(us[i]), "kind": kind, "count": seen[kind]}))
    good = lr.check(lr.FUNKE_RT, "rolling count", rows, ids, us, measured_from=0)
    assert (good["missing"], good["duplicates"], good["wrong"]) == (0, 0, ())
    skipped = [(at, {**r, "count": r["count"] + (r["kind"] == "view")}) for at, r in rows]  # view's counts 2, 3
    assert lr.check(lr.FUNKE_RT, "rolling count", skipped, ids, us, measured_from=0)["wrong"] == ("view: counts are not 1..2",)


def test_window_updates_are_the_counts_one_to_n_of_each_window():
    ids, us = produced(6)  # all in the first second: one window per kind, 2 records each
    start = "2023-11-14T22:13:20Z"
    rows = [(int(us[i]) + 2_000, {"kind": lr.lk.KINDS[i % 3], "window_start": start, "count": 1 + i // 3, "produced_us": int(us[i])})
            for i in range(6)]  # fmt: skip
    got = lr.check(lr.FUNKE_RT, "window", rows, ids, us, measured_from=0)
    assert (got["expected"], got["received"], got["missing"], got["duplicates"], got["wrong"]) == (6, 6, 0, 0, ())
    assert set(got["samples_ms"]) == {2.0}
    missing_last = lr.check(lr.PLAIN_RT, "window", rows[:-1] + rows[:1], ids, us, measured_from=0)
    assert (missing_last["missing"], missing_last["duplicates"]) == (1, 1)


def test_chaos_realtime_counts_lost_and_duplicated_records():
    result = chaos_realtime.Result("filter/map", 6)
    chaos_realtime.check(result, [{"id": 0}, {"id": 1}, {"id": 1}, {"id": 3}])
    assert (result.expected, result.lost, result.duplicates, result.exact) == (4, 1, 1, False)
    counts = chaos_realtime.Result("rolling count", 6)
    rows = [{"kind": k, "count": c} for k in chaos_realtime.KINDS for c in (1, 2)] + [{"kind": "view", "count": 2}]
    chaos_realtime.check(counts, rows)
    assert (counts.lost, counts.duplicates, counts.wrong, counts.exact) == (0, 1, [], True)


def test_a_real_time_run_with_no_record_after_the_warm_up_says_too_small_and_writes_no_docs(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from funke.bench import cli_kafka, report
    from funke.cli.main import app

    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")
    empty = lr.Result(lr.FUNKE_RT, "filter/map", 10_000, 0, 0.0, 0, 0, 0, 0, ())
    monkeypatch.setattr(cli_kafka, "_services", lambda bootstrap: None)
    monkeypatch.setattr(lr, "session", lambda partitions: None)
    monkeypatch.setattr(report, "setup", lambda spark: report.Setup("0.1.0", "4.3.0", "17.0.15", "3.11.7", 2, 23.5, "Xeon", 0.5, "local[*]", "2", "RocksDB"))
    monkeypatch.setattr(lr, "run", lambda spark, **options: [empty])
    args = ["bench", "latency", "--source", "kafka", "--mode", "realtime", "--rates", "10000", "--doc", str(doc), "--write-docs"]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert "too small to measure" in r.output and "None" not in r.output
    assert isinstance(r.exception, report.TooSmallToMeasure) and doc.read_text() == "# Benchmarks\n"
