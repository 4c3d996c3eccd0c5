"""Savepoints without Spark: the checkpoint cut, the restore rules, the registry, requests between processes."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import funke as fk
from funke.runtime import control
from funke.savepoints import Savepoint, SavepointError, _copy_cut, read, relocate_schema_paths, restore, take
from funke.savepoints.registry import Registry


def fake_checkpoint(root: Path, *, planned: int, committed: int) -> Path:
    """A Spark-shaped query checkpoint: offsets 0..planned, commits 0..committed, state versions 1..planned+1."""
    q = root / "counts"
    for sub in ("offsets", "commits", "state/0/0", "state/0/_metadata/v2", "state/0/0/SSTs"):
        (q / sub).mkdir(parents=True, exist_ok=True)
    (q / "metadata").write_text('{"id":"old"}')
    for b in range(planned + 1):
        (q / "offsets" / str(b)).write_text(f'v1\n{{"batchWatermarkMs":{b * 1000}}}\n{{"i":{(b + 1) * 100}}}')
        (q / "offsets" / f".{b}.crc").write_text("crc")
    for b in range(committed + 1):
        (q / "commits" / str(b)).write_text("v1\n{}")
    for v in range(1, planned + 2):
        (q / "state/0/0" / f"{v}.changelog").write_text(f"version {v}")
        (q / "state/0/0" / f".{v}.changelog.crc").write_text("crc")
    (q / "state/0/0/SSTs/abc.sst").write_text("sst")
    (q / "offsets" / f".{planned + 1}.5f1e.tmp").write_text("half-written")
    (q / "state/0/_metadata/v2/0").write_text(
        'v2\n{"operatorInfo":{"operatorId":0,"operatorName":"transformWithStateInPandasExec"},'
        f'"stateStoreInfo":[{{"stateSchemaFilePaths":["file:{q}/state/0/_stateSchema/default/0_x"]}}],'
        '"operatorPropertiesJson":"{\\"stateVariables\\":[{\\"stateName\\":\\"operator\\"}]}"}'
    )
    (q / "state/0/_metadata/v2/.0.crc").write_text("crc")
    return q


def test_the_cut_keeps_what_the_last_committed_batch_needs_and_nothing_newer(tmp_path):
    q = fake_checkpoint(tmp_path / "ck", planned=5, committed=3)
    dest = tmp_path / "copy"
    _copy_cut(q, dest, 3)
    assert sorted(p.name for p in (dest / "offsets").iterdir()) == [".0.crc", ".1.crc", ".2.crc", ".3.crc", "0", "1", "2", "3"]
    assert sorted(p.name for p in (dest / "commits").iterdir()) == ["0", "1", "2", "3"]
    # batch 3 wrote state version 4
    assert sorted(p.name for p in (dest / "state/0/0").glob("*.changelog")) == [f"{v}.changelog" for v in range(1, 5)]
    assert (dest / "state/0/0/SSTs/abc.sst").exists() and (dest / "metadata").exists()
    relocate_schema_paths(dest, q)
    meta = (dest / "state/0/_metadata/v2/0").read_text()
    assert f"file:{dest}/state/0/_stateSchema" in meta and str(q) not in meta
    assert not (dest / "state/0/_metadata/v2/.0.crc").exists()  # its checksum no longer fits


def test_take_records_batch_watermark_positions_and_layout(tmp_path):
    fake_checkpoint(tmp_path / "ck", planned=5, committed=3)
    layout = {"counts": [{"uid": "window", "kind": "window", "where": "window", "keys": [["key", "string"]]}]}
    sp = take(str(tmp_path / "ck"), job="j", target=tmp_path / "sps", layouts=layout)
    q = read(sp.path).manifest["queries"]["counts"]
    assert (q["batch"], q["watermark_ms"], q["source_offsets"]) == (3, 3000, [{"i": 400}])
    assert q["operators"][0]["uid"] == "window" and q["operators"][0]["state_variables"] == ["operator"]
    assert sp.batches == {"counts": 3} and sp.path.name.startswith("savepoint-j-")


def test_a_cut_that_meets_sparks_cleanup_is_taken_again_at_the_new_last_batch(tmp_path, monkeypatch):
    import shutil

    import funke.savepoints as savepoint

    q = fake_checkpoint(tmp_path / "ck", planned=5, committed=3)
    real_copy, cleaned = shutil.copy2, []

    def copy_while_spark_cleans(src, dst):
        # the first try: batch 4 commits and Spark's maintenance removes the oldest changelog mid-copy
        if Path(src).name == "1.changelog" and not cleaned:
            cleaned.append(src)
            (q / "commits" / "4").write_text("v1\n{}")
            raise FileNotFoundError(src)
        return real_copy(src, dst)

    monkeypatch.setattr(savepoint.shutil, "copy2", copy_while_spark_cleans)
    sp = take(str(tmp_path / "ck"), job="j", target=tmp_path / "sps")
    assert cleaned and sp.batches == {"counts": 4}
    assert [p.name for p in (tmp_path / "sps").iterdir()] == [sp.path.name]  # the failed try left nothing behind

    def always_cleaned(src, dst):
        if Path(src).name == "1.changelog":
            raise FileNotFoundError(src)
        return real_copy(src, dst)

    monkeypatch.setattr(savepoint.shutil, "copy2", always_cleaned)
    with pytest.raises(savepoint.CheckpointChangedError, match=f"vanished while it was copied.*{savepoint.TAKE_TRIES} tries"):
        take(str(tmp_path / "ck"), job="j", target=tmp_path / "again")
    assert not (tmp_path / "again").exists() or not any((tmp_path / "again").iterdir())


def test_nothing_committed_is_nothing_to_save(tmp_path):
    fake_checkpoint(tmp_path / "ck", planned=0, committed=-1)
    with pytest.raises(SavepointError, match="committed no micro-batch"):
        take(str(tmp_path / "ck"), job="j", target=tmp_path / "sps")
    with pytest.raises(SavepointError, match="is not a funke savepoint"):
        read(tmp_path)


def saved(layouts):
    return Savepoint(Path("/sp"), {"queries": {uid: {"batch": 3, "layout": ops} for uid, ops in layouts.items()}})


WINDOW = {"uid": "window", "kind": "window", "where": "window 'w'", "keys": [["key", "string"]], "aggregates": ["count()"]}


def test_restore_rules_follow_flink():
    sp = saved({"counts": [WINDOW], "totals": []})
    # the same job: restores, nothing to say
    assert restore.check_restore(sp, {"counts": [WINDOW], "totals": []}, allow_non_restored_state=False) == []
    # a sink gone: refused unless allowed
    with pytest.raises(SavepointError, match=r"holds state of 'totals'"):
        restore.check_restore(sp, {"counts": [WINDOW]}, allow_non_restored_state=False)
    notes = restore.check_restore(sp, {"counts": [WINDOW], "new": []}, allow_non_restored_state=True)
    assert notes == [
        "state of 'totals' dropped (allow_non_restored_state)",
        "'new' is new: it starts empty and reads its sources from the beginning",
    ]
    # a changed state layout: refused, naming the operator and the field
    changed = {**WINDOW, "keys": [["key", "bigint"]]}
    with pytest.raises(
        SavepointError,
        match=r"window 'w' \(uid window\) no longer fits: its keys was \[\['key', 'string'\]\], now \[\['key', 'bigint'\]\]",
    ):
        restore.check_restore(sp, {"counts": [changed], "totals": []}, allow_non_restored_state=True)
    # an operator gone from a restored query; one added to it
    with pytest.raises(SavepointError, match=r"uid window\) in the query writing 'counts' is not in this job"):
        restore.check_restore(sp, {"counts": [], "totals": []}, allow_non_restored_state=False)
    extra = {**WINDOW, "uid": "other", "where": "window 'x'"}
    with pytest.raises(SavepointError, match=r"window 'x' would join the restored query writing 'counts'"):
        restore.check_restore(sp, {"counts": [WINDOW, extra], "totals": []}, allow_non_restored_state=False)


def test_a_file_sink_that_holds_later_batches_is_not_silently_skipped(tmp_path):
    out = tmp_path / "out" / "_spark_metadata"
    out.mkdir(parents=True)
    for b in range(7):
        (out / str(b)).write_text("v1")
    sp_dir = tmp_path / "sp"
    (sp_dir / "checkpoint" / "counts").mkdir(parents=True)
    sp = Savepoint(sp_dir, {"queries": {"counts": {"batch": 3, "layout": []}}})
    with pytest.raises(SavepointError, match=r"already holds batch 6 of a later run .* 4\.\.6"):
        restore.restore(sp, tmp_path / "ck", {"counts": []}, {"counts": [str(tmp_path / "out")]})
    for b in (5, 6):  # stopped after batch 4's write, before its commit: batch 4 is the same batch again
        (out / str(b)).unlink()
    restore.restore(sp, tmp_path / "ck", {"counts": []}, {"counts": [str(tmp_path / "out")]})
    assert (tmp_path / "ck" / "counts").is_dir()


def test_registry_jobs_and_savepoints(tmp_path):
    r = Registry(tmp_path)
    r.job_started("a", checkpoint="/c", fingerprint="f1")
    assert r.job("a").alive  # this process
    r.job_started("b", checkpoint="/c2", fingerprint="f2", pid=2**22 + 12345)  # no such process
    assert not r.job("b").alive
    r.job_ended("a", "stopped")
    assert [(j.name, j.status) for j in r.jobs()] == [("a", "stopped"), ("b", "running")]
    with pytest.raises(fk.PlanError, match=r"no job named 'zz'.*jobs: a, b"):
        r.job("zz")
    r.add_savepoint("/sp/1", "a", batches={"counts": 3}, size_bytes=10, took_ms=5)
    assert [(s.path, s.batches) for s in r.savepoints("a")] == [("/sp/1", {"counts": 3})]
    assert r.forget_savepoint("/sp/1") and r.savepoints() == []
    with pytest.raises(ValueError, match="job status"):
        r.job_ended("a", "paused")


def test_requests_from_another_process_reach_the_running_job(tmp_path):
    asked = []

    def savepoint(target):
        asked.append(target)
        return SimpleNamespace(path=Path(target or "/default") / "savepoint-x")

    handle = SimpleNamespace(name="job", savepoint=savepoint, stop=lambda **kw: None, request_lock=threading.Lock())
    stop = threading.Event()
    control.serve(handle, tmp_path, stop)
    try:
        answer = control.ask(tmp_path, "job", "savepoint", "/tmp/sps", alive=lambda: True, timeout_s=30)
        assert answer == {"savepoint": "/tmp/sps/savepoint-x"} and asked == ["/tmp/sps"]

        def failing(target):
            raise OSError("disk full")

        handle.savepoint = failing
        with pytest.raises(SavepointError, match="could not savepoint: OSError: disk full"):
            control.ask(tmp_path, "job", "savepoint", None, alive=lambda: True, timeout_s=30)
    finally:
        stop.set()
    with pytest.raises(SavepointError, match="ended before it answered"):
        control.ask(tmp_path, "job", "stop", None, alive=lambda: False, timeout_s=30)
    assert not list(control.requests_dir(tmp_path, "job").glob("*.request.json"))


def test_uid_and_name_are_set_on_the_operator_that_made_the_stream():
    env = fk.StreamEnvironment()
    s = (
        env.from_collection([{"k": "a", "t": 1}], schema="k string, t bigint")
        .key_by("k")
        .count()
        .uid("running")
        .name("running count")
    )
    assert (s.node.uid, s.node.explicit_name) == ("running", "running count")
    with pytest.raises(fk.PlanError, match="non-empty string"):
        s.uid("")


def test_derived_uids_are_the_same_in_every_process():
    """Checkpoints and savepoints find operators by uid: a derived one must not depend on hash seeds."""
    import subprocess
    import sys

    code = (
        "import funke as fk; from funke.plan import nodes as n; from funke.windows import TumblingEventTimeWindows as T\n"
        "env = fk.StreamEnvironment()\n"
        "wm = fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner('t', unit='ms')\n"
        "env.from_collection([{'k': 'a', 't': 1}], schema='k string, t bigint', watermarks=wm).key_by('k')"
        ".window(T.of(fk.seconds(1))).count().print()\n"
        "print(sorted(x.uid for x in n.walk(env.sinks)))"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(seen) == 1 and "window-" in seen.pop()


def test_take_refuses_a_remote_checkpoint_and_dispose_forgets(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNKE_HOME", str(tmp_path / "home"))
    with pytest.raises(fk.PlanError, match="not local"):
        take("hdfs://nn/ck", job="j", target=tmp_path)
    fake_checkpoint(tmp_path / "ck", planned=1, committed=1)
    sp = take(str(tmp_path / "ck"), job="j", target=tmp_path / "sps")
    Registry(tmp_path / "home").add_savepoint(str(sp.path), "j", batches=sp.batches, size_bytes=1, took_ms=1)
    from funke.savepoints import dispose

    dispose(sp.path)
    assert not sp.path.exists() and Registry(tmp_path / "home").savepoints("j") == []


class _Paid(fk.functions.KeyedCoProcessFunction):
    def process_element1(self, order, ctx):
        return None

    def process_element2(self, payment, ctx):
        yield {"k": ctx.get_current_key()}


class _Pairs(fk.functions.ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield {"v": left["v"]}


def _two_input_jobs(bounds=(-1, 2)):
    env = fk.StreamEnvironment(app="unit")
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts", unit="ms")
    a = env.from_collection([{"k": "a", "v": 1, "ts": 0}], "k string, v bigint, ts bigint", watermarks=wm)
    b = env.from_collection([{"k": "a", "w": 2.0, "ts": 0}], "k string, w double, ts bigint", watermarks=wm)
    paid = a.connect(b).key_by("k", "k").process(_Paid(), output_schema="k string", uid="paid")
    lo, hi = bounds
    pairs = (
        a.key_by("k")
        .interval_join(b.key_by("k"))
        .between(fk.seconds(lo), fk.seconds(hi))
        .process(_Pairs(), output_schema="v bigint", uid="pairs")
    )
    return paid.node, pairs.node


def test_two_input_operators_are_in_the_state_layout_with_both_inputs_keys():
    paid, pairs = _two_input_jobs()
    ((co,), (join,)) = restore.state_layout([paid]), restore.state_layout([pairs])
    assert co == {
        "uid": "paid", "kind": paid.kind, "where": paid.where(), "keys": [["k", "string"]], "second_keys": [["k", "string"]],
        "function": f"{__name__}._Paid",
    }  # fmt: skip
    assert (join["uid"], join["bounds"], join["function"], join["second_keys"]) == (
        "pairs",
        "[-1000 ms, 2000 ms]",
        f"{__name__}._Pairs",
        [["k", "string"]],
    )


def test_a_changed_two_input_operator_is_refused_and_an_older_savepoint_does_not_list_them():
    _, pairs = _two_input_jobs()
    _, wider = _two_input_jobs(bounds=(-5, 2))
    layout, changed = restore.state_layout([pairs]), restore.state_layout([wider])
    sp = Savepoint(Path("/sp"), {"layout_version": 2, "queries": {"out": {"batch": 3, "layout": layout}}})
    assert restore.check_restore(sp, {"out": layout}, allow_non_restored_state=False) == []
    with pytest.raises(
        SavepointError, match=r"\(uid pairs\) no longer fits: its bounds was '\[-1000 ms, 2000 ms\]', now '\[-5000 ms, 2000 ms\]'"
    ):
        restore.check_restore(sp, {"out": changed}, allow_non_restored_state=False)
    # a savepoint of layout 1 named no two-input operator: the join is neither new nor compared, the rest is
    older = saved({"out": [WINDOW]})
    assert restore.check_restore(older, {"out": [WINDOW, *changed]}, allow_non_restored_state=False) == []
    with pytest.raises(SavepointError, match="no longer fits"):
        restore.check_restore(older, {"out": [{**WINDOW, "keys": []}, *changed]}, allow_non_restored_state=False)
