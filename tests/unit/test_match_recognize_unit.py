"""MATCH_RECOGNIZE without Spark: parsing, the translation to a CEP Pattern (Flink's own), the examples of
Flink's documentation through the automaton (the same NFA as the Pattern API: same matches as the pattern
built by hand), and every refusal. Expected rows are derived by hand from Flink's rules."""

from __future__ import annotations

import datetime as dt
import re

import pytest

import funke as fk
from funke.cep import NFA, AfterMatchSkipStrategy, Pattern, SkipStrategyError, iterative
from funke.errors import PlanError
from funke.semantics.cep_operator import CepOperator
from funke.table import StreamTableEnvironment
from funke.table.match_recognize import Variable, parse_pattern

T0 = dt.datetime(2018, 9, 17, 10)
SCHEMA = "symbol string, rowtime timestamp, price bigint, tax int"
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("rowtime")


def at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def t_env_with(prices: list[int], *, watermarks=WM):
    env = fk.StreamEnvironment(app="mr-unit")
    rows = [{"symbol": "XYZ", "rowtime": at(i + 1), "price": p, "tax": 1} for i, p in enumerate(prices)]
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("Ticker", env.from_collection(rows, SCHEMA, watermarks=watermarks))
    return t_env, rows


def operator_of(table) -> CepOperator:
    node = table._stream.node
    while not isinstance(getattr(node, "function", None), CepOperator):
        node = node.input
    return node.function


def run_nfa(pattern: Pattern, rows: list[dict]) -> list[dict]:
    """The pattern's matches over ``rows`` (one key, in order), through the automaton alone."""
    nfa = NFA.compile(pattern)
    state = nfa.initial_state()
    return [m for i, r in enumerate(rows) for m in nfa.process(state, r, (i + 1) * 1000).matches]


def query_rows(t_env, rows, sql) -> list[dict]:
    table = t_env.sql_query(sql)
    op = operator_of(table)
    return [out for m in run_nfa(op.pattern, rows) for out in op.function.process_match(m, None)]


# -- PATTERN ---------------------------------------------------------------------------------------------------


def test_quantifiers_parse_to_flink_ranges_greedy_unless_reluctant():
    got = parse_pattern("A B* C+ D? E{2} F{2,} G{1,3} H{,4} I+? J*? K{2,5}? `L`")
    assert got == [
        Variable("A"), Variable("B", 0, None), Variable("C", 1, None), Variable("D", 0, 1), Variable("E", 2, 2),
        Variable("F", 2, None), Variable("G", 1, 3), Variable("H", 0, 4), Variable("I", 1, None, False),
        Variable("J", 0, None, False), Variable("K", 2, 5, False), Variable("L"),
    ]  # fmt: skip


def test_the_pattern_is_flinks_translation_strictly_contiguous_greedy_where_flink_makes_it_greedy():
    t_env, _ = t_env_with([1])
    table = t_env.sql_query(
        "SELECT * FROM Ticker MATCH_RECOGNIZE (ORDER BY rowtime MEASURES A.price AS p "
        "AFTER MATCH SKIP TO NEXT ROW PATTERN (A B* C{2} D{2,3}? E) WITHIN INTERVAL '10' SECOND "
        "DEFINE A AS price > 1, E AS E.price < A.price) AS T"
    )
    pattern = operator_of(table).pattern
    by_hand = (
        Pattern.begin("A", AfterMatchSkipStrategy.skip_to_next()).where(lambda e: e)
        .next("B").one_or_more().optional().consecutive().greedy()
        .next("C").times(2, 2).consecutive()
        .next("D").times(2, 3).consecutive()
        .next("E").where(lambda e: e).within(10_000)
    )  # fmt: skip
    assert "where(price > 1)" in repr(pattern) and "where(E.price < A.price)" in repr(pattern)
    assert re.sub(r"where\([^)]*\)", "where(...)", repr(pattern)) == re.sub(r"where\([^)]*\)", "where(...)", repr(by_hand))
    assert table.columns == ("p",)


# -- Flink's documentation, through the automaton ---------------------------------------------------------------

SKIP_SQL = """SELECT * FROM Ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY rowtime
    MEASURES SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime
    ONE ROW PER MATCH
    AFTER MATCH {skip}
    PATTERN (A+ C)
    DEFINE A AS SUM(A.price) < 30
)"""
SKIP_PRICES = [7, 9, 10, 5, 10, 7, 14]  # 10:00:01 to 10:00:07


