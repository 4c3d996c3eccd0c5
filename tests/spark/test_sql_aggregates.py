"""Flink SQL's aggregations on Spark, streaming and bounded: a group aggregation over an updating result
(retract, then accumulate), SELECT DISTINCT, COUNT(DISTINCT), COUNT(col), FILTER and GROUP BY an
expression, in group aggregations and window TVF aggregations. Each changelog is checked as one (every
retraction takes away a row the result holds; ``-U`` is followed by its key's ``+U``) and what it
leaves equals the query computed here in plain Python over the same rows."""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from collections import Counter
from fractions import Fraction

import pytest

import funke as fk
from funke.table import StreamTableEnvironment
from tests.spark.helpers import frozen, materialize

pytestmark = pytest.mark.spark

# (k, v, second): two rows per micro-batch streaming; b's total passes a's and falls back, v=None counts
# for COUNT(*) alone, and a DISTINCT row (k, v) comes twice.
ROWS = [("a", 1, 1), ("b", 2, 2), ("a", 3, 3), ("c", 2, 4), ("a", None, 5), ("b", 5, 12), ("b", 2, 13), ("c", 2, 14)]


def totals() -> dict[str, int | None]:
    out: dict[str, list[int]] = {}
    for k, v, _ in ROWS:
        out.setdefault(k, [])
        if v is not None:
            out[k].append(v)
    return {k: sum(vs) if vs else None for k, vs in out.items()}


def run(env, bounded: bool, queries: dict[str, tuple[str, tuple[str, ...] | None]]) -> dict[str, Counter]:
    """The queries over ``ROWS`` (a view ``o``, and ``sums``: each key's SUM and COUNT of v) in one job:
    what each result's changelog leaves, checked as a changelog (or its rows, when insert-only)."""
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    rows = [{"k": k, "v": v, "ts": dt.datetime(2024, 1, 1, 0, 0, s)} for k, v, s in ROWS]
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view(
        "o", env.from_collection(rows, "k string, v bigint, ts timestamp", rows_per_batch=2, watermarks=wm)
    )
    t_env.create_temporary_view("sums", t_env.sql_query("SELECT k, SUM(v) AS s, COUNT(v) AS c FROM o GROUP BY k"))
    sinks = {}
    for name, (sql, _) in queries.items():
        table = t_env.sql_query(sql)
        sinks[name] = (table, (t_env.to_changelog_stream(table) if table.updating else t_env.to_data_stream(table)).collect())
    env.execute(bounded=bounded).wait(300)
    got = {}
    for name, (table, sink) in sinks.items():
        key = queries[name][1]
        got[name] = (
            materialize(sink.rows, table.columns, key)
            if table.updating
            else Counter(tuple(frozen(r[c]) for c in table.columns) for r in sink.rows)
        )
    return got


@pytest.mark.parametrize("bounded", [False, True])
def test_a_group_aggregation_and_select_distinct_over_an_updating_result(env, bounded):
    got = run(env, bounded, {
        # each key's SUM moves between the groups of its COUNT as rows come: retract, then accumulate
        "over": ("SELECT c, COUNT(*) AS n, MAX(s) AS top, SUM(s) FILTER (WHERE s > 2) AS big FROM sums GROUP BY c", ("c",)),
        "distinct_over": ("SELECT DISTINCT c FROM sums", ("c",)),
    })  # fmt: skip
    sums = totals()
    counts = {k: sum(1 for kk, v, _ in ROWS if kk == k and v is not None) for k in sums}
    by_c: dict[int, list] = {}
    for k in sums:
        by_c.setdefault(counts[k], []).append(sums[k])
    # (a: 4 over 2 values, b: 9 over 3, c: 4 over 2; on the way b's COUNT was 1, then 2)
    assert got["over"] == Counter((c, len(s), max(s), sum(x for x in s if x > 2) or None) for c, s in by_c.items())
    assert got["distinct_over"] == Counter({(c,): 1 for c in by_c}) == Counter({(2,): 1, (3,): 1})


