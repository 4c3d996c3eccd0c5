"""Which key bucket count a streaming job's general operators use: the one its checkpoint or savepoint
was started with, else four a core (``funke.runtime.job._kept_buckets``)."""

from __future__ import annotations

import json

import pytest

from funke.errors import PlanError
from funke.runtime.checkpoints import BUCKETS, FINISHED, Checkpoints
from funke.runtime.job import _kept_buckets
from funke.savepoints import FORMAT, MANIFEST


def test_a_new_job_takes_four_buckets_a_core_and_a_resumed_one_keeps_its_own(tmp_path):
    ck = Checkpoints(str(tmp_path / "ck"))
    assert _kept_buckets(ck, False, None, cores=3) == 12  # nothing recorded
    ck.record_buckets(4)
    assert not ck.has_progress()  # the record alone is no progress to resume
    assert _kept_buckets(ck, False, None, cores=3) == 4
    assert _kept_buckets(ck, True, None, cores=3) == 12  # fresh=True starts over
    (tmp_path / "ck" / FINISHED).touch()
    assert _kept_buckets(ck, False, None, cores=3) == 12  # a finished job starts over too


def test_a_restored_savepoint_gives_its_own_bucket_count(tmp_path):
    sp = tmp_path / "sp"
    (sp / "checkpoint").mkdir(parents=True)
    (sp / MANIFEST).write_text(json.dumps({"format": FORMAT, "queries": {}}))
    ck = Checkpoints(str(tmp_path / "ck"))
    ck.record_buckets(8)
    assert _kept_buckets(ck, False, str(sp), cores=1) == 4  # a savepoint older than the record: four a core
    (sp / "checkpoint" / BUCKETS).write_text("16")
    assert _kept_buckets(ck, False, str(sp), cores=1) == 16


def test_a_damaged_record_is_refused(tmp_path):
    ck = Checkpoints(str(tmp_path / "ck"))
    ck.record_buckets(8)
    (tmp_path / "ck" / BUCKETS).write_text("eight")
    with pytest.raises(PlanError, match="positive integer; it holds 'eight'"):
        ck.recorded_buckets()