def by_hand_skip_pattern(skip: AfterMatchSkipStrategy) -> Pattern:
    @iterative
    def small_sum(e, ctx):
        return sum(a["price"] for a in ctx.get_events_for_pattern("A")) + e["price"] < 30

    return Pattern.begin("A", skip).where(small_sum).one_or_more().consecutive().greedy().next("C")


# Flink's "After Match Strategy" section. A+ (greedy) takes rows while their sum stays below 30, C any row:
# from 10:00:01, A = 7 + 9 + 10 = 26 and C = 5 (10:00:04). Then per strategy, where the next match starts:
#   PAST LAST ROW: at 10:00:05 (A = 10 + 7 = 17, C = 14);
#   TO NEXT ROW: every row: 9 + 10 + 5 = 24 (C = 10 at :05), 10 + 5 + 10 = 25 (C at :06), 5 + 10 + 7 = 22
#     (C at :07), 17 (:05 to :07); from :06 the pattern needs a row after 14;
#   TO LAST A: at the match's last A row (:03: 25, whose last A is :05: 17).
SKIPS = {
    "SKIP PAST LAST ROW": (AfterMatchSkipStrategy.skip_past_last_event(), [(26, 1, 4), (17, 5, 7)]),
    "SKIP TO NEXT ROW": (AfterMatchSkipStrategy.skip_to_next(), [(26, 1, 4), (24, 2, 5), (25, 3, 6), (22, 4, 7), (17, 5, 7)]),
    "SKIP TO LAST A": (AfterMatchSkipStrategy.skip_to_last("A").throw_exception_on_miss(), [(26, 1, 4), (25, 3, 6), (17, 5, 7)]),
}


@pytest.mark.parametrize("skip", sorted(SKIPS))
def test_flinks_after_match_skip_examples(skip):
    t_env, rows = t_env_with(SKIP_PRICES)
    got = query_rows(t_env, rows, SKIP_SQL.format(skip=skip))
    strategy, expected = SKIPS[skip]
    assert [(r["sumPrice"], r["startTime"], r["endTime"]) for r in got] == [(s, at(a), at(b)) for s, a, b in expected]
    assert all(r["symbol"] == "XYZ" and type(r["sumPrice"]) is int for r in got)  # (SUM of BIGINT is a BIGINT)
    by_hand = run_nfa(by_hand_skip_pattern(strategy), rows)
    assert [(sum(a["price"] for a in m["A"]), m["A"][0]["rowtime"], m["C"][0]["rowtime"]) for m in by_hand] == [
        (s, at(a), at(b)) for s, a, b in expected
    ]


def test_skip_to_first_of_the_first_variable_fails_as_in_flink():
    """SKIP TO FIRST A with A the match's first row would start the next match where this one started: Flink
    throws (throwExceptionOnMiss), and so does funke's automaton."""
    t_env, rows = t_env_with(SKIP_PRICES)
    with pytest.raises(SkipStrategyError):
        query_rows(t_env, rows, SKIP_SQL.format(skip="SKIP TO FIRST A"))


def test_measures_first_last_prev_aggregates_match_rowtime_and_case_with_null_semantics():
    t_env, rows = t_env_with([10, 12, 11, 20])
    got = query_rows(t_env, rows, """SELECT * FROM Ticker MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY rowtime
        MEASURES FIRST(B.price) AS b0, FIRST(B.price, 1) AS b1, LAST(B.price, 5) AS none5, B.price AS lastB,
            PREV(C.price) AS beforeC, PREV(A.price) AS beforeA, COUNT(B.price) AS nb, AVG(B.price) AS avgB,
            MIN(price) AS lo, MAX(price) AS hi, MATCH_ROWTIME() AS mt, C.price - A.price AS rise,
            CASE WHEN C.price > 15 THEN 'up' ELSE 'flat' END AS how, COUNT(*) AS n
        PATTERN (A B{2} C)
        DEFINE B AS B.price > PREV(price) OR B.price < LAST(A.price, 0) + 5, C AS C.price > AVG(B.price) + CAST(NULL AS INT) OR C.price > 15
    ) AS T""")
    # A = 10, B = 12, 11 (12 > 10; 11 < 10 + 5), C = 20: AVG(B) + NULL is NULL, NULL OR TRUE is TRUE.
    assert got == [{
        "symbol": "XYZ", "b0": 12, "b1": 11, "none5": None, "lastB": 11, "beforeC": 11, "beforeA": None, "nb": 2,
        "avgB": 11, "lo": 10, "hi": 20, "mt": at(4), "rise": 10, "how": "up", "n": 4,
    }]  # (AVG of BIGINT is a BIGINT, truncated: 11.5 -> 11)  # fmt: skip