@pytest.mark.parametrize("bounded", [False, True])
def test_distinct_count_of_a_column_filter_and_group_by_an_expression_in_group_and_window_aggregations(env, bounded):
    got = run(env, bounded, {
        "distinct": ("SELECT DISTINCT k, v FROM o", ("k", "v")),
        "constructs": (
            ("SELECT UPPER(k) AS kk, COUNT(v) AS c, COUNT(DISTINCT v) AS d, COUNT(*) FILTER (WHERE v > 1) AS f "
             "FROM o GROUP BY UPPER(k)"), ("kk",),
        ),
        "window": (
            ("SELECT window_start, MOD(v, 2) AS odd, COUNT(v) AS c, COUNT(DISTINCT k) AS d, SUM(v) FILTER (WHERE k <> 'a') AS f "
             "FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, MOD(v, 2)"), None,
        ),
    })  # fmt: skip
    assert got["distinct"] == Counter({(k, v): 1 for k, v, _ in ROWS})
    per_key: dict[str, list] = {}
    for k, v, _ in ROWS:
        per_key.setdefault(k.upper(), []).append(v)
    assert got["constructs"] == Counter(
        (k, sum(v is not None for v in vs), len({v for v in vs if v is not None}), sum(v is not None and v > 1 for v in vs))
        for k, vs in per_key.items()
    )
    windows: dict[tuple, list] = {}
    for k, v, s in ROWS:
        windows.setdefault((dt.datetime(2024, 1, 1, 0, 0, s - s % 10), None if v is None else v % 2), []).append((k, v))
    assert got["window"] == Counter(
        (
            start,
            odd,
            sum(v is not None for _, v in kv),
            len({k for k, _ in kv}),
            sum(v for k, v in kv if k != "a" and v is not None) or None,
        )
        for (start, odd), kv in windows.items()
    )


def _variance(values: list, kind: str) -> float | None:
    """VAR_POP/VAR_SAMP/STDDEV_POP/STDDEV_SAMP of the non-NULL ``values``, computed exactly (statistics)."""
    xs = [v for v in values if v is not None]
    if not xs or (kind.endswith("samp") and len(xs) == 1):
        return None
    fn = {"var_pop": statistics.pvariance, "var_samp": statistics.variance,
          "stddev_pop": statistics.pstdev, "stddev_samp": statistics.stdev}[kind]  # fmt: skip
    return float(fn([Fraction(x) for x in xs]) if kind.startswith("var") else fn(xs))


def _percentile(values: list, p: float) -> float | None:
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return None
    at = p * (len(xs) - 1)
    below = math.floor(at)
    return float(xs[below] + (at - below) * (xs[min(below + 1, len(xs) - 1)] - xs[below]))


def _frames(per_key: dict[str, list]) -> list[tuple]:
    """Each row's (key, time, value, the values of its frame: the row and the one before it)."""
    out = []
    for k, vs in per_key.items():
        seconds = [s for kk, _, s in ROWS if kk == k]
        out += [(k, dt.datetime(2024, 1, 1, 0, 0, s), vs[i], vs[max(0, i - 1) : i + 1]) for i, s in enumerate(seconds)]
    return out


def _truncated(value: float | None) -> int | None:
    return None if value is None else math.trunc(value)


def _close(got: Counter, want: list[tuple]) -> bool:
    """The rows of ``got`` (each once) equal ``want``, floats to 1e-12 relative."""
    def same(a, b):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-12))

    rows = sorted(got.elements(), key=repr)
    return len(rows) == len(want) and all(
        any(all(same(a, b) for a, b in zip(r, w, strict=True)) for w in want) for r in rows
    )


