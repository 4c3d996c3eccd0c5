"""Which key buckets a job's general operators use (``funke.runtime.start.kept_buckets``): those its
checkpoint or savepoint was started with, else four a core spread evenly over Spark's shuffle partitions."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from funke.errors import PlanError
from funke.runtime.start import kept_buckets
from funke.savepoints import FORMAT, MANIFEST
from funke.savepoints.checkpoints import BUCKETS, FINISHED, Checkpoints
from funke.spark.general.lowering import balanced_bucket_ids, spark_int_hash


def test_new_jobs_spread_their_buckets_evenly_over_the_shuffle_partitions():
    for buckets, partitions in [(8, 2), (12, 3), (16, 4), (6, 4), (8, 8)]:
        ids = balanced_bucket_ids(buckets, partitions)
        assert len(set(ids)) == buckets
        per_partition = Counter(spark_int_hash(i) % partitions for i in ids)
        assert max(per_partition.values()) - min(per_partition.values()) <= 1 and len(per_partition) == min(buckets, partitions)
    # (the ints 0..7 themselves: three buckets in one partition, five in the other)
    assert sorted(Counter(spark_int_hash(i) % 2 for i in range(8)).values()) == [3, 5]


def test_a_new_job_takes_balanced_buckets_and_a_resumed_one_keeps_its_own(tmp_path):
    ck = Checkpoints(str(tmp_path / "ck"))
    assert kept_buckets(ck, False, None, cores=3, partitions=3) == balanced_bucket_ids(12, 3)  # nothing recorded
    assert kept_buckets(None, False, None, cores=1, partitions=2) == balanced_bucket_ids(4, 2)  # a bounded run
    ck.record_buckets((5, 1, 7, 0))
    assert not ck.has_progress()  # the record alone is no progress to resume
    assert kept_buckets(ck, False, None, cores=3, partitions=3) == (5, 1, 7, 0)
    assert kept_buckets(ck, True, None, cores=3, partitions=3) == balanced_bucket_ids(12, 3)  # fresh=True starts over
    (tmp_path / "ck" / FINISHED).touch()
    assert kept_buckets(ck, False, None, cores=3, partitions=3) == balanced_bucket_ids(12, 3)  # so does a finished job


def test_a_checkpoint_older_than_the_record_keeps_the_buckets_it_had(tmp_path):
    (tmp_path / "ck" / "counts" / "commits").mkdir(parents=True)  # progress, no record: 0..4*cores-1, as then
    assert kept_buckets(Checkpoints(str(tmp_path / "ck")), False, None, cores=2, partitions=2) == tuple(range(8))
    (tmp_path / "ck" / BUCKETS).write_text("8")  # a count: the buckets 0..7
    assert Checkpoints(str(tmp_path / "ck")).recorded_buckets() == tuple(range(8))


def test_a_restored_savepoint_gives_its_own_buckets(tmp_path):
    sp = tmp_path / "sp"
    (sp / "checkpoint").mkdir(parents=True)
    (sp / MANIFEST).write_text(json.dumps({"format": FORMAT, "queries": {}}))
    ck = Checkpoints(str(tmp_path / "ck"))
    ck.record_buckets((3, 4))
    assert kept_buckets(ck, False, str(sp), cores=1, partitions=2) == (0, 1, 2, 3)  # older than the record: as then
    (sp / "checkpoint" / BUCKETS).write_text("2,0,4,1")
    assert kept_buckets(ck, False, str(sp), cores=1, partitions=2) == (2, 0, 4, 1)


def test_a_damaged_record_is_refused(tmp_path):
    ck = Checkpoints(str(tmp_path / "ck"))
    ck.record_buckets((0, 1))
    (tmp_path / "ck" / BUCKETS).write_text("eight")
    with pytest.raises(PlanError, match="comma-separated integers; it holds 'eight'"):
        ck.recorded_buckets()
