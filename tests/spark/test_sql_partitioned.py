"""A partitioned filesystem table on Spark (Flink SQL's ``PARTITIONED BY``, as Nexmark's q10 writes one): each
row under ``dt=.../hm=...`` (a ``:`` written ``%3A``), the partition columns out of the CSV files, a NULL value
under ``partition.default-name``, and each partition committed with its ``_SUCCESS`` file, streaming and
bounded. The rows per partition are derived from the input here."""

from __future__ import annotations

import csv
from collections import Counter
from datetime import datetime, timedelta

import pytest

import funke as fk
from funke.table import StreamTableEnvironment

pytestmark = pytest.mark.spark

T0 = datetime(2024, 1, 1, 10, 0)
# (auction, price, seconds after 10:00): three minutes; one row without a price (its partition column)
BIDS = [(1, 10, 5), (2, 20, 30), (3, 30, 65), (4, None, 70), (5, 50, 130), (6, 60, 175)]


@pytest.mark.parametrize("bounded", [False, True])
def test_rows_land_in_their_partitions_each_committed_with_a_success_file(spark, tmp_path, bounded):
    env = fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"), runtime_mode="batch" if bounded else "streaming")
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    rows = [{"auction": a, "price": p, "ts": T0 + timedelta(seconds=s)} for a, p, s in BIDS]
    t_env.create_temporary_view("bid", env.from_collection(rows, "auction bigint, price bigint, ts timestamp", watermarks=wm, rows_per_batch=2))
    out = tmp_path / "q10"
    t_env.execute_sql(f"""CREATE TABLE q10 (auction BIGINT, price BIGINT, dt STRING, hm STRING, band STRING)
        PARTITIONED BY (dt, hm, band) WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'csv',
        'sink.partition-commit.trigger' = 'partition-time', 'sink.partition-commit.delay' = '1 min',
        'sink.partition-commit.policy.kind' = 'success-file', 'partition.time-extractor.timestamp-pattern' = '$dt $hm:00',
        'sink.rolling-policy.rollover-interval' = '1min', 'sink.rolling-policy.check-interval' = '1min')""")
    job = t_env.execute_sql("""INSERT INTO q10 SELECT auction, price, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm'),
        CASE WHEN price > 25 THEN 'high' WHEN price > 0 THEN 'low' END FROM bid""")
    job.wait(300)

    found: dict[str, Counter] = {}
    for part in sorted(p for p in out.glob("dt=*/hm=*/band=*") if p.is_dir()):
        assert (part / "_SUCCESS").exists(), part  # (committed: the input ended, the watermark passed every partition)
        name = str(part.relative_to(out))
        for f in part.glob("part-*"):
            found.setdefault(name, Counter()).update(tuple(r) for r in csv.reader(f.open()))
    assert found == {
        "dt=2024-01-01/hm=10%3A00/band=low": Counter({("1", "10"): 1, ("2", "20"): 1}),
        "dt=2024-01-01/hm=10%3A01/band=high": Counter({("3", "30"): 1}),
        "dt=2024-01-01/hm=10%3A01/band=__DEFAULT_PARTITION__": Counter({("4", ""): 1}),
        "dt=2024-01-01/hm=10%3A02/band=high": Counter({("5", "50"): 1, ("6", "60"): 1}),
    }