@pytest.mark.parametrize("bounded", [False, True])
def test_variances_first_last_value_listagg_and_array_agg_in_group_window_and_over_aggregations(env, bounded):
    """Flink's VAR_POP, VAR_SAMP, VARIANCE, STDDEV_POP, STDDEV_SAMP: of a BIGINT a BIGINT (truncated), of a
    DOUBLE a DOUBLE, NULL for one value (_SAMP) or none; over an updating input (each key's SUM retracted
    and accumulated again), per window and per OVER frame (values leaving the frame retracted).

    FIRST_VALUE, LAST_VALUE and LISTAGG skip NULLs, ARRAY_AGG keeps them (IGNORE NULLS: not, in OVER too), each in
    arrival order; LAG over the default frame (a key's rows come one per micro-batch here); over an updating input a retraction takes
    its value away; per window; per OVER frame. (One job for both: each job costs seconds to start.)"""
    got = run(env, bounded, {
        "group": (
            ("SELECT k, VAR_POP(v) AS vp, VAR_SAMP(v) AS vs, VARIANCE(v) AS va, STDDEV_POP(v) AS sp, STDDEV_SAMP(v) AS ss, "
            "STDDEV_POP(CAST(v AS DOUBLE)) AS spd, VAR_SAMP(DISTINCT v) AS vd FROM o GROUP BY k"), ("k",),
        ),
        "updating": ("SELECT VAR_POP(s) AS vp, VAR_SAMP(CAST(s AS DOUBLE)) AS vs FROM sums", ()),
        "window": (
            ("SELECT window_start, STDDEV_SAMP(CAST(v AS DOUBLE)) AS ss, VAR_POP(v) FILTER (WHERE k <> 'c') AS vp "
            "FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"), None,
        ),
        "over": (
            ("SELECT k, ts, VAR_POP(v) OVER w AS vp, STDDEV_SAMP(CAST(v AS DOUBLE)) OVER w AS ss FROM o "
            "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"), None,
        ),
        "values_group": (
            ("SELECT k, FIRST_VALUE(v) AS f, LAST_VALUE(v) AS l, LISTAGG(CAST(v AS STRING), '|') AS s, ARRAY_AGG(v) AS a, "
             "ARRAY_AGG(v IGNORE NULLS) AS i, LISTAGG(DISTINCT k) AS d FROM o GROUP BY k"), ("k",),
        ),
        "values_updating": ("SELECT ARRAY_AGG(s) AS a, LISTAGG(CAST(c AS STRING)) AS c FROM sums", ()),
        "values_window": (
            ("SELECT window_start, ARRAY_AGG(k) FILTER (WHERE v IS NOT NULL) AS a, LAST_VALUE(v) AS l "
             "FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"), None,
        ),
        "values_over": (
            ("SELECT k, ts, FIRST_VALUE(v) OVER w AS f, LISTAGG(CAST(v AS STRING)) OVER w AS s, ARRAY_AGG(v IGNORE NULLS) OVER w AS i FROM o "
             "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"), None,
        ),
        "lag": ("SELECT k, ts, LAG(v) OVER w AS l, LAG(v, 2, -1) OVER w AS l2 FROM o WINDOW w AS (PARTITION BY k ORDER BY ts)", None),
        "percentile_group": ("SELECT k, PERCENTILE(v, 0.5) AS m, PERCENTILE(v, ARRAY[0.25, 0.9]) AS q FROM o GROUP BY k", ("k",)),
        "percentile_updating": ("SELECT PERCENTILE(s, 0.3) AS m FROM sums", ()),
        "percentile_window": (
            ("SELECT window_start, PERCENTILE(v, 0.75) AS p FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
             "GROUP BY window_start, window_end"), None,
        ),
        "percentile_over": ("SELECT k, ts, PERCENTILE(v, 0.5) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS p FROM o", None),
    })  # fmt: skip
    per_key: dict[str, list] = {}
    for k, v, _ in ROWS:
        per_key.setdefault(k, []).append(v)
    want = []
    for k, vs in per_key.items():
        ints = [_truncated(_variance(vs, kind)) for kind in ("var_pop", "var_samp", "var_samp", "stddev_pop", "stddev_samp")]
        want.append((k, *ints, _variance(vs, "stddev_pop"), _truncated(_variance(list(set(vs)), "var_samp"))))
    # (b: 2, 5, 2: VAR_POP 2, VAR_SAMP 3, STDDEV_POP sqrt(2) -> 1; c: 2, 2: 0; a: 1, 3, NULL: VAR_POP 1, VAR_SAMP 2)
    assert [w[1:6] for w in sorted(want)] == [(1, 2, 2, 1, 1), (2, 3, 3, 1, 1), (0, 0, 0, 0, 0)]
    assert _close(got["group"], want)
    sums = list(totals().values())
    assert _close(got["updating"], [(_truncated(_variance(sums, "var_pop")), _variance(sums, "var_samp"))])
    windows: dict[dt.datetime, list] = {}
    for k, v, s in ROWS:
        windows.setdefault(dt.datetime(2024, 1, 1, 0, 0, s - s % 10), []).append((k, v))
    assert _close(got["window"], [
        (start, _variance([v for _, v in kv], "stddev_samp"), _truncated(_variance([v for k, v in kv if k != "c"], "var_pop")))
        for start, kv in windows.items()
    ])  # fmt: skip
    over = []
    for k, vs in per_key.items():
        seconds = [s for kk, _, s in ROWS if kk == k]
        for i, s in enumerate(seconds):
            frame = vs[max(0, i - 1) : i + 1]
            over.append((k, dt.datetime(2024, 1, 1, 0, 0, s), _truncated(_variance(frame, "var_pop")), _variance(frame, "stddev_samp")))
    assert _close(got["over"], over)

    def listed(vs, sep=","):
        present = [str(v) for v in vs if v is not None]
        return sep.join(present) if present else None

    want = []
    for k, vs in per_key.items():
        present = [v for v in vs if v is not None]
        want.append((k, present[0], present[-1], listed(vs, "|"), tuple(vs), tuple(present), k))
    # (a: 1, 3, NULL: LAST_VALUE 3, ARRAY_AGG keeps the NULL; b: 2, 5, 2)
    assert ("a", 1, 3, "1|3", (1, 3, None), (1, 3), "a") in want
    assert sorted(got["values_group"].elements()) == sorted(want)
    # (the updating input's rows of one micro-batch come in Spark's order, not arrival order: compared as multisets)
    [(a, c)] = list(got["values_updating"].elements())
    assert sorted(a) == sorted(totals().values()) and sorted(c.split(",")) == ["2", "2", "3"]
    assert sorted(got["values_window"].elements()) == sorted(
        (start, tuple(k for k, v in kv if v is not None), [v for _, v in kv if v is not None][-1]) for start, kv in windows.items()
    )
    over_values = []
    for k, vs in per_key.items():
        seconds = [s for kk, _, s in ROWS if kk == k]
        for i, s in enumerate(seconds):
            frame = vs[max(0, i - 1) : i + 1]
            present = [v for v in frame if v is not None]
            over_values.append((k, dt.datetime(2024, 1, 1, 0, 0, s), present[0] if present else None, listed(frame), tuple(present) or None))
    assert sorted(got["values_over"].elements(), key=repr) == sorted(over_values, key=repr)
    lags = []  # (LAG: the value one row before in the key's time order; two before, or -1 while there is none)
    for k, vs in per_key.items():
        seconds = [s for kk, _, s in ROWS if kk == k]
        lags += [(k, dt.datetime(2024, 1, 1, 0, 0, s), vs[i - 1] if i else None, vs[i - 2] if i > 1 else -1) for i, s in enumerate(seconds)]
    assert ("a", dt.datetime(2024, 1, 1, 0, 0, 5), 3, 1) in lags
    assert sorted(got["lag"].elements(), key=repr) == sorted(lags, key=repr)

    def rounded(rows):
        return sorted((tuple(tuple(round(x, 9) for x in v) if isinstance(v, tuple) else round(v, 9) if isinstance(v, float) else v for v in r) for r in rows), key=repr)

    # (PERCENTILE: the values in order, interpolated between the two around p * (n - 1), NULLs left out)
    assert rounded(got["percentile_group"].elements()) == rounded(
        (k, _percentile(vs, 0.5), (_percentile(vs, 0.25), _percentile(vs, 0.9))) for k, vs in per_key.items()
    )
    assert rounded(got["percentile_updating"].elements()) == rounded([(_percentile(list(totals().values()), 0.3),)])
    assert rounded(got["percentile_window"].elements()) == rounded((start, _percentile([v for _, v in kv], 0.75)) for start, kv in windows.items())
    assert rounded(got["percentile_over"].elements()) == rounded((k, t, _percentile(frame, 0.5)) for k, t, _, frame in _frames(per_key))


