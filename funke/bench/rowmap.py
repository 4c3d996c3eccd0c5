"""``funke bench general --map-rows N``: a plain Python row function, funke against plain PySpark.

The same function (``enrich``: a dict in, a dict out, a little arithmetic and a string) over the
same generated rows, in one SparkSession, each writing Parquet:

* funke: ``env.from_source(generator(...)).map(enrich, output_schema=...)``, run bounded (a row
  function costs the same per row in a stream; a bounded run has no micro-batch overhead to
  blur it);
* plain PySpark: the function as a user writes it for Spark, a Python UDF returning a struct
  (``udf(..., useArrow=True)``: Arrow between the JVM and Python, the function called per row).

Both outputs are checked against each other (count and a checksum of every column). Rows/s is
rows over the wall time of the write.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any

COLUMNS = {"i": "i", "ad": "concat('ad-', cast(i % 1000 as string))", "v": "cast(i as double) * 0.5"}
SCHEMA = "i bigint, ad string, v double"
OUTPUT = "i bigint, ad string, v double, big boolean"


def enrich(r: dict[str, Any]) -> dict[str, Any]:
    """The measured function: what a user's row function typically does."""
    return {"i": r["i"] + 1, "ad": r["ad"].upper(), "v": r["v"] * 2.0, "big": r["v"] > 1000.0}


@dataclass(frozen=True)
class MapRun:
    system: str
    rows: int
    seconds: float
    checksum: tuple[int, int, float, int]

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


def _checksum(spark: Any, path: str) -> tuple[int, int, float, int]:
    from pyspark.sql import functions as F

    row = (
        spark.read.parquet(path)
        .agg(F.count(F.lit(1)), F.sum("i"), F.sum("v"), F.sum(F.xxhash64("ad") % 1_000_003 + F.col("big").cast("int")))
        .first()
    )
    return int(row[0]), int(row[1] or 0), float(row[2] or 0.0), int(row[3] or 0)


def run_funke(spark: Any, rows: int, path: str) -> MapRun:
    import funke as fk

    env = fk.StreamEnvironment(app="bench-map", spark=spark)
    src = fk.sources.generator(COLUMNS, schema=SCHEMA, events=rows)
    env.from_source(src).map(enrich, output_schema=OUTPUT).sink_to(fk.sinks.files(path, overwrite=True), uid="mapped")
    started = time.monotonic()
    env.execute(bounded=True).wait()
    return MapRun("funke map", rows, time.monotonic() - started, _checksum(spark, path))


def run_plain(spark: Any, rows: int, path: str) -> MapRun:
    from pyspark.sql import functions as F

    udf = F.udf(enrich, returnType=OUTPUT, useArrow=True)
    df = spark.range(rows).withColumnRenamed("id", "i").selectExpr(*(f"{sql} AS {name}" for name, sql in COLUMNS.items()))
    out = df.select(udf(F.struct(*df.columns)).alias("r")).select("r.*")
    started = time.monotonic()
    out.write.mode("overwrite").parquet(path)
    return MapRun("plain PySpark Arrow UDF", rows, time.monotonic() - started, _checksum(spark, path))


def run_map_bench(spark: Any, rows: int, rounds: int = 1) -> list[MapRun]:
    """Both systems in turn, ``rounds`` times after a small warm-up; raises when outputs differ."""
    root = tempfile.mkdtemp(prefix="funke-bench-map-")
    try:
        run_funke(spark, min(rows, 100_000), os.path.join(root, "warm-f"))
        run_plain(spark, min(rows, 100_000), os.path.join(root, "warm-p"))
        runs = []
        for r in range(rounds):
            f = run_funke(spark, rows, os.path.join(root, f"funke-{r}"))
            p = run_plain(spark, rows, os.path.join(root, f"plain-{r}"))
            if f.checksum != p.checksum:
                raise AssertionError(f"funke's map and plain PySpark's UDF differ: {f.checksum} != {p.checksum}")
            runs += [f, p]
        return runs
    finally:
        shutil.rmtree(root, ignore_errors=True)


def map_summary(runs: list[MapRun]) -> str:
    """One line for docs/benchmarks.md: both systems' rows/s (best round each) and the ratio."""
    best = {}
    for r in runs:
        if r.system not in best or r.rows_per_s > best[r.system].rows_per_s:
            best[r.system] = r
    f, p = best["funke map"], best["plain PySpark Arrow UDF"]
    return (
        f"{f.rows:,} rows through `enrich` (dict in, dict of 4 columns out), outputs equal: funke map {f.rows_per_s:,.0f} rows/s "
        f"({f.seconds:.1f} s), plain PySpark Arrow UDF {p.rows_per_s:,.0f} rows/s ({p.seconds:.1f} s), funke/plain "
        f"**{f.rows_per_s / p.rows_per_s:.2f}**"
    )
