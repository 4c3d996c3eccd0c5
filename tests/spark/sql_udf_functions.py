"""Python functions the SQL UDF tests (Spark and unit tests) share, and register by path (``CREATE FUNCTION ...
AS 'tests.spark.sql_udf_functions.shout'``): importable on Spark's Python workers, as a user's own module would be."""

from __future__ import annotations

from funke.table import AggregateFunction, TableAggregateFunction, udf


@udf(result_type="STRING")
def shout(s):
    return None if s is None else s.upper() + "!"


class Longest(AggregateFunction):
    """The longest string of the group (its result type from get_result_type, as PyFlink's classes give it)."""

    def create_accumulator(self):
        return [None]

    def accumulate(self, acc, s):
        if s is not None and (acc[0] is None or len(s) > len(acc[0])):
            acc[0] = s

    def get_value(self, acc):
        return acc[0]

    def get_result_type(self):
        return "STRING"


class Top2(TableAggregateFunction):
    """The two largest values of a key, with their rank (a table aggregate function: flat_aggregate)."""

    def create_accumulator(self):
        return []

    def accumulate(self, acc, v):
        acc.append(v)

    def retract(self, acc, v):
        acc.remove(v)

    def emit_value(self, acc):
        for rank, v in enumerate(sorted(acc, reverse=True)[:2], start=1):
            yield v, rank