@pytest.mark.parametrize("bounded", [False, True])
def test_grouping_sets_rollup_and_cube_in_group_and_window_aggregations(env, bounded):
    got = run(env, bounded, {
        "rollup": ("SELECT k, v, COUNT(*) AS n, SUM(v) AS s, GROUPING_ID(k, v) AS g FROM o GROUP BY ROLLUP (k, v)", None),
        # over an updating input (each key's SUM and COUNT move as rows come), a grouping set twice
        "sets": ("SELECT c, COUNT(*) AS n, SUM(s) AS t, GROUP_ID() AS gid FROM sums GROUP BY GROUPING SETS ((c), (c), ())", None),
        "having": ("SELECT UPPER(k) AS kk, SUM(v) AS s, GROUPING(UPPER(k)) AS g FROM o GROUP BY CUBE (UPPER(k)) HAVING SUM(v) > 5", None),
        "window": (
            ("SELECT window_start, k, COUNT(*) AS n, GROUPING(k) AS g FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
             "GROUP BY window_start, window_end, CUBE (k)"), None,
        ),
    })  # fmt: skip

    def grouped(rows: list[tuple], by) -> dict[tuple, list[tuple]]:
        out: dict[tuple, list[tuple]] = {}
        for r in rows:
            out.setdefault(by(r), []).append(r)
        return out

    def total(vs: list) -> int | None:
        return sum(v for v in vs if v is not None) if any(v is not None for v in vs) else None

    rollup = Counter()
    for by, g in ((lambda r: (r[0], r[1]), 0), (lambda r: (r[0], None), 1), (lambda r: (None, None), 3)):
        for key, rs in grouped(ROWS, by).items():
            rollup[(*key, len(rs), total([r[1] for r in rs]), g)] += 1
    assert got["rollup"] == rollup
    sums = totals()
    counts = {k: sum(1 for kk, v, _ in ROWS if kk == k and v is not None) for k in sums}
    by_c = grouped([(counts[k], sums[k]) for k in sums], lambda r: r[0])
    per_c = Counter((c, len(rs), total([s for _, s in rs]), gid) for c, rs in by_c.items() for gid in (0, 1))
    assert got["sets"] == per_c + Counter({(None, len(sums), total(list(sums.values())), 0): 1})
    having = Counter((k.upper(), total([r[1] for r in rs]), 0) for k, rs in grouped(ROWS, lambda r: r[0]).items())
    having[(None, total([r[1] for r in ROWS]), 1)] += 1
    assert got["having"] == Counter({row: n for row, n in having.items() if row[1] is not None and row[1] > 5})
    window = Counter()
    for by, g in ((lambda r: (r[2] - r[2] % 10, r[0]), 0), (lambda r: (r[2] - r[2] % 10, None), 1)):
        for (start, k), rs in grouped(ROWS, by).items():
            window[(dt.datetime(2024, 1, 1, 0, 0, start), k, len(rs), g)] += 1
    assert got["window"] == window


