"""examples/auctions.py from the CLI: the streaming and bounded runs write exactly the pairs and new sellers plain Python computes."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from examples import auctions
from funke.cli.main import app
from funke.semantics.time import timestamp_to_millis

pytestmark = pytest.mark.spark
BIDS = 20_000


def pairs(spark, path):
    df = spark.read.parquet(str(path))
    assert df.columns == ["auction", "seller", "bidder", "price", "bid_time"]
    return sorted((r[0], r[1], r[2], r[3], timestamp_to_millis(r[4])) for r in df.collect())


def new_sellers(spark, path):
    df = spark.read.parquet(str(path))
    assert df.columns == ["id", "window_start", "window_end", "name", "auctions"]
    rows = df.collect()
    assert all(timestamp_to_millis(r[2]) - timestamp_to_millis(r[1]) == 10_000 for r in rows)
    return sorted((r[0], timestamp_to_millis(r[1]), r[3], r[4]) for r in rows)


def test_bids_in_time_and_new_sellers_streaming_and_bounded_equal_plain_python(spark, tmp_path):
    runner = CliRunner()
    expected = auctions.expected(BIDS)
    assert 0 < len(expected) < BIDS  # some bids came after their auction closed
    sellers = auctions.expected_new_sellers(BIDS)
    assert 0 < len(sellers) < BIDS // 30  # some sellers opened their first auction in the next window
    for name, extra in (("a", []), ("b", ["--bounded"])):
        r = runner.invoke(
            app, ["run", "examples.auctions:job", "--events", str(BIDS), "--output", str(tmp_path / name), "--no-live", *extra]
        )
        assert r.exit_code == 0, r.output
        assert pairs(spark, tmp_path / name / "bids") == expected, name
        assert new_sellers(spark, tmp_path / name / "new-sellers") == sellers, name
