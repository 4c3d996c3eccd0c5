"""examples/auctions.py from the CLI: the streaming and bounded runs write exactly the pairs plain Python computes."""

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


def test_bids_in_time_streaming_and_bounded_equal_the_plain_python_pairs(spark, tmp_path):
    runner = CliRunner()
    expected = auctions.expected(BIDS)
    assert 0 < len(expected) < BIDS  # some bids came after their auction closed
    for name, extra in (("a", []), ("b", ["--bounded"])):
        r = runner.invoke(
            app, ["run", "examples.auctions:job", "--events", str(BIDS), "--output", str(tmp_path / name), "--no-live", *extra]
        )
        assert r.exit_code == 0, r.output
        assert pairs(spark, tmp_path / name) == expected, name