@pytest.mark.parametrize("bounded", [False, True])
def test_json_arrayagg_and_json_objectagg_in_group_updating_and_window_aggregations(env, bounded):
    """Flink's JSON_ARRAYAGG (ABSENT ON NULL by default, the values' JSON in arrival order) and JSON_OBJECTAGG
    (NULL ON NULL by default, members in key order: "12" before "2"), as PyFlink 2.3 wrote them; a JSON_OBJECT
    value inserted as JSON; over an updating input a retraction takes the value (the key) away; per window."""
    key = "CAST(EXTRACT(SECOND FROM ts) AS STRING) || '\"é'"  # (a key of any expression, || too)
    got = run(env, bounded, {
        "json_group": (
            (f"SELECT k, JSON_ARRAYAGG(v) AS a, JSON_ARRAYAGG(v NULL ON NULL) AS n, JSON_ARRAYAGG(JSON_OBJECT('v' VALUE v)) AS j, "
             f"JSON_OBJECTAGG(KEY {key} VALUE v) AS o FROM o GROUP BY k"), ("k",),
        ),
        "json_updating": ("SELECT JSON_ARRAYAGG(s) AS a, JSON_OBJECTAGG(KEY k VALUE s) AS o FROM sums", ()),
        "json_window": (
            ("SELECT window_start, JSON_ARRAYAGG(k) AS a, JSON_OBJECTAGG(CAST(EXTRACT(SECOND FROM ts) AS STRING) VALUE v ABSENT ON NULL) AS o "
             "FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"), None,
        ),
    })  # fmt: skip

    def array(values) -> str:
        return "[" + ",".join("null" if v is None else json.dumps(v) for v in values) + "]"

    def obj(members: dict) -> str:
        ordered = sorted(members, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + ("null" if members[k] is None else json.dumps(members[k])) for k in ordered) + "}"

    per_key: dict[str, list] = {}
    for k, v, s in ROWS:
        per_key.setdefault(k, []).append((v, s))
    want = Counter(
        (k, array([v for v, _ in vs if v is not None]), array([v for v, _ in vs]), array([{"v": v} for v, _ in vs]).replace(" ", ""),
         obj({f'{s}"é': v for v, s in vs}))
        for k, vs in per_key.items()
    )  # fmt: skip
    assert ("a", "[1,3]", "[1,3,null]", '[{"v":1},{"v":3},{"v":null}]', '{"1\\"é":1,"3\\"é":3,"5\\"é":null}') in want
    assert got["json_group"] == want
    # (the updating input's rows of one micro-batch come in Spark's order: the array compared as a multiset)
    [(a, o)] = list(got["json_updating"].elements())
    assert sorted(json.loads(a)) == sorted(totals().values()) and o == obj(totals()) == '{"a":4,"b":9,"c":4}'
    windows: dict[dt.datetime, list] = {}
    for k, v, s in ROWS:
        windows.setdefault(dt.datetime(2024, 1, 1, 0, 0, s - s % 10), []).append((k, v, s))
    assert got["json_window"] == Counter(
        (start, array([k for k, _, _ in kvs]), obj({str(s): v for _, v, s in kvs if v is not None})) for start, kvs in windows.items()
    )
    assert (dt.datetime(2024, 1, 1, 0, 0, 10), '["b","b","c"]', '{"12":5,"13":2,"14":2}') in got["json_window"]


