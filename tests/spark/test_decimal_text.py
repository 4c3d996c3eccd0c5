"""A DECIMAL written by Flink's json and csv formats is Java's ``BigDecimal.stripTrailingZeros().toString()`` (Jackson's
number node): ``10.00`` is ``1E+1``, ``4.50`` is ``4.5``. funke writes it so on the JVM (``record_text.decimal_text``:
the file sinks, the Kafka sink through Spark's connector) and in Python (``kafka_sink.decimal_texts``).

The expected lines are what PyFlink 2.3 wrote for the same rows (its filesystem connector, parallelism 1)."""

from __future__ import annotations

import random
from decimal import Context, Decimal

import pytest

from funke.connectors.kafka_sink import decimal_texts
from funke.pyflink.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.spark

ROWS = (
    "(CAST(10.00 AS DECIMAL(10, 2)), CAST(100 AS DECIMAL(38, 0)), CAST(0.0000001 AS DECIMAL(12, 8))),"
    "(CAST(4.50 AS DECIMAL(10, 2)), CAST(0 AS DECIMAL(38, 0)), CAST(0.000001 AS DECIMAL(12, 8))),"
    "(CAST(-0.50 AS DECIMAL(10, 2)), CAST(-12300 AS DECIMAL(38, 0)), CAST(1234.5 AS DECIMAL(12, 8))),"
    "(CAST(0.00 AS DECIMAL(10, 2)), CAST(7 AS DECIMAL(38, 0)), CAST(0 AS DECIMAL(12, 8))),"
    "(CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS DECIMAL(38, 0)), CAST(NULL AS DECIMAL(12, 8)))"
)
FLINK_WROTE = {
    "csv": ["1E+1,1E+2,1E-7", "4.5,0,0.000001", "-0.5,-1.23E+4,1234.5", "0,7,0", ",,"],
    "json": [
        '{"m":1E+1,"z":1E+2,"s":1E-7}', '{"m":4.5,"z":0,"s":0.000001}', '{"m":-0.5,"z":-1.23E+4,"s":1234.5}',
        '{"m":0,"z":7,"s":0}', '{"m":null,"z":null,"s":null}',
    ],
}  # fmt: skip


def test_a_decimal_is_written_as_flink_s_json_and_csv_formats_write_it(spark, tmp_path):
    """funke wrote ``10.00``, ``100``, ``0.00000010`` (csv) and Spark's JSON ``1.0E-7``, ``0E-8``."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    for fmt, wrote in FLINK_WROTE.items():
        path = tmp_path / fmt
        t_env.execute_sql(
            f"CREATE TABLE out_{fmt} (m DECIMAL(10, 2), z DECIMAL(38, 0), s DECIMAL(12, 8)) "
            f"WITH ('connector' = 'filesystem', 'format' = '{fmt}', 'path' = '{path}')"
        )
        t_env.execute_sql(f"INSERT INTO out_{fmt} VALUES {ROWS}").wait()
        lines = [line for f in path.glob("part-*") for line in f.read_text().splitlines()]
        assert sorted(lines) == sorted(wrote), fmt


def test_the_jvm_writes_each_decimal_as_the_python_writer_and_java_do(spark):
    """About 2,000 values of six DECIMAL types (whole numbers with trailing zeros, tiny fractions, zero, negatives, the
    38 digits of the widest), each written by ``decimal_text`` on the JVM as ``Decimal.normalize()`` prints it, whose
    rules of scientific notation are Java's ``BigDecimal.toString``'s."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DecimalType, StructField, StructType

    from funke.spark.record_text import decimal_text

    rng, exact = random.Random(7), Context(prec=100)  # (Python's default context rounds to 28 digits)
    for precision, scale in ((10, 2), (38, 0), (12, 8), (38, 18), (5, 5), (20, 10)):
        values: list[Decimal | None] = [Decimal(0).scaleb(-scale, exact), Decimal(10**precision - 1).scaleb(-scale, exact), None]
        for _ in range(330):
            digits = rng.randint(1, precision)
            n = rng.randint(0, 10**digits - 1) * (10 ** rng.randint(0, precision - digits) if rng.random() < 0.3 else 1)
            values.append(Decimal(n if rng.random() < 0.5 else -n).scaleb(-scale, exact))
        df = spark.createDataFrame([(v,) for v in values], StructType([StructField("m", DecimalType(precision, scale))]))
        got = [r[0] for r in df.select(decimal_text(F.col("m"))).collect()]
        want = [None if v is None else str(v.normalize(exact)) for v in values]
        assert got == want, (precision, scale)
        assert got == decimal_texts(df.toArrow().column(0)).to_pylist()


def test_a_json_record_writes_its_decimals_as_bare_numbers_whatever_their_keys(spark):
    """``json_record`` marks each decimal's text and takes the quotes off after Spark's to_json: keys with a regex's
    and a replacement's special characters, a NULL decimal (written, or left out with ignore_null_fields), and a text
    value that looks like a decimal's key stay as they are."""
    import json

    from pyspark.sql.types import DecimalType, StringType, StructField, StructType

    from funke.spark.record_text import json_record

    names = ['a$1 "b"\\c', "p.(x)*", "s"]
    schema = StructType([StructField(names[0], DecimalType(10, 2)), StructField(names[1], DecimalType(5, 1)), StructField(names[2], StringType())])
    df = spark.createDataFrame([(Decimal("10.00"), None, '"p.(x)*":"7"'), (Decimal("-0.50"), Decimal("3.0"), None)], schema)
    written = [r[0] for r in df.select(json_record(df)).collect()]
    assert [json.loads(w, parse_float=Decimal, parse_int=Decimal) for w in written] == [
        {names[0]: Decimal("1E+1"), names[1]: None, "s": '"p.(x)*":"7"'},
        {names[0]: Decimal("-0.5"), names[1]: Decimal(3), "s": None},
    ]
    assert ':1E+1,' in written[0] and ':-0.5,' in written[1] and ':3,' in written[1]  # (bare numbers, Java's text)
    kept = [r[0] for r in df.select(json_record(df, ignore_null_fields=True)).collect()]
    assert [sorted(json.loads(k)) for k in kept] == [sorted([names[0], "s"]), sorted(names[:2])]