def test_a_null_condition_is_false():
    t_env, rows = t_env_with([5, 6])
    sql = "SELECT * FROM Ticker MATCH_RECOGNIZE (ORDER BY rowtime MEASURES B.price AS p PATTERN (A B) DEFINE B AS B.price > {}) AS T"
    assert query_rows(t_env, rows, sql.format("LAST(A.price, 1)")) == []  # (no second A: NULL)
    assert query_rows(t_env, rows, sql.format("LAST(A.price)")) == [{"p": 6}]


def test_the_output_schema_is_the_partition_columns_then_the_measures_typed():
    t_env, _ = t_env_with([1])
    table = t_env.sql_query(
        "SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime "
        "MEASURES A.price AS p, AVG(A.tax) AS t, MATCH_ROWTIME() AS mt, A.price * 1.5 AS d, A.price > 1 AS b "
        "PATTERN (A)) AS T"
    )
    assert str(table._stream.schema) == "symbol string, p bigint, t int, mt timestamp, d double, b boolean"


def test_a_table_declared_with_a_watermark_and_the_query_over_the_matches():
    t_env = StreamTableEnvironment.create(fk.StreamEnvironment(app="mr-ddl"))
    t_env.execute_sql(
        "CREATE TABLE ticks (symbol STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '10')"
    )
    table = t_env.sql_query(
        "SELECT T.symbol, T.top FROM ticks MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts MEASURES MAX(A.price) AS top "
        "PATTERN (A+? B) DEFINE B AS B.price < LAST(A.price)) AS T WHERE T.top > 5"
    )
    assert table.columns == ("symbol", "top")


# -- refused ----------------------------------------------------------------------------------------------------

BASE = "SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY {order} MEASURES {measures} {rows} {after} PATTERN ({pattern}) {within} DEFINE {define}) AS T"


def sql(**parts: str) -> str:
    defaults = {"order": "rowtime", "measures": "A.price AS p", "rows": "", "after": "", "pattern": "A B", "within": "", "define": "A AS price > 1"}
    return BASE.format(**{**defaults, **parts})


REFUSED = [
    (sql(pattern="A | B"), "an alternation (|)"),
    (sql(pattern="A (B C)+"), "a group ( ... )"),
    (sql(pattern="PERMUTE (A, B)"), "PERMUTE"),
    (sql(pattern="A {- B -} C"), "an exclusion {- ... -}"),
    (sql(pattern="^ A B"), "the anchor ^"),
    (sql(pattern="A A"), "names A twice"),
    (sql(pattern="A B?? C"), "reluctant optional variable B??"),
    (sql(pattern="A B+"), "the greedy quantifier on B, the last variable"),
    (sql(pattern="A B{2,}"), "the greedy quantifier on B, the last variable"),
    (sql(pattern="A* B?"), "can match no rows at all"),
    (sql(pattern="A B+ C?"), "an optional stage cannot follow a greedy one"),
    (sql(pattern="A{0}"), "needs 0 <= n <= m and m >= 1"),
    (sql(rows="ALL ROWS PER MATCH"), "ALL ROWS PER MATCH in MATCH_RECOGNIZE"),
    (sql(order="rowtime DESC"), "must be ascending"),
    (sql(order="price"), "must be the view's time attribute, rowtime"),
    (sql(order="rowtime, price"), "ORDER BY more columns than the time attribute"),
    (sql(order="PROCTIME()"), "ORDER BY a processing-time attribute"),
    (sql(after="AFTER MATCH SKIP TO LAST X"), "names no pattern variable"),
    (sql(within="WITHIN INTERVAL '1' YEAR"), "WITHIN INTERVAL '1' YEAR"),
    (sql(define="X AS price > 1"), "DEFINE X at"),
    (sql(define="A AS NEXT(price) > 1"), "NEXT"),
    (sql(define="A AS CLASSIFIER() = 'A'"), "CLASSIFIER()"),
    (sql(define="A AS MATCH_ROWTIME() IS NULL"), "MATCH_ROWTIME() in DEFINE"),
    (sql(define="A AS UPPER(symbol) = 'X'"), "the expression UPPER(symbol)"),
    (sql(define="A AS A.price > B.price + A.tax AND SUM(A.price + B.price) > 1"), "reads rows of several variables"),
    (sql(define="A AS X.price > 1"), "X is no pattern variable"),
    (sql(define="A AS A.nothing > 1"), "nothing"),
    (sql(define="A AS LAST(A.price, A.tax) > 1"), "the offset must be a non-negative integer literal"),
    (sql(measures="A.price, B.price AS q"), "needs a name"),
    (sql(measures="A.price AS symbol"), "two columns named symbol"),
    (sql(measures="MATCH_PROCTIME() AS t"), "MATCH_PROCTIME()"),
    (sql(measures="UPPER(A.symbol) AS u"), "the expression UPPER(A.symbol)"),
]  # fmt: skip