@pytest.mark.parametrize("bounded", [False, True])
def test_collect_in_group_updating_and_window_aggregations(env, bounded):
    """Flink's COLLECT: the MULTISET of the non-NULL values (funke's dict of each value to its count, its values in
    ascending order), ``{}`` over only NULLs; DISTINCT and FILTER; over an updating input a retraction takes one
    count away; per window; per OVER frame (as PyFlink 2.3 computes them: ``{a=2, b=1}``)."""
    got = run(env, bounded, {
        "collect_group": (
            "SELECT k, COLLECT(v) AS c, COLLECT(DISTINCT v) AS d, COLLECT(v) FILTER (WHERE v > 3) AS f FROM o GROUP BY k", ("k",),
        ),
        "collect_updating": ("SELECT COLLECT(s) AS s, COLLECT(c) AS c FROM sums", ()),
        "collect_window": (
            ("SELECT window_start, COLLECT(k) AS k, COLLECT(v) AS v FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
             "GROUP BY window_start, window_end"), None,
        ),
        "collect_over": (
            "SELECT k, ts, COLLECT(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS c FROM o", None,
        ),
    })  # fmt: skip

    def bag(values) -> frozenset:
        return frozenset(Counter(v for v in values if v is not None).items())

    per_key: dict[str, list] = {}
    for k, v, _ in ROWS:
        per_key.setdefault(k, []).append(v)
    want = Counter((k, bag(vs), bag(set(vs)), bag(v for v in vs if v is not None and v > 3)) for k, vs in per_key.items())
    assert ("a", frozenset({(1, 1), (3, 1)}), frozenset({(1, 1), (3, 1)}), frozenset()) in want
    assert ("c", frozenset({(2, 2)}), frozenset({(2, 1)}), frozenset()) in want
    assert got["collect_group"] == want
    non_null = {k: sum(v is not None for v in vs) for k, vs in per_key.items()}
    assert got["collect_updating"] == Counter([(bag(totals().values()), bag(non_null.values()))])
    assert got["collect_updating"] == Counter([(frozenset({(4, 2), (9, 1)}), frozenset({(2, 2), (3, 1)}))])
    windows: dict[dt.datetime, list] = {}
    for k, v, s in ROWS:
        windows.setdefault(dt.datetime(2024, 1, 1, 0, 0, s - s % 10), []).append((k, v))
    assert got["collect_window"] == Counter((start, bag(k for k, _ in kvs), bag(v for _, v in kvs)) for start, kvs in windows.items())
    assert (dt.datetime(2024, 1, 1, 0, 0, 10), frozenset({("b", 2), ("c", 1)}), frozenset({(5, 1), (2, 2)})) in got["collect_window"]
    frames = Counter()
    for k, rows in ((k, [(v, s) for kk, v, s in ROWS if kk == k]) for k in per_key):
        for i, (_, s) in enumerate(rows):
            frames[(k, dt.datetime(2024, 1, 1, 0, 0, s), bag(v for v, _ in rows[max(0, i - 1) : i + 1]))] += 1
    assert ("a", dt.datetime(2024, 1, 1, 0, 0, 5), frozenset({(3, 1)})) in frames
    assert got["collect_over"] == frames
