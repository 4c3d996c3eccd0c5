"""The SQL layer's keyed operators that step a key's held state per element (the group aggregation,
ChangelogNormalize, the upsert materializer, the table-aggregate function) take a micro-batch's elements grouped
by key (``process_batch``, through ``held_steps``): one state read and write per key. Their changes must be
those of ``process_element`` for each element: per key the same changes in the same order, and the same state
after, whatever the micro-batches' cut (no Spark)."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.functions import KeyedProcessFunction
from funke.semantics.keyed_process import KeyedProcessOperator
from funke.table.aggregate import GroupAggregate
from funke.table.changelog import ROW_KIND
from funke.table.udf import udtaf
from funke.table.udf_runtime import TableAggregate
from funke.table.upsert import ChangelogNormalize, UpsertMaterializer
from tests.spark.sql_udf_functions import Top2


class LenientTop2(Top2):
    """Top2, a retraction of a value it does not hold ignored (the changelogs here retract at random)."""

    def retract(self, acc, v):
        if v in acc:
            acc.remove(v)


OPERATORS = {
    "normalize": lambda: ChangelogNormalize(("k",)),
    "normalize with a ttl": lambda: ChangelogNormalize(("k",), ttl_ms=10**9),
    "materializer": lambda: UpsertMaterializer(("k",)),
    "group aggregate": lambda: GroupAggregate(("k",), [("n", "count", None), ("s", "sum", "v"), ("m", "max", "v")], retracting=True),
    "table aggregate": lambda: TableAggregate(udtaf(LenientTop2(), result_type="ROW<v INT, rank INT>"), ("k",), ("v",), ("v", "rank")),
}


def per_element(function: KeyedProcessFunction) -> KeyedProcessFunction:
    """``function`` as a subclass without ``process_batch``: the operator calls ``process_element`` per element."""
    plain = type(f"PerElement{type(function).__name__}", (type(function),), {"process_batch": KeyedProcessFunction.process_batch})
    copy = plain.__new__(plain)
    copy.__dict__.update(function.__dict__)
    return copy


@st.composite
def changelogs(draw):
    """Changes of a few keys (a retraction of a row a key may or may not hold), cut into micro-batches."""
    n = draw(st.integers(0, 60))
    elements = [
        (k, {ROW_KIND: draw(st.sampled_from(("+I", "+I", "+U", "-U", "-D"))), "k": k, "v": draw(st.integers(0, 3))}, i)
        for i, k in enumerate(draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n)))
    ]
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    return [elements[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(OPERATORS)), changelogs())
def test_a_key_s_elements_in_one_call_give_what_each_element_gives(name, batches):
    batched, single = KeyedProcessOperator(OPERATORS[name]()), KeyedProcessOperator(per_element(OPERATORS[name]()))
    assert batched._batched and not single._batched
    changes: dict[str, dict] = {"batched": defaultdict(list), "single": defaultdict(list)}
    for batch in batches:
        for side, op in (("batched", batched), ("single", single)):
            for record in op.process_elements(batch):
                changes[side][record.value["k"]].append(record.value)
    assert changes["batched"] == changes["single"]
    assert sorted(map(repr, batched.state_backend.export_rows())) == sorted(map(repr, single.state_backend.export_rows()))