@pytest.mark.parametrize(("query", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_what_the_automaton_or_funke_cannot_run_is_refused_naming_it(query, message):
    t_env, _ = t_env_with([1])
    with pytest.raises(PlanError, match=None) as e:
        t_env.sql_query(query)
    assert message in str(e.value)


def test_a_view_without_event_time_is_refused():
    env = fk.StreamEnvironment(app="mr-unit")
    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_view("Ticker", env.from_collection([], SCHEMA))
    with pytest.raises(PlanError, match="needs a view with event time"):
        t_env.sql_query(sql())


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("TRUE AND TRUE", True), ("TRUE AND NULL", None), ("FALSE AND NULL", False), ("NULL AND NULL", None),
        ("FALSE OR FALSE", False), ("FALSE OR NULL", None), ("TRUE OR NULL", True), ("NOT NULL", None), ("NOT FALSE", True),
        ("NULL = NULL", None), ("1 < 2", True), ("NULL IS NULL", True), ("-7 / 2", -3), ("7.0 / 2", 3.5), ("7 % 3", 1),
        ("2 IN (1, NULL)", None), ("1 IN (1, NULL)", True), ("2 BETWEEN 1 AND 3", True), ("COALESCE(NULL, 4)", 4),
        ("CASE WHEN NULL THEN 1 ELSE 2 END", 2), ("CASE 1 WHEN 1 THEN 'a' END", "a"), ("CAST(2.7 AS INT)", 2),
    ],
)  # fmt: skip
def test_sql_three_valued_logic_and_flink_arithmetic(expression, expected):
    import sqlglot

    from funke.dialect.evaluate import ExprCompiler, MatchScope
    from funke.plan.types import Schema

    fn = ExprCompiler(Schema.of("price double"), ("A",), None, define=False).compile(sqlglot.parse_one(expression))
    assert fn(MatchScope(("A",), {}), None) == expected if expected is not None else fn(MatchScope(("A",), {}), None) is None


def test_sum_and_avg_of_a_decimal_are_flinks_decimals_in_define_and_measures():
    from decimal import Decimal

    env = fk.StreamEnvironment(app="mr-decimal")
    prices = ["0.01", "0.02", "0.02", "5.00", "99999999.99", "99999999.99"]
    rows = [{"symbol": "XYZ", "rowtime": at(i + 1), "price": Decimal(p)} for i, p in enumerate(prices)]
    t_env = StreamTableEnvironment.create(env)
    schema = "symbol string, rowtime timestamp, price decimal(10,2)"
    t_env.create_temporary_view("Ticker", env.from_collection(rows, schema, watermarks=WM))
    # AVG of 0.01, 0.02, 0.02 is Flink's DECIMAL(38, 6) 0.016667 (rounded half up): DEFINE compares that value;
    # SUM of a DECIMAL(10, 2) is a DECIMAL(38, 2), past DECIMAL(10, 2)'s range.
    table = t_env.sql_query("""SELECT * FROM Ticker MATCH_RECOGNIZE (ORDER BY rowtime
        MEASURES AVG(A.price) AS a, SUM(A.price) AS s, AVG(C.price) AS c, SUM(C.price) AS t
        PATTERN (A{3} B C{2}) DEFINE B AS AVG(A.price) = 0.016667) AS T""")
    assert str(table._stream.schema) == "a decimal(38,6), s decimal(38,2), c decimal(38,6), t decimal(38,2)"
    op = operator_of(table)
    got = [out for m in run_nfa(op.pattern, rows) for out in op.function.process_match(m, None)]
    assert got == [{"a": Decimal("0.016667"), "s": Decimal("0.05"), "c": Decimal("99999999.990000"), "t": Decimal("199999999.98")}]
